/* Plugin loader and registry: refusals with their codes and messages,
 * private copies, search-path overrides and duplicates. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "framework/plugin_loader.h"
#include "framework/registry.h"
#include "fw_testlib.h"

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Entries of the directory holding `path` (the private copy directory). */
static int dir_entries_of(const char *path)
{
    char dir[4096];
    char *slash;
    DIR *d;
    struct dirent *de;
    int n = 0;
    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* --- successful loads --------------------------------------------------------- */

START_TEST(test_load_private_copy)
{
    char *path = tl_fixture("plugins/probe1.so");
    ks_loaded_plugin_t *p = NULL;
    ks_error_t err = {0};
    int base = ks_plugin_live_count();
    char *copy;
    void *h;

    ck_assert_int_eq(ks_plugin_load(path, &p, &err), 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->desc.name, "Probe1");
    ck_assert_str_eq(p->desc.version, "1.0.0");
    ck_assert_str_eq(p->path, path);
    ck_assert_str_eq(ks_plugin_file(p), "probe1.so");
    /* The image mapped is a private copy, not the file itself. */
    ck_assert_str_ne(p->copy_path, path);
    ck_assert(file_exists(p->copy_path));
    ck_assert_int_eq(ks_plugin_live_count(), base + 1);
    h = dlopen(p->copy_path, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h); /* mapped */
    dlclose(h);
    /* The descriptor was copied whole and zero-filled past its size. */
    ck_assert_uint_eq(p->desc.size, sizeof(ks_plugin_t));
    ck_assert(p->desc.filter != NULL);
    ck_assert(p->desc.less == NULL);
    ck_assert(p->desc.events_to_register == NULL);

    copy = strdup(p->copy_path);
    ks_plugin_ref(p);
    ks_plugin_unref(p); /* one reference left */
    ck_assert(file_exists(copy));
    ck_assert_int_eq(ks_plugin_live_count(), base + 1);
    ks_plugin_unref(p); /* the last one: unmapped and deleted */
    ck_assert_int_eq(ks_plugin_live_count(), base);
    {
        struct stat sb;
        int rc = stat(copy, &sb), e = errno;
        ck_assert_int_eq(rc, -1);
        ck_assert_int_eq(e, ENOENT);
    }
    ck_assert_ptr_null(dlopen(copy, RTLD_NOW | RTLD_NOLOAD));
    free(copy);
    free(path);
}
END_TEST

START_TEST(test_load_same_path_twice)
{
    char *path = tl_fixture("plugins/probe2.so");
    ks_loaded_plugin_t *a = NULL, *b = NULL;
    ks_error_t err = {0};
    int base = ks_plugin_live_count();
    const void *da, *db;

    ck_assert_int_eq(ks_plugin_load(path, &a, &err), 0);
    ck_assert_int_eq(ks_plugin_load(path, &b, &err), 0);
    /* dlopen of one path twice would return the same handle; the private
     * copies give two independent images. */
    ck_assert_ptr_ne(a->dl, b->dl);
    ck_assert_str_ne(a->copy_path, b->copy_path);
    da = dlsym(a->dl, KS_PLUGIN_SYMBOL);
    db = dlsym(b->dl, KS_PLUGIN_SYMBOL);
    ck_assert_ptr_nonnull(da);
    ck_assert_ptr_nonnull(db);
    ck_assert_ptr_ne(da, db);
    ck_assert_ptr_ne(a->desc.name, b->desc.name); /* each image's own text */
    ck_assert_str_eq(a->desc.name, b->desc.name);
    ck_assert_uint_gt(b->load_seq, a->load_seq);
    ck_assert_int_eq(ks_plugin_live_count(), base + 2);
    ck_assert_int_eq(dir_entries_of(a->copy_path), 2);
    ks_plugin_unref(a);
    ck_assert_int_eq(ks_plugin_live_count(), base + 1);
    ck_assert_int_eq(dir_entries_of(b->copy_path), 1);
    ks_plugin_unref(b);
    ck_assert_int_eq(ks_plugin_live_count(), base);
    free(path);
}
END_TEST

/* --- refusals ------------------------------------------------------------------ */

typedef struct refusal {
    const char *file;
    int code;
    const char *want[3]; /* substrings of the message */
} refusal_t;

static const refusal_t refusals[] = {
    {"bad/nodesc.so", KS_ENOTPLUGIN,
     {"not a ksched plugin", "exports no \"ks_plugin_descriptor\"",
      "KS_PLUGIN_DEFINE"}},
    {"bad/badmagic.so", KS_ENOTPLUGIN,
     {"not a ksched plugin", "magic is 0xdeadbeef, expected 0x4b53504c",
      NULL}},
    {"bad/abimajor.so", KS_EABIMAJOR,
     {"built for ABI 2.0", "this host speaks ABI 1.8", "rebuild"}},
    {"bad/abiminor.so", KS_EABIMINOR,
     {"needs ABI 1.9", "newer than this host's 1.8", NULL}},
    {"bad/badresource.so", KS_EINVAL,
     {"plugin BadResource: resources[1]: kind is empty", NULL, NULL}},
    {"bad/short.so", KS_ESHORT, {"descriptor is", "at least", NULL}},
    {"bad/noname.so", KS_ENONAME, {"plugin has no name", NULL, NULL}},
    {"bad/notelf.so", KS_EDLOPEN, {"cannot load shared object", NULL, NULL}},
    {"bad/missing.so", KS_EIO, {"cannot read plugin file", NULL, NULL}},
};

START_TEST(test_load_refused)
{
    const refusal_t *r = &refusals[_i];
    char *path = tl_fixture(r->file);
    ks_loaded_plugin_t *p = (ks_loaded_plugin_t *)1;
    ks_error_t err = {0};
    int base = ks_plugin_live_count(), k;

    ck_assert_int_eq(ks_plugin_load(path, &p, &err), r->code);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(err.code, r->code);
    /* The message starts with the file as the user named it... */
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0 &&
                      err.msg[strlen(path)] == ':',
                  "message does not start with \"%s:\": %s", path, err.msg);
    /* ...never with the private copy. */
    ck_assert_msg(strstr(err.msg, "ksched-plugins-") == NULL, "%s", err.msg);
    for (k = 0; k < 3 && r->want[k]; k++)
        ck_assert_msg(strstr(err.msg, r->want[k]) != NULL,
                      "\"%s\" not in: %s", r->want[k], err.msg);
    ck_assert_int_eq(ks_plugin_live_count(), base);
    free(path);
}
END_TEST

