/* Lease-based leader election (client-go's leaderelection). */
#include "leader.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/log.h"
#include "base/mono_clock.h"
#include "base/rand.h"
#include "kube/events.h"

#define JITTER 1.2 /* client-go: wait.JitterFactor for acquisition */

struct ks_leader {
    uv_loop_t *loop;
    ks_kube_client_t *client;
    ks_leader_opts_t o;
    char *ns, *name, *id;
    char path[900], coll_path[600];
    uv_timer_t timer;
    ks_kube_call_t *call;
    int leader, released, closing;
    int64_t last_renew_ms;  /* start of the last successful write */
    int64_t write_start_ms; /* start of the write in flight */
    /* what was last read */
    char rv[64];
    char holder[256];
    char observed_renew[64]; /* the record's renewTime when last changed */
    int64_t observed_at_ms;  /* local clock when the record last changed */
    int64_t their_duration_ms;
    int64_t transitions;
    char acquire_time[64];
    void (*release_done)(void *ud);
    void *release_ud;
    uint64_t rng;
};

static void now_micro(char *buf, size_t len)
{
    ks_micro_time_format(ks_wall_us(), buf, len);
}

void ks_leader_default_identity(char *buf, size_t len)
{
    char host[256] = "ksched";
    uint64_t r;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &r, sizeof r) != (ssize_t)sizeof r) {
        uint64_t seed = uv_hrtime() ^ ((uint64_t)getpid() << 32);
        r = ks_rand_next(&seed);
    }
    if (fd >= 0)
        close(fd);
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(buf, len, "%s_%016llx", host, (unsigned long long)r);
}

int ks_leader_opts_check(const ks_leader_opts_t *o, ks_error_t *err)
{
    if (o->lease_duration_ms <= 0 || o->renew_deadline_ms <= 0 ||
        o->retry_period_ms <= 0)
        return ks_error_set(err, KS_EINVAL,
                            "leaderElection: leaseDuration, renewDeadline and "
                            "retryPeriod must be greater than zero");
    if (o->lease_duration_ms <= o->renew_deadline_ms)
        return ks_error_set(err, KS_EINVAL,
                            "leaderElection: leaseDuration must be greater "
                            "than renewDeadline");
    if ((double)o->renew_deadline_ms <= JITTER * (double)o->retry_period_ms)
        return ks_error_set(err, KS_EINVAL,
                            "leaderElection: renewDeadline must be greater "
                            "than retryPeriod*%.1f",
                            JITTER);
    if (o->lease_name == NULL || o->lease_name[0] == '\0' ||
        o->lease_namespace == NULL || o->lease_namespace[0] == '\0')
        return ks_error_set(err, KS_EINVAL,
                            "leaderElection: resourceName and "
                            "resourceNamespace must not be empty");
    return 0;
}

static void schedule_tick(ks_leader_t *l);
static void tick(uv_timer_t *t);

static void lost(ks_leader_t *l, const char *why)
{
    if (!l->leader)
        return;
    l->leader = 0;
    ks_log(KS_LOGL_ERROR, "leader election: lost the lease %s/%s: %s",
           l->ns, l->name, why);
    if (l->o.stopped)
        l->o.stopped(l->o.ud);
}

int ks_leader_is_leader(ks_leader_t *l)
{
    if (l->leader && ks_mono_ms() - l->last_renew_ms >= l->o.renew_deadline_ms)
        lost(l, "not renewed within the renew deadline");
    return l->leader;
}

static json_t *lease_body(ks_leader_t *l, const char *holder,
                          int64_t duration_s, const char *acquire,
                          const char *renew, int64_t transitions)
{
    json_t *md = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->ns);
    if (md && l->rv[0])
        json_object_set_new(md, "resourceVersion", json_string(l->rv));
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:I, s:s, s:s, s:I}}",
                     "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                     "metadata", md, "spec", "holderIdentity", holder,
                     "leaseDurationSeconds", (json_int_t)duration_s,
                     "acquireTime", acquire, "renewTime", renew,
                     "leaseTransitions", (json_int_t)transitions);
}

