/*
 * The scheduler extenders' preemptVerb (upstream Evaluator.callExtenders
 * and HTTPExtender.ProcessPreemption), for a PostFilter plugin that found
 * preemption candidates (host API extenders_preempt).
 *
 * The plugin hands its candidates over and returns Pending; the cycle
 * suspends (scheduler_impl.h) while the interested extenders with a
 * preemptVerb are asked one after the other, each with what the previous
 * one kept; then schedule_one.c calls the same PostFilter plugin again,
 * which reads the outcome (extenders_preempt_result). Each answer's
 * NodeNameToMetaVictims replaces the candidates: its victims are looked
 * up by UID among the pods of that node in the snapshot (upstream
 * convertToVictims). An answer naming a node that is not a candidate, a
 * victim that is not on its node, or a node without victims (unless the
 * extender is ignorable: that node is dropped) fails the extender; a
 * failed extender fails preemption unless it is ignorable, then it is
 * skipped. The kept candidates stay in the order the plugin gave them.
 *
 * Ownership: the candidates and their victims arrays are copies owned by
 * s->xp; victims point into the snapshot, which does not change while the
 * cycle is suspended. Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "scheduler_impl.h"

static void cands_free(ks_preempt_candidate_t *c, uint32_t n)
{
    uint32_t i;
    for (i = 0; c && i < n; i++)
        free((void *)c[i].victims);
    free(c);
}

void ks_sched_xp_clear(ks_scheduler_t *s)
{
    cands_free(s->xp.c, s->xp.n);
    free(s->xp.error);
    memset(&s->xp, 0, sizeof s->xp);
}

/* Copy one candidate's victims into dst (dst->node set). 0 or -1. */
static int copy_victims(ks_preempt_candidate_t *dst,
                        const ks_pod_t *const *v, uint32_t n)
{
    const ks_pod_t **copy = malloc((n ? n : 1) * sizeof *copy);
    if (copy == NULL)
        return -1;
    if (n)
        memcpy(copy, v, n * sizeof *copy);
    dst->victims = copy;
    dst->n_victims = n;
    return 0;
}

static void xp_fail(ks_scheduler_t *s, const char *msg)
{
    free(s->xp.error);
    s->xp.error = strdup(msg);
    s->xp.state = XP_FAILED;
}

/* --- one extender's answer -------------------------------------------------- */

typedef struct answer {
    ks_scheduler_t *s;
    const ks_extender_config_t *e;
    ks_preempt_candidate_t *next; /* by the old candidates' positions */
    uint8_t *kept;
} answer_t;

static int on_victims(void *ud, const char *node, const char *const *uids,
                      size_t n_uids, int64_t pdb, char *msg, size_t msg_len)
{
    answer_t *a = ud;
    ks_scheduler_t *s = a->s;
    const ks_node_info_t *ni;
    const ks_pod_t **v;
    uint32_t i, k;
    size_t j;
    for (i = 0; i < s->xp.n; i++)
        if (strcmp(s->xp.c[i].node, node) == 0)
            break;
    ni = ks_snapshot_get(s->snap, node);
    if (ni == NULL || ni->node == NULL) {
        snprintf(msg, msg_len, "nodeinfo not found for node name \"%s\"",
                 node);
        return -1;
    }
    if (i == s->xp.n) {
        snprintf(msg, msg_len,
                 "extender %s returned node %s, which is not a preemption "
                 "candidate",
                 a->e->url_prefix, node);
        return -1;
    }
    if (n_uids == 0) {
        if (a->e->ignorable) {
            ks_log(KS_LOGL_INFO, "extender %s: ignoring node %s without "
                                 "victims",
                   a->e->url_prefix, node);
            return 0;
        }
        snprintf(msg, msg_len, "expected at least one victim pod on node "
                               "\"%s\"",
                 node);
        return -1;
    }
    v = malloc(n_uids * sizeof *v);
    if (v == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    for (j = 0; j < n_uids; j++) {
        for (k = 0; k < ni->n_pods; k++)
            if (strcmp(ni->pods[k]->uid, uids[j]) == 0)
                break;
        if (k == ni->n_pods) {
            snprintf(msg, msg_len,
                     "extender: %s claims to preempt pod (UID: %s) on node: "
                     "%s, but the pod is not found on that node",
                     a->e->url_prefix, uids[j], node);
            free(v);
            return -1;
        }
        v[j] = ni->pods[k];
    }
    free((void *)a->next[i].victims); /* a node named twice: the last */
    a->next[i].node = s->xp.c[i].node;
    a->next[i].victims = v;
    a->next[i].n_victims = (uint32_t)n_uids;
    a->next[i].n_pdb_violations = pdb;
    a->kept[i] = 1;
    return 0;
}

/* Apply extender k's answer: 0, or -1 with msg (the extender failed). */
static int apply(ks_scheduler_t *s, const ks_extender_config_t *e,
                 ks_sched_ext_call_t *c, char *msg, size_t msg_len)
{
    answer_t a = {s, e, NULL, NULL};
    uint32_t i, n = 0;
    if (c->error) {
        snprintf(msg, msg_len, "%s", c->error);
        return -1;
    }
    a.next = calloc(s->xp.n + 1, sizeof *a.next);
    a.kept = calloc(s->xp.n + 1, 1);
    if (a.next == NULL || a.kept == NULL) {
        snprintf(msg, msg_len, "out of memory");
        goto fail;
    }
    if (ks_extender_parse_preemption(c->body ? c->body : "", c->len,
                                     on_victims, &a, msg, msg_len) != 0)
        goto fail;
    for (i = 0; i < s->xp.n; i++)
        if (a.kept[i])
            a.next[n++] = a.next[i];
    cands_free(s->xp.c, s->xp.n);
    s->xp.c = a.next;
    s->xp.n = n;
    free(a.kept);
    return 0;
fail:
    for (i = 0; a.next && i < s->xp.n; i++)
        free((void *)a.next[i].victims);
    free(a.next);
    free(a.kept);
    return -1;
}

/* --- asking them in turn ------------------------------------------------------ */

/* The answer of extender s->susp->next is in: apply it (or skip an
 * ignorable failure). 0 to go on, -1 when preemption failed. */
static int answer(ks_scheduler_t *s, const ks_extender_config_t *e)
{
    ks_sched_ext_call_t *c = &s->susp->calls[s->susp->next];
    char msg[2048];
    if (apply(s, e, c, msg, sizeof msg) == 0)
        return 0;
    if (e->ignorable) {
        ks_log(KS_LOGL_INFO, "skipping extender %s: it failed and is "
                             "ignorable: %s",
               e->url_prefix, msg);
        return 0;
    }
    xp_fail(s, msg);
    return -1;
}

/* Ask the interested extenders from s->susp->next on: 1 when a call is in
 * flight, 0 when done (s->xp.state DONE or FAILED). */
static int ask_next(ks_scheduler_t *s)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n = ks_sched_extenders(s, &ex);
    for (; p->next < n && s->xp.n > 0; p->next++) {
        const ks_extender_config_t *e = &ex[p->next];
        char *body;
        int rc;
        if (e->preempt_verb == NULL || !ks_extender_interested(e, s->xp.pod))
            continue;
        body = ks_extender_preempt_json(e, s->xp.pod, s->xp.c, s->xp.n);
        rc = ks_sched_ext_start_body(s, e, p->next, e->preempt_verb, body);
        free(body);
        if (rc == 0)
            return 1;
        if (answer(s, e) != 0)
            return 0;
    }
    s->xp.state = XP_DONE;
    return 0;
}

