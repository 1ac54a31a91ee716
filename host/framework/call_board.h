/*
 * The call board: which plugin call each thread of this process is in right
 * now, in memory a supervising process can read.
 *
 * Every plugin call the host makes (the extension points, create, destroy,
 * EventsToRegister) is bracketed by ks_call_enter()/ks_call_leave(): a few
 * plain stores into the calling thread's slot and one release store of a
 * sequence number that is odd while the call runs. No system call, no lock,
 * no locked instruction.
 *
 * The board lives either in memory private to the process (the default:
 * `ksched schedule`, tests) or in a shared mapping the supervisor of
 * `ksched serve` created before it started this worker (ks_call_board_use).
 * The supervisor reads the slots to enforce deadlines and, after the worker
 * died, to name the plugin that was running on the thread that crashed
 * (the crash handler records that thread's slot). The supervisor writes the
 * fault list, which the next worker reads to quarantine plugin versions.
 *
 * Layout: the board is a plain struct of fixed size with no pointers, so
 * both processes see the same bytes at the same offsets. Cross-process
 * fields are C11 atomics (lock-free for these sizes on every platform
 * ksched builds on).
 *
 * Threads: enter/leave from any thread (each thread owns its slot); the
 * plugin table is written on the loop thread only (framework build);
 * the fault list is written by the supervisor only, while no worker runs,
 * or by ks_call_board_fault_add on the single thread that owns the board.
 */
#ifndef KS_CALL_BOARD_H
#define KS_CALL_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define KS_BOARD_MAGIC 0x6b73626fu /* "ksbo" */
#define KS_BOARD_SLOTS 128     /* threads that can make plugin calls */
#define KS_BOARD_PLUGINS 1024  /* plugin instances registered (a ring) */
#define KS_BOARD_FAULTS 64     /* faults remembered (a ring) */
#define KS_BOARD_GOOD 256      /* known-good plugin versions (a ring) */
#define KS_BOARD_SWAPPED 256   /* versions serving when a reload began */
#define KS_BOARD_POD_MAX 320   /* "namespace/name" */

/* Call kinds beyond the extension points (KS_EP_* and KS_FW_EP_*). */
enum {
    KS_CALL_CREATE = 64,
    KS_CALL_DESTROY,
    KS_CALL_EVENTS, /* EventsToRegister */
    KS_CALL_LOAD,   /* dlopen of the file (its constructors) */
    KS_CALL_SIGN    /* the pod's batching signature (batch.h) */
};

/* Fault kinds (ks_board_fault_t.kind). */
enum ks_fault_kind {
    KS_FAULT_SIGNAL = 1, /* died from a signal (or abort) inside the call */
    KS_FAULT_DEADLINE    /* overran its deadline */
};

typedef struct ks_board_slot {
    _Atomic uint64_t seq;       /* odd while a call runs */
    _Atomic uint32_t plugin;    /* index into plugins[] (+1; 0: none) */
    _Atomic uint32_t point;     /* KS_EP_*, KS_FW_EP_* or KS_CALL_* */
    _Atomic uint32_t deadline_ms; /* 0: no deadline */
    uint32_t pad_;
    _Atomic uint64_t pod_epoch; /* ks_call_board's pod epoch pod[] is of */
    const void *pod_ptr;        /* the pod pod[] was copied from (own use) */
    char pod[KS_BOARD_POD_MAX]; /* "namespace/name" of the call's pod */
} ks_board_slot_t;

/* One plugin instance as the worker registered it. */
typedef struct ks_board_plugin {
    char name[64];
    char version[64];
    char file[256];      /* the file as found in the plugin path */
    uint64_t hash;       /* content hash of the .so (ks_file_hash) */
    uint64_t generation; /* the generation it was built for */
    uint32_t in_tree;    /* one of ksched's own plugins */
    uint32_t pad_;
} ks_board_plugin_t;

