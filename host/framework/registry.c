#include "registry.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int ends_with_so(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_dir(scan_t *s, const char *dir, size_t entry, int depth)
{
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;

    if (depth > 8)
        return;
    d = opendir(dir);
    if (d == NULL)
        return; /* a missing directory in the path is not an error */
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
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
            if (ks_plugin_load(path, &p, &e) != 0) {
                ks_error_append(s->err, e.code, "%s", e.msg);
                s->failed = 1;
            } else {
                if (s->n == s->cap) {
                    s->cap = s->cap ? s->cap * 2 : 32;
                    s->items = realloc(s->items, s->cap * sizeof *s->items);
                }
                s->items[s->n].p = p;
                s->items[s->n].entry = entry;
                s->n++;
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

static int add_dir(ks_registry_t *r, const char *dir)
{
    size_t i;
    if (dir == NULL || dir[0] == '\0')
        return 0;
    for (i = 0; i < r->n_dirs; i++)
        if (strcmp(r->dirs[i], dir) == 0)
            return 0;
    r->dirs = realloc(r->dirs, (r->n_dirs + 1) * sizeof *r->dirs);
    r->dirs[r->n_dirs++] = strdup(dir);
    return 0;
}

int ks_registry_load(const char *const *dirs, size_t n_dirs,
                     int no_default_path, ks_registry_t **out, ks_error_t *err)
{
    ks_registry_t *r = calloc(1, sizeof *r);
    scan_t s = {0};
    size_t i, j;
    const char *env = getenv("KSCHED_PLUGIN_PATH");

    *out = NULL;
    if (r == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory");
    for (i = 0; i < n_dirs; i++)
        add_dir(r, dirs[i]);
    if (!no_default_path) {
        if (env != NULL) {
            char *copy = strdup(env), *save = NULL, *tok;
            for (tok = strtok_r(copy, ":", &save); tok;
                 tok = strtok_r(NULL, ":", &save))
                add_dir(r, tok);
            free(copy);
        }
        add_dir(r, KS_PLUGINDIR);
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
    for (i = 0; i < s.n; i++) {
        if (s.items[i].p == NULL)
            continue;
        r->plugins = realloc(r->plugins, (r->n + 1) * sizeof *r->plugins);
        r->plugins[r->n++] = s.items[i].p;
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