static void read_record(ks_leader_t *l, const json_t *lease)
{
    json_t *md = json_object_get(lease, "metadata");
    json_t *spec = json_object_get(lease, "spec");
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    const char *h = json_string_value(json_object_get(spec, "holderIdentity"));
    const char *rt = json_string_value(json_object_get(spec, "renewTime"));
    const char *at = json_string_value(json_object_get(spec, "acquireTime"));
    json_int_t d =
        json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    snprintf(l->rv, sizeof l->rv, "%s", rv ? rv : "");
    if (strcmp(l->holder, h ? h : "") != 0 ||
        strcmp(l->observed_renew, rt ? rt : "") != 0) {
        /* The record changed: start its lease duration on our clock. */
        if (strcmp(l->holder, h ? h : "") != 0 && h && h[0] &&
            strcmp(h, l->id) != 0 && l->o.new_leader)
            l->o.new_leader(l->o.ud, h);
        snprintf(l->holder, sizeof l->holder, "%s", h ? h : "");
        snprintf(l->observed_renew, sizeof l->observed_renew, "%s",
                 rt ? rt : "");
        l->observed_at_ms = ks_mono_ms();
    }
    snprintf(l->acquire_time, sizeof l->acquire_time, "%s", at ? at : "");
    l->their_duration_ms = (int64_t)d * 1000;
    l->transitions =
        json_integer_value(json_object_get(spec, "leaseTransitions"));
}

static void write_done(void *ud, const ks_kube_result_t *r)
{
    ks_leader_t *l = ud;
    json_t *doc;
    l->call = NULL;
    if (r->status == 200 || r->status == 201) {
        int was = l->leader;
        doc = json_loadb(r->body, r->body_len, 0, NULL);
        if (doc)
            read_record(l, doc);
        json_decref(doc);
        l->last_renew_ms = l->write_start_ms;
        l->leader = 1;
        if (!was) {
            ks_log(KS_LOGL_WARN, "leader election: %s is now the leader "
                                 "(lease %s/%s)",
                   l->id, l->ns, l->name);
            if (l->o.started)
                l->o.started(l->o.ud);
        }
    } else if (r->status == 409) {
        ks_log(KS_LOGL_INFO, "leader election: lease %s/%s changed "
                             "meanwhile; reading it again",
               l->ns, l->name);
    } else {
        ks_log(KS_LOGL_WARN, "leader election: %s", r->message);
    }
    ks_leader_is_leader(l); /* the deadline may have passed meanwhile */
    schedule_tick(l);
}

static void write_lease(ks_leader_t *l, int create)
{
    char now[40];
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    json_t *body;
    char *text;
    int take_over = strcmp(l->holder, l->id) != 0;
    now_micro(now, sizeof now);
    body = lease_body(l, l->id, l->o.lease_duration_ms / 1000,
                      take_over || !l->acquire_time[0] ? now
                                                       : l->acquire_time,
                      now,
                      create ? 0
                             : l->transitions +
                                   (take_over && l->holder[0] ? 1 : 0));
    text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        schedule_tick(l);
        return;
    }
    memset(&o, 0, sizeof o);
    o.method = create ? "POST" : "PUT";
    o.path = create ? l->coll_path : l->path;
    o.body = text;
    o.timeout_ms = l->o.renew_deadline_ms;
    o.on_done = write_done;
    o.ud = l;
    l->write_start_ms = ks_mono_ms();
    l->call = ks_kube_call(l->client, &o, &err);
    free(text);
    if (l->call == NULL) {
        ks_log(KS_LOGL_WARN, "leader election: %s", err.msg);
        schedule_tick(l);
    }
}

static void read_done(void *ud, const ks_kube_result_t *r)
{
    ks_leader_t *l = ud;
    json_t *doc;
    int64_t now = ks_mono_ms();
    l->call = NULL;
    if (l->released) {
        schedule_tick(l);
        return;
    }
    if (r->status == 404) {
        l->rv[0] = l->holder[0] = l->acquire_time[0] = '\0';
        write_lease(l, 1);
        return;
    }
    if (r->status != 200 ||
        (doc = json_loadb(r->body, r->body_len, 0, NULL)) == NULL) {
        ks_log(KS_LOGL_WARN, "leader election: %s",
               r->message[0] ? r->message : "unreadable lease");
        ks_leader_is_leader(l);
        schedule_tick(l);
        return;
    }
    read_record(l, doc);
    json_decref(doc);
    if (l->holder[0] && strcmp(l->holder, l->id) != 0) {
        int64_t d = l->their_duration_ms > 0 ? l->their_duration_ms
                                              : l->o.lease_duration_ms;
        if (now < l->observed_at_ms + d) {
            lost(l, "another candidate holds it");
            schedule_tick(l);
            return;
        }
    }
    write_lease(l, 0);
}

