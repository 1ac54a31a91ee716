/* The call board: see call_board.h. */
#include "call_board.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/mono_clock.h"
#include "framework.h"

static ks_call_board_t private_board = {.magic = KS_BOARD_MAGIC,
                                        .size = sizeof(ks_call_board_t)};
ks_call_board_t *ks_call_board_current_ = &private_board;
/* A thread that finds every slot taken shares this one (names no one). */
static ks_board_slot_t spare_slot;
_Thread_local ks_board_slot_t *ks_call_my_slot_
    __attribute__((tls_model("initial-exec")));
static _Thread_local int my_slot_idx = -1;

int ks_call_board_shared(void)
{
    return ks_call_board_current_ != &private_board;
}

void ks_call_board_use(ks_call_board_t *b)
{
    ks_call_board_current_ = b ? b : &private_board;
    ks_call_my_slot_ = NULL;
    my_slot_idx = -1;
}

ks_call_board_t *ks_call_board_map_shared(void)
{
    void *p = mmap(NULL, sizeof(ks_call_board_t), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ks_call_board_t *b;
    if (p == MAP_FAILED)
        return NULL;
    b = p; /* anonymous mappings are zero-filled */
    b->magic = KS_BOARD_MAGIC;
    b->size = sizeof *b;
    return b;
}

void ks_call_board_unmap(ks_call_board_t *b)
{
    if (b && b != &private_board)
        munmap(b, sizeof *b);
}

ks_board_slot_t *ks_call_slot_take_(void)
{
    ks_call_board_t *b = ks_call_board();
    uint32_t i;
    if (ks_call_my_slot_)
        return ks_call_my_slot_;
    i = atomic_fetch_add_explicit(&b->n_slots, 1, memory_order_relaxed);
    if (i < KS_BOARD_SLOTS) {
        ks_call_my_slot_ = &b->slots[i];
        my_slot_idx = (int)i;
    } else {
        ks_call_my_slot_ = &spare_slot;
    }
    return ks_call_my_slot_;
}

void ks_call_slot_set_pod_(ks_board_slot_t *s, const void *pod_ptr,
                           const char *ns, const char *name, uint64_t epoch)
{
    /* Written while no call runs in this slot (seq is even), so a reader
     * that sees an odd seq sees a complete name. */
    if (name == NULL) {
        s->pod[0] = '\0';
    } else {
        /* "ns/name", cut to fit, as snprintf would (which cost 870
         * instructions a call: three calls a cycle) */
        size_t cap = sizeof s->pod, a = ns ? strlen(ns) : 0, b;
        if (a > cap - 1)
            a = cap - 1;
        if (a > 0)
            memcpy(s->pod, ns, a);
        if (a < cap - 1)
            s->pod[a++] = '/';
        b = strlen(name);
        if (b > cap - 1 - a)
            b = cap - 1 - a;
        memcpy(s->pod + a, name, b);
        s->pod[a + b] = '\0';
    }
    s->pod_ptr = pod_ptr;
    atomic_store_explicit(&s->pod_epoch, epoch, memory_order_relaxed);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

uint32_t ks_call_board_register(const char *name, const char *version,
                                const char *file, uint64_t hash,
                                uint64_t generation, int in_tree)
{
    ks_call_board_t *b = ks_call_board();
    uint32_t n = atomic_load_explicit(&b->n_plugins, memory_order_relaxed);
    ks_board_plugin_t *p = &b->plugins[n % KS_BOARD_PLUGINS];
    memset(p, 0, sizeof *p);
    copy_str(p->name, sizeof p->name, name);
    copy_str(p->version, sizeof p->version, version);
    copy_str(p->file, sizeof p->file, file);
    p->hash = hash;
    p->generation = generation;
    p->in_tree = in_tree != 0;
    atomic_store_explicit(&b->n_plugins, n + 1, memory_order_release);
    /* Indexes are positions in the ring, + 1. A registration overwritten
     * by wrapping names the newer instance: 1,024 instances later. */
    return (n % KS_BOARD_PLUGINS) + 1;
}

static uint64_t building_generation;

void ks_call_board_set_building(uint64_t generation)
{
    building_generation = generation;
}

uint64_t ks_call_board_building(void) { return building_generation; }

const ks_board_plugin_t *ks_call_board_plugin(const ks_call_board_t *b,
                                              uint32_t idx)
{
    if (idx == 0 || idx > KS_BOARD_PLUGINS)
        return NULL;
    return &b->plugins[idx - 1];
}

const char *ks_call_point_name(uint32_t point)
{
    switch (point) {
    case KS_CALL_CREATE: return "create";
    case KS_CALL_DESTROY: return "destroy";
    case KS_CALL_EVENTS: return "EventsToRegister";
    case KS_CALL_LOAD: return "load (dlopen)";
    case KS_CALL_SIGN: return "Sign";
    default: break;
    }
    /* the extension points' names from their one table (ext_points.h),
     * the timed extras (NormalizeScore, Unreserve...) by their labels */
    if (point < KS_EP_COUNT)
        return ks_ext_point_name((ks_ext_point_t)point);
    return ks_fw_metric_point_name((int)point);
}

uint64_t ks_file_hash(const char *path)
{
    unsigned char buf[65536];
    uint64_t h = 0xcbf29ce484222325ull;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
        ssize_t i;
        for (i = 0; i < n; i++) {
            h ^= buf[i];
            h *= 0x100000001b3ull;
        }
    }
    close(fd);
    return n < 0 ? 0 : (h ? h : 1);
}

const ks_board_fault_t *ks_call_board_quarantined(const ks_call_board_t *b,
                                                  const char *name,
                                                  uint64_t hash)
{
    uint32_t n = atomic_load_explicit(&b->n_faults, memory_order_acquire);
    uint32_t i, first = n > KS_BOARD_FAULTS ? n - KS_BOARD_FAULTS : 0;
    for (i = n; i > first; i--) {
        const ks_board_fault_t *f = &b->faults[(i - 1) % KS_BOARD_FAULTS];
        if (f->plugin.hash == hash &&
            (name == NULL || strcmp(f->plugin.name, name) == 0))
            return f;
    }
    return NULL;
}

const ks_board_good_t *ks_call_board_good(const ks_call_board_t *b,
                                          const char *name)
{
    uint32_t n = atomic_load_explicit(&b->n_good, memory_order_acquire);
    uint32_t i, first = n > KS_BOARD_GOOD ? n - KS_BOARD_GOOD : 0;
    for (i = n; i > first; i--) {
        const ks_board_good_t *g = &b->good[(i - 1) % KS_BOARD_GOOD];
        if (strcmp(g->name, name) == 0 &&
            ks_call_board_quarantined(b, g->name, g->hash) == NULL)
            return g;
    }
    return NULL;
}

const ks_board_good_t *ks_call_board_swapped(const ks_call_board_t *b,
                                             const char *name)
{
    uint32_t n = atomic_load_explicit(&b->n_swapped, memory_order_acquire);
    uint32_t i, first = n > KS_BOARD_SWAPPED ? n - KS_BOARD_SWAPPED : 0;
    for (i = n; i > first; i--) {
        const ks_board_good_t *g = &b->swapped[(i - 1) % KS_BOARD_SWAPPED];
        if (strcmp(g->name, name) == 0)
            return g;
    }
    return NULL;
}

const ks_board_good_t *ks_call_board_rollback(const ks_call_board_t *b,
                                              const char *name,
                                              uint64_t bad_hash,
                                              const ks_board_good_t **before)
{
    uint32_t n = atomic_load_explicit(&b->n_swapped, memory_order_acquire);
    uint32_t i, first = n > KS_BOARD_SWAPPED ? n - KS_BOARD_SWAPPED : 0;
    const ks_board_good_t *prev = NULL;
    /* The version serving when `bad_hash` came in: the newest record
     * with another hash (records only change with the version). */
    for (i = n; i > first && prev == NULL; i--) {
        const ks_board_good_t *g = &b->swapped[(i - 1) % KS_BOARD_SWAPPED];
        if (strcmp(g->name, name) == 0 && g->hash != bad_hash)
            prev = g;
    }
    if (before)
        *before = prev;
    if (prev && ks_call_board_quarantined(b, prev->name, prev->hash) == NULL)
        return prev;
    /* None, or it faulted too: probation decides. */
    return ks_call_board_good(b, name);
}

void ks_call_board_fault_add(ks_call_board_t *b, const ks_board_fault_t *f)
{
    uint32_t n = atomic_load_explicit(&b->n_faults, memory_order_relaxed);
    b->faults[n % KS_BOARD_FAULTS] = *f;
    atomic_store_explicit(&b->n_faults, n + 1, memory_order_release);
}

void ks_call_board_good_add(ks_call_board_t *b, const ks_board_good_t *g)
{
    uint32_t n = atomic_load_explicit(&b->n_good, memory_order_relaxed);
    b->good[n % KS_BOARD_GOOD] = *g;
    atomic_store_explicit(&b->n_good, n + 1, memory_order_release);
}

void ks_call_board_swapped_add(ks_call_board_t *b, const ks_board_good_t *g)
{
    const ks_board_good_t *last = ks_call_board_swapped(b, g->name);
    uint32_t n;
    if (last && last->hash == g->hash)
        return;
    n = atomic_load_explicit(&b->n_swapped, memory_order_relaxed);
    b->swapped[n % KS_BOARD_SWAPPED] = *g;
    atomic_store_explicit(&b->n_swapped, n + 1, memory_order_release);
}

void ks_call_board_fault_from_slot(const ks_call_board_t *b, size_t slot_idx,
                                   uint32_t kind, int signo,
                                   ks_board_fault_t *f)
{
    const ks_board_slot_t *s = &b->slots[slot_idx];
    const ks_board_plugin_t *p = ks_call_board_plugin(
        b, atomic_load_explicit(&s->plugin, memory_order_relaxed));
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->signo = signo;
    f->point = atomic_load_explicit(&s->point, memory_order_relaxed);
    f->deadline_ms = atomic_load_explicit(&s->deadline_ms,
                                          memory_order_relaxed);
    f->unix_time = ks_wall_seconds();
    if (p)
        f->plugin = *p;
    memcpy(f->pod, s->pod, sizeof f->pod);
    f->pod[sizeof f->pod - 1] = '\0';
}

void ks_board_fault_describe(const ks_board_fault_t *f, char *buf, size_t len)
{
    char what[96];
    const char *sig = NULL;
    if (f->kind == KS_FAULT_DEADLINE) {
        snprintf(what, sizeof what, "overran its %u ms deadline",
                 (unsigned)f->deadline_ms);
    } else {
        sig = sigabbrev_np(f->signo);
        snprintf(what, sizeof what, "crashed with SIG%s",
                 sig ? sig : "(unknown)");
    }
    snprintf(buf, len,
             "plugin \"%s\" version %s (%s) %s in %s%s%s", f->plugin.name,
             f->plugin.version[0] ? f->plugin.version : "(none)",
             f->plugin.file[0] ? f->plugin.file : "?", what,
             ks_call_point_name(f->point),
             f->pod[0] ? " while scheduling pod " : "", f->pod);
}

/* Set by the first crash report or deadline report of this process: the
 * one that ends it (a second one waits). */
static atomic_int crashing;

/* --- deadlines ---------------------------------------------------------- */

int ks_deadline_scan(const ks_call_board_t *b, ks_deadline_scan_t *st,
                     uint64_t now_ms)
{
    uint32_t n = atomic_load_explicit(&b->n_slots, memory_order_relaxed), i;
    if (n > KS_BOARD_SLOTS)
        n = KS_BOARD_SLOTS;
    for (i = 0; i < n; i++) {
        const ks_board_slot_t *s = &b->slots[i];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        uint32_t dl;
        if ((seq & 1) == 0) {
            st->last_seq[i] = seq;
            continue;
        }
        if (seq != st->last_seq[i]) {
            st->last_seq[i] = seq;
            st->first_ms[i] = now_ms;
            continue;
        }
        dl = atomic_load_explicit(&s->deadline_ms, memory_order_relaxed);
        if (dl != 0 && now_ms - st->first_ms[i] > dl)
            return (int)i;
    }
    return -1;
}

typedef struct watchdog {
    unsigned tick_ms;
    int exit_code;
} watchdog_t;

static watchdog_t the_watchdog;

static void *watchdog_main(void *ud)
{
    watchdog_t *w = ud;
    static ks_deadline_scan_t st;
    for (;;) {
        struct timespec d = {0, (long)w->tick_ms * 1000000L};
        int i;
        nanosleep(&d, NULL);
        i = ks_deadline_scan(ks_call_board(), &st, (uint64_t)ks_mono_ms());
        if (i >= 0 && atomic_exchange(&crashing, 1)) {
            /* A crash is being reported (its handler can outlast the
             * deadline under a sanitizer): that report ends the process. */
            for (;;)
                pause();
        }
        if (i >= 0) {
            ks_board_fault_t f;
            char line[1024];
            ks_call_board_fault_from_slot(ks_call_board(), (size_t)i,
                                          KS_FAULT_DEADLINE,
                                          0, &f);
            ks_board_fault_describe(&f, line, sizeof line);
            fprintf(stderr, "ksched: %s\n", line);
            fflush(stderr);
            _exit(w->exit_code);
        }
    }
    return NULL;
}

int ks_call_board_watchdog_start(unsigned tick_ms, int exit_code)
{
    pthread_t t;
    pthread_attr_t a;
    int rc;
    the_watchdog.tick_ms = tick_ms ? tick_ms : 20;
    the_watchdog.exit_code = exit_code;
    if (pthread_attr_init(&a) != 0)
        return -1;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &a, watchdog_main, &the_watchdog);
    pthread_attr_destroy(&a);
    return rc == 0 ? 0 : -1;
}

