/*
 * Finding and authenticating to the API server: kubeconfig loading and
 * KUBECONFIG merging, the errors (text and position), in-cluster
 * configuration, rotating token files, exec credential plugins (real
 * shell scripts in a temporary directory), and base64.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/error.h"
#include "kube/exec_credential.h"
#include "kube/kubeconfig.h"

/* ---- fixture: a temporary directory and a clean environment ----------- */

static char tmp[256];

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ks-kubeconfig-XXXXXX",
             base && base[0] ? base : "/tmp");
    ck_assert_msg(mkdtemp(tmp) != NULL, "mkdtemp: %s", strerror(errno));
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("POD_NAMESPACE");
    unsetenv("KS_TEST_PLUGIN_VAR");
}

static int rm_one(const char *p, const struct stat *sb, int flag,
                  struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    return remove(p);
}

static void teardown(void)
{
    nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* tmp/NAME (a static buffer per call slot). */
static const char *tp(const char *name)
{
    static char bufs[8][512];
    static int slot;
    char *b = bufs[slot++ % 8];
    snprintf(b, 512, "%s/%s", tmp, name);
    return b;
}

static void wfile_mode(const char *name, const char *text, mode_t mode)
{
    char path[512], *slash;
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    for (slash = strchr(path + strlen(tmp) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    f = fopen(path, "w");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

static void wfile(const char *name, const char *text)
{
    wfile_mode(name, text, 0644);
}

static char *rfile(const char *name)
{
    static char buf[16384];
    FILE *f = fopen(tp(name), "r");
    size_t n;
    if (f == NULL)
        return NULL;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int64_t fake_now;
static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static ks_kube_conn_t *load_ok(const char *path, const char *ctx)
{
    ks_kube_conn_t *k = NULL;
    ks_error_t err = {0};
    int rc = ks_kubeconfig_load(path, ctx, &k, &err);
    ck_assert_msg(rc == 0, "load %s: %s: %s", path ? path : "(env)",
                  ks_err_name(rc), err.msg);
    ck_assert_ptr_nonnull(k);
    k->now = fake_clock;
    return k;
}

static const char *auth_of(ks_kube_conn_t *k)
{
    static char buf[4096];
    ks_kube_cred_t c;
    ks_error_t err = {0};
    int rc = ks_kube_conn_credentials(k, &c, &err);
    ck_assert_msg(rc == 0, "credentials: %s: %s", ks_err_name(rc), err.msg);
    snprintf(buf, sizeof buf, "%s", c.authorization);
    return buf;
}

#define assert_has(hay, needle)                                                \
    ck_assert_msg(strstr((hay), (needle)) != NULL,                             \
                  "expected \"%s\" in:\n%s", (needle), (hay))

/* ---- merging KUBECONFIG ------------------------------------------------ */

static const char cfg_a[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: a-ctx\n"
    "clusters:\n"
    "- name: shared\n"
    "  cluster:\n"
    "    server: https://a.example:6443\n"
    "- name: only-a\n"
    "  cluster: {server: https://only-a.example}\n"
    "contexts:\n"
    "- name: a-ctx\n"
    "  context: {cluster: shared, user: ua, namespace: team-a}\n"
    "- name: shared-ctx\n"
    "  context: {cluster: only-a, user: shared-user}\n"
    "users:\n"
    "- name: ua\n"
    "  user: {token: a-token}\n"
    "- name: shared-user\n"
    "  user: {token: from-a}\n";

static const char cfg_b[] =
    "current-context: b-ctx\n"
    "clusters:\n"
    "- name: shared\n"
    "  cluster: {server: https://b.example}\n"
    "- name: only-b\n"
    "  cluster: {server: https://only-b.example}\n"
    "contexts:\n"
    "- name: b-ctx\n"
    "  context: {cluster: only-b, user: ub}\n"
    "- name: shared-ctx\n"
    "  context: {cluster: only-b, user: ub}\n"
    "users:\n"
    "- name: ub\n"
    "  user: {username: bob, password: secret}\n"
    "- name: shared-user\n"
    "  user: {token: from-b}\n";

/* Like cfg_b without current-context. */
static const char cfg_c[] =
    "clusters:\n"
    "- name: c\n"
    "  cluster: {server: https://c.example}\n"
    "contexts:\n"
    "- {name: c-ctx, context: {cluster: c, user: uc}}\n"
    "users:\n"
    "- {name: uc, user: {token: c-token}}\n";

typedef struct merge_row {
    const char *list;  /* KUBECONFIG, names relative to tmp, ':' joined */
    const char *context;
    const char *server, *ctx, *user, *ns, *source, *auth;
} merge_row_t;

static const merge_row_t merge_rows[] = {
    /* current-context from the first file; "shared" from the first. */
    {"a:b", NULL, "https://a.example:6443", "a-ctx", "ua", "team-a", "a",
     "Bearer a-token"},
    {"b:a", NULL, "https://only-b.example", "b-ctx", "ub", "default", "b",
     "Basic Ym9iOnNlY3JldA=="},
    /* Missing files are skipped; repeated ones read once. */
    {"missing:a:b:a", NULL, "https://a.example:6443", "a-ctx", "ua",
     "team-a", "a", "Bearer a-token"},
    /* An explicit context; a context only in the second file. */
    {"a:b", "b-ctx", "https://only-b.example", "b-ctx", "ub", "default", "b",
     "Basic Ym9iOnNlY3JldA=="},
    /* shared-ctx and shared-user: the first file's definitions. */
    {"a:b", "shared-ctx", "https://only-a.example", "shared-ctx",
     "shared-user", "default", "a", "Bearer from-a"},
    {"b:a", "shared-ctx", "https://only-b.example", "shared-ctx", "ub",
     "default", "b", "Basic Ym9iOnNlY3JldA=="},
    /* A context from b using a's cluster "shared" when a comes first. */
    {"c:b:a", NULL, "https://only-b.example", "b-ctx", "ub", "default", "b",
     "Basic Ym9iOnNlY3JldA=="},
    {"a:c", "c-ctx", "https://c.example", "c-ctx", "uc", "default", "c",
     "Bearer c-token"},
};

START_TEST(test_merge)
{
    const merge_row_t *r = &merge_rows[_i];
    char list[2048] = "", *save = NULL, *tok, names[256], want_src[512];
    ks_kube_conn_t *k;
    wfile("a", cfg_a);
    wfile("b", cfg_b);
    wfile("c", cfg_c);
    snprintf(names, sizeof names, "%s", r->list);
    for (tok = strtok_r(names, ":", &save); tok;
         tok = strtok_r(NULL, ":", &save)) {
        strcat(list, list[0] ? ":" : "");
        strcat(list, tp(tok));
    }
    setenv("KUBECONFIG", list, 1);
    k = load_ok(NULL, r->context);
    ck_assert_str_eq(k->server, r->server);
    ck_assert_str_eq(k->context, r->ctx);
    ck_assert_str_eq(k->user, r->user);
    ck_assert_str_eq(k->namespace, r->ns);
    snprintf(want_src, sizeof want_src, "%s/%s", tmp, r->source);
    ck_assert_str_eq(k->source, want_src);
    ck_assert_int_eq(k->tls, 1);
    ck_assert_str_eq(auth_of(k), r->auth);
    ks_kube_conn_free(k);
}
END_TEST

START_TEST(test_context_errors)
{
    ks_kube_conn_t *k = NULL;
    ks_error_t err = {0};
    char list[1100];
    wfile("a", cfg_a);
    wfile("b", cfg_b);
    wfile("c", cfg_c);
    snprintf(list, sizeof list, "%s:%s", tp("a"), tp("b"));
    setenv("KUBECONFIG", list, 1);
    ck_assert_int_eq(ks_kubeconfig_load(NULL, "prod", &k, &err),
                     KS_ENOTFOUND);
    ck_assert_ptr_null(k);
    assert_has(err.msg, "context \"prod\" not found in KUBECONFIG");
    assert_has(err.msg, "(contexts: a-ctx, shared-ctx, b-ctx)");

    /* No current-context anywhere. */
    ck_assert_int_eq(ks_kubeconfig_load(tp("c"), NULL, &k, &err),
                     KS_ESCHEMA);
    assert_has(err.msg, "no current-context in ");
    assert_has(err.msg, "/c; pass --context NAME (contexts: c-ctx)");

    /* current-context naming a context nobody defines. */
    wfile("d", "current-context: gone\ncontexts: []\n");
    ck_assert_int_eq(ks_kubeconfig_load(tp("d"), NULL, &k, &err),
                     KS_ENOTFOUND);
    assert_has(err.msg, "/d:1:18: current-context: context \"gone\" not "
                        "found in ");
    assert_has(err.msg, "(no contexts defined)");

    /* None of the files exists. */
    snprintf(list, sizeof list, "%s:%s", tp("x"), tp("y"));
    setenv("KUBECONFIG", list, 1);
    ck_assert_int_eq(ks_kubeconfig_load(NULL, NULL, &k, &err), KS_ENOTFOUND);
    assert_has(err.msg, "none of the files in KUBECONFIG");
    /* An explicit path must exist. */
    ck_assert_int_eq(ks_kubeconfig_load(tp("x"), NULL, &k, &err),
                     KS_ENOTFOUND);
    assert_has(err.msg, "/x does not exist");

    /* $HOME/.kube/config when KUBECONFIG is unset or empty. */
    setenv("KUBECONFIG", "", 1);
    setenv("HOME", tmp, 1);
    ck_assert_int_eq(ks_kubeconfig_load(NULL, NULL, &k, &err), KS_ENOTFOUND);
    assert_has(err.msg, "/.kube/config does not exist");
    wfile(".kube/config", cfg_a);
    k = load_ok(NULL, NULL);
    ck_assert_str_eq(k->context, "a-ctx");
    ks_kube_conn_free(k);
}
END_TEST

/* ---- paths and data ------------------------------------------------------ */

START_TEST(test_relative_paths)
{
    char want[600], cwd[4096];
    ks_kube_conn_t *k;
    ks_error_t err = {0};
    wfile("certs/ca.pem", "CA PEM\n");
    wfile("conf/keys/client.crt", "CERT\n");
    wfile("conf/keys/client.key", "KEY\n");
    wfile("conf/kubeconfig",
          "current-context: x\n"
          "clusters:\n"
          "- name: c\n"
          "  cluster:\n"
          "    server: https://h:6443\n"
          "    certificate-authority: ../certs/ca.pem\n"
          "    tls-server-name: api.internal\n"
          "    proxy-url: socks5://proxy:1080\n"
          "contexts:\n"
          "- name: x\n"
          "  context: {cluster: c, user: u}\n"
          "users:\n"
          "- name: u\n"
          "  user:\n"
          "    client-certificate: keys/client.crt\n"
          "    client-key: ./keys/../keys/client.key\n");
    /* Relative to the kubeconfig's directory, not the working directory,
     * also when the kubeconfig path itself is relative. */
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(tp("certs")), 0);
    k = load_ok("../conf/kubeconfig", NULL);
    ck_assert_int_eq(chdir(cwd), 0);
    snprintf(want, sizeof want, "%s/certs/ca.pem", tmp);
    ck_assert_str_eq(k->ca_file, want);
    snprintf(want, sizeof want, "%s/conf/keys/client.crt", tmp);
    ck_assert_str_eq(k->cert_file, want);
    snprintf(want, sizeof want, "%s/conf/keys/client.key", tmp);
    ck_assert_str_eq(k->key_file, want);
    ck_assert_str_eq(k->tls_server_name, "api.internal");
    ck_assert_str_eq(k->proxy_url, "socks5://proxy:1080");
    ck_assert_ptr_null(k->ca_data);
    ck_assert_ptr_null(k->exec);
    /* A client certificate alone: no Authorization header. */
    ck_assert_str_eq(auth_of(k), "");
    ks_kube_conn_free(k);

    /* A referenced file that does not exist: its position and the
     * directory it was looked up in. */
    remove(tp("certs/ca.pem"));
    ck_assert_int_eq(ks_kubeconfig_load(tp("conf/kubeconfig"), NULL, &k,
                                        &err),
                     KS_EIO);
    assert_has(err.msg, "/conf/kubeconfig:6:28: "
                        "clusters[0].cluster.certificate-authority: cannot "
                        "read ");
    assert_has(err.msg, "/certs/ca.pem: No such file or directory (a "
                        "relative path is relative to the directory of the "
                        "kubeconfig file, ");
}
END_TEST

START_TEST(test_data_fields)
{
    static const char ca[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END "
                             "CERTIFICATE-----\n";
    static const char crt[] = "client cert\n";
    static const char key[] = "client key\x01\xff";
    char *b_ca = ks_base64_encode(ca, strlen(ca));
    char *b_crt = ks_base64_encode(crt, strlen(crt));
    char *b_key = ks_base64_encode(key, strlen(key));
    char text[4096];
    ks_kube_conn_t *k;
    snprintf(text, sizeof text,
             "current-context: x\n"
             "clusters:\n"
             "- name: c\n"
             "  cluster:\n"
             "    server: https://h\n"
             "    certificate-authority-data: %s\n"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    client-certificate-data: \"%s\"\n"
             "    client-key-data: |\n"
             "      %.8s\n"
             "      %s\n",
             b_ca, b_crt, b_key, b_key + 8);
    wfile("config", text);
    k = load_ok(tp("config"), NULL);
    ck_assert_uint_eq(k->ca_len, strlen(ca));
    ck_assert_mem_eq(k->ca_data, ca, strlen(ca));
    ck_assert_int_eq(k->ca_data[k->ca_len], '\0');
    ck_assert_uint_eq(k->cert_len, strlen(crt));
    ck_assert_mem_eq(k->cert_data, crt, strlen(crt));
    /* Line breaks inside the value are skipped, as Go does. */
    ck_assert_uint_eq(k->key_len, strlen(key));
    ck_assert_mem_eq(k->key_data, key, strlen(key));
    ck_assert_ptr_null(k->ca_file);
    ks_kube_conn_free(k);
    free(b_ca);
    free(b_crt);
    free(b_key);
}
END_TEST

/* ---- errors with positions (table) -------------------------------------- */

#define HEAD                                                                   \
    "current-context: x\n"                                                    \
    "contexts:\n"                                                              \
    "- name: x\n"                                                              \
    "  context: {cluster: c, user: u}\n"

/* Line 5 onwards: a cluster c and a user u. */
#define CLUSTER(extra)                                                         \
    "clusters:\n"                                                              \
    "- name: c\n"                                                              \
    "  cluster:\n"                                                             \
    "    server: https://h\n" extra

typedef struct err_row {
    const char *yaml;
    int code;
    const char *want; /* substring; "config:L:C: ..." */
} err_row_t;

static const err_row_t err_rows[] = {
    {HEAD CLUSTER("    certificate-authority-data: \"QUJD$EVG\"\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:33: clusters[0].cluster.certificate-authority-data: invalid "
     "base64 at character 5 ('$'): not in the standard alphabet"},
    {HEAD CLUSTER("    certificate-authority-data: QUJDRA\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:33: clusters[0].cluster.certificate-authority-data: invalid "
     "base64: 6 characters is not a multiple of 4"},
    {HEAD CLUSTER("    insecure-skip-tls-verify: \"yes\"\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:31: clusters[0].cluster.insecure-skip-tls-verify: expected a "
     "boolean, found a string (\"yes\")"},
    {HEAD CLUSTER("    insecure-skip-tls-verify: yes\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:31: clusters[0].cluster.insecure-skip-tls-verify: expected a "
     "boolean, found a string (\"yes\"); ksched reads YAML 1.2, where "
     "yes/no/on/off are strings: write true or false"},
    {HEAD CLUSTER("    insecure-skip-tls-verify: 'true'\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA, "(\"true\") (quoted scalars are strings: remove the quotes)"},
    {HEAD "clusters:\n- name: c\n  cluster:\n    server: {url: x}\n",
     KS_ESCHEMA,
     "/config:8:13: clusters[0].cluster.server: expected a string, found a "
     "mapping"},
    {HEAD "clusters: {c: {server: x}}\n", KS_ESCHEMA,
     "/config:5:11: clusters: expected a sequence, found a mapping"},
    /* A wrong type in an entry that is not used is still an error (kubectl
     * decodes the whole file). */
    {HEAD CLUSTER("- name: other\n  cluster: {server: 8080}\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:10:21: clusters[1].cluster.server: expected a string, found an "
     "integer (\"8080\"); quote it: \"8080\""},
    {HEAD CLUSTER("- name: c\n  cluster: {server: https://other}\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:3: clusters[1]: duplicate cluster name \"c\" (first defined "
     "at "},
    {HEAD CLUSTER("") "users:\n- name: u\n  user:\n    auth-provider:\n"
                      "      name: gcp\n      config: {}\n",
     KS_EAUTH,
     "/config:13:7: users[0].user.auth-provider: auth-provider gcp is not "
     "supported; use an exec plugin"},
    {HEAD CLUSTER("") "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    exec:\n"
                      "      command: get-token\n"
                      "      apiVersion: client.authentication.k8s.io/v1alpha1\n",
     KS_ESCHEMA,
     "/config:14:19: users[0].user.exec.apiVersion: "
     "\"client.authentication.k8s.io/v1alpha1\" is not supported; use "
     "client.authentication.k8s.io/v1 or v1beta1"},
    {HEAD CLUSTER("") "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    exec:\n"
                      "      command: get-token\n"
                      "      apiVersion: client.authentication.k8s.io/v1\n",
     KS_ESCHEMA,
     "/config:13:7: users[0].user.exec: interactiveMode must be specified"},
    {HEAD CLUSTER("") "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    exec:\n"
                      "      command: get-token\n"
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: Always\n",
     KS_ESCHEMA,
     "/config:15:24: users[0].user.exec.interactiveMode: Always needs a "
     "terminal"},
    {HEAD CLUSTER("") "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    exec:\n"
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: Never\n"
                      "      env: [{value: x}]\n",
     KS_ESCHEMA, "users[0].user.exec: command must be specified"},
    {HEAD CLUSTER("") "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    exec:\n"
                      "      command: x\n"
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: Never\n"
                      "      env: [{value: x}]\n",
     KS_ESCHEMA,
     "/config:16:13: users[0].user.exec.env[0]: env variable name must be "
     "specified"},
    {HEAD CLUSTER("") "users:\n- name: u\n  user:\n    token: t\n"
                      "    username: admin\n    password: p\n",
     KS_ESCHEMA,
     "/config:13:15: users[0].user.username: more than one authentication "
     "method found for user \"u\": token and username/password"},
    {HEAD CLUSTER("") "users:\n- name: u\n  user:\n"
                      "    client-certificate-data: QUJD\n",
     KS_ESCHEMA,
     "/config:12:30: users[0].user.client-certificate-data: user \"u\" has a "
     "client certificate but no key"},
    {HEAD CLUSTER("    certificate-authority: /etc/hosts\n"
                  "    certificate-authority-data: QUJD\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:10:33: clusters[0].cluster.certificate-authority-data: "
     "certificate-authority-data and certificate-authority are both set"},
    {HEAD CLUSTER("    certificate-authority: /etc/hosts\n"
                  "    insecure-skip-tls-verify: true\n")
         "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:10:31: clusters[0].cluster.insecure-skip-tls-verify: cluster "
     "\"c\" sets insecure-skip-tls-verify and a certificate authority"},
    {HEAD CLUSTER("    proxy-url: ftp://p\n") "users: [{name: u, user: {}}]\n",
     KS_ESCHEMA,
     "/config:9:16: clusters[0].cluster.proxy-url: invalid proxy-url "
     "\"ftp://p\" for cluster \"c\": the scheme must be http, https, or "
     "socks5"},
    {HEAD "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: "
          "true\n",
     KS_ESCHEMA,
     "/config:8:5: clusters[0].cluster: no server found for cluster \"c\"; "
     "set server: https://HOST:PORT"},
    {HEAD "clusters:\n- name: d\n  cluster: {server: https://d}\n",
     KS_ENOTFOUND,
     "/config:4:22: contexts[0].context.cluster: cluster \"c\" of context "
     "\"x\" not found in "},
    {HEAD "clusters: [{name: d, cluster: {server: https://d}}, "
          "{name: e, cluster: {server: https://e}}]\n",
     KS_ENOTFOUND, "(clusters: d, e)"},
    {HEAD CLUSTER("") "users:\n- name: u\n  user:\n    token: [a]\n",
     KS_ESCHEMA,
     "/config:12:12: users[0].user.token: expected a string, found a "
     "sequence"},
    {HEAD CLUSTER("") "users:\n- name: u\n  user:\n    tokenFile: nope\n",
     KS_EAUTH,
     "/config:12:16: users[0].user.tokenFile: cannot read token file "},
    {"current-context: x\nclusters:\n  - name: c\n   bad: [\n", KS_EPARSE,
     "/config:4:"},
    {"- just\n- a list\n", KS_ESCHEMA,
     "/config:1:1: expected a kubeconfig (a mapping with clusters"},
};

START_TEST(test_errors)
{
    const err_row_t *r = &err_rows[_i];
    ks_kube_conn_t *k = NULL;
    ks_error_t err = {0};
    int rc;
    wfile("config", r->yaml);
    rc = ks_kubeconfig_load(tp("config"), NULL, &k, &err);
    ck_assert_msg(rc == r->code, "row %d: want %s, got %s: %s", _i,
                  ks_err_name(r->code), ks_err_name(rc), err.msg);
    ck_assert_ptr_null(k);
    ck_assert_msg(strstr(err.msg, r->want) != NULL,
                  "row %d: expected \"%s\" in:\n%s", _i, r->want, err.msg);
    ck_assert_msg(strncmp(err.msg, tmp, strlen(tmp)) == 0,
                  "row %d: the message does not start with the file: %s", _i,
                  err.msg);
}
END_TEST

START_TEST(test_json_and_http)
{
    ks_kube_conn_t *k;
    /* JSON, with tabs, as kubectl config view -o json prints it. */
    wfile("config.json",
          "{\n"
          "\t\"kind\": \"Config\",\n"
          "\t\"apiVersion\": \"v1\",\n"
          "\t\"clusters\": [{\"name\": \"c\", \"cluster\": {\n"
          "\t\t\"server\": \"https://json.example:443\",\n"
          "\t\t\"insecure-skip-tls-verify\": true,\n"
          "\t\t\"disable-compression\": false}}],\n"
          "\t\"users\": [{\"name\": \"u\", \"user\": {\"token\": \"jt\", "
          "\"unknown-field\": [1, 2]}}],\n"
          "\t\"contexts\": [{\"name\": \"j\", \"context\": {\"cluster\": "
          "\"c\", \"user\": \"u\", \"namespace\": \"ns1\"}}],\n"
          "\t\"current-context\": \"j\",\n"
          "\t\"preferences\": {}\n"
          "}\n");
    k = load_ok(tp("config.json"), NULL);
    ck_assert_str_eq(k->server, "https://json.example:443");
    ck_assert_int_eq(k->insecure, 1);
    ck_assert_str_eq(k->namespace, "ns1");
    ck_assert_str_eq(auth_of(k), "Bearer jt");
    ks_kube_conn_free(k);

    /* http:// (and a server without a scheme, which client-go treats as
     * http://): credentials and TLS settings are not used, as kubectl. */
    wfile("config",
          "current-context: p\n"
          "clusters:\n"
          "- {name: plain, cluster: {server: \"http://localhost:8001\"}}\n"
          "- {name: bare, cluster: {server: \"localhost:8080\"}}\n"
          "contexts:\n"
          "- {name: p, context: {cluster: plain, user: u}}\n"
          "- {name: b, context: {cluster: bare, user: missing-user}}\n"
          "users:\n"
          "- {name: u, user: {token: secret}}\n");
    k = load_ok(tp("config"), NULL);
    ck_assert_int_eq(k->tls, 0);
    ck_assert_ptr_null(k->token);
    ck_assert_str_eq(auth_of(k), "");
    ks_kube_conn_free(k);
    /* A context whose user does not exist: no credentials (kubectl). */
    k = load_ok(tp("config"), "b");
    ck_assert_str_eq(k->server, "http://localhost:8080");
    ck_assert_str_eq(k->user, "missing-user");
    ck_assert_str_eq(auth_of(k), "");
    ks_kube_conn_free(k);
}
END_TEST

START_TEST(test_describe)
{
    ks_kube_conn_t *k;
    char buf[1024], want[1024];
    wfile("config", cfg_a);
    k = load_ok(tp("config"), NULL);
    snprintf(want, sizeof want,
             "server https://a.example:6443 (context a-ctx, user ua, from "
             "%s/config)",
             tmp);
    ck_assert_str_eq(ks_kube_conn_describe(k, buf, sizeof buf), want);
    ks_kube_conn_describe(k, buf, 10);
    ck_assert_str_eq(buf, "server ht");
    ks_kube_conn_free(k);
}
END_TEST

/* An alias bomb (10 levels of 10 aliases: 10^10 nodes once expanded) is
 * refused while the file is loaded, quickly, at the first alias past the
 * limit. */
START_TEST(test_alias_bomb)
{
    ks_kube_conn_t *k = NULL;
    ks_error_t err = {0};
    char yaml[4096], want[1024];
    size_t off = 0;
    int lvl, i, rc;
    off += (size_t)snprintf(yaml + off, sizeof yaml - off,
                            "current-context: x\nx-bomb:\n"
                            "  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (lvl = 1; lvl < 10; lvl++) {
        off += (size_t)snprintf(yaml + off, sizeof yaml - off,
                                "  l%d: &l%d [", lvl, lvl);
        for (i = 0; i < 10; i++)
            off += (size_t)snprintf(yaml + off, sizeof yaml - off, "%s*l%d",
                                    i ? ", " : "", lvl - 1);
        off += (size_t)snprintf(yaml + off, sizeof yaml - off, "]\n");
    }
    snprintf(yaml + off, sizeof yaml - off,
             "clusters: [{name: c, cluster: {server: https://h}}]\n");
    wfile("config", yaml);
    /* Refused as the document is built (the expansion is counted, never
     * performed): the position shows it stopped at the first alias past
     * the limit. */
    rc = ks_kubeconfig_load(tp("config"), NULL, &k, &err);
    ck_assert_int_eq(rc, KS_EPARSE);
    ck_assert_ptr_null(k);
    /* The eighth *l4 of level 5 takes the expanded size (counted as the
     * document is built) past a million nodes. */
    snprintf(want, sizeof want,
             "%s:8:47: alias *l4: expanding the aliases would give more "
             "than ",
             tp("config"));
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0,
                  "expected \"%s...\", got:\n%s", want, err.msg);
    assert_has(err.msg, "refusing a possible alias bomb");
}
END_TEST

/* ---- in-cluster ---------------------------------------------------------- */

START_TEST(test_in_cluster)
{
    ks_kube_conn_t *k = NULL;
    ks_error_t err = {0};
    char want[600];

    /* Not in a cluster. */
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err),
                     KS_ENOTFOUND);
    assert_has(err.msg, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                        "must be set");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err),
                     KS_ENOTFOUND);

    /* In a cluster, but no token mounted. */
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    wfile("sa/ca.crt", "CA\n");
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), KS_EIO);
    ck_assert_ptr_null(k);
    snprintf(want, sizeof want,
             "cannot read the service account token %s/sa/token: No such "
             "file or directory",
             tmp);
    assert_has(err.msg, want);
    wfile("sa/token", "\n");
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), KS_EAUTH);
    assert_has(err.msg, "/sa/token is empty");
    wfile("sa/token", "sa-token-1\n");
    remove(tp("sa/ca.crt"));
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), KS_EIO);
    assert_has(err.msg, "/sa/ca.crt: No such file or directory");

    wfile("sa/ca.crt", "CA\n");
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), 0);
    ck_assert_str_eq(k->server, "https://10.96.0.1:443");
    ck_assert_str_eq(k->namespace, "default");
    snprintf(want, sizeof want, "%s/sa/ca.crt", tmp);
    ck_assert_str_eq(k->ca_file, want);
    snprintf(want, sizeof want, "%s/sa/token", tmp);
    ck_assert_str_eq(k->token_file, want);
    ck_assert_int_eq(k->in_cluster, 1);
    k->now = fake_clock;
    ck_assert_str_eq(auth_of(k), "Bearer sa-token-1");
    snprintf(want, sizeof want,
             "server https://10.96.0.1:443 (in-cluster, service account "
             "%s/sa)",
             tmp);
    {
        char d[1024];
        ck_assert_str_eq(ks_kube_conn_describe(k, d, sizeof d), want);
    }
    ks_kube_conn_free(k);

    /* IPv6 host, namespace file. */
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    wfile("sa/namespace", "kube-system\n");
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), 0);
    ck_assert_str_eq(k->server, "https://[fd00:10:96::1]:6443");
    ck_assert_str_eq(k->namespace, "kube-system");
    ks_kube_conn_free(k);
    /* POD_NAMESPACE wins (client-go). */
    setenv("POD_NAMESPACE", "from-env", 1);
    ck_assert_int_eq(ks_kubeconfig_in_cluster(tp("sa"), &k, &err), 0);
    ck_assert_str_eq(k->namespace, "from-env");
    ks_kube_conn_free(k);
}
END_TEST

