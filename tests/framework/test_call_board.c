/*
 * The call board and quarantine (framework/call_board.h, quarantine.h):
 * slots record the running call, the deadline scan finds an overrun from
 * consecutive scans, a fault names plugin, version, file, point and pod,
 * quarantine matches a version by hash and rolls back to the version that
 * was serving when the faulty one was swapped in, else to the newest good
 * version that is not itself quarantined, and --quarantine=disable removes
 * the plugin from every profile. A shared board survives fork: what a
 * child writes, the parent reads.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "framework/call_board.h"
#include "framework/framework.h"
#include "framework/quarantine.h"
#include "fw_testlib.h"

static ks_call_board_t *shared;

static void setup(void)
{
    shared = ks_call_board_map_shared();
    ck_assert_ptr_nonnull(shared);
    ks_call_board_use(shared);
}

static void teardown(void)
{
    ks_call_board_use(NULL);
    ks_call_board_unmap(shared);
}

static ks_board_fault_t fault_of(const char *name, const char *version,
                                 uint64_t hash)
{
    ks_board_fault_t f;
    memset(&f, 0, sizeof f);
    f.kind = KS_FAULT_SIGNAL;
    f.signo = 11;
    f.point = KS_EP_FILTER;
    snprintf(f.plugin.name, sizeof f.plugin.name, "%s", name);
    snprintf(f.plugin.version, sizeof f.plugin.version, "%s", version);
    snprintf(f.plugin.file, sizeof f.plugin.file, "/p/%s.so", name);
    f.plugin.hash = hash;
    snprintf(f.pod, sizeof f.pod, "default/web-0");
    return f;
}

START_TEST(test_slot_records_the_call)
{
    uint32_t id = ks_call_board_register("Slow", "2.0.0", "/p/slow.so", 42, 7,
                                         0);
    ks_pod_t pod;
    ks_board_slot_t *s;
    const ks_board_plugin_t *p;
    memset(&pod, 0, sizeof pod);
    pod.ns = "default";
    pod.name = "web-0";
    s = ks_call_enter(id, KS_EP_SCORE, 250, &pod, pod.ns, pod.name);
    ck_assert_uint_eq(atomic_load(&s->seq) & 1, 1);
    ck_assert_str_eq(s->pod, "default/web-0");
    ck_assert_uint_eq(atomic_load(&s->deadline_ms), 250);
    p = ks_call_board_plugin(shared, atomic_load(&s->plugin));
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->name, "Slow");
    ck_assert_uint_eq(p->generation, 7);
    ks_call_leave(s);
    ck_assert_uint_eq(atomic_load(&s->seq) & 1, 0);
    /* A new pod at another address is copied; the epoch forces a copy
     * even at the same address. */
    pod.name = "web-1";
    ks_call_board_pod_changed();
    s = ks_call_enter(id, KS_EP_SCORE, 250, &pod, pod.ns, pod.name);
    ck_assert_str_eq(s->pod, "default/web-1");
    ks_call_leave(s);
}
END_TEST

START_TEST(test_deadline_scan_needs_two_looks)
{
    static ks_deadline_scan_t st;
    uint32_t id = ks_call_board_register("Slow", "2.0.0", "/p/slow.so", 42, 1,
                                         0);
    ks_board_slot_t *s;
    memset(&st, 0, sizeof st);
    s = ks_call_enter(id, KS_EP_PERMIT, 100, NULL, NULL, NULL);
    /* first look: the call is new */
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 1000), -1);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 1100), -1); /* == 100 */
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 1101),
                     (int)(s - shared->slots));
    ks_call_leave(s);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 5000), -1);
    /* a new call restarts the clock */
    s = ks_call_enter(id, KS_EP_PERMIT, 100, NULL, NULL, NULL);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 6000), -1);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 6050), -1);
    ks_call_leave(s);
    /* no deadline: never */
    s = ks_call_enter(id, KS_EP_PERMIT, 0, NULL, NULL, NULL);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 7000), -1);
    ck_assert_int_eq(ks_deadline_scan(shared, &st, 900000), -1);
    ks_call_leave(s);
}
END_TEST

