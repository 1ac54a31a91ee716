/*
 * The SDK's threading rules are enforced (thread_rules.h): a host function
 * documented "loop thread only" called from Filter with parallelism > 1
 * kills `ksched schedule` with a message naming the function and the rule
 * (abort mode: debug and sanitizer builds), or is refused with its error
 * value and one log line per function (refuse mode: optimised builds).
 * Each build checks its own mode through the real ksched and the fixture
 * plugin ThreadRule, and both modes in process, forcing the mode.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "framework/cycle_state.h"
#include "framework/framework.h"
#include "framework/thread_rules.h"
#include "fw_testlib.h"

/* What this build is expected to do, from the flags it was compiled with
 * (the same flags as the host library's). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_SANITIZED 1
#endif
#if !defined(__OPTIMIZE__) || defined(T_SANITIZED)
#define T_EXPECTED_MODE KS_THREAD_RULES_ABORT
#else
#define T_EXPECTED_MODE KS_THREAD_RULES_REFUSE
#endif

#define RULE " called from a Filter/Score worker thread; it may be called " \
             "only on the loop thread (see plugin.h)"

static char *tmp_path(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(4096);
    int fd;
    ck_assert_ptr_nonnull(path);
    snprintf(path, 4096, "%s/ks-thread-%s-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp", tag);
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return path;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static int count_substr(const char *text, const char *needle)
{
    int n = 0;
    const char *p;
    for (p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* --- through ksched schedule ------------------------------------------------- */

#define NODE(n)                                                                \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " n "}\n"              \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

static const char cluster_yaml[] =
    NODE("n1") NODE("n2") NODE("n3") NODE("n4") NODE("n5") NODE("n6")
    "---\napiVersion: v1\nkind: Pod\n"
    "metadata: {name: p, namespace: default, uid: uid-p}\n"
    "spec: {containers: [{name: c, image: x}]}\n";

typedef struct run {
    int status; /* waitpid's */
    char *out, *err;
} run_t;

/* `ksched schedule -o yaml` on the six-node cluster with ThreadRule as the
 * only Filter plugin (args: `args`, a YAML flow mapping), parallelism 2. */
static run_t run_ksched(const char *args)
{
    const char *ksched = getenv("KS_TEST_KSCHED");
    char cfg_text[2048];
    char *cfg = tmp_path("cfg"), *cluster = tmp_path("cluster");
    char *out = tmp_path("out"), *err = tmp_path("err");
    char *fixtures = tl_fixture("plugins");
    run_t r;
    pid_t pid;
    ck_assert_msg(ksched != NULL && ksched[0], "KS_TEST_KSCHED is not set");
    snprintf(cfg_text, sizeof cfg_text,
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "parallelism: 2\n"
             TL_PROFILES_SORT_ONLY
             "    preFilter:\n"
             "      enabled: [{name: ThreadRule}]\n"
             "    filter:\n"
             "      enabled: [{name: ThreadRule}]\n"
             "    bind:\n"
             "      enabled: [{name: DefaultBinder}]\n"
             "  pluginConfig:\n"
             "  - name: ThreadRule\n"
             "    args: %s\n",
             args);
    write_file(cfg, cfg_text);
    write_file(cluster, cluster_yaml);
    fflush(NULL);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_TRUNC);
        int e = open(err, O_WRONLY | O_TRUNC);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execl(ksched, ksched, "schedule", "--cluster", cluster, "--config",
              cfg, "-o", "yaml", "--deterministic",
              "--no-default-plugin-path", "--plugin-dir", fixtures,
              "--plugin-dir", tl_plugin_dir(), (char *)NULL);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(pid, &r.status, 0), pid);
    r.out = tl_read_file(out);
    r.err = tl_read_file(err);
    unlink(cfg);
    unlink(cluster);
    unlink(out);
    unlink(err);
    free(cfg);
    free(cluster);
    free(out);
    free(err);
    free(fixtures);
    return r;
}

static void run_free(run_t *r)
{
    free(r->out);
    free(r->err);
}

/* Each loop-only call the fixture can make from Filter, and the reason
 * its refusal leaves on every node. */
