/* Copying a file: see file_copy.h. */
#include "file_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ks_file_copy(const char *src, const char *dst, mode_t mode)
{
    char buf[65536];
    ssize_t n;
    int in, out, err = 0;
    if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (out < 0) {
        err = errno;
        close(in);
        errno = err;
        return -1;
    }
    while ((n = read(in, buf, sizeof buf)) != 0) {
        ssize_t off = 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        while (off < n) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                err = w < 0 ? errno : EIO;
                break;
            }
            off += w;
        }
        if (err)
            break;
    }
    close(in);
    if (close(out) != 0 && err == 0)
        err = errno;
    if (err) {
        unlink(dst);
        errno = err;
        return -1;
    }
    return 0;
}
