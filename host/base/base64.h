/*
 * Standard base64 (RFC 4648 section 4: A-Z a-z 0-9 + /, '=' padding), as
 * Go's encoding/base64.StdEncoding reads it, which is how Kubernetes
 * decodes the []byte fields of its objects (kubeconfig *-data fields,
 * Secret data, ...).
 *
 * Decoding is strict: every character must be in the standard alphabet,
 * the input (line breaks removed) must be a whole number of 4-character
 * groups, '=' may only pad the last group, and nothing may follow it. Only
 * line breaks ('\r', '\n') are skipped, as Go does. Like Go's non-strict
 * decoder, unused low bits of the last symbol are not checked.
 *
 * No shared state: thread-safe.
 */
#ifndef KS_BASE_BASE64_H
#define KS_BASE_BASE64_H

#include <stddef.h>

#include "base/error.h"

/* Decode `len` characters at `in` (need not be NUL-terminated).
 *
 * On success returns 0, *out is a malloc'd buffer of *out_len bytes plus a
 * NUL terminator (so PEM text can be used as a C string; the caller frees
 * it) -- for empty input a 1-byte buffer holding "".
 *
 * On malformed input returns KS_EPARSE, *out is NULL, *bad_off (may be
 * NULL) is the 0-based offset into `in` of the first offending character
 * (len when the input ends too early), and err gets a message without a
 * location, e.g. "invalid base64 at character 5 ('-'): not in the standard
 * alphabet (A-Z a-z 0-9 + /); this looks like base64url". Callers prefix
 * the file and position. KS_ENOMEM when out of memory. */
int ks_base64_decode(const char *in, size_t len, unsigned char **out,
                     size_t *out_len, size_t *bad_off, ks_error_t *err);

/* Length of the padded encoding of n bytes (without the NUL). */
size_t ks_base64_encoded_len(size_t n);

/* Encode `len` bytes into `dst`, which has room for
 * ks_base64_encoded_len(len) + 1 bytes; writes a NUL terminator. Returns
 * the number of characters written (without the NUL). */
size_t ks_base64_encode_to(char *dst, const void *src, size_t len);

/* Encode into a new malloc'd NUL-terminated string; NULL when out of
 * memory. The caller frees it. */
char *ks_base64_encode(const void *src, size_t len);

#endif /* KS_BASE_BASE64_H */
