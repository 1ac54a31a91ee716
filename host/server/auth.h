/*
 * Bearer-token authentication of serve's HTTP API (--token-file).
 *
 * The file holds one token per line; a line may also be a row of the
 * API server's static token file, "token,user,uid[,groups]", of which only
 * the first field (the token) is used. Blank lines and lines starting with
 * '#' are skipped; surrounding spaces are trimmed. An empty file, or a
 * token with a space or a control character in it, is an error naming the
 * line. A request is authenticated when its "Authorization: Bearer TOKEN"
 * header names one of the tokens; the comparison takes the same time
 * whichever token (if any) matches and wherever a mismatch is.
 *
 * Ownership: the token set is the caller's (ks_auth_free). Threads: read
 * only after loading, so any thread.
 */
#ifndef KS_SERVER_AUTH_H
#define KS_SERVER_AUTH_H

#include <stddef.h>

#include "base/error.h"

typedef struct ks_auth ks_auth_t;

/* Read the token file. NULL with err (KS_EIO: unreadable, KS_EINVAL: no
 * token or a malformed one, with file:line; KS_ENOMEM). */
ks_auth_t *ks_auth_load(const char *path, ks_error_t *err);
void ks_auth_free(ks_auth_t *a);
/* How many tokens were read. */
size_t ks_auth_count(const ks_auth_t *a);

/* Is `authorization` (the header's value, NULL when absent) a bearer
 * token of the set? 1 or 0. */
int ks_auth_check(const ks_auth_t *a, const char *authorization);

/* Paths served without a token, as upstream's always-allowed ones:
 * /healthz, /readyz, /livez. */
int ks_auth_always_allowed(const char *path);

#endif
