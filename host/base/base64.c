/* Standard base64; see base64.h. */
#include "base/base64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char enc_table[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0..63 for alphabet characters, -1 otherwise. */
static int dec_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Describe character `c` for a message: 'x', or a code for the
 * unprintable. */
static void describe_char(unsigned char c, char *buf, size_t len)
{
    switch (c) {
    case ' ': snprintf(buf, len, "a space"); return;
    case '\t': snprintf(buf, len, "a tab"); return;
    case '\0': snprintf(buf, len, "a NUL byte"); return;
    default: break;
    }
    if (c < 0x20 || c >= 0x7f)
        snprintf(buf, len, "byte 0x%02x", c);
    else
        snprintf(buf, len, "'%c'", c);
}

static int bad_char(const char *in, size_t len, size_t i, size_t *bad_off,
                    ks_error_t *err)
{
    char what[32];
    int url = 0;
    size_t j;
    if (bad_off != NULL)
        *bad_off = i;
    for (j = 0; j < len; j++)
        if (in[j] == '-' || in[j] == '_')
            url = 1;
    describe_char((unsigned char)in[i], what, sizeof(what));
    return ks_error_set(err, KS_EPARSE,
                        "invalid base64 at character %zu (%s): not in the "
                        "standard alphabet (A-Z a-z 0-9 + /)%s",
                        i + 1, what,
                        url ? "; this looks like base64url, encode with "
                              "standard base64 (base64 -w0)"
                            : "");
}

int ks_base64_decode(const char *in, size_t len, unsigned char **out,
                     size_t *out_len, size_t *bad_off, ks_error_t *err)
{
    unsigned char *buf;
    size_t i, o = 0, nsym = 0, last_group = 0;
    uint32_t acc = 0;
    int quad = 0, pad = 0;

    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    buf = malloc(len / 4 * 3 + 4);
    if (buf == NULL)
        return ks_error_set(err, KS_ENOMEM, "out of memory decoding base64");
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;
        if (c == '\r' || c == '\n')
            continue;
        if (pad > 0) {
            /* Only more '=' may follow the first one, up to the end of
             * the group. */
            if (c != '=' || quad == 0) {
                free(buf);
                if (bad_off != NULL)
                    *bad_off = i;
                return ks_error_set(
                    err, KS_EPARSE,
                    "invalid base64 at character %zu: data after the '=' "
                    "padding (padding may only end the input)",
                    i + 1);
            }
            pad++;
            quad = (quad + 1) % 4;
            continue;
        }
        if (c == '=') {
            /* "xx==" or "xxx=": at least two symbols before it. */
            if (quad < 2) {
                free(buf);
                if (bad_off != NULL)
                    *bad_off = i;
                return ks_error_set(err, KS_EPARSE,
                                    "invalid base64 at character %zu: "
                                    "misplaced '=' padding",
                                    i + 1);
            }
            pad = 1;
            last_group = (size_t)quad;
            quad = (quad + 1) % 4;
            continue;
        }
        v = dec_value(c);
        if (v < 0) {
            free(buf);
            return bad_char(in, len, i, bad_off, err);
        }
        acc = (acc << 6) | (uint32_t)v;
        nsym++;
        if (++quad == 4) {
            buf[o++] = (unsigned char)(acc >> 16);
            buf[o++] = (unsigned char)(acc >> 8);
            buf[o++] = (unsigned char)acc;
            acc = 0;
            quad = 0;
        }
    }
    if (quad != 0) {
        free(buf);
        if (bad_off != NULL)
            *bad_off = len;
        return ks_error_set(err, KS_EPARSE,
                            "invalid base64: %zu characters is not a multiple "
                            "of 4 (the input is truncated or lacks its '=' "
                            "padding)",
                            nsym + (size_t)pad);
    }
    if (pad > 0) {
        /* last_group symbols (2 or 3) before the padding carry 1 or 2
         * bytes. */
        if (last_group == 2) {
            buf[o++] = (unsigned char)(acc >> 4);
        } else {
            buf[o++] = (unsigned char)(acc >> 10);
            buf[o++] = (unsigned char)(acc >> 2);
        }
    }
    buf[o] = '\0';
    *out = buf;
    if (out_len != NULL)
        *out_len = o;
    return 0;
}

size_t ks_base64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

size_t ks_base64_encode_to(char *dst, const void *src, size_t len)
{
    const unsigned char *s = src;
    size_t i, o = 0;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        dst[o++] = enc_table[v >> 18];
        dst[o++] = enc_table[(v >> 12) & 63];
        dst[o++] = enc_table[(v >> 6) & 63];
        dst[o++] = enc_table[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        dst[o++] = enc_table[v >> 18];
        dst[o++] = enc_table[(v >> 12) & 63];
        dst[o++] = '=';
        dst[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        dst[o++] = enc_table[v >> 18];
        dst[o++] = enc_table[(v >> 12) & 63];
        dst[o++] = enc_table[(v >> 6) & 63];
        dst[o++] = '=';
    }
    dst[o] = '\0';
    return o;
}

char *ks_base64_encode(const void *src, size_t len)
{
    char *dst = malloc(ks_base64_encoded_len(len) + 1);
    if (dst == NULL)
        return NULL;
    ks_base64_encode_to(dst, src, len);
    return dst;
}
