/*
 * Copying a file's bytes to a new file.
 *
 * ks_file_copy() creates `dst` (O_CREAT | O_EXCL: it must not exist) with
 * `mode`, copies every byte of `src` into it (retrying interrupted reads
 * and writes) and closes it. 0, or -1 with errno set and `dst` removed.
 * Threads: any.
 */
#ifndef KS_BASE_FILE_COPY_H
#define KS_BASE_FILE_COPY_H

#include <sys/types.h>

int ks_file_copy(const char *src, const char *dst, mode_t mode);

#endif