/* ---- token files ----------------------------------------------------------- */

static void set_mtime(const char *name, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, tp(name), ts, 0), 0);
}

START_TEST(test_token_file_rotation)
{
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    unsigned long gen;
    wfile("tok", "token-one\n");
    set_mtime("tok", 1000);
    wfile("config",
          "current-context: x\n"
          "clusters: [{name: c, cluster: {server: https://h}}]\n"
          "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
          "users: [{name: u, user: {tokenFile: tok}}]\n");
    k = load_ok(tp("config"), NULL);
    fake_now = 5000000;
    ck_assert_str_eq(auth_of(k), "Bearer token-one");
    ck_assert_uint_eq(k->token_file_reads, 1);
    gen = k->generation;

    /* Unchanged file, clock within the period: no re-read. */
    fake_now += 30000;
    ck_assert_str_eq(auth_of(k), "Bearer token-one");
    ck_assert_uint_eq(k->token_file_reads, 1);
    ck_assert_uint_eq(k->generation, gen);

    /* Rotated (size and mtime change): read at once. */
    wfile("tok", "token-two-rotated\n");
    ck_assert_str_eq(auth_of(k), "Bearer token-two-rotated");
    ck_assert_uint_eq(k->token_file_reads, 2);
    ck_assert_uint_gt(k->generation, gen);
    gen = k->generation;

    /* Same size, mtime put back: invisible to stat, picked up once the
     * period has passed. */
    set_mtime("tok", 2000);
    ck_assert_str_eq(auth_of(k), "Bearer token-two-rotated"); /* stat differs */
    ck_assert_uint_eq(k->token_file_reads, 3);
    wfile("tok", "token-222-rotated\n");
    set_mtime("tok", 2000);
    fake_now += 59999;
    ck_assert_str_eq(auth_of(k), "Bearer token-two-rotated");
    ck_assert_uint_eq(k->token_file_reads, 3);
    fake_now += 1;
    ck_assert_str_eq(auth_of(k), "Bearer token-222-rotated");
    ck_assert_uint_eq(k->token_file_reads, 4);
    ck_assert_uint_gt(k->generation, gen);

    /* After a 401: read again even though nothing changed. */
    ks_kube_conn_invalidate(k);
    ck_assert_str_eq(auth_of(k), "Bearer token-222-rotated");
    ck_assert_uint_eq(k->token_file_reads, 5);

    /* The file disappears: the last token is kept. */
    remove(tp("tok"));
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), 0);
    ck_assert_str_eq(c.authorization, "Bearer token-222-rotated");
    ks_kube_conn_free(k);

    /* token and tokenFile: the file wins while readable, the token is the
     * fallback. */
    wfile("config",
          "current-context: x\n"
          "clusters: [{name: c, cluster: {server: https://h}}]\n"
          "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
          "users: [{name: u, user: {token: static, tokenFile: tok}}]\n");
    k = load_ok(tp("config"), NULL);
    ck_assert_str_eq(auth_of(k), "Bearer static");
    wfile("tok", "from-file");
    ks_kube_conn_invalidate(k);
    ck_assert_str_eq(auth_of(k), "Bearer from-file");
    ks_kube_conn_free(k);
}
END_TEST