int ks_sched_xp_resume(ks_scheduler_t *s)
{
    ks_sched_suspended_t *p = s->susp;
    const ks_extender_config_t *ex;
    size_t n = ks_sched_extenders(s, &ex);
    if (p->next < n && answer(s, &ex[p->next]) != 0)
        return 0;
    p->next++;
    return ask_next(s);
}

/* --- the host API ---------------------------------------------------------------- */

ks_code_t ks_sched_ops_ext_preempt(ks_fw_env_t *env, const ks_pod_t *pod,
                                   const ks_preempt_candidate_t *cands,
                                   uint32_t n, ks_status_t *st)
{
    ks_scheduler_t *s = env->ud;
    const ks_extender_config_t *ex;
    size_t n_ext = ks_sched_extenders(s, &ex), k;
    uint32_t i;
    for (k = 0; k < n_ext; k++)
        if (ex[k].preempt_verb && ks_extender_interested(&ex[k], pod))
            break;
    /* upstream: no candidates, nothing to ask; and only one preempt
     * stage per cycle */
    if (k == n_ext || n == 0 || s->xp.state != XP_NONE)
        return KS_SKIP;
    s->xp.c = calloc(n, sizeof *s->xp.c);
    if (s->xp.c == NULL)
        goto oom;
    for (i = 0; i < n; i++) {
        s->xp.c[i].node = cands[i].node;
        s->xp.c[i].n_pdb_violations = cands[i].n_pdb_violations;
        if (copy_victims(&s->xp.c[i], cands[i].victims, cands[i].n_victims) !=
            0) {
            s->xp.n = i;
            goto oom;
        }
    }
    s->xp.n = n;
    if (ks_sched_ext_suspend(s, n_ext, EXT_STAGE_PREEMPT, 0) != 0)
        goto oom;
    s->xp.pod = pod;
    s->xp.state = XP_ASKING;
    s->susp->next = 0;
    ask_next(s);
    return KS_PENDING;
oom:
    ks_sched_xp_clear(s);
    ks_status_add_reason(st, "out of memory");
    return KS_ERROR;
}

ks_code_t ks_sched_ops_ext_preempt_result(ks_fw_env_t *env,
                                          const ks_pod_t *pod,
                                          const ks_preempt_candidate_t **out,
                                          uint32_t *n, ks_status_t *st)
{
    ks_scheduler_t *s = env->ud;
    *out = NULL;
    *n = 0;
    if (s->xp.pod != pod)
        return KS_SKIP;
    if (s->xp.state == XP_FAILED) {
        ks_status_add_reason(st, s->xp.error ? s->xp.error : "out of memory");
        return KS_ERROR;
    }
    if (s->xp.state != XP_DONE)
        return KS_SKIP;
    *out = s->xp.c;
    *n = s->xp.n;
    return KS_SUCCESS;
}
