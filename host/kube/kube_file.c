/* Small files and paths for the kube loaders (kube_file.h). */
#include "kube/kube_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"

int ks_kube_file_read(const char *path, char **buf, size_t *len)
{
    struct stat sb;
    ks_buf_t b = {0};
    char tmp[8192];
    int fd, e;
    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0)
        goto fail;
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        goto fail;
    }
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        if (b.len + (size_t)n > KS_KUBE_FILE_MAX) {
            errno = EFBIG;
            goto fail;
        }
        ks_buf_append(&b, tmp, (size_t)n);
        if (b.oom) {
            errno = ENOMEM;
            goto fail;
        }
    }
    close(fd);
    if (b.data == NULL)
        ks_buf_append(&b, "", 0);
    if (b.oom) {
        ks_buf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    *buf = ks_buf_steal(&b, len);
    return 0;
fail:
    e = errno;
    close(fd);
    ks_buf_free(&b);
    errno = e;
    return -1;
}

int ks_kube_file_check(const char *path, off_t max)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode))
        e = EISDIR;
    else if (max > 0 && sb.st_size > max)
        e = EFBIG;
    close(fd);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}

/* Lexically clean an absolute path ("//", "/./", "x/.."), like Go's
 * filepath.Clean. In place: the output never overtakes the input. */
static void clean_path(char *p)
{
    char *out = p + 1, *in = p;
    if (*p != '/')
        return;
    while (*in) {
        char *seg;
        size_t n;
        while (*in == '/')
            in++;
        seg = in;
        while (*in && *in != '/')
            in++;
        n = (size_t)(in - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            /* Drop the last segment written (never above "/"). */
            while (out > p + 1 && out[-1] != '/')
                out--;
            if (out > p + 1)
                out--;
            continue;
        }
        if (out > p + 1)
            *out++ = '/';
        memmove(out, seg, n);
        out += n;
    }
    *out = '\0';
}

/* `rel` against directory `dir` (absolute), cleaned; absolute `rel` is
 * only cleaned. NULL when out of memory. */
char *ks_kube_path_join(const char *dir, const char *rel)
{
    char *r;
    if (rel[0] == '/')
        r = strdup(rel);
    else if (asprintf(&r, "%s/%s", dir, rel) < 0)
        r = NULL;
    if (r != NULL)
        clean_path(r);
    return r;
}

/* The absolute directory of file `path`; NULL when out of memory. */
char *ks_kube_path_dir(const char *path)
{
    char *d, *slash, cwd[4096];
    if (path[0] == '/') {
        d = strdup(path);
    } else {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            snprintf(cwd, sizeof(cwd), "/");
        if (asprintf(&d, "%s/%s", cwd, path) < 0)
            d = NULL;
    }
    if (d == NULL)
        return NULL;
    slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else
        *slash = '\0';
    clean_path(d);
    return d;
}

/* Whitespace trimmed copy (like Go's strings.TrimSpace on ASCII). */
char *ks_kube_trimmed_copy(const char *s, size_t n)
{
    char *r;
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
                     *s == '\v' || *s == '\f'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
                     s[n - 1] == '\n' || s[n - 1] == '\r' ||
                     s[n - 1] == '\v' || s[n - 1] == '\f'))
        n--;
    r = malloc(n + 1);
    if (r == NULL)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

int ks_kube_has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}