static const struct {
    const char *call, *reason;
} calls[] = {
    {"cycle_state_write", "cycle_state_write was refused"},
    {"set_nominated_node", "set_nominated_node was refused"},
    {"bind", "bind was refused"},
    {"nodeinfo_clone", "nodeinfo_clone was refused"},
    {"cycle_state_clone", "cycle_state_clone was refused"},
    {"run_filters", "ks_api->run_filters" RULE},
};

START_TEST(test_build_mode)
{
    ck_assert_int_eq(ks_thread_rules_build_mode(), T_EXPECTED_MODE);
    ck_assert_int_eq(ks_thread_rules_mode(), T_EXPECTED_MODE);
}
END_TEST

START_TEST(test_filter_breaks_rule)
{
    char args[128], line[512], msg[512];
    run_t r;
    snprintf(args, sizeof args, "{call: %s}", calls[_i].call);
    r = run_ksched(args);
    if (T_EXPECTED_MODE == KS_THREAD_RULES_ABORT) {
        snprintf(line, sizeof line, "ksched: fatal: ks_api->%s" RULE "\n",
                 calls[_i].call);
        /* The abort happens inside the plugin's Filter call, so `ksched
         * schedule` reports it as that plugin's crash (call_board.h) and
         * exits 5, after the rule's own line. */
        ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 5,
                      "%s: ksched did not abort as a plugin crash (status "
                      "0x%x)\nstderr:\n%s",
                      calls[_i].call, r.status, r.err);
        ck_assert_msg(strstr(r.err, line) != NULL,
                      "no line \"%s\" in stderr:\n%s", line, r.err);
        ck_assert_int_eq(count_substr(r.err, "ksched: fatal:"), 1);
        ck_assert_msg(strstr(r.err, "plugin \"ThreadRule\" version 1.0.0 (") !=
                              NULL &&
                          strstr(r.err, ") crashed with SIGABRT in Filter "
                                        "while scheduling pod ") != NULL,
                      "no crash line naming ThreadRule in stderr:\n%s",
                      r.err);
    } else {
        /* Refused on each of the six nodes (in every attempt), yet logged
         * once; the pod is left unschedulable with the refusal's reason. */
        snprintf(line, sizeof line, "ksched: error: ks_api->%s" RULE
                 "; refused\n", calls[_i].call);
        snprintf(msg, sizeof msg,
                 "message: \"0/6 nodes are available: 6 %s.\"",
                 calls[_i].reason);
        ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3,
                      "%s: exit status 0x%x\nstdout:\n%s\nstderr:\n%s",
                      calls[_i].call, r.status, r.out, r.err);
        ck_assert_msg(strstr(r.out, msg) != NULL, "no \"%s\" in:\n%s", msg,
                      r.out);
        ck_assert_msg(strstr(r.err, line) != NULL,
                      "no line \"%s\" in stderr:\n%s", line, r.err);
        ck_assert_msg(count_substr(r.err, "ks_api->") == 1,
                      "more than one log line:\n%s", r.err);
    }
    run_free(&r);
}
END_TEST

/* The same write from PreFilter (the loop thread) is allowed: Filter reads
 * it back on every node and the pod binds. */
START_TEST(test_loop_thread_allowed)
{
    run_t r = run_ksched("{call: cycle_state_write, at: PreFilter}");
    ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0,
                  "exit status 0x%x\nstdout:\n%s\nstderr:\n%s", r.status,
                  r.out, r.err);
    ck_assert_msg(strstr(r.out, "- pod: default/p\n  node: n") != NULL,
                  "pod not bound:\n%s", r.out);
    ck_assert_msg(strstr(r.err, "ks_api->") == NULL, "stderr:\n%s", r.err);
    run_free(&r);
}
END_TEST

/* --- in process, both modes ---------------------------------------------------- */

/* stderr goes to a temporary file between capture_begin and capture_end,
 * which returns what was written. */
static int saved_fd = -1;
static char *capture_path;

static void capture_begin(void)
{
    int fd;
    capture_path = tmp_path("stderr");
    fflush(stderr);
    saved_fd = dup(2);
    ck_assert_int_ge(saved_fd, 0);
    fd = open(capture_path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, 2), 2);
    close(fd);
}

static char *capture_end(void)
{
    char *text;
    fflush(stderr);
    ck_assert_int_eq(dup2(saved_fd, 2), 2);
    close(saved_fd);
    saved_fd = -1;
    text = tl_read_file(capture_path);
    unlink(capture_path);
    free(capture_path);
    capture_path = NULL;
    return text;
}

