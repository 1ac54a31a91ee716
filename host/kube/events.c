/* events.k8s.io/v1 events with client-go's series aggregation. */
#include "events.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/log.h"
#include "base/mono_clock.h"
#include "base/strmap.h"

#define SERIES_WINDOW_US (6LL * 60 * 1000000) /* client-go: 6 minutes */
#define FLUSH_MS 30000                         /* client-go: 30 seconds */

typedef struct series {
    char *ns, *event_name;
    int64_t last_us;     /* last observed */
    uint32_t count;      /* occurrences, the first one included */
    uint32_t sent_count; /* count the API server has */
    int created;         /* the POST succeeded (name known to exist) */
    char key[];
} series_t;

struct ks_event_recorder {
    uv_loop_t *loop;
    ks_kube_client_t *client;
    char *hostname;
    ks_strmap_t series; /* key -> series_t */
    uv_timer_t flush;
    uint64_t last_name_ns; /* the last event name's time, kept increasing */
    ks_event_stats_t stats;
    int closed;
    unsigned pending;    /* requests in flight (the client's calls owned
                            by this recorder, cancelled at close) */
    int dropping; /* dropped since the queue was last half empty */
};

void ks_micro_time_format(int64_t unix_us, char *buf, size_t len)
{
    time_t t = (time_t)(unix_us / 1000000);
    struct tm tm;
    char b[24];
    gmtime_r(&t, &tm);
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06dZ", b, (int)(unix_us % 1000000));
}

static void series_free(series_t *s)
{
    if (s) {
        free(s->ns);
        free(s->event_name);
        free(s);
    }
}

/* --- writes ---------------------------------------------------------------- */

/* One write (a POST or a series PATCH), retried as client-go retries an
 * event write: up to MAX_TRIES times when the API server could not take it
 * (no answer, 429, 5xx), waiting longer each time. */
#define MAX_TRIES 12
#define RETRY_MAX_MS 10000

/* One write; while it lives, exactly one client call (maybe waiting out
 * a retry's backoff) is in flight for it, owned by the recorder. */
typedef struct req {
    ks_event_recorder_t *r;
    int tries;
    const char *method, *ctype; /* static strings */
    char *path, *text;
    ks_kube_done_cb done;
    char key[];
} req_t;

/* The write is over (answered, given up or cancelled). */
static void req_free(req_t *q)
{
    if (--q->r->pending < KS_EVENTS_MAX_QUEUED / 2 && q->r->dropping &&
        !q->r->closed) {
        q->r->dropping = 0;
        ks_log(KS_LOGL_INFO, "events: the API server caught up (%" PRIu64
               " events dropped so far)", q->r->stats.dropped);
    }
    free(q->path);
    free(q->text);
    free(q);
}

static void req_cancelled(void *ud)
{
    req_free(ud);
}

static series_t *req_series(req_t *q)
{
    return q->r->closed ? NULL : ks_strmap_get(&q->r->series, q->key);
}

static int req_start(req_t *q, uint64_t delay_ms);

/* A failure worth another try: schedule it and return 1. */
static int retry_later(req_t *q, const ks_kube_result_t *res)
{
    uint64_t wait = 250;
    int i;
    if (!(res->status == 0 || res->status == 429 || res->status >= 500) ||
        q->tries >= MAX_TRIES || q->r->closed)
        return 0;
    for (i = 1; i < q->tries && wait < RETRY_MAX_MS; i++)
        wait *= 2;
    if (wait > RETRY_MAX_MS)
        wait = RETRY_MAX_MS;
    return req_start(q, wait) == 0;
}

static void create_done(void *ud, const ks_kube_result_t *res)
{
    req_t *q = ud;
    series_t *s = req_series(q);
    if (res->status == 201 || res->status == 200) {
        q->r->stats.created++;
        if (s)
            s->created = 1;
    } else {
        if (retry_later(q, res))
            return;
        q->r->stats.failed++;
        ks_log(KS_LOGL_DEBUG, "event: %s", res->message);
        if (s) /* let the next occurrence POST again */
            series_free(ks_strmap_del(&q->r->series, s->key));
    }
    req_free(q);
}