/* ---- exec plugins ------------------------------------------------------------ */

/* A plugin printing an ExecCredential of version `ver`, recording its
 * arguments, environment and invocation count. */
static void write_plugin(const char *name, const char *ver,
                         const char *status)
{
    char text[4096];
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "d=$(dirname \"$0\")\n"
             "n=$(cat \"$d/count\" 2>/dev/null || echo 0)\n"
             "n=$((n + 1))\n"
             "echo $n > \"$d/count\"\n"
             "printf '%%s\\n' \"$@\" > \"$d/args\"\n"
             "printf '%%s' \"$KS_TEST_PLUGIN_VAR\" > \"$d/var\"\n"
             "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
             "cat <<EOF\n"
             "{\"apiVersion\": \"%s\", \"kind\": \"ExecCredential\",\n"
             " \"status\": %s}\n"
             "EOF\n",
             ver, status);
    wfile_mode(name, text, 0755);
}

static void write_exec_config(const char *command, const char *ver,
                              const char *extra_user, const char *extra_cluster)
{
    char text[4096];
    snprintf(text, sizeof text,
             "current-context: x\n"
             "clusters:\n"
             "- name: c\n"
             "  cluster:\n"
             "    server: https://h:6443\n"
             "    certificate-authority-data: Q0EgUEVNCg==\n"
             "%s"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    exec:\n"
             "      command: %s\n"
             "      apiVersion: %s\n"
             "      args: [--region, \"eu 1\"]\n"
             "      env:\n"
             "      - {name: KS_TEST_PLUGIN_VAR, value: from-kubeconfig}\n"
             "      installHint: 'install it with: apt install get-token'\n"
             "%s",
             extra_cluster ? extra_cluster : "", command, ver,
             extra_user ? extra_user : "");
    wfile("config", text);
}