/* --- crashes ------------------------------------------------------------ */

static int crash_report_exit;

/* Async-signal-safe writes of a string and a decimal number. */
static void put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(2, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static _Thread_local int crashing_here;

static void on_crash(int signo, siginfo_t *si, void *uc)
{
    ks_board_slot_t *s = ks_call_my_slot_;
    int idx = my_slot_idx;
    uint64_t seq = s ? atomic_load_explicit(&s->seq, memory_order_relaxed) : 0;
    int in_call = s != NULL && (seq & 1) != 0;
    (void)si;
    (void)uc;
    if (crashing_here) {
        /* A fault inside this handler: die from it. */
        signal(signo, SIG_DFL);
        raise(signo);
        return;
    }
    crashing_here = 1;
    if (atomic_exchange(&crashing, 1)) {
        /* Another thread crashed first (Filter runs on several threads at
         * once): it reports and ends the process; wait for that. */
        for (;;)
            pause();
    }
    atomic_store(&ks_call_board()->crash_signo, signo);
    atomic_store(&ks_call_board()->crash_in_call,
                 (uint32_t)(in_call && idx >= 0));
    atomic_store(&ks_call_board()->crash_seq, seq);
    atomic_store(&ks_call_board()->crash_slot, idx + 1);
    if (in_call && idx >= 0) {
        const ks_board_plugin_t *p = ks_call_board_plugin(
            ks_call_board(),
            atomic_load_explicit(&s->plugin, memory_order_relaxed));
        const char *sig = sigabbrev_np(signo);
        put("ksched: plugin \"");
        put(p ? p->name : "?");
        put("\" version ");
        put(p && p->version[0] ? p->version : "(none)");
        put(" (");
        put(p ? p->file : "?");
        put(") crashed with SIG");
        put(sig ? sig : "?");
        put(" in ");
        put(ks_call_point_name(
            atomic_load_explicit(&s->point, memory_order_relaxed)));
        if (s->pod[0]) {
            put(" while scheduling pod ");
            put(s->pod);
        }
        put("\n");
        if (crash_report_exit)
            _exit(crash_report_exit);
    }
    /* Die from the signal, as if no handler were there. */
    signal(signo, SIG_DFL);
    raise(signo);
}

int ks_call_board_crash_handlers(int report_exit)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    struct sigaction sa;
    size_t i;
    crash_report_exit = report_exit;
    if (sigaltstack(&ss, NULL) != 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    /* Not SA_RESETHAND: a second thread faulting while the first reports
     * must wait in the handler, not end the process unreported. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return -1;
    return 0;
}
