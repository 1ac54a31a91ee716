/*
 * The framework's limits, each explicit: at most KS_FW_MAX_MASKED_PLUGINS
 * Filter, Score and Permit plugins per profile (refused with a message
 * naming the limit), cycle-state keys of any length, and an error record
 * that can be emptied without writing all of it. The nominated-pods filter
 * with more than 64 pods on a node is in test_runtime.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "framework/cycle_state.h"
#include "fw_testlib.h"

/* --- plugins per point ------------------------------------------------------- */

/* A registry of plugins made in memory (no shared objects): "Sort"
 * (QueueSort), "Binder" (Bind) and "P00".."P<n-1>" implementing Filter,
 * Score and Permit. The test holds one reference on each plugin, so the
 * frameworks built over it never release them. */
typedef struct fake_reg {
    ks_registry_t reg;
    ks_loaded_plugin_t *plugins;
    char (*names)[24];
} fake_reg_t;

static int fake_less(void *self, const ks_queued_pod_t *a,
                     const ks_queued_pod_t *b)
{
    (void)self;
    return a->timestamp_ms < b->timestamp_ms;
}

static ks_code_t fake_filter(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const ks_node_info_t *ni,
                             ks_status_t *st)
{
    (void)self, (void)cs, (void)pod, (void)ni, (void)st;
    return KS_SUCCESS;
}

static ks_code_t fake_score(void *self, ks_cycle_state_t *cs,
                            const ks_pod_t *pod, const ks_node_info_t *ni,
                            int64_t *score, ks_status_t *st)
{
    (void)self, (void)cs, (void)pod, (void)ni, (void)st;
    *score = 0;
    return KS_SUCCESS;
}

static ks_code_t fake_permit(void *self, ks_cycle_state_t *cs,
                             const ks_pod_t *pod, const char *node,
                             uint64_t *timeout_ms, ks_status_t *st)
{
    (void)self, (void)cs, (void)pod, (void)node, (void)timeout_ms, (void)st;
    return KS_SUCCESS;
}

