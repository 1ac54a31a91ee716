/* Bearer tokens (see auth.h). */
#include "auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest token kept: a longer line is refused (the request header's
 * value is read up to 1 KiB). */
#define MAX_TOKEN 1000

struct ks_auth {
    char **tokens;
    size_t *lens;
    size_t n;
};

void ks_auth_free(ks_auth_t *a)
{
    size_t i;
    if (a == NULL)
        return;
    for (i = 0; i < a->n; i++) {
        /* Tokens are secrets: wiped before the memory goes back. */
        volatile char *p = a->tokens[i];
        size_t k;
        for (k = 0; k < a->lens[i]; k++)
            p[k] = 0;
        free(a->tokens[i]);
    }
    free(a->tokens);
    free(a->lens);
    free(a);
}

size_t ks_auth_count(const ks_auth_t *a)
{
    return a ? a->n : 0;
}

static int add_token(ks_auth_t *a, const char *t, size_t len)
{
    char **nt = realloc(a->tokens, (a->n + 1) * sizeof *nt);
    size_t *nl;
    if (nt == NULL)
        return -1;
    a->tokens = nt;
    nl = realloc(a->lens, (a->n + 1) * sizeof *nl);
    if (nl == NULL)
        return -1;
    a->lens = nl;
    if ((a->tokens[a->n] = malloc(len + 1)) == NULL)
        return -1;
    memcpy(a->tokens[a->n], t, len);
    a->tokens[a->n][len] = '\0';
    a->lens[a->n] = len;
    a->n++;
    return 0;
}

ks_auth_t *ks_auth_load(const char *path, ks_error_t *err)
{
    FILE *f = fopen(path, "r");
    ks_auth_t *a;
    char line[4096];
    unsigned lineno = 0;
    if (f == NULL) {
        ks_error_set(err, KS_EIO, "--token-file %s: %s", path,
                     strerror(errno));
        return NULL;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL) {
        fclose(f);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        char *s = line, *e;
        size_t len, k;
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            ks_error_set(err, KS_EINVAL, "%s:%u: line too long", path,
                         lineno);
            goto fail;
        }
        while (*s == ' ' || *s == '\t')
            s++;
        e = s + strcspn(s, ",\r\n");
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        len = (size_t)(e - s);
        if (*s == '#' || *s == '\0' || *s == '\r' || *s == '\n')
            continue; /* a comment or a blank line */
        if (len == 0) {
            ks_error_set(err, KS_EINVAL, "%s:%u: empty token", path, lineno);
            goto fail;
        }
        if (len > MAX_TOKEN) {
            ks_error_set(err, KS_EINVAL, "%s:%u: token longer than %d bytes",
                         path, lineno, MAX_TOKEN);
            goto fail;
        }
        for (k = 0; k < len; k++)
            if ((unsigned char)s[k] <= ' ' || s[k] == 0x7f) {
                ks_error_set(err, KS_EINVAL,
                             "%s:%u: a token has a space or a control "
                             "character at column %zu",
                             path, lineno, (size_t)(s - line) + k + 1);
                goto fail;
            }
        if (add_token(a, s, len) != 0) {
            ks_error_set(err, KS_ENOMEM, "out of memory");
            goto fail;
        }
    }
    if (ferror(f)) {
        ks_error_set(err, KS_EIO, "--token-file %s: %s", path,
                     strerror(errno));
        goto fail;
    }
    if (a->n == 0) {
        ks_error_set(err, KS_EINVAL, "--token-file %s: no token in the file",
                     path);
        goto fail;
    }
    fclose(f);
    memset(line, 0, sizeof line);
    return a;
fail:
    fclose(f);
    memset(line, 0, sizeof line);
    ks_auth_free(a);
    return NULL;
}

/* 1 when a (alen bytes) equals b (blen bytes), in time that depends on
 * blen only (the stored token's length), not on where they differ. */
static int same(const char *a, size_t alen, const char *b, size_t blen)
{
    volatile unsigned char d = (unsigned char)(alen != blen);
    size_t i;
    for (i = 0; i < blen; i++) {
        unsigned char x = i < alen ? (unsigned char)a[i] : 0;
        d |= (unsigned char)(x ^ (unsigned char)b[i]);
    }
    return d == 0;
}

int ks_auth_check(const ks_auth_t *a, const char *authorization)
{
    const char *t;
    size_t len, i;
    int ok = 0;
    if (a == NULL || authorization == NULL)
        return 0;
    t = authorization;
    while (*t == ' ')
        t++;
    if (strncasecmp(t, "Bearer ", 7) != 0)
        return 0;
    t += 7;
    while (*t == ' ')
        t++;
    len = strlen(t);
    while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '\t'))
        len--;
    /* Every token is compared: no early exit on a match. */
    for (i = 0; i < a->n; i++)
        ok |= same(t, len, a->tokens[i], a->lens[i]);
    return ok;
}

int ks_auth_always_allowed(const char *path)
{
    return strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
           strcmp(path, "/livez") == 0;
}
