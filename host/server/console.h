/*
 * The web console of `ksched serve` (/ui and the JSON endpoints under
 * /debug it reads). Its state: the bounded table of recent attempts
 * (attempts.h), the once-a-second rates (rates.h), the explain
 * endpoint's rate limit and the snapshot /debug/cluster pages through.
 * Nothing is computed for the console unless an endpoint is called,
 * except recording each attempt (O(1)) and the rates sample.
 *
 * Loop thread only. Created by ks_server_init, freed by ks_server_free.
 */
#ifndef KS_SERVER_CONSOLE_H
#define KS_SERVER_CONSOLE_H

#include <jansson.h>

#include "attempts.h"
#include "http.h"
#include "rates.h"

struct ks_server;
struct ks_cycle_result;
struct ks_framework;

/* Explain requests: a bucket of KS_EXPLAIN_BURST, refilled at
 * KS_EXPLAIN_PER_SECOND; an empty bucket answers 429. */
#define KS_EXPLAIN_BURST 5
#define KS_EXPLAIN_PER_SECOND 2.0

/* Reloads, successful or not, for the plugins view's history. */
#define KS_CONSOLE_RELOADS 32
typedef struct ks_reload_note {
    double time;
    int ok;
    uint64_t generation, previous; /* generation: the new one when ok */
    char *trigger, *error;         /* malloc'd; error NULL when ok */
} ks_reload_note_t;

typedef struct ks_console {
    ks_attempts_t *attempts;
    ks_rates_t rates;
    double explain_tokens, explain_t; /* bucket, last refill (mono s) */
    struct ks_snapshot *snap;         /* /debug/cluster's, NULL until used */
    ks_reload_note_t reloads[KS_CONSOLE_RELOADS]; /* ring, oldest at head */
    size_t n_reloads, reloads_head;
    double last_look; /* the last console request (monotonic s), 0: none */
} ks_console_t;

/* The chosen node's scores are kept for every attempt whose feasible
 * nodes are at most KS_CONSOLE_SCORE_ALWAYS (a bounded pass), and for
 * any attempt while the console is in use (a request within the last
 * KS_CONSOLE_LOOK_SECONDS). */
#define KS_CONSOLE_SCORE_ALWAYS 64
#define KS_CONSOLE_LOOK_SECONDS 600.0

/* A console request arrived (the /debug handlers and /ui call it). */
void ks_console_looked(struct ks_server *srv);

/* NULL on ENOMEM. */
ks_console_t *ks_console_new(void);
void ks_console_free(ks_console_t *c);
/* Start the rates timer (ks_server_start); 0 or KS_EIO. Close it with
 * ks_console_stop (ks_server_stop). */
int ks_console_start(struct ks_server *srv);
void ks_console_stop(struct ks_server *srv);

/* Observer hooks (server.c): an extension point ran in the cycle under
 * way; a cycle ended (profile: interned); a binding finished or failed
 * after selection. When the cycle scored nodes, the chosen node's scores
 * are kept too (see KS_CONSOLE_SCORE_ALWAYS): one pass over the totals
 * the Score phase wrote (to find the runner-up and the chosen node's
 * column), nothing else. */
void ks_console_on_ep(struct ks_server *srv, int ep, double seconds);
void ks_console_on_cycle(struct ks_server *srv,
                         const struct ks_cycle_result *r, uint64_t gen,
                         const char *profile);
void ks_console_on_bound(struct ks_server *srv, const char *key,
                         const char *node, double seconds);
void ks_console_on_bind_failed(struct ks_server *srv, const char *key,
                               const char *message, double seconds);

/* A reload ended (reload.c): ok with the new generation, or its error.
 * Copies the strings; out of memory drops the note. */
void ks_console_note_reload(struct ks_server *srv, int ok, uint64_t gen,
                            uint64_t previous, const char *trigger,
                            const char *error, double unix_time);
/* /debug/plugins' additions (console_plugins.c): each profile's
 * extension points with their plugins, weights and call deadlines; every
 * reload with what it changed (plugins added, removed, or whose version
 * or content changed) and its result. New references. */
struct ks_generation;
json_t *ks_console_profiles_json(const struct ks_generation *g);
json_t *ks_console_reloads_json(struct ks_server *srv);
/* A plugin's content hash as 16 hex digits (the loader's, else the
 * file's). */
void ks_console_plugin_hash(uint64_t hash, const char *copy_path,
                            char out[17]);

/* Handlers. GET /ui, /ui/, /ui/NAME: the embedded assets (no token). */
void ks_api_ui(struct ks_server *srv, ks_http_conn_t *c,
               const ks_http_request_t *req);
/* Is `path` one of the console's static assets, "/ui", "/ui/" or
 * "/ui/NAME" of an embedded file (served without a token: they carry no
 * data)? */
int ks_console_is_asset_path(const char *path);
/* GET /debug/cluster, /debug/queue, /debug/pods/NS/NAME, /debug/rates;
 * POST /debug/explain/NS/NAME. */
void ks_api_debug_cluster(struct ks_server *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req);
void ks_api_debug_queue(struct ks_server *srv, ks_http_conn_t *c,
                        const ks_http_request_t *req);
void ks_api_debug_pod(struct ks_server *srv, ks_http_conn_t *c,
                      const ks_http_request_t *req, const char *ns,
                      const char *name);
void ks_api_debug_explain(struct ks_server *srv, ks_http_conn_t *c,
                          const ks_http_request_t *req, const char *ns,
                          const char *name);
void ks_api_debug_rates(struct ks_server *srv, ks_http_conn_t *c,
                        const ks_http_request_t *req);

/* The pod NS/NAME: pending (the queue's), bound (the cache's, *bound
 * set) or left to another scheduler; NULL when unknown. Valid until the
 * loop runs again. */
struct ks_pod;
const struct ks_pod *ks_console_find_pod(struct ks_server *srv,
                                         const char *ns, const char *name,
                                         int *bound);
/* A JSON string of `s` (NULL: JSON null), with bytes that are not UTF-8
 * written \xNN (a plugin's message may hold any bytes; jansson refuses
 * them). New reference; NULL only when out of memory. */
json_t *ks_console_json_str(const char *s);
/* One query parameter, URL-decoded into buf (len bytes); 1 when present,
 * 0 when absent or too long. */
int ks_console_query(const char *query, const char *key, char *buf,
                     size_t len);
/* A plugin's registered events as text ("Node/Add|UpdateNodeTaint"). */
void ks_console_event_text(uint32_t resource, uint32_t action, char *buf,
                           size_t len);

/* The embedded assets (generated at build time, ui_assets.c). */
typedef struct ks_ui_asset {
    const char *name; /* "index.html", "console.js", ... */
    const char *content_type;
    const unsigned char *data;
    size_t len;
    const char *etag; /* "\"<hash>\"" */
} ks_ui_asset_t;
extern const ks_ui_asset_t ks_ui_assets[];
extern const size_t ks_ui_n_assets;

#endif