static ks_code_t fake_bind(void *self, ks_cycle_state_t *cs,
                           const ks_pod_t *pod, const char *node,
                           ks_status_t *st)
{
    (void)self, (void)cs, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

static int cmp_plugin(const void *a, const void *b)
{
    const ks_loaded_plugin_t *const *x = a, *const *y = b;
    return strcmp((*x)->desc.name, (*y)->desc.name);
}

static void fake_reg_init(fake_reg_t *f, size_t n)
{
    size_t i, total = n + 2;
    memset(f, 0, sizeof *f);
    f->plugins = calloc(total, sizeof *f->plugins);
    f->names = calloc(n + 1, sizeof *f->names);
    f->reg.plugins = calloc(total, sizeof *f->reg.plugins);
    ck_assert(f->plugins && f->names && f->reg.plugins);
    for (i = 0; i < total; i++) {
        ks_loaded_plugin_t *p = &f->plugins[i];
        p->refs = 1;
        p->path = (char *)"fake.so";
        p->desc.magic = KS_PLUGIN_MAGIC;
        p->desc.abi_major = KS_ABI_MAJOR;
        p->desc.abi_minor = KS_ABI_MINOR;
        p->desc.size = (uint32_t)sizeof p->desc;
        p->desc.version = "1";
        if (i == n) {
            p->desc.name = "Sort";
            p->desc.less = fake_less;
        } else if (i == n + 1) {
            p->desc.name = "Binder";
            p->desc.bind = fake_bind;
        } else {
            snprintf(f->names[i], sizeof f->names[i], "P%02zu", i);
            p->desc.name = f->names[i];
            p->desc.filter = fake_filter;
            p->desc.score = fake_score;
            p->desc.permit = fake_permit;
        }
        f->reg.plugins[i] = p;
    }
    f->reg.n = total;
    qsort(f->reg.plugins, total, sizeof *f->reg.plugins, cmp_plugin);
}

static void fake_reg_free(fake_reg_t *f)
{
    size_t i;
    for (i = 0; i < f->reg.n; i++)
        ck_assert_int_eq(f->reg.plugins[i]->refs, 1);
    free(f->reg.plugins);
    free(f->plugins);
    free(f->names);
}

/* A profile enabling P00..P<n-1> at `point` ("filter", "score", "permit")
 * and nothing else but Sort and Binder; built over a fake registry of
 * `n` plugins. Returns the build's code; *msg receives the error text. */
static int build_n(const char *point, size_t n, char *msg, size_t len)
{
    fake_reg_t f;
    ks_framework_t *fw = NULL;
    ks_config_t *cfg;
    ks_error_t *err = calloc(1, sizeof *err);
    size_t cap = 512 + n * 16, off, i;
    char *yaml = malloc(cap);
    int rc;

    ck_assert(err && yaml);
    fake_reg_init(&f, n);
    off = (size_t)snprintf(yaml, cap,
                           PROFILE_HEAD "  plugins:\n"
                                        "    multiPoint:\n"
                                        "      disabled:\n"
                                        "      - name: '*'\n"
                                        "    queueSort:\n"
                                        "      enabled:\n"
                                        "      - name: Sort\n"
                                        "    bind:\n"
                                        "      enabled:\n"
                                        "      - name: Binder\n"
                                        "    %s:\n"
                                        "      enabled:\n",
                           point);
    for (i = 0; i < n; i++)
        off += (size_t)snprintf(yaml + off, cap - off, "      - name: P%02zu\n",
                                i);
    cfg = tl_config(yaml);
    rc = ks_framework_build(&cfg->profiles[0], "inline.yaml", &f.reg, 1, &fw,
                            err);
    ck_assert_uint_lt(strlen(err->msg), len);
    memcpy(msg, err->msg, strlen(err->msg) + 1);
    if (rc == 0) {
        ck_assert_ptr_nonnull(fw);
        ck_assert_uint_eq(fw->n_points[KS_EP_FILTER] +
                              fw->n_points[KS_EP_SCORE] +
                              fw->n_points[KS_EP_PERMIT],
                          n);
    } else {
        ck_assert_ptr_null(fw);
    }
    ks_framework_free(fw);
    ks_config_free(cfg);
    fake_reg_free(&f);
    free(yaml);
    free(err);
    return rc;
}

START_TEST(test_permit_plugins_limit)
{
    char msg[1024];
    ck_assert_int_eq(KS_FW_MAX_MASKED_PLUGINS, 64);
    ck_assert_int_eq(build_n("permit", 64, msg, sizeof msg), 0);
    ck_assert_int_eq(build_n("permit", 65, msg, sizeof msg), KS_EINVAL);
    ck_assert_str_eq(msg, "inline.yaml:4: profile \"default-scheduler\" has "
                          "65 Permit plugins; at most 64 are supported");
}
END_TEST

START_TEST(test_filter_and_score_plugins_limit)
{
    char msg[1024];
    ck_assert_int_eq(build_n("filter", 64, msg, sizeof msg), 0);
    ck_assert_int_eq(build_n("filter", 65, msg, sizeof msg), KS_EINVAL);
    ck_assert_str_eq(msg, "inline.yaml:4: profile \"default-scheduler\" has "
                          "65 Filter plugins; at most 64 are supported");
    ck_assert_int_eq(build_n("score", 64, msg, sizeof msg), 0);
    ck_assert_int_eq(build_n("score", 70, msg, sizeof msg), KS_EINVAL);
    ck_assert_str_eq(msg, "inline.yaml:4: profile \"default-scheduler\" has "
                          "70 Score plugins; at most 64 are supported");
}
END_TEST

/* --- cycle-state keys ---------------------------------------------------------- */

static int n_freed;

static void count_free(void *p)
{
    n_freed++;
    free(p);
}

static void *dup_int(const void *p)
{
    int *c = malloc(sizeof *c);
    if (c)
        *c = *(const int *)p;
    return c;
}

static int *int_new(int v)
{
    int *p = malloc(sizeof *p);
    ck_assert_ptr_nonnull(p);
    *p = v;
    return p;
}

/* A key of `len` bytes: `fill` repeated, then `last` as its final byte. */
static char *key_of(size_t len, char fill, char last)
{
    char *k = malloc(len + 1);
    ck_assert_ptr_nonnull(k);
    memset(k, fill, len);
    k[len - 1] = last;
    k[len] = '\0';
    return k;
}

START_TEST(test_cycle_state_keys_of_any_length)
{
    ks_cycle_state_t *cs = ks_cycle_state_new(), *c2;
    size_t lens[] = {1, 63, 64, 65, 200, 5000};
    char *a[6], *b[6];
    size_t i;

    n_freed = 0;
    ck_assert_ptr_nonnull(cs);
    /* Keys that differ only in their last byte stay apart at every length
     * (a limit of 63 bytes made the long ones one key). */
    for (i = 0; i < 6; i++) {
        a[i] = key_of(lens[i], 'k', 'a');
        b[i] = key_of(lens[i], 'k', 'b');
        ck_assert_int_eq(ks_cycle_state_write(cs, a[i], int_new((int)i),
                                              dup_int, count_free),
                         0);
        ck_assert_int_eq(ks_cycle_state_write(cs, b[i], int_new(100 + (int)i),
                                              dup_int, count_free),
                         0);
    }
    ck_assert_int_eq(n_freed, 0);
    for (i = 0; i < 6; i++) {
        /* Another buffer with the same text: the lookup by text. */
        char *same = strdup(b[i]);
        ck_assert_int_eq(*(int *)ks_cycle_state_read(cs, a[i]), (int)i);
        ck_assert_int_eq(*(int *)ks_cycle_state_read(cs, same), 100 + (int)i);
        free(same);
    }
    /* A clone copies long keys too. */
    c2 = ks_cycle_state_clone(cs);
    ck_assert_ptr_nonnull(c2);
    for (i = 0; i < 6; i++)
        ck_assert_int_eq(*(int *)ks_cycle_state_read(c2, b[i]), 100 + (int)i);
    /* Overwrite, delete and clear free what they drop (ASan: no leak). */
    ck_assert_int_eq(ks_cycle_state_write(cs, a[5], int_new(-5), dup_int,
                                          count_free),
                     0);
    ck_assert_int_eq(n_freed, 1);
    ck_assert_int_eq(*(int *)ks_cycle_state_read(cs, a[5]), -5);
    ks_cycle_state_delete(cs, a[4]);
    ck_assert_int_eq(n_freed, 2);
    ck_assert_ptr_null(ks_cycle_state_read(cs, a[4]));
    ck_assert_int_eq(*(int *)ks_cycle_state_read(cs, b[4]), 104);
    ks_cycle_state_clear(cs);
    ck_assert_int_eq(n_freed, 2 + 11);
    ck_assert_ptr_null(ks_cycle_state_read(cs, b[5]));
    ks_cycle_state_free(c2);
    ck_assert_int_eq(n_freed, 2 + 11 + 12);
    ks_cycle_state_free(cs);
    for (i = 0; i < 6; i++) {
        free(a[i]);
        free(b[i]);
    }
}
END_TEST

/* Preemption clones a cycle state per node: every owner's slots (more
 * owners than the first allocation holds) and every keyed entry come
 * across, a clone_fn's data copied and freed by the copy, data without one
 * shared and never freed by it; a cleared state hands an owner a fresh
 * record (no slot of its earlier data left). */
START_TEST(test_cycle_state_clone_many_owners)
{
    enum { N_OWNERS = 13 };
    ks_cycle_state_t *cs = ks_cycle_state_new(), *c;
    char owners[N_OWNERS];
    int shared[N_OWNERS];
    unsigned i;

    n_freed = 0;
    ck_assert_ptr_nonnull(cs);
    for (i = 0; i < N_OWNERS; i++) {
        shared[i] = 1000 + (int)i;
        ck_assert_int_eq(ks_cycle_state_slot_set(cs, &owners[i], 0,
                                                 int_new((int)i), dup_int,
                                                 count_free),
                         0);
        if (i % 2 == 0)
            ck_assert_int_eq(ks_cycle_state_slot_set(cs, &owners[i], 1,
                                                     &shared[i], NULL, NULL),
                             0);
    }
    ck_assert_int_eq(ks_cycle_state_write(cs, "k", int_new(-1), dup_int,
                                          count_free),
                     0);
    ck_assert_int_eq(ks_cycle_state_write(cs, "shared", &shared[0], NULL,
                                          NULL),
                     0);
    c = ks_cycle_state_clone(cs);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(ks_cycle_state_slot_count(c),
                      ks_cycle_state_slot_count(cs));
    ck_assert_uint_eq(ks_cycle_state_count(c), 2);
    for (i = 0; i < N_OWNERS; i++) {
        int *d = ks_cycle_state_slot_get(c, &owners[i], 0);
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_ne(d, ks_cycle_state_slot_get(cs, &owners[i], 0));
        ck_assert_int_eq(*d, (int)i);
        if (i % 2 == 0)
            ck_assert_ptr_eq(ks_cycle_state_slot_get(c, &owners[i], 1),
                             &shared[i]);
        else
            ck_assert_ptr_null(ks_cycle_state_slot_get(c, &owners[i], 1));
    }
    ck_assert_int_eq(*(int *)ks_cycle_state_read(c, "k"), -1);
    ck_assert_ptr_ne(ks_cycle_state_read(c, "k"), ks_cycle_state_read(cs, "k"));
    ck_assert_ptr_eq(ks_cycle_state_read(c, "shared"), &shared[0]);
    /* The copy frees only its copies: N_OWNERS slots and "k". */
    ks_cycle_state_clear(c);
    ck_assert_int_eq(n_freed, N_OWNERS + 1);
    ck_assert_ptr_null(ks_cycle_state_slot_get(c, &owners[0], 0));
    ck_assert_ptr_null(ks_cycle_state_read(c, "k"));
    /* Reused after clear: the owner's other slot starts empty. */
    ck_assert_int_eq(ks_cycle_state_slot_set(c, &owners[2], 0, int_new(5),
                                             NULL, count_free),
                     0);
    ck_assert_ptr_null(ks_cycle_state_slot_get(c, &owners[2], 1));
    ck_assert_uint_eq(ks_cycle_state_slot_count(c), 1);
    ks_cycle_state_free(c);
    ck_assert_int_eq(n_freed, N_OWNERS + 2);
    ks_cycle_state_free(cs);
    ck_assert_int_eq(n_freed, 2 * N_OWNERS + 3);
}
END_TEST

/* A refill releases what the state held (its free fns run), clones the
 * source in over the same arrays, with a key index that finds the new
 * entries and the skip bits of the source; a second refill from a smaller
 * source leaves nothing of the first. */
START_TEST(test_cycle_state_refill)
{
    ks_cycle_state_t *cs = ks_cycle_state_new(), *small = ks_cycle_state_new();
    ks_cycle_state_t *dst = ks_cycle_state_new();
    char owner_a, owner_b;
    char keys[20][8];
    int i;

    n_freed = 0;
    ck_assert_ptr_nonnull(cs);
    ck_assert_ptr_nonnull(small);
    ck_assert_ptr_nonnull(dst);
    for (i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        ck_assert_int_eq(ks_cycle_state_write(cs, keys[i], int_new(i), dup_int,
                                              count_free),
                         0);
    }
    ck_assert_int_eq(ks_cycle_state_slot_set(cs, &owner_a, 0, int_new(7),
                                             dup_int, count_free),
                     0);
    *ks_cycle_state_skip_filter(cs) = 5;
    *ks_cycle_state_skip_score(cs) = 9;
    /* dst held data of its own: released by the refill */
    ck_assert_int_eq(ks_cycle_state_write(dst, "old", int_new(-1), dup_int,
                                          count_free),
                     0);
    ck_assert_int_eq(ks_cycle_state_slot_set(dst, &owner_b, 1, int_new(-2),
                                             dup_int, count_free),
                     0);
    ck_assert_int_eq(ks_cycle_state_refill(dst, cs), 0);
    ck_assert_int_eq(n_freed, 2);
    ck_assert_uint_eq(ks_cycle_state_count(dst), 20);
    ck_assert_ptr_null(ks_cycle_state_read(dst, "old"));
    ck_assert_ptr_null(ks_cycle_state_slot_get(dst, &owner_b, 1));
    for (i = 0; i < 20; i++) {
        int *d = ks_cycle_state_read(dst, keys[i]);
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_ne(d, ks_cycle_state_read(cs, keys[i]));
        ck_assert_int_eq(*d, i);
    }
    ck_assert_int_eq(*(int *)ks_cycle_state_slot_get(dst, &owner_a, 0), 7);
    ck_assert_uint_eq(*ks_cycle_state_skip_filter(dst), 5);
    ck_assert_uint_eq(*ks_cycle_state_skip_score(dst), 9);
    /* refilled again from a smaller state: the 21 copies go */
    ck_assert_int_eq(ks_cycle_state_write(small, "only", int_new(3), dup_int,
                                          count_free),
                     0);
    ck_assert_int_eq(ks_cycle_state_refill(dst, small), 0);
    ck_assert_int_eq(n_freed, 2 + 21);
    ck_assert_uint_eq(ks_cycle_state_count(dst), 1);
    ck_assert_uint_eq(ks_cycle_state_slot_count(dst), 0);
    ck_assert_ptr_null(ks_cycle_state_read(dst, keys[0]));
    ck_assert_int_eq(*(int *)ks_cycle_state_read(dst, "only"), 3);
    ck_assert_uint_eq(*ks_cycle_state_skip_filter(dst), 0);
    ks_cycle_state_free(dst);
    ks_cycle_state_free(small);
    ks_cycle_state_free(cs);
    ck_assert_int_eq(n_freed, 2 + 21 + 1 + 1 + 21);
}
END_TEST

/* --- the error record ------------------------------------------------------------ */

START_TEST(test_error_init_on_dirty_record)
{
    ks_error_t *e = malloc(sizeof *e);
    ck_assert_ptr_nonnull(e);
    memset(e, 0xa5, sizeof *e);
    ks_error_init(e);
    ck_assert_int_eq(e->code, KS_OK);
    ck_assert_str_eq(e->msg, "");
    ck_assert_int_eq(ks_error_append(e, KS_ENOMEM, "first %d", 1), KS_ENOMEM);
    ck_assert_int_eq(ks_error_append(e, KS_EINVAL, "second"), KS_ENOMEM);
    ck_assert_str_eq(e->msg, "first 1\nsecond");
    free(e);
}
END_TEST

START_TEST(test_errno_values)
{
    /* Named now; the values stay as they were. */
    ks_errno_t first = KS_EINVAL, last = KS_ETIMEDOUT;
    ck_assert_int_eq(KS_OK, 0);
    ck_assert_int_eq(first, -999);
    ck_assert_int_eq(KS_ENOMEM, -998);
    ck_assert_int_eq(last, -970);
    ck_assert_str_eq(ks_err_name(KS_EMISSINGFN), "KS_EMISSINGFN");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    SRunner *sr;
    int nf;
    tcase_add_test(tc, test_permit_plugins_limit);
    tcase_add_test(tc, test_filter_and_score_plugins_limit);
    tcase_add_test(tc, test_cycle_state_keys_of_any_length);
    tcase_add_test(tc, test_cycle_state_clone_many_owners);
    tcase_add_test(tc, test_cycle_state_refill);
    tcase_add_test(tc, test_error_init_on_dirty_record);
    tcase_add_test(tc, test_errno_values);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
