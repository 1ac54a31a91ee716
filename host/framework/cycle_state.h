/*
 * The per-cycle state store behind the SDK's ks_cycle_state_t.
 *
 * A small array of (key, data, clone, free) entries; keys (of any length)
 * are copied and compared by their whole text. Besides, each plugin
 * (identified by an owner pointer, its handle) has KS_CS_N_SLOTS private
 * slots found without a key (plugin.h plugin_state_set).
 * Owned by the scheduling cycle (or the binding cycle that inherits it).
 * read() may run concurrently with other read()s; write()/delete() need
 * exclusive access.
 */
#ifndef KS_CYCLE_STATE_H
#define KS_CYCLE_STATE_H

#include <stdint.h>

#include "ksched/plugin.h"

ks_cycle_state_t *ks_cycle_state_new(void);
/* Frees every entry with its free fn, then the state. NULL is a no-op. */
void ks_cycle_state_free(ks_cycle_state_t *cs);
/* Drop all entries, keep the allocation (reuse across cycles). */
void ks_cycle_state_clear(ks_cycle_state_t *cs);
/* 0, or -1 when out of memory (the state unchanged, `data` not taken). */
int ks_cycle_state_write(ks_cycle_state_t *cs, const char *key, void *data,
                         ks_state_clone_fn clone_fn, ks_state_free_fn free_fn);
void *ks_cycle_state_read(const ks_cycle_state_t *cs, const char *key);
void ks_cycle_state_delete(ks_cycle_state_t *cs, const char *key);
/* The plugins' private slots (ks_state_slot_t values). */
#define KS_CS_N_SLOTS 2
/* Store `data` in `owner`'s slot (ownership, clone_fn and free_fn as
 * ks_cycle_state_write; the data the slot held is released). 0, or -1
 * when `slot` is out of range or out of memory (the state unchanged,
 * `data` not taken). Exclusive access, as write(). */
int ks_cycle_state_slot_set(ks_cycle_state_t *cs, const void *owner,
                            unsigned slot, void *data,
                            ks_state_clone_fn clone_fn,
                            ks_state_free_fn free_fn);
/* What `owner` stored in `slot`, NULL when nothing. Concurrent with other
 * reads, as read(). */
void *ks_cycle_state_slot_get(const ks_cycle_state_t *cs, const void *owner,
                              unsigned slot);
/* Number of private slots holding data (for tests and diagnostics). */
unsigned ks_cycle_state_slot_count(const ks_cycle_state_t *cs);
/* Number of entries (for tests and diagnostics). */
unsigned ks_cycle_state_count(const ks_cycle_state_t *cs);
/* Deep copy using each entry's clone fn (NULL clone: the pointer is shared
 * and the copy will not free it). NULL on ENOMEM. */
ks_cycle_state_t *ks_cycle_state_clone(const ks_cycle_state_t *cs);
/* Make `dst` such a copy of `cs` again: dst's entries and slots are
 * released (their free fns run), then cs's cloned in, reusing dst's
 * arrays. 0, or -1 on ENOMEM (dst is then empty). */
int ks_cycle_state_refill(ks_cycle_state_t *dst, const ks_cycle_state_t *cs);
/* Skip sets recorded by PreFilter / PreScore (bit = index of the plugin in
 * the framework's Filter / Score list; ks_framework_build refuses more than
 * 64 plugins per point). */
uint64_t *ks_cycle_state_skip_filter(ks_cycle_state_t *cs);
uint64_t *ks_cycle_state_skip_score(ks_cycle_state_t *cs);

#endif