/* One fault, as the supervisor (or batch mode's handler) recorded it. */
typedef struct ks_board_fault {
    uint32_t kind;       /* enum ks_fault_kind */
    int32_t signo;       /* KS_FAULT_SIGNAL */
    uint32_t point;      /* the call kind */
    uint32_t deadline_ms;
    double unix_time;
    ks_board_plugin_t plugin;
    char pod[KS_BOARD_POD_MAX];
} ks_board_fault_t;

/* A plugin version that ran through a probation period without a fault,
 * kept as a file the worker copied out of its private copy. */
typedef struct ks_board_good {
    char name[64];
    char version[64];
    char path[512];   /* the kept copy */
    uint64_t hash;
    uint64_t generation;
} ks_board_good_t;

typedef struct ks_call_board {
    uint32_t magic;
    uint32_t size; /* sizeof(ks_call_board_t) */
    _Atomic uint32_t n_slots;   /* slots handed out */
    _Atomic uint32_t n_plugins; /* plugin registrations ever (ring) */
    _Atomic uint64_t pod_epoch; /* bumped when a thread's pod may change */
    ks_board_slot_t slots[KS_BOARD_SLOTS];
    ks_board_plugin_t plugins[KS_BOARD_PLUGINS];

    /* written by the crash handler in the worker */
    _Atomic int32_t crash_slot; /* slot of the thread that crashed, +1 */
    _Atomic int32_t crash_signo;
    _Atomic uint32_t crash_in_call; /* the slot was in a call */
    _Atomic uint64_t crash_seq;     /* that slot's seq at the crash */

    /* written by the worker: its state, for the supervisor's log lines */
    _Atomic uint64_t generation;   /* the generation scheduling now */
    _Atomic uint64_t cycles;       /* scheduling cycles run */
    _Atomic uint32_t ready;        /* 1 once the worker serves */
    _Atomic uint32_t n_good;       /* registrations ever (ring) */
    ks_board_good_t good[KS_BOARD_GOOD];
    /* The plugin versions that were serving when a reload began (each
     * kept as a file like the good ones), recorded when they differ from
     * the newest record of the same plugin: what a faulty version that
     * reload brought in rolls back to, whatever their probation
     * (ks_call_board_rollback). */
    _Atomic uint32_t n_swapped;    /* records ever (ring) */
    ks_board_good_t swapped[KS_BOARD_SWAPPED];

    /* The TCP port the worker bound (host order; 0: none yet). Only the
     * port: a replacement worker and the supervisor's stand-in take the
     * address from the value `serve` parsed before the first worker
     * started (supervisor.h), never from text on the board. */
    _Atomic uint32_t listen_port;
    /* The first worker's leader-election identity: a replacement keeps it,
     * so it renews the Lease its dead predecessor held at once instead of
     * waiting for it to expire (no split brain: the predecessor is dead). */
    char leader_identity[256];
    /* The self-signed serving certificate the first worker made (serve
     * without --tls-cert-file, server/secure.c): its PEM certificate, a
     * NUL, its PEM key, a NUL, its fingerprint, a NUL; length 0: none yet.
     * A replacement serves the same one, so a client that trusts or pins
     * it keeps working across a crash. The board is a private mapping of
     * this process tree (MAP_SHARED | MAP_ANONYMOUS). */
    _Atomic uint32_t self_signed_len;
    char self_signed[8192];

    /* written by the supervisor between workers */
    char keep_dir[256];            /* where good versions are kept; "" */
    _Atomic int32_t supervisor_pid;
    _Atomic uint32_t n_faults;     /* faults ever (ring) */
    _Atomic uint32_t worker_starts; /* workers started so far */
    ks_board_fault_t faults[KS_BOARD_FAULTS];
} ks_call_board_t;

/* The board of this process: a private one until ks_call_board_use().
 * (Inline: every plugin call reads it. Initial-exec TLS: the host is
 * linked into executables only, never dlopen'ed.) */
extern ks_call_board_t *ks_call_board_current_;
static inline ks_call_board_t *ks_call_board(void)
{
    return ks_call_board_current_;
}
extern _Thread_local ks_board_slot_t *ks_call_my_slot_
    __attribute__((tls_model("initial-exec")));