START_TEST(test_fault_text)
{
    ks_board_fault_t f = fault_of("Faulty", "2.0.0-segv", 9);
    char line[1200];
    ks_board_fault_describe(&f, line, sizeof line);
    ck_assert_str_eq(line, "plugin \"Faulty\" version 2.0.0-segv "
                           "(/p/Faulty.so) crashed with SIGSEGV in Filter "
                           "while scheduling pod default/web-0");
    f.kind = KS_FAULT_DEADLINE;
    f.deadline_ms = 300;
    f.point = KS_EP_SCORE;
    f.pod[0] = '\0';
    ks_board_fault_describe(&f, line, sizeof line);
    ck_assert_str_eq(line, "plugin \"Faulty\" version 2.0.0-segv "
                           "(/p/Faulty.so) overran its 300 ms deadline in "
                           "Score");
    f.point = KS_CALL_CREATE;
    ks_board_fault_describe(&f, line, sizeof line);
    ck_assert_ptr_nonnull(strstr(line, " in create"));
}
END_TEST

START_TEST(test_quarantine_and_good_versions)
{
    ks_board_fault_t f = fault_of("Faulty", "2.0.0", 222);
    ks_board_good_t g1, g2;
    memset(&g1, 0, sizeof g1);
    snprintf(g1.name, sizeof g1.name, "Faulty");
    snprintf(g1.version, sizeof g1.version, "1.0.0");
    g1.hash = 111;
    g1.generation = 1;
    g2 = g1;
    snprintf(g2.version, sizeof g2.version, "2.0.0");
    g2.hash = 222;
    g2.generation = 2;
    ks_call_board_good_add(shared, &g1);
    ks_call_board_good_add(shared, &g2);
    /* newest good first */
    ck_assert_str_eq(ks_call_board_good(shared, "Faulty")->version, "2.0.0");
    ck_assert_ptr_null(ks_call_board_quarantined(shared, "Faulty", 222));
    ks_call_board_fault_add(shared, &f);
    ck_assert_ptr_nonnull(ks_call_board_quarantined(shared, "Faulty", 222));
    ck_assert_ptr_null(ks_call_board_quarantined(shared, "Faulty", 111));
    ck_assert_ptr_null(ks_call_board_quarantined(shared, "Other", 222));
    /* the quarantined 2.0.0 passed probation once: 1.0.0 is the rollback */
    ck_assert_str_eq(ks_call_board_good(shared, "Faulty")->version, "1.0.0");
    ck_assert_ptr_null(ks_call_board_good(shared, "Nobody"));
}
END_TEST

static ks_board_good_t rec_of(const char *name, const char *version,
                              uint64_t hash, uint64_t gen)
{
    ks_board_good_t g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", name);
    snprintf(g.version, sizeof g.version, "%s", version);
    snprintf(g.path, sizeof g.path, "/keep/%s-%llu.so", name,
             (unsigned long long)hash);
    g.hash = hash;
    g.generation = gen;
    return g;
}

/* The rollback rule: the version serving when the faulty one was swapped
 * in comes first, whatever its probation; probation chooses only when that
 * one faulted too or there is none. */
