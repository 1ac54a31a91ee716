/* The scalar rules shared by every YAML reader (yaml_scalar.h). */
#include "base/yaml_scalar.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/yaml_node.h"

static int wrong(char *msg, size_t msglen, const char *want,
                 const yaml_node_t *n, const char *fix)
{
    char buf[96];
    snprintf(msg, msglen, "expected %s, found %s%s", want,
             ks_yaml_describe(n, buf, sizeof buf), fix);
    return KS_YS_WRONG;
}

int ks_yaml_want_str(const yaml_node_t *n, const char **out, size_t *len,
                     char *msg, size_t msglen)
{
    char fix[96];
    if (ks_yaml_is_null(n))
        return KS_YS_UNSET;
    if (!ks_yaml_is_scalar(n))
        return wrong(msg, msglen, "a string", n, "");
    if (ks_yaml_type(n) != KS_YAML_STR) {
        snprintf(fix, sizeof fix, "; quote it: \"%.60s\"", ks_yaml_text(n));
        return wrong(msg, msglen, "a string", n, fix);
    }
    if (memchr(ks_yaml_text(n), '\0', ks_yaml_text_len(n)) != NULL) {
        snprintf(msg, msglen, "the string contains a NUL character");
        return KS_YS_WRONG;
    }
    *out = ks_yaml_text(n);
    *len = ks_yaml_text_len(n);
    return KS_YS_OK;
}

/* Would the scalar have the type `t` without its quotes? */
static int unquoted_is(const yaml_node_t *n, ks_yaml_type_t t)
{
    yaml_node_t plain;
    if (!ks_yaml_is_quoted(n))
        return 0;
    plain = *n;
    plain.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    plain.tag = NULL;
    return ks_yaml_type(&plain) == t;
}

int ks_yaml_want_int64(const yaml_node_t *n, int64_t *out, char *msg,
                       size_t msglen)
{
    if (ks_yaml_is_null(n))
        return KS_YS_UNSET;
    if (!ks_yaml_is_scalar(n))
        return wrong(msg, msglen, "an integer", n, "");
    switch (ks_yaml_int64(n, out)) {
    case 0:
        return KS_YS_OK;
    case -2:
        snprintf(msg, msglen, "integer %.40s out of range", ks_yaml_text(n));
        return KS_YS_WRONG;
    default:
        return wrong(msg, msglen, "an integer", n,
                     unquoted_is(n, KS_YAML_INT)
                         ? " (quoted scalars are strings: remove the quotes)"
                         : "");
    }
}

int ks_yaml_want_bool(const yaml_node_t *n, int *out, char *msg,
                      size_t msglen)
{
    if (ks_yaml_is_null(n))
        return KS_YS_UNSET;
    if (!ks_yaml_is_scalar(n))
        return wrong(msg, msglen, "a boolean", n, "");
    if (ks_yaml_bool(n, out) == 0)
        return KS_YS_OK;
    return wrong(msg, msglen, "a boolean", n,
                 unquoted_is(n, KS_YAML_BOOL)
                     ? " (quoted scalars are strings: remove the quotes)"
                     : ks_yaml_bool_hint(n));
}