ks_board_slot_t *ks_call_slot_take_(void);
/* Use `b` (a shared mapping set up by the supervisor) from now on. Call
 * before any plugin is loaded, on the main thread. */
void ks_call_board_use(ks_call_board_t *b);
/* Is the board a supervisor's (plugin versions then need their hash)? */
int ks_call_board_shared(void);
/* A zeroed board in a MAP_SHARED anonymous mapping (survives fork); NULL
 * when mmap fails. Free with ks_call_board_unmap. */
ks_call_board_t *ks_call_board_map_shared(void);
void ks_call_board_unmap(ks_call_board_t *b);

/* Register a plugin instance: returns its index + 1 for ks_call_enter.
 * Loop thread only. */
uint32_t ks_call_board_register(const char *name, const char *version,
                                const char *file, uint64_t hash,
                                uint64_t generation, int in_tree);
/* The generation being built (registrations are tagged with it). */
void ks_call_board_set_building(uint64_t generation);
uint64_t ks_call_board_building(void);

/* The registration behind an index from ks_call_board_register (NULL when
 * out of range). */
const ks_board_plugin_t *ks_call_board_plugin(const ks_call_board_t *b,
                                              uint32_t idx);

/* This thread's slot (handed out on first use; a shared spare slot when
 * all are taken, which then names no culprit). */
static inline ks_board_slot_t *ks_call_slot_self(void)
{
    ks_board_slot_t *s = ks_call_my_slot_;
    return s ? s : ks_call_slot_take_();
}

/* A new pod may be handed to plugin calls: slots re-copy the pod's name at
 * their next call. Loop thread, once per scheduling or binding step. */
static inline void ks_call_board_pod_changed(void)
{
    atomic_fetch_add_explicit(&ks_call_board()->pod_epoch, 1,
                              memory_order_relaxed);
}

void ks_call_slot_set_pod_(ks_board_slot_t *s, const void *pod_ptr,
                           const char *ns, const char *name, uint64_t epoch);

/* Bracket one plugin call. `pod_ptr`, `ns`, `name` may be NULL (no pod). */
static inline ks_board_slot_t *ks_call_enter(uint32_t plugin, uint32_t point,
                                             uint32_t deadline_ms,
                                             const void *pod_ptr,
                                             const char *ns, const char *name)
{
    ks_board_slot_t *s = ks_call_slot_self();
    uint64_t epoch = atomic_load_explicit(&ks_call_board()->pod_epoch,
                                          memory_order_relaxed);
    if (s->pod_ptr != pod_ptr ||
        atomic_load_explicit(&s->pod_epoch, memory_order_relaxed) != epoch)
        ks_call_slot_set_pod_(s, pod_ptr, ns, name, epoch);
    atomic_store_explicit(&s->plugin, plugin, memory_order_relaxed);
    atomic_store_explicit(&s->point, point, memory_order_relaxed);
    atomic_store_explicit(&s->deadline_ms, deadline_ms, memory_order_relaxed);
    /* Only this thread writes its seq: a load and a release store (a
     * plain move on x86), no locked read-modify-write. */
    atomic_store_explicit(
        &s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
        memory_order_release);
    return s;
}

/* ks_call_enter when `rec`, else nothing (NULL); ks_call_leave takes
 * either. For the per-node calls of ksched's own plugins without a
 * deadline, which are not recorded (framework.h: record_hot). */
static inline ks_board_slot_t *ks_call_enter_if(int rec, uint32_t plugin,
                                                uint32_t point,
                                                uint32_t deadline_ms,
                                                const void *pod_ptr,
                                                const char *ns,
                                                const char *name)
{
    return rec ? ks_call_enter(plugin, point, deadline_ms, pod_ptr, ns, name)
               : NULL;
}

static inline void ks_call_leave(ks_board_slot_t *s)
{
    if (s == NULL)
        return;
    atomic_store_explicit(
        &s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
        memory_order_release);
}

/* The label of a call kind ("Filter", "create", ...). */
const char *ks_call_point_name(uint32_t point);

/* A content hash of a file (FNV-1a 64 over its bytes); 0 when unreadable. */
uint64_t ks_file_hash(const char *path);

