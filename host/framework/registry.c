/*
 * The plugin registry (registry.h): scan the search path, load every
 * plugin, resolve names. Out of memory is one more problem in the error
 * list (KS_ENOMEM) and the registry is not built. One thread.
 */
#include "registry.h"

#include "call_board.h"
#include "quarantine.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"

#ifndef KS_PLUGINDIR
#define KS_PLUGINDIR "/usr/local/lib/ksched/plugins"
#endif

typedef struct found {
    ks_loaded_plugin_t *p;
    size_t entry; /* index of the search-path entry it came from */
} found_t;

typedef struct scan {
    found_t *items;
    size_t n, cap;
    ks_error_t *err;
    int failed;
} scan_t;

const char *ks_registry_default_dir(void)
{
    return KS_PLUGINDIR;
}

/* a and b name the same directory (symbolic links and spellings aside). */
static int same_dir(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && S_ISDIR(x.st_mode) &&
           x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static const char *build_dir;
static pthread_once_t build_dir_once = PTHREAD_ONCE_INIT;

/* KS_BUILD_HOSTDIR is where the build put the ksched executable: if the
 * running program is there, it runs from the build tree and the build's
 * plugins are where it should look. An installed or copied ksched (or a
 * test program) is elsewhere and never looks there. */
static void find_build_dir(void)
{
#if defined(KS_BUILD_HOSTDIR) && defined(KS_BUILD_PLUGINDIR)
    char exe[4096];
    char *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1)
        return;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash == NULL || slash == exe)
        return;
    *slash = '\0';
    if (same_dir(exe, KS_BUILD_HOSTDIR))
        build_dir = KS_BUILD_PLUGINDIR;
#endif
}

const char *ks_registry_build_dir(void)
{
    pthread_once(&build_dir_once, find_build_dir);
    return build_dir;
}

const char *ks_plugin_dir_origin_name(ks_plugin_dir_origin_t o)
{
    switch (o) {
    case KS_DIR_ARG: return "--plugin-dir";
    case KS_DIR_ENV: return "KSCHED_PLUGIN_PATH";
    case KS_DIR_BUILD: return "build tree";
    case KS_DIR_INSTALLED: return "installed";
    }
    return "?";
}