static void tick(uv_timer_t *t)
{
    ks_leader_t *l = t->data;
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    if (l->call != NULL || l->released || l->closing)
        return;
    ks_leader_is_leader(l);
    memset(&o, 0, sizeof o);
    o.method = "GET";
    o.path = l->path;
    o.timeout_ms = l->o.renew_deadline_ms;
    o.on_done = read_done;
    o.ud = l;
    l->call = ks_kube_call(l->client, &o, &err);
    if (l->call == NULL) {
        ks_log(KS_LOGL_WARN, "leader election: %s", err.msg);
        schedule_tick(l);
    }
}

static void schedule_tick(ks_leader_t *l)
{
    uint64_t wait = (uint64_t)l->o.retry_period_ms;
    if (l->released || l->closing)
        return;
    if (!l->leader) {
        /* client-go: JitterUntil(retryPeriod, 1.2) while acquiring. */
        wait += (uint64_t)((double)wait * (JITTER - 1.0) *
                           (double)(ks_rand_next(&l->rng) % 1000) / 1000.0);
    }
    uv_timer_start(&l->timer, tick, wait, 0);
}

ks_leader_t *ks_leader_new(uv_loop_t *loop, ks_kube_client_t *client,
                           const ks_leader_opts_t *o, ks_error_t *err)
{
    char id[300];
    ks_leader_t *l;
    if (ks_leader_opts_check(o, err) != 0)
        return NULL;
    if ((l = calloc(1, sizeof *l)) == NULL)
        goto oom;
    l->loop = loop;
    l->client = client;
    l->o = *o;
    if (o->identity == NULL || o->identity[0] == '\0') {
        ks_leader_default_identity(id, sizeof id);
        l->id = strdup(id);
    } else {
        l->id = strdup(o->identity);
    }
    l->ns = strdup(o->lease_namespace);
    l->name = strdup(o->lease_name);
    if (l->id == NULL || l->ns == NULL || l->name == NULL)
        goto oom;
    snprintf(l->coll_path, sizeof l->coll_path,
             "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
    snprintf(l->path, sizeof l->path, "%s/%s", l->coll_path, l->name);
    l->rng = uv_hrtime();
    if (uv_timer_init(loop, &l->timer) != 0)
        goto oom;
    l->timer.data = l;
    return l;
oom:
    if (l) {
        free(l->id);
        free(l->ns);
        free(l->name);
        free(l);
    }
    ks_error_set(err, KS_ENOMEM, "out of memory");
    return NULL;
}

void ks_leader_start(ks_leader_t *l)
{
    uv_timer_start(&l->timer, tick, 0, 0);
}

static void release_done(void *ud, const ks_kube_result_t *r)
{
    ks_leader_t *l = ud;
    void (*done)(void *) = l->release_done;
    l->call = NULL;
    if (r->status == 200)
        ks_log(KS_LOGL_WARN, "leader election: released the lease %s/%s",
               l->ns, l->name);
    else
        ks_log(KS_LOGL_WARN, "leader election: releasing the lease: %s",
               r->message);
    l->release_done = NULL;
    if (done)
        done(l->release_ud);
}

void ks_leader_release(ks_leader_t *l, void (*done)(void *ud), void *ud)
{
    char now[40];
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    json_t *body;
    char *text;
    int held = ks_leader_is_leader(l);
    l->released = 1;
    uv_timer_stop(&l->timer);
    if (l->call) {
        ks_kube_call_cancel(l->call);
        l->call = NULL;
    }
    l->leader = 0;
    if (!held) {
        if (done)
            done(ud);
        return;
    }
    now_micro(now, sizeof now);
    body = lease_body(l, "", 1, now, now, l->transitions);
    text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    memset(&o, 0, sizeof o);
    o.method = "PUT";
    o.path = l->path;
    o.body = text;
    o.timeout_ms = 5000;
    o.on_done = release_done;
    o.ud = l;
    l->release_done = done;
    l->release_ud = ud;
    l->call = text ? ks_kube_call(l->client, &o, &err) : NULL;
    free(text);
    if (l->call == NULL) {
        l->release_done = NULL;
        if (done)
            done(ud);
    }
}

static void timer_closed(uv_handle_t *h)
{
    ks_leader_t *l = h->data;
    free(l->id);
    free(l->ns);
    free(l->name);
    free(l);
}

void ks_leader_close(ks_leader_t *l)
{
    if (l == NULL)
        return;
    l->closing = 1;
    if (l->call)
        ks_kube_call_cancel(l->call);
    l->call = NULL;
    uv_close((uv_handle_t *)&l->timer, timer_closed);
}

const char *ks_leader_identity(const ks_leader_t *l)
{
    return l->id;
}

const char *ks_leader_holder(const ks_leader_t *l)
{
    return l->holder;
}