START_TEST(test_short_sizes)
{
    char *path = tl_fixture("bad/short.so");
    ks_loaded_plugin_t *p = NULL;
    ks_error_t err = {0};
    char want[128];
    ck_assert_int_eq(ks_plugin_load(path, &p, &err), KS_ESHORT);
    snprintf(want, sizeof want, "descriptor is %u bytes, ABI 1 needs at least %u",
             (unsigned)(KS_PLUGIN_V1_SIZE - sizeof(void *)),
             (unsigned)KS_PLUGIN_V1_SIZE);
    ck_assert_msg(strstr(err.msg, want) != NULL, "\"%s\" not in: %s", want,
                  err.msg);
    free(path);
}
END_TEST

START_TEST(test_refusals_leave_no_copies)
{
    char *good = tl_fixture("plugins/probe3.so");
    ks_loaded_plugin_t *p = NULL;
    ks_error_t err = {0};
    size_t i;
    for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        char *path = tl_fixture(refusals[i].file);
        ck_assert_int_ne(ks_plugin_load(path, &p, &err), 0);
        free(path);
    }
    ck_assert_int_eq(ks_plugin_load(good, &p, &err), 0);
    /* Only the good plugin's copy is left in the private directory. */
    ck_assert_int_eq(dir_entries_of(p->copy_path), 1);
    ks_plugin_unref(p);
    free(good);
}
END_TEST

/* --- registry -------------------------------------------------------------------- */

START_TEST(test_registry_duplicate_in_one_dir)
{
    char *dir = tl_fixture("dup");
    const char *dirs[1];
    ks_registry_t *reg = (ks_registry_t *)1;
    ks_error_t err = {0};
    int base = ks_plugin_live_count();
    dirs[0] = dir;
    ck_assert_int_eq(ks_registry_load(dirs, 1, 1, &reg, &err), KS_EDUPNAME);
    ck_assert_ptr_null(reg);
    ck_assert_msg(strstr(err.msg, "plugin \"Dup\" is defined twice") != NULL,
                  "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "/dup/dup_a.so") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "/dup/dup_b.so") != NULL, "%s", err.msg);
    ck_assert_int_eq(ks_plugin_live_count(), base);
    free(dir);
}
END_TEST

START_TEST(test_registry_earlier_dir_overrides)
{
    char *over = tl_fixture("override"), *plug = tl_fixture("plugins");
    const char *dirs[2];
    ks_registry_t *reg = NULL;
    ks_error_t err = {0};
    ks_loaded_plugin_t *p;
    int base = ks_plugin_live_count();
    uint32_t n_plug;

    /* The plugins of fixtures/plugins alone (override adds none). */
    dirs[0] = plug;
    ck_assert_int_eq(ks_registry_load(dirs, 1, 1, &reg, &err), 0);
    n_plug = reg->n;
    ks_registry_free(reg);
    dirs[0] = over;
    dirs[1] = plug;
    ck_assert_int_eq(ks_registry_load(dirs, 2, 1, &reg, &err), 0);
    p = ks_registry_get(reg, "Probe1");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->desc.version, "override");
    ck_assert_msg(strstr(p->path, "/override/probe1.so") != NULL, "%s",
                  p->path);
    /* The other plugins of the later directory are still there. */
    ck_assert_ptr_nonnull(ks_registry_get(reg, "Probe2"));
    ck_assert_ptr_nonnull(ks_registry_get(reg, "NoScore"));
    ck_assert_uint_eq(reg->n, n_plug);
    ck_assert_uint_eq(reg->n_dirs, 2);
    ks_registry_free(reg);

    dirs[0] = plug;
    dirs[1] = over;
    ck_assert_int_eq(ks_registry_load(dirs, 2, 1, &reg, &err), 0);
    p = ks_registry_get(reg, "Probe1");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->desc.version, "1.0.0");
    ck_assert_msg(strstr(p->path, "/plugins/probe1.so") != NULL, "%s",
                  p->path);
    ck_assert_uint_eq(reg->n, n_plug);
    ks_registry_free(reg);
    /* Every copy, the losing ones too, is released. */
    ck_assert_int_eq(ks_plugin_live_count(), base);
    free(over);
    free(plug);
}
END_TEST

