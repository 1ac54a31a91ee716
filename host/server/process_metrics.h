/*
 * The standard Prometheus process collector (as client_golang's, which
 * kube-scheduler exposes), read from /proc/self at scrape time:
 *
 *   process_cpu_seconds_total        counter  user + system CPU seconds
 *   process_open_fds                 gauge    entries of /proc/self/fd
 *   process_max_fds                  gauge    RLIMIT_NOFILE's soft limit
 *   process_network_receive_bytes_total  counter  bytes received and sent
 *   process_network_transmit_bytes_total counter  over every interface of
 *                                             the network namespace
 *                                             (client_golang 1.20+)
 *   process_virtual_memory_bytes     gauge    VmSize
 *   process_virtual_memory_max_bytes gauge    RLIMIT_AS's soft limit
 *                                             (unlimited: 2^64-1, as Go)
 *   process_resident_memory_bytes    gauge    RSS
 *   process_start_time_seconds       gauge    Unix time the process started
 *
 * and ksched_build_info{version,abi} (1), ksched's stand-in for go_info.
 *
 * The text is rendered without a registry so that the supervisor (which
 * has none) can serve the same series for itself. A value that cannot be
 * read leaves its series out (its HELP and TYPE lines stay). Thread-safe
 * (no state).
 */
#ifndef KS_SERVER_PROCESS_METRICS_H
#define KS_SERVER_PROCESS_METRICS_H

#include "base/buf.h"

/* Append the process_* families and ksched_build_info to b. 0, or -1 when
 * the buffer ran out of memory. */
int ks_process_metrics_render(ks_buf_t *b);

#endif