/* Is this plugin version (name, hash) in the board's fault list? Returns
 * the newest matching fault, or NULL. With name NULL, any fault of a file
 * with that hash (a file vetted before its plugin's name is known). */
const ks_board_fault_t *ks_call_board_quarantined(const ks_call_board_t *b,
                                                  const char *name,
                                                  uint64_t hash);
/* The newest known-good version of `name` that is not quarantined, or
 * NULL. */
const ks_board_good_t *ks_call_board_good(const ks_call_board_t *b,
                                          const char *name);
/* The newest record of `name` among the versions serving when a reload
 * began (ks_call_board_swapped_add), or NULL. */
const ks_board_good_t *ks_call_board_swapped(const ks_call_board_t *b,
                                             const char *name);
/*
 * What the quarantined version `bad_hash` of plugin `name` rolls back to:
 *  1. the version that was serving when a reload brought it in (the newest
 *     swapped-out record of `name` with another hash), whatever its
 *     probation, unless that version has a fault too;
 *  2. else the newest known-good version without a fault
 *     (ks_call_board_good): probation chooses among older versions.
 * NULL when neither. *before (when not NULL) is the version of step 1,
 * faulty or not, or NULL when there was none.
 */
const ks_board_good_t *ks_call_board_rollback(const ks_call_board_t *b,
                                              const char *name,
                                              uint64_t bad_hash,
                                              const ks_board_good_t **before);
/* Append a fault (the supervisor, or batch mode's reporter). */
void ks_call_board_fault_add(ks_call_board_t *b, const ks_board_fault_t *f);
/* Append a known-good version. Loop thread of the worker. */
void ks_call_board_good_add(ks_call_board_t *b, const ks_board_good_t *g);
/* Record a version serving when a reload began, unless it is already the
 * newest record of its plugin. Loop thread of the worker. */
void ks_call_board_swapped_add(ks_call_board_t *b, const ks_board_good_t *g);

/* Describe a fault in one line: plugin "X" version V (file) <crashed with
 * SIGSEGV | overran its 1000 ms deadline> in Filter while scheduling pod
 * ns/name. */
void ks_board_fault_describe(const ks_board_fault_t *f, char *buf,
                             size_t len);

/*
 * Crash reporting inside the process that runs plugins. Installs handlers
 * for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on an alternate stack:
 * the handler records the crashing thread's slot in the board; then, if
 * `report_exit` is not 0 (batch mode), it writes one line naming the plugin,
 * call and pod to stderr and _exits with `report_exit` when the crash was
 * inside a plugin call; otherwise (or outside a plugin call) it restores the
 * default action and re-raises, so a supervisor sees the signal.
 * Main thread, once.
 */
int ks_call_board_crash_handlers(int report_exit);

/*
 * Batch mode's deadline watchdog: a thread that every `tick_ms` looks at
 * every slot and, when one call has run longer than its deadline, writes
 * the fault line to stderr and _exits with `exit_code`. 0, or -1 when the
 * thread cannot start.
 */
int ks_call_board_watchdog_start(unsigned tick_ms, int exit_code);

/*
 * Deadline scanning, for the supervisor and the batch watchdog: call
 * ks_deadline_scan() every few milliseconds with a monotonic time; it
 * returns the index of a slot whose current call has run longer than its
 * deadline (as seen by consecutive scans: the resolution is the scan
 * period), or -1. The scanner's state is private to its caller.
 */
typedef struct ks_deadline_scan {
    uint64_t last_seq[KS_BOARD_SLOTS];
    uint64_t first_ms[KS_BOARD_SLOTS];
} ks_deadline_scan_t;
int ks_deadline_scan(const ks_call_board_t *b, ks_deadline_scan_t *st,
                     uint64_t now_ms);

/* Fill `f` from the board's slot `slot_idx` (the call running there). */
void ks_call_board_fault_from_slot(const ks_call_board_t *b, size_t slot_idx,
                                   uint32_t kind, int signo,
                                   ks_board_fault_t *f);

#endif