static const char *const exec_versions[] = {KS_EXEC_API_V1,
                                            KS_EXEC_API_V1BETA1};

START_TEST(test_exec_basic)
{
    const char *ver = exec_versions[_i];
    ks_kube_conn_t *k;
    const char *info;
    setenv("KS_TEST_PLUGIN_VAR", "from-parent", 1);
    write_plugin("bin/get-token", ver, "{\"token\": \"exec-token\"}");
    /* v1 must say interactiveMode; v1beta1 defaults to IfAvailable. */
    write_exec_config("./bin/get-token", ver,
                      _i == 0 ? "      interactiveMode: Never\n"
                                "      provideClusterInfo: true\n"
                              : NULL,
                      "    extensions:\n"
                      "    - name: client.authentication.k8s.io/exec\n"
                      "      extension: {audience: ksched, n: 3, ok: true}\n"
                      "    - name: other\n"
                      "      extension: ignored\n");
    k = load_ok(tp("config"), NULL);
    ck_assert_ptr_nonnull(k->exec);
    ck_assert_str_eq(k->exec->command, tp("bin/get-token"));
    ck_assert_str_eq(auth_of(k), "Bearer exec-token");
    ck_assert_uint_eq(k->exec->runs, 1);
    /* Arguments and env pass through; the kubeconfig's env wins. */
    ck_assert_str_eq(rfile("bin/args"), "--region\neu 1\n");
    ck_assert_str_eq(rfile("bin/var"), "from-kubeconfig");
    info = rfile("bin/info");
    assert_has(info, "\"kind\":\"ExecCredential\"");
    assert_has(info, ver);
    assert_has(info, "\"interactive\":false");
    if (_i == 0) {
        assert_has(info, "\"cluster\":{\"server\":\"https://h:6443\"");
        assert_has(info, "\"certificate-authority-data\":\"Q0EgUEVNCg==\"");
        assert_has(info,
                   "\"config\":{\"audience\":\"ksched\",\"n\":3,\"ok\":true}");
    } else {
        ck_assert_ptr_null(strstr(info, "\"cluster\""));
    }
    /* Cached: no expiry means for the life of the process. */
    fake_now += 1000LL * 86400 * 365;
    ck_assert_str_eq(auth_of(k), "Bearer exec-token");
    ck_assert_uint_eq(k->exec->runs, 1);
    ck_assert_str_eq(rfile("bin/count"), "1\n");
    ks_kube_conn_free(k);
}
END_TEST