START_TEST(test_registry_reports_every_bad_file)
{
    char *dir = tl_fixture("bad");
    const char *dirs[1];
    ks_registry_t *reg = NULL;
    ks_error_t err = {0};
    static const char *const files[] = {
        "abimajor.so", "abiminor.so", "badmagic.so", "badresource.so",
        "nodesc.so",   "noname.so",   "notelf.so",  "short.so"};
    size_t i;
    int lines = 1, base = ks_plugin_live_count();
    const char *s;
    dirs[0] = dir;
    /* Files load in name order, so the first problem is abimajor.so's. */
    ck_assert_int_eq(ks_registry_load(dirs, 1, 1, &reg, &err), KS_EABIMAJOR);
    ck_assert_ptr_null(reg);
    for (i = 0; i < sizeof files / sizeof files[0]; i++)
        ck_assert_msg(strstr(err.msg, files[i]) != NULL, "%s not in: %s",
                      files[i], err.msg);
    for (s = err.msg; *s; s++)
        lines += *s == '\n';
    ck_assert_int_eq(lines, 8);
    ck_assert_int_eq(ks_plugin_live_count(), base);
    free(dir);
}
END_TEST

START_TEST(test_registry_lookup_and_env_path)
{
    ks_registry_t *reg = tl_registry();
    ks_registry_t *r2 = NULL;
    ks_error_t err = {0};
    char *fx = tl_fixture("plugins");
    const char *missing[1] = {"/nonexistent/ksched-test-dir"};
    size_t i;

    ck_assert_ptr_nonnull(ks_registry_get(reg, "Probe3"));
    ck_assert_ptr_nonnull(ks_registry_get(reg, "DefaultBinder"));
    ck_assert_ptr_nonnull(ks_registry_get(reg, "PrioritySort"));
    ck_assert_ptr_null(ks_registry_get(reg, "Probe4"));
    ck_assert_ptr_null(ks_registry_get(reg, "probe1")); /* case matters */
    /* Sorted by name. */
    for (i = 1; i < reg->n; i++)
        ck_assert_int_lt(strcmp(reg->plugins[i - 1]->desc.name,
                                reg->plugins[i]->desc.name),
                         0);
    ks_registry_free(reg);

    /* A missing directory is not an error; it just adds nothing. */
    ck_assert_int_eq(ks_registry_load(missing, 1, 1, &r2, &err), 0);
    ck_assert_uint_eq(r2->n, 0);
    ks_registry_free(r2);

    /* KSCHED_PLUGIN_PATH is searched after --plugin-dir and before the
     * installed directory. */
    setenv("KSCHED_PLUGIN_PATH", fx, 1);
    ck_assert_int_eq(ks_registry_load(missing, 1, 0, &r2, &err), 0);
    ck_assert_uint_ge(r2->n_dirs, 2);
    ck_assert_str_eq(r2->dirs[0], missing[0]);
    ck_assert_str_eq(r2->dirs[1], fx);
    ck_assert_str_eq(r2->dirs[r2->n_dirs - 1], ks_registry_default_dir());
    ck_assert_ptr_nonnull(ks_registry_get(r2, "Probe1"));
    ks_registry_free(r2);
    unsetenv("KSCHED_PLUGIN_PATH");
    free(fx);
}
END_TEST

static Suite *loader_suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_load_private_copy);
    tcase_add_test(tc, test_load_same_path_twice);
    tcase_add_loop_test(tc, test_load_refused, 0,
                        (int)(sizeof refusals / sizeof refusals[0]));
    tcase_add_test(tc, test_short_sizes);
    tcase_add_test(tc, test_refusals_leave_no_copies);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_test(tc, test_registry_duplicate_in_one_dir);
    tcase_add_test(tc, test_registry_earlier_dir_overrides);
    tcase_add_test(tc, test_registry_reports_every_bad_file);
    tcase_add_test(tc, test_registry_lookup_and_env_path);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(loader_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