static void patch_done(void *ud, const ks_kube_result_t *res)
{
    req_t *q = ud;
    if (res->status == 200) {
        q->r->stats.patched++;
    } else {
        series_t *s = req_series(q);
        if (retry_later(q, res))
            return;
        q->r->stats.failed++;
        ks_log(KS_LOGL_DEBUG, "event series: %s", res->message);
        if (s && res->status == 404) /* gone: start a new event next time */
            series_free(ks_strmap_del(&q->r->series, s->key));
    }
    req_free(q);
}

static int req_start(req_t *q, uint64_t delay_ms)
{
    ks_kube_call_opts_t o;
    ks_error_t err = {0};
    memset(&o, 0, sizeof o);
    o.method = q->method;
    o.path = q->path;
    o.body = q->text;
    o.content_type = q->ctype;
    o.timeout_ms = 30000;
    o.on_done = q->done;
    o.ud = q;
    o.owner = q->r;
    o.on_cancel = req_cancelled;
    o.delay_ms = delay_ms;
    q->tries++;
    if (ks_kube_call(q->r->client, &o, &err) == NULL) {
        ks_log(KS_LOGL_DEBUG, "event: %s", err.msg);
        return -1;
    }
    return 0;
}

static void event_send(ks_event_recorder_t *r, const char *method,
                       const char *path, json_t *body, const char *ctype,
                       const char *key, ks_kube_done_cb done)
{
    size_t kl = strlen(key) + 1;
    req_t *q = calloc(1, sizeof *q + kl);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (q == NULL || text == NULL || (q->path = strdup(path)) == NULL) {
        free(q);
        free(text);
        r->stats.failed++;
        return;
    }
    q->r = r;
    q->text = text;
    q->method = method;
    q->ctype = ctype;
    q->done = done;
    memcpy(q->key, key, kl);
    r->pending++;
    if (req_start(q, 0) != 0) {
        r->stats.failed++;
        req_free(q);
    }
}

static void patch_series(ks_event_recorder_t *r, series_t *s)
{
    char path[1024], t[40];
    ks_micro_time_format(s->last_us, t, sizeof t);
    snprintf(path, sizeof path, "/apis/events.k8s.io/v1/namespaces/%s/events/%s",
             s->ns, s->event_name);
    event_send(r, "PATCH", path,
         json_pack("{s:{s:i, s:s}}", "series", "count", (json_int_t)s->count,
                   "lastObservedTime", t),
         "application/merge-patch+json", s->key, patch_done);
    s->sent_count = s->count;
}

static void on_flush(uv_timer_t *t)
{
    ks_event_recorder_t *r = t->data;
    int64_t now = ks_wall_us();
    size_t i = 0;
    while (i < r->series.cap) {
        series_t *s = r->series.slots[i].val;
        if (r->series.slots[i].key == NULL) {
            i++;
            continue;
        }
        if (s->created && s->count != s->sent_count &&
            r->pending < KS_EVENTS_MAX_QUEUED)
            patch_series(r, s);
        if (now - s->last_us > SERIES_WINDOW_US && s->count == s->sent_count) {
            ks_strmap_del(&r->series, s->key);
            series_free(s);
            continue; /* the slot now holds a shifted entry */
        }
        i++;
    }
}

ks_event_recorder_t *ks_event_recorder_new(uv_loop_t *loop,
                                           ks_kube_client_t *client,
                                           const char *hostname,
                                           ks_error_t *err)
{
    ks_event_recorder_t *r = calloc(1, sizeof *r);
    if (r == NULL || (r->hostname = strdup(hostname)) == NULL ||
        uv_timer_init(loop, &r->flush) != 0) {
        if (r)
            free(r->hostname);
        free(r);
        ks_error_set(err, KS_ENOMEM, "out of memory");
        return NULL;
    }
    r->loop = loop;
    r->client = client;
    r->flush.data = r;
    uv_timer_start(&r->flush, on_flush, FLUSH_MS, FLUSH_MS);
    uv_unref((uv_handle_t *)&r->flush);
    return r;
}

static void flush_closed(uv_handle_t *h)
{
    ks_event_recorder_t *r = h->data;
    free(r);
}