START_TEST(test_exec_expiry)
{
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    unsigned long gen;
    /* The token names the invocation; it expires 2030-01-01T00:00:00Z. */
    wfile_mode("bin/plugin",
               "#!/bin/sh\n"
               "d=$(dirname \"$0\")\n"
               "n=$(cat \"$d/count\" 2>/dev/null || echo 0)\n"
               "n=$((n + 1))\n"
               "echo $n > \"$d/count\"\n"
               "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",'\n"
               "echo '\"kind\":\"ExecCredential\",\"status\":{\"token\":'\n"
               "echo \"\\\"tok-$n\\\",\"\n"
               "echo '\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}'\n",
               0755);
    write_exec_config(tp("bin/plugin"), KS_EXEC_API_V1,
                      "      interactiveMode: IfAvailable\n", NULL);
    k = load_ok(tp("config"), NULL);
    fake_now = 1893455999000LL; /* 2029-12-31T23:59:59Z */
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), 0);
    ck_assert_str_eq(c.authorization, "Bearer tok-1");
    ck_assert_int_eq(c.expiry_ms, 1893456000000LL);
    gen = c.generation;
    fake_now += 1000; /* exactly the expiry: still valid */
    ck_assert_str_eq(auth_of(k), "Bearer tok-1");
    ck_assert_str_eq(rfile("bin/count"), "1\n");
    fake_now += 1; /* past it: run again */
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), 0);
    ck_assert_str_eq(c.authorization, "Bearer tok-2");
    ck_assert_uint_gt(c.generation, gen);
    ck_assert_str_eq(rfile("bin/count"), "2\n");
    ck_assert_uint_eq(k->exec->runs, 2);
    /* A 401 forces a run even before the expiry. */
    fake_now = 1000;
    ks_kube_conn_invalidate(k);
    ck_assert_str_eq(auth_of(k), "Bearer tok-3");
    ck_assert_str_eq(auth_of(k), "Bearer tok-3");
    ck_assert_str_eq(rfile("bin/count"), "3\n");
    ks_kube_conn_free(k);
}
END_TEST

