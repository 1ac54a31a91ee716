#include "plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_copy.h"
#include "cluster/object_store.h"

static atomic_int live_count;
static atomic_ullong load_counter;

/* --- the process's copy directory (plugin_loader.h) ------------------------ */

static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static char dir[4096];
static char lock_path[4200];
static int lock_fd = -1;

static void dir_at_exit(void)
{
    if (lock_path[0])
        unlink(lock_path);
    if (lock_fd >= 0)
        close(lock_fd);
    if (dir[0])
        rmdir(dir); /* succeeds only once every copy is gone */
}

/* "PID-XXXXXX" with a positive PID: the pid, else 0. */
static long name_pid(const char *name)
{
    char *end;
    long pid;
    if (name[0] < '1' || name[0] > '9')
        return 0;
    pid = strtol(name, &end, 10);
    if (*end != '-' || strlen(end + 1) != 6 || pid <= 0)
        return 0;
    return pid;
}

/* Is the process directory `name` (open as dfd) abandoned: its lock is
 * free (or it has none) and its process is gone? */
static int abandoned(int dfd, long pid)
{
    int fd, free_lock = 1;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return 0;
    fd = openat(dfd, ".lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        free_lock = flock(fd, LOCK_EX | LOCK_NB) == 0;
        close(fd); /* releases the lock just taken */
    }
    return free_lock;
}

/* Remove the regular files and symlinks (never followed) in dfd, then the
 * directory `name` itself under pfd. */
static int remove_dir(int pfd, const char *name, int dfd)
{
    DIR *d = fdopendir(dfd);
    struct dirent *de;
    if (d == NULL) {
        close(dfd);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat sb;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISDIR(sb.st_mode))
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
    return unlinkat(pfd, name, AT_REMOVEDIR);
}

