/*
 * What a plugin has running on the host's loop between its calls (SDK ABI
 * 1.4): API requests (plugin.h api_request) and one-shot timers
 * (timer_start). Each is a record on one process-wide list, tagged with
 * the plugin instance and the env that started it, so that destroying an
 * instance (hot swap, shutdown) or detaching a scheduler from its loop
 * cancels exactly its own, and no callback ever runs into a destroyed
 * plugin.
 *
 * Where requests go is the env's business (ks_fw_ops_t api_mode,
 * api_send, api_abort, api_record): a real API server, a record of them
 * (`ksched schedule`), or nowhere.
 *
 * Threads: loop thread only, every function. Ownership: records are this
 * file's; the handles handed to plugins (ks_timer_t, ks_api_call_t) are
 * records, valid until their callback has run or they are cancelled.
 */
#ifndef KS_FW_PLUGIN_ASYNC_H
#define KS_FW_PLUGIN_ASYNC_H

#include <stdint.h>

#include "framework.h"

/* ks_host_api_t.api_mode for env `e` (KS_API_NONE without a writer). */
ks_api_mode_t ks_fw_api_mode(ks_fw_env_t *e);

/* ks_host_api_t.api_request for instance `inst` of env `e`: 0 when
 * started (done runs later, exactly once, unless cancelled), -1 when it
 * cannot start (no writer or loop, a bad method or path, out of memory;
 * the reason is logged once per plugin). */
int ks_fw_api_request(ks_fw_env_t *e, const void *inst, const char *plugin,
                      const ks_api_request_t *req, ks_api_done_fn done,
                      void *ud, ks_api_call_t **out);
void ks_fw_api_cancel(ks_api_call_t *call);

/* ks_host_api_t.timer_start / timer_stop. NULL when the env has no loop
 * (a test host) or out of memory. */
ks_timer_t *ks_fw_timer_start(ks_fw_env_t *e, const void *inst, uint64_t ms,
                              ks_timer_fn fn, void *ud);
void ks_fw_timer_stop(ks_timer_t *t);

/* Cancel every request and timer of instance `inst` (any env), or, with
 * inst NULL, of env `e` (any instance). Their callbacks never run. */
void ks_fw_async_cancel(ks_fw_env_t *e, const void *inst);

/* Requests and timers running now (tests, /debug). */
uint32_t ks_fw_async_count(void);

#endif