START_TEST(test_exec_client_cert)
{
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    write_plugin("bin/p", KS_EXEC_API_V1,
                 "{\"clientCertificateData\": \"-----BEGIN "
                 "CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n\", "
                 "\"clientKeyData\": \"KEY\"}");
    write_exec_config(tp("bin/p"), KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), 0);
    ck_assert_str_eq(c.authorization, "");
    ck_assert_str_eq(c.cert_pem,
                     "-----BEGIN CERTIFICATE-----\nX\n-----END "
                     "CERTIFICATE-----\n");
    ck_assert_uint_eq(c.cert_len, strlen(c.cert_pem));
    ck_assert_str_eq(c.key_pem, "KEY");
    ck_assert_uint_eq(c.key_len, 3);
    ck_assert_int_eq(c.expiry_ms, 0);
    ks_kube_conn_free(k);

    /* A static token makes client-go ignore the exec plugin. */
    write_exec_config(tp("bin/p"), KS_EXEC_API_V1,
                      "      interactiveMode: Never\n    token: static\n",
                      NULL);
    k = load_ok(tp("config"), NULL);
    ck_assert_ptr_null(k->exec);
    ck_assert_str_eq(auth_of(k), "Bearer static");
    ks_kube_conn_free(k);
}
END_TEST

typedef struct exec_err_row {
    const char *script; /* body after #!/bin/sh */
    int code;
    const char *want;
} exec_err_row_t;