START_TEST(test_rollback_prefers_the_swapped_out_version)
{
    ks_board_good_t v1 = rec_of("Faulty", "1.0.0", 111, 1);
    ks_board_good_t v2 = rec_of("Faulty", "2.0.0", 222, 2);
    ks_board_good_t other = rec_of("Other", "9", 999, 2);
    const ks_board_good_t *before, *g;
    ks_board_fault_t f;

    /* nothing recorded: nothing to roll back to */
    ck_assert_ptr_null(ks_call_board_rollback(shared, "Faulty", 333,
                                              &before));
    ck_assert_ptr_null(before);

    /* v1 never passed probation, but served when 3.0.0 came in */
    ks_call_board_swapped_add(shared, &v1);
    ks_call_board_swapped_add(shared, &other);
    ks_call_board_swapped_add(shared, &v1); /* no second record */
    ck_assert_uint_eq(atomic_load(&shared->n_swapped), 2);
    g = ks_call_board_rollback(shared, "Faulty", 333, &before);
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->version, "1.0.0");
    ck_assert_ptr_eq(g, before);

    /* 1.0.0 -> 2.0.0 -> 3.0.0: 2.0.0 is what 3.0.0 replaced */
    ks_call_board_swapped_add(shared, &v2);
    g = ks_call_board_rollback(shared, "Faulty", 333, NULL);
    ck_assert_str_eq(g->version, "2.0.0");
    /* and 1.0.0 is what 2.0.0 replaced */
    g = ks_call_board_rollback(shared, "Faulty", 222, NULL);
    ck_assert_str_eq(g->version, "1.0.0");

    /* 2.0.0 faulted too: probation decides, and nothing passed it */
    f = fault_of("Faulty", "2.0.0", 222);
    ks_call_board_fault_add(shared, &f);
    ck_assert_ptr_null(ks_call_board_rollback(shared, "Faulty", 333,
                                              &before));
    ck_assert_ptr_nonnull(before);
    ck_assert_str_eq(before->version, "2.0.0");
    /* ... not the older 1.0.0, unless it passed its probation */
    ks_call_board_good_add(shared, &v1);
    g = ks_call_board_rollback(shared, "Faulty", 333, &before);
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->version, "1.0.0");
    ck_assert_ptr_ne(g, before);
    ck_assert_str_eq(ks_call_board_rollback(shared, "Other", 1, NULL)->version,
                     "9");
}
END_TEST

START_TEST(test_vet_rolls_back_or_refuses)
{
    char dir[] = "/tmp/ks-board-XXXXXX", bad[200], good[200];
    const char *load;
    uint64_t h, hash;
    ks_error_t err = {0};
    ks_board_fault_t f;
    ks_board_good_t g;
    FILE *fp;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(bad, sizeof bad, "%s/faulty.so", dir);
    snprintf(good, sizeof good, "%s/kept.so", dir);
    fp = fopen(bad, "w");
    fputs("version two", fp);
    fclose(fp);
    fp = fopen(good, "w");
    fputs("version one", fp);
    fclose(fp);
    h = ks_file_hash(bad);
    ck_assert_uint_ne(h, 0);
    ck_assert_uint_ne(h, ks_file_hash(good));

    /* nothing failed yet: loaded as found, no hashing */
    ck_assert_int_eq(ks_quarantine_vet(bad, &load, &hash, &err), 0);
    ck_assert_str_eq(load, bad);

    f = fault_of("Faulty", "2.0.0", h);
    ks_call_board_fault_add(shared, &f);
    ks_quarantine_set_policy(KS_QUARANTINE_ROLLBACK);
    ck_assert_int_eq(ks_quarantine_vet(bad, &load, &hash, &err), -1);
    ck_assert_int_eq(err.code, KS_EQUARANTINED);
    ck_assert_ptr_nonnull(strstr(err.msg, "nothing to roll back to"));
    ck_assert_ptr_nonnull(strstr(err.msg, "--quarantine=disable"));

    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "Faulty");
    snprintf(g.version, sizeof g.version, "1.0.0");
    snprintf(g.path, sizeof g.path, "%s", good);
    g.hash = ks_file_hash(good);
    ks_call_board_good_add(shared, &g);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(ks_quarantine_vet(bad, &load, &hash, &err), 0);
    ck_assert_str_eq(load, good);
    ck_assert_uint_eq(hash, g.hash);

    unlink(bad);
    unlink(good);
    rmdir(dir);
}
END_TEST