static int marker = 7;

START_TEST(test_refuse_mode)
{
    const ks_host_api_t *api = ks_host_api();
    ks_cycle_state_t *cs = ks_cycle_state_new();
    ks_status_t *st = api->status_new(NULL);
    char *err, line[512];
    int i;
    ck_assert_ptr_nonnull(cs);
    ck_assert_ptr_nonnull(st);
    ks_thread_rules_set_mode(KS_THREAD_RULES_REFUSE);
    ck_assert_int_eq(api->cycle_state_write(cs, "k", &marker, NULL, NULL), 0);

    capture_begin();
    ks_pool_job_depth = 1; /* as on a worker running Filter */
    ck_assert_int_eq(api->cycle_state_write(cs, "k2", &marker, NULL, NULL),
                     -1);
    api->cycle_state_delete(cs, "k");
    ck_assert_ptr_null(api->cycle_state_clone(NULL, cs));
    ck_assert_int_eq(api->run_filters(NULL, cs, NULL, NULL, st), KS_ERROR);
    ck_assert_str_eq(api->status_message(st), "ks_api->run_filters" RULE);
    api->waiting_pod_allow(NULL, "P");
    /* 998 more writes: no more lines; the 1,000th refusal logs its count. */
    for (i = 0; i < 998; i++)
        api->cycle_state_write(cs, "k2", &marker, NULL, NULL);
    ck_assert_int_eq(api->cycle_state_write(cs, "k2", &marker, NULL, NULL),
                     -1);
    /* read is thread-safe: allowed */
    ck_assert_ptr_eq(api->cycle_state_read(cs, "k"), &marker);
    ks_pool_job_depth = 0;
    err = capture_end();
    ks_thread_rules_set_mode(ks_thread_rules_build_mode());

    /* Nothing changed. */
    ck_assert_ptr_eq(api->cycle_state_read(cs, "k"), &marker);
    ck_assert_ptr_null(api->cycle_state_read(cs, "k2"));
    snprintf(line, sizeof line,
             "ksched: error: ks_api->cycle_state_write" RULE "; refused\n");
    ck_assert_msg(strstr(err, line) != NULL, "no \"%s\" in:\n%s", line, err);
    snprintf(line, sizeof line,
             "ksched: error: ks_api->cycle_state_write" RULE
             "; refused (1000 calls so far)\n");
    ck_assert_msg(strstr(err, line) != NULL, "no \"%s\" in:\n%s", line, err);
    ck_assert_int_eq(count_substr(err, "ks_api->cycle_state_write"), 2);
    ck_assert_int_eq(count_substr(err, "ks_api->cycle_state_delete"), 1);
    ck_assert_int_eq(count_substr(err, "ks_api->cycle_state_clone"), 1);
    ck_assert_int_eq(count_substr(err, "ks_api->run_filters"), 1);
    ck_assert_int_eq(count_substr(err, "ks_api->waiting_pod_allow"), 1);
    ck_assert_int_eq(count_substr(err, "\n"), 6);
    free(err);
    api->status_free(st);
    ks_cycle_state_free(cs);
}
END_TEST

START_TEST(test_abort_mode)
{
    char *path = tmp_path("abort"), *err;
    int status;
    pid_t pid;
    fflush(NULL);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_TRUNC);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(126);
        ks_thread_rules_set_mode(KS_THREAD_RULES_ABORT);
        ks_pool_job_depth = 1;
        ks_host_api()->waiting_pod_reject(NULL, "P", "m");
        _exit(0); /* not reached */
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    err = tl_read_file(path);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "status 0x%x, stderr:\n%s", status, err);
    ck_assert_msg(strstr(err, "ksched: fatal: ks_api->waiting_pod_reject" RULE
                              "\n") != NULL,
                  "stderr:\n%s", err);
    free(err);
    unlink(path);
    free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("thread_rules");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_build_mode);
    tcase_add_loop_test(tc, test_filter_breaks_rule, 0,
                        (int)(sizeof calls / sizeof calls[0]));
    tcase_add_test(tc, test_loop_thread_allowed);
    tcase_add_test(tc, test_refuse_mode);
    tcase_add_test(tc, test_abort_mode);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