static const exec_err_row_t exec_err_rows[] = {
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"Config\",\"status\":{\"token\":\"t\"}}'\n",
     KS_EAUTH, "returned kind \"Config\"; expected ExecCredential"},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
     "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n",
     KS_EAUTH,
     "is configured to use API version client.authentication.k8s.io/v1, "
     "plugin returned version \"client.authentication.k8s.io/v1beta1\""},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"ExecCredential\"}'\n",
     KS_EAUTH, "didn't return a status field"},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"ExecCredential\",\"status\":{}}'\n",
     KS_EAUTH, "didn't return a token or cert/key pair"},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"ExecCredential\",\"status\":{\"clientKeyData\":\"k\"}}'\n",
     KS_EAUTH, "returned only certificate or key, not both"},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"ExecCredential\",\"status\":{\"token\":7}}'\n",
     KS_EAUTH, "status.token is not a string"},
    {"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
     "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
     "\"expirationTimestamp\":\"tomorrow\"}}'\n",
     KS_EAUTH, "expirationTimestamp \"tomorrow\", which is not an RFC 3339"},
    {"echo 'not json'\n", KS_EAUTH, "decoding stdout: line 1"},
    {"true\n", KS_EAUTH, "printed nothing on stdout"},
    {"echo 'line one of the failure' >&2\n"
     "echo 'token expired; run get-token login' >&2\n"
     "exit 3\n",
     KS_EAUTH,
     "exec: executable %s failed with exit code 3; stderr: line one of the "
     "failure\ntoken expired; run get-token login"},
    {"kill -9 $$\n", KS_EAUTH, "was killed by signal 9"},
};

START_TEST(test_exec_errors)
{
    const exec_err_row_t *r = &exec_err_rows[_i];
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    char text[2048], want[1024];
    int rc;
    snprintf(text, sizeof text, "#!/bin/sh\n%s", r->script);
    wfile_mode("bin/bad", text, 0755);
    write_exec_config(tp("bin/bad"), KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    rc = ks_kube_conn_credentials(k, &c, &err);
    ck_assert_msg(rc == r->code, "row %d: want %s got %s: %s", _i,
                  ks_err_name(r->code), ks_err_name(rc), err.msg);
    ck_assert_str_eq(c.authorization, "");
    snprintf(want, sizeof want, r->want, tp("bin/bad"));
    ck_assert_msg(strstr(err.msg, want) != NULL,
                  "row %d: expected \"%s\" in:\n%s", _i, want, err.msg);
    assert_has(err.msg, "(user \"u\")");
    ck_assert_int_eq(k->exec->have_cred, 0);
    ks_kube_conn_free(k);
}
END_TEST

START_TEST(test_exec_not_found)
{
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    write_exec_config("ks-no-such-credential-plugin", KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), KS_EAUTH);
    assert_has(err.msg, "executable ks-no-such-credential-plugin not found "
                        "in PATH");
    assert_has(err.msg, "client-go credential plugin that is not installed");
    assert_has(err.msg, "install it with: apt install get-token");
    ks_kube_conn_free(k);

    /* With a path: relative to the kubeconfig, then not found. */
    write_exec_config("./bin/nothing-here", KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), KS_EAUTH);
    assert_has(err.msg, "/bin/nothing-here not found");
    ks_kube_conn_free(k);

    /* Not executable. */
    wfile_mode("bin/noexec", "#!/bin/sh\necho hi\n", 0644);
    write_exec_config(tp("bin/noexec"), KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), KS_EAUTH);
    assert_has(err.msg, "is not executable (permission denied)");
    ks_kube_conn_free(k);
}
END_TEST

/* Gone: no such process, or a zombie waiting for init to reap it. */
static int process_gone(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    int i;
    for (i = 0; i < 200; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 1;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (f != NULL) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            p = strrchr(buf, ')');
            if (p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
                return 1;
        }
        usleep(10000);
    }
    return 0;
}

START_TEST(test_exec_timeout)
{
    ks_kube_conn_t *k;
    ks_kube_cred_t c;
    ks_error_t err = {0};
    pid_t sh_pid, sleep_pid;
    char *s;
    wfile_mode("bin/slow",
               "#!/bin/sh\n"
               "d=$(dirname \"$0\")\n"
               "echo $$ > \"$d/pid.tmp\" && mv \"$d/pid.tmp\" \"$d/pid\"\n"
               "sleep 10 &\n"
               "echo $! > \"$d/sleep.tmp\" && mv \"$d/sleep.tmp\" "
               "\"$d/sleeppid\"\n"
               "echo 'waiting for the identity provider' >&2\n"
               "wait\n",
               0755);
    write_exec_config(tp("bin/slow"), KS_EXEC_API_V1,
                      "      interactiveMode: Never\n", NULL);
    k = load_ok(tp("config"), NULL);
    k->exec->timeout_ms = 200;
    /* The time out is the plugin's deadline, not the 10 s it sleeps: an
     * exec run that waited for it would not end in KS_ETIMEDOUT. */
    ck_assert_int_eq(ks_kube_conn_credentials(k, &c, &err), KS_ETIMEDOUT);
    assert_has(err.msg, "/bin/slow (user \"u\") did not finish within 0.2 s; "
                        "it was killed");
    assert_has(err.msg, "waiting for the identity provider");
    /* The plugin and its child are gone. */
    s = rfile("bin/pid");
    ck_assert_ptr_nonnull(s);
    sh_pid = (pid_t)atoi(s);
    ck_assert_int_gt(sh_pid, 0);
    ck_assert_msg(process_gone(sh_pid), "plugin %d still runs", (int)sh_pid);
    s = rfile("bin/sleeppid");
    if (s != NULL) {
        sleep_pid = (pid_t)atoi(s);
        ck_assert_msg(process_gone(sleep_pid), "plugin child %d still runs",
                      (int)sleep_pid);
    }
    ks_kube_conn_free(k);
}
END_TEST

