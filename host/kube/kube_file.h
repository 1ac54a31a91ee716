/*
 * Private to the kube loaders: the small files a connection is made of
 * (kubeconfigs, certificates, token files, a service account's namespace)
 * and the paths that name them.
 *
 * Ownership: returned strings are malloc'd for the caller. Thread-safe
 * (no state; getcwd for relative paths).
 */
#ifndef KS_KUBE_KUBE_FILE_H
#define KS_KUBE_KUBE_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* The largest file these functions read. */
#define KS_KUBE_FILE_MAX (16u << 20)

/* Read a whole (small, at most KS_KUBE_FILE_MAX) file. 0 with *buf
 * (malloc'd, NUL-terminated) and *len, or -1 with errno set. */
int ks_kube_file_read(const char *path, char **buf, size_t *len);
/* Can `path` be opened for reading (and is it at most `max` bytes, when
 * max is not 0)? 0, or -1 with errno. */
int ks_kube_file_check(const char *path, off_t max);
/* `rel` against directory `dir` (absolute), cleaned like Go's
 * filepath.Clean; an absolute `rel` is only cleaned. NULL when out of
 * memory. */
char *ks_kube_path_join(const char *dir, const char *rel);
/* The absolute directory of file `path`; NULL when out of memory. */
char *ks_kube_path_dir(const char *path);
/* A whitespace-trimmed copy of s[0..n) (Go's strings.TrimSpace on
 * ASCII); NULL when out of memory. */
char *ks_kube_trimmed_copy(const char *s, size_t n);
/* Does s hold a control character? */
int ks_kube_has_ctl(const char *s);

#endif
