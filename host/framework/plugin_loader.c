#include "plugin_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_int live_count;
static atomic_ullong load_counter;
static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static char copy_dir[4096];

static void copy_dir_cleanup(void)
{
    if (copy_dir[0])
        rmdir(copy_dir); /* succeeds only once every copy is gone */
}

static void copy_dir_init(void)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    struct stat sb;
    if (base == NULL || stat(base, &sb) != 0 || !S_ISDIR(sb.st_mode))
        base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(copy_dir, sizeof copy_dir, "%s/ksched-plugins-XXXXXX", base);
    if (mkdtemp(copy_dir) == NULL)
        copy_dir[0] = '\0';
    else
        atexit(copy_dir_cleanup);
}

const char *ks_plugin_file(const ks_loaded_plugin_t *p)
{
    const char *s = strrchr(p->path, '/');
    return s ? s + 1 : p->path;
}

static int copy_file(const char *src, const char *dst)
{
    char buf[65536];
    ssize_t n;
    int in = open(src, O_RDONLY | O_CLOEXEC), out;
    if (in < 0)
        return -1;
    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (out < 0) {
        close(in);
        return -1;
    }
    while ((n = read(in, buf, sizeof buf)) > 0) {
        ssize_t off = 0;
        while (off < n) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                close(in);
                close(out);
                unlink(dst);
                return -1;
            }
            off += w;
        }
    }
    close(in);
    if (n < 0 || close(out) != 0) {
        unlink(dst);
        return -1;
    }
    return 0;
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

int ks_plugin_load(const char *path, ks_loaded_plugin_t **out, ks_error_t *err)
{
    ks_loaded_plugin_t *p;
    const ks_plugin_t *d;
    const char *file = base_name(path);
    char copy[4200];
    uint32_t size;
    unsigned long long seq;
    int rc;

    *out = NULL;
    pthread_once(&dir_once, copy_dir_init);
    if (copy_dir[0] == '\0')
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
    if (copy_file(path, copy) != 0) {
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