START_TEST(test_disable_removes_from_profiles)
{
    char dir[] = "/tmp/ks-board-XXXXXX", bad[600];
    const char *load;
    uint64_t hash;
    ks_error_t err = {0};
    ks_board_fault_t f;
    ks_config_t cfg;
    ks_profile_config_t prof;
    ks_plugin_ref_t refs[3];
    FILE *fp;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(bad, sizeof bad, "%s/faulty.so", dir);
    fp = fopen(bad, "w");
    fputs("bad", fp);
    fclose(fp);
    f = fault_of("Faulty", "2.0.0", ks_file_hash(bad));
    ks_call_board_fault_add(shared, &f);
    ks_quarantine_set_policy(KS_QUARANTINE_DISABLE);
    ks_quarantine_begin();
    ck_assert_int_eq(ks_quarantine_vet(bad, &load, &hash, &err), 1);
    ck_assert_int_eq(err.code, 0);

    memset(&cfg, 0, sizeof cfg);
    memset(&prof, 0, sizeof prof);
    memset(refs, 0, sizeof refs);
    /* (a configuration's names live in its arena: never freed one by
     * one) */
    refs[0].name = (char *)"PrioritySort";
    refs[1].name = (char *)"Faulty";
    refs[2].name = (char *)"DefaultBinder";
    prof.points[KS_EP_FILTER].enabled = refs;
    prof.points[KS_EP_FILTER].n_enabled = 3;
    cfg.profiles = &prof;
    cfg.n_profiles = 1;
    ck_assert_int_eq(ks_quarantine_apply(&cfg), 0);
    ck_assert_uint_eq(prof.points[KS_EP_FILTER].n_enabled, 2);
    ck_assert_str_eq(refs[0].name, "PrioritySort");
    ck_assert_str_eq(refs[1].name, "DefaultBinder");
    ks_quarantine_set_policy(KS_QUARANTINE_ROLLBACK);
    unlink(bad);
    rmdir(dir);
}
END_TEST

START_TEST(test_shared_board_survives_fork)
{
    pid_t pid = fork();
    int st;
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        uint32_t id = ks_call_board_register("Child", "1", "/c.so", 5, 3, 0);
        ks_call_enter(id, KS_EP_BIND, 0, NULL, NULL, NULL);
        _exit(0); /* dies inside the call */
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(atomic_load(&shared->n_slots) >= 1);
    {
        ks_board_fault_t f;
        size_t i, found = 0;
        for (i = 0; i < atomic_load(&shared->n_slots); i++)
            if (atomic_load(&shared->slots[i].seq) & 1) {
                ks_call_board_fault_from_slot(shared, i, KS_FAULT_SIGNAL, 6,
                                              &f);
                ck_assert_str_eq(f.plugin.name, "Child");
                ck_assert_uint_eq(f.point, KS_EP_BIND);
                found = 1;
            }
        ck_assert_uint_eq(found, 1);
    }
}
END_TEST

START_TEST(test_deadlines_for)
{
    const char *names[] = {"NodeResourcesFit", "Slow"};
    const uint32_t ms[] = {50, 2000};
    ck_assert_int_eq(ks_deadlines_set(1000, 0, names, ms, 2), 0);
    ck_assert_uint_eq(ks_deadline_for("Other", 0), 1000);
    ck_assert_uint_eq(ks_deadline_for("TaintToleration", 1), 0);
    ck_assert_uint_eq(ks_deadline_for("NodeResourcesFit", 1), 50);
    ck_assert_uint_eq(ks_deadline_for("Slow", 0), 2000);
    ck_assert(ks_plugin_in_tree("DefaultBinder"));
    ck_assert(ks_plugin_in_tree("DynamicResources"));
    ck_assert(!ks_plugin_in_tree("Coscheduling"));
    ck_assert_int_eq(ks_deadlines_set(0, 0, NULL, NULL, 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("call_board");
    TCase *tc = tcase_create("board");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_slot_records_the_call);
    tcase_add_test(tc, test_deadline_scan_needs_two_looks);
    tcase_add_test(tc, test_fault_text);
    tcase_add_test(tc, test_quarantine_and_good_versions);
    tcase_add_test(tc, test_rollback_prefers_the_swapped_out_version);
    tcase_add_test(tc, test_vet_rolls_back_or_refuses);
    tcase_add_test(tc, test_disable_removes_from_profiles);
    tcase_add_test(tc, test_shared_board_survives_fork);
    tcase_add_test(tc, test_deadlines_for);
    suite_add_tcase(s, tc);
    return tl_run_suite(s);
}
