/*
 * Loading one plugin shared object.
 *
 * ks_plugin_load() copies the file to a private path in the process's
 * copy directory (below; so that dlopen can never hand back an older
 * mapping of a replaced file, and a crashed run's copies are swept by the
 * next start), dlopen()s the copy
 * with RTLD_NOW | RTLD_LOCAL, finds the descriptor and checks, in order:
 * magic (KS_ENOTPLUGIN), ABI major (KS_EABIMAJOR), ABI minor not newer than
 * the host (KS_EABIMINOR), struct size at least the v1 size (KS_ESHORT),
 * name present (KS_ENONAME). The descriptor is copied (min(size, ours),
 * zero-filled), so later fields a plugin does not know read as NULL.
 *
 * A loaded plugin is reference counted: the registry holds one reference,
 * and every framework generation holds one per plugin it uses. The last
 * ks_plugin_unref() dlclose()s the copy and deletes the file.
 * Thread-safety: ref/unref are atomic; load must run on one thread at once.
 */
#ifndef KS_PLUGIN_LOADER_H
#define KS_PLUGIN_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "ksched/plugin.h"
#include "base/error.h"

typedef struct ks_loaded_plugin {
    int refs;          /* atomic */
    char *path;        /* the file as found in the plugin path */
    char *copy_path;   /* the private copy actually mapped */
    void *dl;          /* dlopen handle */
    ks_plugin_t desc;  /* validated copy of the descriptor */
    uint64_t load_seq; /* increases with every load in this process */
    uint64_t hash;     /* content hash of the file (call_board.h), set by
                          the registry */
} ks_loaded_plugin_t;

int ks_plugin_load(const char *path, ks_loaded_plugin_t **out, ks_error_t *err);
ks_loaded_plugin_t *ks_plugin_ref(ks_loaded_plugin_t *p);
void ks_plugin_unref(ks_loaded_plugin_t *p);
/* Number of plugin images currently mapped by this process (for tests and
 * /debug). */
int ks_plugin_live_count(void);

/* The basename of p->path (for messages). */
const char *ks_plugin_file(const ks_loaded_plugin_t *p);

/*
 * The copy directory: the private directory of one process's plugin
 * copies, and the removal of the directories crashed processes left behind.
 *
 * Layout: BASE/ksched-UID/PID-XXXXXX/, BASE being $XDG_RUNTIME_DIR when it
 * is a directory, else $TMPDIR, else /tmp. BASE/ksched-UID is created mode
 * 0700 and used only if it is a real directory (not a symlink) owned by
 * this user; otherwise the copies go to a fresh BASE/ksched-plugins-XXXXXX
 * as before, and nothing is swept. Each process directory holds a file
 * ".lock" that its process keeps locked (flock) for its whole life.
 *
 * Sweeping (once, when the directory is made): a sibling PID-XXXXXX
 * directory is removed with its files when it is a real directory owned by
 * this user, its lock is free, AND process PID no longer exists. Nothing is
 * followed through a symlink (entries are opened and removed relative to
 * their parent's descriptor, with O_NOFOLLOW), and a directory whose
 * process is alive, or whose lock is held (a live process in another PID
 * namespace), is kept. At normal exit the process removes its own lock
 * file and directory (once every copy is gone).
 *
 */
/* This process's copy directory (made, and stale siblings swept, on the
 * first call), or NULL when none could be made. Any thread. */
const char *ks_plugin_copy_dir(void);
/* Remove the stale process directories under `parent` (see above); how
 * many were removed. ks_plugin_copy_dir calls it once. */
size_t ks_plugin_copies_sweep(const char *parent);

#endif
