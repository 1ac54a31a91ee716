/* Kubernetes' name and label rules (upstream apimachinery validation). */
#include "validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS1123_LABEL_MSG                                                    \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric "    \
    "characters or '-', and must start and end with an alphanumeric "        \
    "character (e.g. 'my-name', or '123-abc', regex used for validation is " \
    "'" DNS1123_LABEL_FMT "')"
#define DNS1123_SUBDOMAIN_MSG                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case "             \
    "alphanumeric characters, '-' or '.', and must start and end with an "   \
    "alphanumeric character (e.g. 'example.com', regex used for "            \
    "validation is '" DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*')"
#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_RULE                                                           \
    "must consist of alphanumeric characters, '-', '_' or '.', and must "    \
    "start and end with an alphanumeric character (e.g. 'MyName', or "       \
    "'my.name', or '123-abc', regex used for validation is '" QNAME_FMT "')"
#define LABEL_VALUE_MSG                                                      \
    "a valid label must be an empty string or consist of alphanumeric "      \
    "characters, '-', '_' or '.', and must start and end with an "           \
    "alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345', "    \
    "regex used for validation is '(" QNAME_FMT ")?')"

/* Messages joined by "; " into a caller's buffer. */
typedef struct msgs {
    char *buf;
    size_t len, used;
    int n;
} msgs_t;

static void add(msgs_t *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(msgs_t *m, const char *fmt, ...)
{
    va_list ap;
    int w;
    m->n++;
    if (m->buf == NULL || m->used + 1 >= m->len)
        return;
    if (m->n > 1) {
        w = snprintf(m->buf + m->used, m->len - m->used, "; ");
        m->used += (size_t)w < m->len - m->used ? (size_t)w
                                                : m->len - m->used - 1;
    }
    va_start(ap, fmt);
    w = vsnprintf(m->buf + m->used, m->len - m->used, fmt, ap);
    va_end(ap);
    if (w > 0)
        m->used += (size_t)w < m->len - m->used ? (size_t)w
                                                : m->len - m->used - 1;
}

static int done(msgs_t *m)
{
    return m->n ? -1 : 0;
}

static void init(msgs_t *m, char *buf, size_t len)
{
    m->buf = len ? buf : NULL;
    m->len = len;
    m->used = 0;
    m->n = 0;
    if (m->buf)
        m->buf[0] = '\0';
}

static int lower_alnum(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static int alnum(unsigned char ch)
{
    return lower_alnum(ch) || (ch >= 'A' && ch <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n). */
static int is_label(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || !lower_alnum((unsigned char)s[0]) ||
        !lower_alnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 1; i + 1 < n; i++)
        if (!lower_alnum((unsigned char)s[i]) && s[i] != '-')
            return 0;
    return 1;
}

/* label(\.label)* over s[0..n). */
static int is_subdomain(const char *s, size_t n)
{
    size_t start = 0, i;
    for (i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!is_label(s + start, i - start))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n). */
static int is_qname_part(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || !alnum((unsigned char)s[0]) ||
        !alnum((unsigned char)s[n - 1]))
        return 0;
    for (i = 1; i + 1 < n; i++)
        if (!alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' &&
            s[i] != '.')
            return 0;
    return 1;
}

static void subdomain_msgs(msgs_t *m, const char *prefix, const char *s,
                           size_t n)
{
    if (n > KS_DNS1123_SUBDOMAIN_MAX)
        add(m, "%smust be no more than %d characters", prefix,
            KS_DNS1123_SUBDOMAIN_MAX);
    if (!is_subdomain(s, n))
        add(m, "%s%s", prefix, DNS1123_SUBDOMAIN_MSG);
}

int ks_validate_dns1123_subdomain(const char *s, char *msg, size_t msg_len)
{
    msgs_t m;
    init(&m, msg, msg_len);
    subdomain_msgs(&m, "", s, strlen(s));
    return done(&m);
}

int ks_validate_dns1123_label(const char *s, char *msg, size_t msg_len)
{
    size_t n = strlen(s);
    msgs_t m;
    init(&m, msg, msg_len);
    if (n > KS_DNS1123_LABEL_MAX)
        add(&m, "must be no more than %d characters", KS_DNS1123_LABEL_MAX);
    if (!is_label(s, n))
        add(&m, "%s", DNS1123_LABEL_MSG);
    return done(&m);
}

int ks_validate_qualified_name(const char *s, char *msg, size_t msg_len)
{
    const char *slash = strchr(s, '/'), *name = s;
    size_t n;
    msgs_t m;
    init(&m, msg, msg_len);
    if (slash != NULL) {
        if (strchr(slash + 1, '/') != NULL) {
            add(&m, "a qualified name %s with an optional DNS subdomain "
                    "prefix and '/' (e.g. 'example.com/MyName')",
                QNAME_RULE);
            return done(&m);
        }
        if (slash == s)
            add(&m, "prefix part must be non-empty");
        else
            subdomain_msgs(&m, "prefix part ", s, (size_t)(slash - s));
        name = slash + 1;
    }
    n = strlen(name);
    if (n == 0)
        add(&m, "name part must be non-empty");
    else if (n > KS_QUALIFIED_NAME_MAX)
        add(&m, "name part must be no more than %d characters",
            KS_QUALIFIED_NAME_MAX);
    if (!is_qname_part(name, n))
        add(&m, "name part %s", QNAME_RULE);
    return done(&m);
}

int ks_validate_label_value(const char *s, char *msg, size_t msg_len)
{
    size_t n = strlen(s);
    msgs_t m;
    init(&m, msg, msg_len);
    if (n > KS_LABEL_VALUE_MAX)
        add(&m, "must be no more than %d characters", KS_LABEL_VALUE_MAX);
    if (n > 0 && !is_qname_part(s, n))
        add(&m, "%s", LABEL_VALUE_MSG);
    return done(&m);
}

char *ks_validate_quote(const char *s, char *out, size_t out_len)
{
    size_t o = 0;
    if (out_len < 8) {
        if (out_len)
            out[0] = '\0';
        return out;
    }
    out[o++] = '"';
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char e[8];
        size_t el;
        if (ch == '"' || ch == '\\')
            el = (size_t)snprintf(e, sizeof e, "\\%c", ch);
        else if (ch == '\n')
            el = (size_t)snprintf(e, sizeof e, "\\n");
        else if (ch == '\t')
            el = (size_t)snprintf(e, sizeof e, "\\t");
        else if (ch < 0x20 || ch == 0x7f)
            el = (size_t)snprintf(e, sizeof e, "\\x%02x", ch);
        else {
            e[0] = (char)ch;
            el = 1;
        }
        /* Room for this, the closing quote, "..." and the NUL. */
        if (o + el + 5 > out_len) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, e, el);
        o += el;
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}

int ks_validate_field_labels(const ks_labels_t *labels, const char *field,
                             char *out, size_t out_len)
{
    char why[2048], q[600];
    uint32_t i;
    for (i = 0; labels && i < labels->n; i++) {
        const ks_label_t *l = &labels->items[i];
        const char *bad = NULL;
        if (ks_validate_qualified_name(l->key, why, sizeof why) != 0)
            bad = l->key;
        else if (ks_validate_label_value(l->value, why, sizeof why) != 0)
            bad = l->value;
        if (bad != NULL) {
            if (out_len)
                snprintf(out, out_len, "%s: Invalid value: %s: %s", field,
                         ks_validate_quote(bad, q, sizeof q), why);
            return -1;
        }
    }
    return 0;
}