static int ends_with_so(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_nomem(scan_t *s, const char *dir)
{
    ks_error_append(s->err, KS_ENOMEM, "%s: out of memory", dir);
    s->failed = 1;
}

/* Keep a loaded plugin; -1 when out of memory. */
static int scan_push(scan_t *s, ks_loaded_plugin_t *p, size_t entry)
{
    found_t *items = ks_fw_grow(s->items, &s->cap, s->n + 1, sizeof *items, 32);
    if (items == NULL)
        return -1;
    s->items = items;
    s->items[s->n].p = p;
    s->items[s->n].entry = entry;
    s->n++;
    return 0;
}

static void scan_dir(scan_t *s, const char *dir, size_t entry, int depth)
{
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int oom = 0;

    if (depth > 8)
        return;
    d = opendir(dir);
    if (d == NULL)
        return; /* a missing directory in the path is not an error */
    while (!oom && (de = readdir(d)) != NULL) {
        char **more;
        if (de->d_name[0] == '.')
            continue;
        more = ks_fw_grow(names, &cap, n + 1, sizeof *names, 16);
        if (more == NULL || (more[n] = strdup(de->d_name)) == NULL)
            oom = 1;
        else
            n++;
        if (more != NULL)
            names = more;
    }
    closedir(d);
    if (oom) {
        scan_nomem(s, dir);
        for (i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return;
    }
    /* Sorted so that loading order, and thus messages, are stable. */
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    for (i = 0; i < n; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            scan_dir(s, path, entry, depth + 1);
        } else if (S_ISREG(sb.st_mode) && ends_with_so(names[i])) {
            ks_loaded_plugin_t *p;
            ks_error_t e = {0};
            const char *load = path;
            uint64_t hash = 0;
            int v = ks_quarantine_vet(path, &load, &hash, s->err), rc = 0;
            if (v == 0) {
                /* dlopen runs the file's constructors: plugin code. Under
                 * a supervisor a crash there quarantines the file (by its
                 * hash; the plugin's name is not known yet). */
                ks_board_slot_t *slot = NULL;
                if (ks_call_board_shared()) {
                    const char *base = strrchr(load, '/');
                    if (hash == 0)
                        hash = ks_file_hash(load);
                    slot = ks_call_enter(
                        ks_call_board_register(base ? base + 1 : load, "",
                                               path, hash,
                                               ks_call_board_building(), 0),
                        KS_CALL_LOAD, 0, NULL, NULL, NULL);
                }
                rc = ks_plugin_load(load, &p, &e);
                if (slot)
                    ks_call_leave(slot);
            }
            if (v != 0) {
                if (v < 0)
                    s->failed = 1;
            } else if (rc != 0) {
                ks_error_append(s->err, e.code, "%s", e.msg);
                s->failed = 1;
            } else if ((p->hash = hash ? hash
                                  : ks_call_board_shared()
                                        ? ks_file_hash(p->copy_path)
                                        : 0),
                       scan_push(s, p, entry) != 0) {
                ks_plugin_unref(p);
                scan_nomem(s, path);
            }
        }
        free(names[i]);
    }
    free(names);
}

static int cmp_plugin(const void *a, const void *b)
{
    const ks_loaded_plugin_t *x = *(ks_loaded_plugin_t *const *)a;
    const ks_loaded_plugin_t *y = *(ks_loaded_plugin_t *const *)b;
    return strcmp(x->desc.name, y->desc.name);
}

/* Append a search-path entry (once); -1 when out of memory. */
static int add_dir(ks_registry_t *r, const char *dir,
                   ks_plugin_dir_origin_t origin)
{
    size_t i;
    char **dirs, *copy;
    ks_plugin_dir_origin_t *origins;
    if (dir == NULL || dir[0] == '\0')
        return 0;
    for (i = 0; i < r->n_dirs; i++)
        if (strcmp(r->dirs[i], dir) == 0)
            return 0;
    dirs = realloc(r->dirs, (r->n_dirs + 1) * sizeof *r->dirs);
    if (dirs == NULL)
        return -1;
    r->dirs = dirs;
    origins = realloc(r->dir_origins, (r->n_dirs + 1) * sizeof *origins);
    if (origins == NULL)
        return -1;
    r->dir_origins = origins;
    if ((copy = strdup(dir)) == NULL)
        return -1;
    r->dirs[r->n_dirs] = copy;
    r->dir_origins[r->n_dirs++] = origin;
    return 0;
}

/* The build tree's plugins, unless an earlier entry is that folder by
 * another name (`--plugin-dir build/plugins`): it is searched once. */
static int add_build_dir(ks_registry_t *r)
{
    const char *dir = ks_registry_build_dir();
    size_t i;
    if (dir == NULL)
        return 0;
    for (i = 0; i < r->n_dirs; i++)
        if (same_dir(r->dirs[i], dir))
            return 0;
    return add_dir(r, dir, KS_DIR_BUILD);
}

/* The search path: the given dirs, then KSCHED_PLUGIN_PATH, the build
 * tree's plugins and the installed directory. -1 when out of memory. */
static int add_search_path(ks_registry_t *r, const char *const *dirs,
                           size_t n_dirs, int no_default_path)
{
    const char *env = getenv("KSCHED_PLUGIN_PATH");
    size_t i;
    int rc = 0;
    for (i = 0; i < n_dirs; i++)
        if (add_dir(r, dirs[i], KS_DIR_ARG) != 0)
            return -1;
    if (no_default_path)
        return 0;
    if (env != NULL) {
        char *copy = strdup(env), *save = NULL, *tok;
        if (copy == NULL)
            return -1;
        for (tok = strtok_r(copy, ":", &save); tok && rc == 0;
             tok = strtok_r(NULL, ":", &save))
            rc = add_dir(r, tok, KS_DIR_ENV);
        free(copy);
    }
    if (rc != 0 || add_build_dir(r) != 0)
        return -1;
    return add_dir(r, KS_PLUGINDIR, KS_DIR_INSTALLED);
}

int ks_registry_load(const char *const *dirs, size_t n_dirs,
                     int no_default_path, ks_registry_t **out, ks_error_t *err)
{
    ks_registry_t *r = calloc(1, sizeof *r);
    scan_t s = {0};
    size_t i, j;

    *out = NULL;
    if (r == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    if (add_search_path(r, dirs, n_dirs, no_default_path) != 0) {
        ks_registry_free(r);
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    }
    s.err = err;
    for (i = 0; i < r->n_dirs; i++)
        scan_dir(&s, r->dirs[i], i, 0);

    /* Resolve names: an earlier search-path entry overrides a later one; two
     * files with one name inside one entry are an error. */
    for (i = 0; i < s.n; i++) {
        if (s.items[i].p == NULL)
            continue;
        for (j = i + 1; j < s.n; j++) {
            if (s.items[j].p == NULL ||
                strcmp(s.items[i].p->desc.name, s.items[j].p->desc.name) != 0)
                continue;
            if (s.items[i].entry == s.items[j].entry) {
                ks_error_append(err, KS_EDUPNAME,
                                "plugin \"%s\" is defined twice: in %s and in "
                                "%s; remove one of the files",
                                s.items[i].p->desc.name, s.items[i].p->path,
                                s.items[j].p->path);
                s.failed = 1;
            }
            ks_plugin_unref(s.items[j].p);
            s.items[j].p = NULL;
        }
    }
    if (s.n > 0 && !s.failed) {
        r->plugins = malloc(s.n * sizeof *r->plugins);
        if (r->plugins == NULL) {
            ks_error_append(err, KS_ENOMEM, "out of memory");
            s.failed = 1;
        }
    }
    /* The registry takes every reference left, or they go now. */
    for (i = 0; i < s.n; i++) {
        if (s.items[i].p == NULL)
            continue;
        if (r->plugins != NULL)
            r->plugins[r->n++] = s.items[i].p;
        else
            ks_plugin_unref(s.items[i].p);
    }
    free(s.items);
    if (s.failed) {
        ks_registry_free(r);
        return err ? err->code : KS_EINVAL;
    }
    if (r->n)
        qsort(r->plugins, r->n, sizeof *r->plugins, cmp_plugin);
    *out = r;
    return 0;
}

void ks_registry_free(ks_registry_t *r)
{
    size_t i;
    if (r == NULL)
        return;
    for (i = 0; i < r->n; i++)
        ks_plugin_unref(r->plugins[i]);
    for (i = 0; i < r->n_dirs; i++)
        free(r->dirs[i]);
    free(r->dirs);
    free(r->dir_origins);
    free(r->plugins);
    free(r);
}

ks_loaded_plugin_t *ks_registry_get(const ks_registry_t *r, const char *name)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->plugins[mid]->desc.name, name);
        if (c == 0)
            return r->plugins[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