size_t ks_plugin_copies_sweep(const char *parent)
{
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    uid_t uid = getuid();
    size_t removed = 0;
    DIR *d;
    struct dirent *de;
    if (pfd < 0)
        return 0;
    d = fdopendir(pfd);
    if (d == NULL) {
        close(pfd);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        long pid = name_pid(de->d_name);
        struct stat sb;
        int dfd;
        if (pid == 0 || pid == (long)getpid())
            continue;
        dfd = openat(dirfd(d), de->d_name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            continue; /* gone, a symlink, or not a directory */
        if (fstat(dfd, &sb) != 0 || sb.st_uid != uid ||
            !abandoned(dfd, pid)) {
            close(dfd);
            continue;
        }
        if (remove_dir(dirfd(d), de->d_name, dfd) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

/* BASE/ksched-UID when it is (or can be made) a real directory of ours. */
static int user_parent(const char *base, char *out, size_t len)
{
    struct stat sb;
    int n = snprintf(out, len, "%s/ksched-%lu", base,
                     (unsigned long)getuid());
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        return -1;
    if (lstat(out, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
        sb.st_uid != getuid() || (sb.st_mode & 022) != 0)
        return -1;
    return 0;
}

static void dir_init(void)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    char parent[3800];
    struct stat sb;
    int n;
    if (base == NULL || stat(base, &sb) != 0 || !S_ISDIR(sb.st_mode))
        base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if (user_parent(base, parent, sizeof parent) != 0) {
        /* Not ours to sweep: a private directory as before. */
        snprintf(dir, sizeof dir, "%s/ksched-plugins-XXXXXX", base);
        if (mkdtemp(dir) == NULL)
            dir[0] = '\0';
        else
            atexit(dir_at_exit);
        return;
    }
    ks_plugin_copies_sweep(parent);
    n = snprintf(dir, sizeof dir, "%s/%ld-XXXXXX", parent, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof dir || mkdtemp(dir) == NULL) {
        dir[0] = '\0';
        return;
    }
    snprintf(lock_path, sizeof lock_path, "%s/.lock", dir);
    lock_fd = open(lock_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
                                  O_CLOEXEC, 0600);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        /* Unlocked, the directory is still safe while this process
         * lives (the pid check); it is only swept sooner after a crash. */
        if (lock_fd < 0)
            lock_path[0] = '\0';
    }
    atexit(dir_at_exit);
}

const char *ks_plugin_copy_dir(void)
{
    pthread_once(&dir_once, dir_init);
    return dir[0] ? dir : NULL;
}

/* --- loading ---------------------------------------------------------------- */
const char *ks_plugin_file(const ks_loaded_plugin_t *p)
{
    const char *s = strrchr(p->path, '/');
    return s ? s + 1 : p->path;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void release(ks_loaded_plugin_t *p)
{
    if (p->dl) {
        dlclose(p->dl);
        atomic_fetch_sub(&live_count, 1);
    }
    if (p->copy_path)
        unlink(p->copy_path);
    free(p->copy_path);
    free(p->path);
    free(p);
}

/* (ABI 1.3) The cluster resources the descriptor declares: each must be
 * complete; each gets its store (one per resource in the process, shared
 * by every plugin and profile that declares it). */
static int register_resources(const ks_loaded_plugin_t *p, const char *path,
                              ks_error_t *err)
{
    const ks_plugin_t *d = &p->desc;
    uint32_t i;
    if (d->n_resources == 0)
        return 0;
    if (d->resources == NULL)
        return ks_error_set(err, KS_EINVAL,
                            "%s: plugin %s: n_resources is %u but resources "
                            "is NULL", path, d->name, d->n_resources);
    for (i = 0; i < d->n_resources; i++) {
        ks_error_t why;
        ks_store_t *st;
        ks_error_init(&why);
        if (ks_store_register(&d->resources[i], &st, &why) != 0)
            return ks_error_set(err, why.code == KS_ECONFLICT ? KS_ECONFLICT
                                                              : KS_EINVAL,
                                "%s: plugin %s: resources[%u]: %s", path,
                                d->name, i, why.msg);
    }
    return 0;
}

int ks_plugin_load(const char *path, ks_loaded_plugin_t **out, ks_error_t *err)
{
    ks_loaded_plugin_t *p;
    const ks_plugin_t *d;
    const char *file = base_name(path);
    const char *copy_dir;
    char copy[4300];
    uint32_t size;
    unsigned long long seq;
    int rc;

    *out = NULL;
    copy_dir = ks_plugin_copy_dir();
    if (copy_dir == NULL)
        return ks_error_set(err, KS_EIO,
                            "%s: cannot create a private directory for plugin "
                            "copies (set TMPDIR to a writable directory)",
                            path);
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", path);
    p->refs = 1;
    p->path = strdup(path);
    seq = atomic_fetch_add(&load_counter, 1) + 1;
    p->load_seq = seq;
    snprintf(copy, sizeof copy, "%s/%llu-%s", copy_dir, seq, file);
    if (p->path == NULL || (p->copy_path = strdup(copy)) == NULL) {
        release(p);
        return ks_error_set(err, KS_ENOMEM, "%s: out of memory", path);
    }
    if (ks_file_copy(path, copy, 0700) != 0) {
        rc = ks_error_set(err, KS_EIO, "%s: cannot read plugin file: %s", path,
                          strerror(errno));
        free(p->copy_path);
        p->copy_path = NULL;
        release(p);
        return rc;
    }
    p->dl = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    if (p->dl == NULL) {
        const char *why = dlerror();
        const char *c = why ? strstr(why, copy) : NULL;
        /* Name the user's file, not our private copy. */
        if (c != NULL)
            why = c + strlen(copy);
        rc = ks_error_set(err, KS_EDLOPEN, "%s: cannot load shared object%s%s",
                          path, why && *why != ':' ? ": " : "",
                          why ? why : "");
        release(p);
        return rc;
    }
    atomic_fetch_add(&live_count, 1);
    d = dlsym(p->dl, KS_PLUGIN_SYMBOL);
    if (d == NULL) {
        rc = ks_error_set(err, KS_ENOTPLUGIN,
                          "%s: not a ksched plugin: it exports no \"%s\" "
                          "(define one with KS_PLUGIN_DEFINE from "
                          "<ksched/plugin.h>)",
                          path, KS_PLUGIN_SYMBOL);
        release(p);
        return rc;
    }
    if (d->magic != KS_PLUGIN_MAGIC) {
        rc = ks_error_set(err, KS_ENOTPLUGIN,
                          "%s: not a ksched plugin: descriptor magic is 0x%08x, "
                          "expected 0x%08x (define it with KS_PLUGIN_DEFINE)",
                          path, d->magic, KS_PLUGIN_MAGIC);
        release(p);
        return rc;
    }
    if (d->abi_major != KS_ABI_MAJOR) {
        rc = ks_error_set(err, KS_EABIMAJOR,
                          "%s: plugin was built for ABI %u.%u, this host "
                          "speaks ABI %d.%d; rebuild it against this host's "
                          "SDK (pkg-config --cflags ksched-plugin)",
                          path, d->abi_major, d->abi_minor, KS_ABI_MAJOR,
                          KS_ABI_MINOR);
        release(p);
        return rc;
    }
    if (d->abi_minor > KS_ABI_MINOR) {
        rc = ks_error_set(err, KS_EABIMINOR,
                          "%s: plugin needs ABI %u.%u, newer than this host's "
                          "%d.%d; upgrade ksched or rebuild the plugin against "
                          "this host's SDK",
                          path, d->abi_major, d->abi_minor, KS_ABI_MAJOR,
                          KS_ABI_MINOR);
        release(p);
        return rc;
    }
    size = d->size;
    if (size < KS_PLUGIN_V1_SIZE) {
        rc = ks_error_set(err, KS_ESHORT,
                          "%s: plugin descriptor is %u bytes, ABI %d needs at "
                          "least %u; it was not built with KS_PLUGIN_DEFINE",
                          path, size, KS_ABI_MAJOR,
                          (unsigned)KS_PLUGIN_V1_SIZE);
        release(p);
        return rc;
    }
    memset(&p->desc, 0, sizeof p->desc);
    memcpy(&p->desc, d, size < sizeof p->desc ? size : sizeof p->desc);
    p->desc.size = (uint32_t)sizeof p->desc;
    if (p->desc.name == NULL || p->desc.name[0] == '\0') {
        rc = ks_error_set(err, KS_ENONAME,
                          "%s: plugin has no name (the first argument of "
                          "KS_PLUGIN_DEFINE must be a non-empty string)",
                          path);
        release(p);
        return rc;
    }
    if (p->desc.version == NULL)
        p->desc.version = "";
    if ((rc = register_resources(p, path, err)) != 0) {
        release(p);
        return rc;
    }
    *out = p;
    return 0;
}

ks_loaded_plugin_t *ks_plugin_ref(ks_loaded_plugin_t *p)
{
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
    return p;
}

void ks_plugin_unref(ks_loaded_plugin_t *p)
{
    if (p == NULL)
        return;
    if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
        release(p);
}

int ks_plugin_live_count(void)
{
    return atomic_load(&live_count);
}