/* The parser alone, and KUBERNETES_EXEC_INFO. */
START_TEST(test_exec_parse_and_info)
{
    ks_exec_cred_t c;
    ks_error_t err = {0};
    ks_exec_plugin_t *p;
    char *info;
    static const char ok[] =
        "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
        "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"abc\","
        "\"expirationTimestamp\":\"2024-05-01T10:00:00.5+02:00\"}}";
    ck_assert_int_eq(ks_exec_credential_parse(ok, strlen(ok),
                                              KS_EXEC_API_V1BETA1, "x", &c,
                                              &err),
                     0);
    ck_assert_str_eq(c.token, "abc");
    ck_assert_int_eq(c.expiry_ms, 1714550400500LL);
    ks_exec_cred_clear(&c);
    ck_assert_ptr_null(c.token);
    {
        /* client-go finds apiVersion and kind with encoding/json (any
         * case), then decodes the object case-sensitively: "Status" is
         * not "status". */
        static const char mixed[] =
            "{\"APIVERSION\":\"client.authentication.k8s.io/v1beta1\","
            "\"Kind\":\"ExecCredential\",\"status\":{\"token\":\"m\"}}";
        static const char status_case[] =
            "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
            "\"kind\":\"ExecCredential\",\"Status\":{\"token\":\"m\"}}";
        ck_assert_int_eq(ks_exec_credential_parse(mixed, strlen(mixed),
                                                  KS_EXEC_API_V1BETA1, "x",
                                                  &c, &err),
                         0);
        ck_assert_str_eq(c.token, "m");
        ks_exec_cred_clear(&c);
        ck_assert_int_eq(ks_exec_credential_parse(status_case,
                                                  strlen(status_case),
                                                  KS_EXEC_API_V1BETA1, "x",
                                                  &c, &err),
                         KS_EAUTH);
        ck_assert_msg(strstr(err.msg, "didn't return a status") != NULL,
                      "%s", err.msg);
    }

    p = ks_exec_plugin_new();
    ck_assert_ptr_nonnull(p);
    p->api_version = strdup(KS_EXEC_API_V1);
    p->cluster_json = strdup("{\"server\":\"https://s\"}");
    info = ks_exec_info_json(p);
    ck_assert_str_eq(info, "{\"apiVersion\":\"client.authentication.k8s.io/"
                           "v1\",\"kind\":\"ExecCredential\",\"spec\":{"
                           "\"interactive\":false}}");
    free(info);
    p->provide_cluster_info = 1;
    info = ks_exec_info_json(p);
    assert_has(info, "\"spec\":{\"cluster\":{\"server\":\"https://s\"},"
                     "\"interactive\":false}");
    free(info);
    ks_exec_plugin_free(p);
}
END_TEST

/* ---- base64 -------------------------------------------------------------------- */

typedef struct b64_row {
    const char *in;
    int ok;
    const char *out;  /* when ok */
    const char *want; /* substring of the error */
    size_t bad_off;
} b64_row_t;

static const b64_row_t b64_rows[] = {
    {"", 1, "", NULL, 0},
    {"Zg==", 1, "f", NULL, 0},
    {"Zm8=", 1, "fo", NULL, 0},
    {"Zm9v", 1, "foo", NULL, 0},
    {"Zm9vYmFy", 1, "foobar", NULL, 0},
    {"Zm9v\nYmFy\r\n", 1, "foobar", NULL, 0},
    {"+/+/", 1, "\xfb\xff\xbf", NULL, 0},
    {"Zm9", 0, NULL, "3 characters is not a multiple of 4", 3},
    {"Zg=", 0, NULL, "is not a multiple of 4", 3},
    {"Zg", 0, NULL, "lacks its '=' padding", 2},
    {"Z===", 0, NULL, "character 2: misplaced '=' padding", 1},
    {"Zg==Zg==", 0, NULL, "character 5: data after the '=' padding", 4},
    {"Zm9v YmFy", 0, NULL, "character 5 (a space): not in the standard", 4},
    {"-_8=", 0, NULL, "this looks like base64url", 0},
    {"Zm\x01v", 0, NULL, "character 3 (byte 0x01)", 2},
};

START_TEST(test_base64)
{
    const b64_row_t *r = &b64_rows[_i];
    unsigned char *out = NULL;
    size_t len = 99, bad = 99;
    ks_error_t err = {0};
    int rc = ks_base64_decode(r->in, strlen(r->in), &out, &len, &bad, &err);
    if (r->ok) {
        char *enc;
        ck_assert_msg(rc == 0, "row %d: %s", _i, err.msg);
        ck_assert_uint_eq(len, strlen(r->out));
        ck_assert_mem_eq(out, r->out, len);
        ck_assert_int_eq(out[len], '\0');
        /* Round trip (inputs without line breaks). */
        enc = ks_base64_encode(out, len);
        ck_assert_ptr_nonnull(enc);
        if (strchr(r->in, '\n') == NULL)
            ck_assert_str_eq(enc, r->in);
        ck_assert_uint_eq(strlen(enc), ks_base64_encoded_len(len));
        free(enc);
        free(out);
    } else {
        ck_assert_int_eq(rc, KS_EPARSE);
        ck_assert_ptr_null(out);
        ck_assert_msg(strstr(err.msg, r->want) != NULL,
                      "row %d: expected \"%s\" in \"%s\"", _i, r->want,
                      err.msg);
        ck_assert_uint_eq(bad, r->bad_off);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube-kubeconfig");
    TCase *tl = tcase_create("load");
    TCase *tc = tcase_create("credentials");
    TCase *te = tcase_create("exec");
    TCase *tb = tcase_create("base64");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tl, setup, teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_checked_fixture(te, setup, teardown);
    tcase_add_loop_test(tl, test_merge, 0,
                        (int)(sizeof merge_rows / sizeof merge_rows[0]));
    tcase_add_test(tl, test_context_errors);
    tcase_add_test(tl, test_relative_paths);
    tcase_add_test(tl, test_data_fields);
    tcase_add_loop_test(tl, test_errors, 0,
                        (int)(sizeof err_rows / sizeof err_rows[0]));
    tcase_add_test(tl, test_json_and_http);
    tcase_add_test(tl, test_describe);
    tcase_add_test(tl, test_alias_bomb);
    tcase_add_test(tc, test_in_cluster);
    tcase_add_test(tc, test_token_file_rotation);
    tcase_add_loop_test(te, test_exec_basic, 0, 2);
    tcase_add_test(te, test_exec_expiry);
    tcase_add_test(te, test_exec_client_cert);
    tcase_add_loop_test(te, test_exec_errors, 0,
                        (int)(sizeof exec_err_rows / sizeof exec_err_rows[0]));
    tcase_add_test(te, test_exec_not_found);
    tcase_add_test(te, test_exec_timeout);
    tcase_add_test(te, test_exec_parse_and_info);
    tcase_add_loop_test(tb, test_base64, 0,
                        (int)(sizeof b64_rows / sizeof b64_rows[0]));
    suite_add_tcase(s, tl);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, te);
    suite_add_tcase(s, tb);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