void ks_event_recorder_close(ks_event_recorder_t *r)
{
    size_t i;
    if (r == NULL)
        return;
    r->closed = 1;
    for (i = 0; i < r->series.cap; i++)
        if (r->series.slots[i].key)
            series_free(r->series.slots[i].val);
    ks_strmap_destroy(&r->series);
    free(r->hostname);
    r->hostname = NULL;
    ks_kube_client_cancel_owner(r->client, r);
    uv_close((uv_handle_t *)&r->flush, flush_closed);
}

static json_t *ref_json(const ks_event_ref_t *ref)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "apiVersion", "v1", "kind",
                     "Pod", "namespace", ref->ns, "name", ref->name, "uid",
                     ref->uid);
}

void ks_event_record(ks_event_recorder_t *r, const char *controller,
                     const ks_event_ref_t *regarding,
                     const ks_event_ref_t *related, const char *type,
                     const char *reason, const char *action,
                     const char *note)
{
    char key[1200], name[600], path[600], t[40], instance[400];
    int64_t now = ks_wall_us();
    series_t *s;
    json_t *ev;
    size_t kl;
    int n;

    if (r == NULL || r->closed)
        return;
    n = snprintf(key, sizeof key, "%s|%s|%s|%s|%s|%s", regarding->uid,
                 action, reason, type, controller,
                 related ? related->uid : "");
    if (n < 0 || (size_t)n >= sizeof key)
        return;
    s = ks_strmap_get(&r->series, key);
    if (s != NULL && now - s->last_us <= SERIES_WINDOW_US) {
        /* An isomorphic event: fold it into the series. */
        s->count++;
        s->last_us = now;
        r->stats.aggregated++;
        return;
    }
    if (s != NULL) {
        ks_strmap_del(&r->series, s->key);
        series_free(s);
    }
    if (r->pending >= KS_EVENTS_MAX_QUEUED) {
        /* The API server is slower than the scheduler: drop, as client-go's
         * broadcaster does with a full queue, rather than grow. */
        r->stats.dropped++;
        if (!r->dropping)
            ks_log(KS_LOGL_WARN,
                   "events: %d writes wait for the API server; new events "
                   "are dropped until it catches up "
                   "(ksched_events_dropped_total)",
                   KS_EVENTS_MAX_QUEUED);
        r->dropping = 1;
        return;
    }
    /* client-go names events "<object name>.<UnixNano in hex>"; a name
     * is kept unique by never reusing a nanosecond. */
    {
        uint64_t ns = ks_wall_ns();
        if (ns <= r->last_name_ns)
            ns = r->last_name_ns + 1;
        r->last_name_ns = ns;
        snprintf(name, sizeof name, "%s.%" PRIx64, regarding->name, ns);
    }
    kl = strlen(key) + 1;
    if ((s = calloc(1, sizeof *s + kl)) == NULL)
        return;
    memcpy(s->key, key, kl);
    s->count = s->sent_count = 1;
    s->last_us = now;
    if ((s->ns = strdup(regarding->ns)) == NULL ||
        (s->event_name = strdup(name)) == NULL ||
        ks_strmap_put(&r->series, s->key, s) != 0) {
        series_free(s);
        return;
    }
    ks_micro_time_format(now, t, sizeof t);
    snprintf(instance, sizeof instance, "%s-%s", controller, r->hostname);
    ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:o, "
                   "s:s, s:s}",
                   "apiVersion", "events.k8s.io/v1", "kind", "Event",
                   "metadata", "name", name, "namespace", regarding->ns,
                   "eventTime", t, "reportingController", controller,
                   "reportingInstance", instance, "action", action, "reason",
                   reason, "regarding", ref_json(regarding), "note",
                   note ? note : "", "type", type);
    if (ev && related)
        json_object_set_new(ev, "related", ref_json(related));
    snprintf(path, sizeof path, "/apis/events.k8s.io/v1/namespaces/%s/events",
             regarding->ns);
    event_send(r, "POST", path, ev, NULL, key, create_done);
}

ks_event_stats_t ks_event_recorder_stats(const ks_event_recorder_t *r)
{
    ks_event_stats_t s = r->stats;
    s.queued = r->pending;
    return s;
}
