#!/usr/bin/env python3
"""What bounds ksched's writes when the API server is slower than the
scheduler (issue: the write queue must not grow without bound).

Usage: throttled_test.py KSCHED PLUGIN_DIR K8S_DIR

A real etcd + kube-apiserver from the shared k8s folder (skipped with
exit 77 and the reason when absent). ksched serve --kubeconfig runs with
clientConnection qps 2 / burst 2, so the API server takes its writes far
slower than it schedules. On one 1-cpu node, each of 1,400 pods asking
for 4 cpus fails once: a status patch (the writes client) and a
FailedScheduling event (the events client) each. The test waits until the scheduler has tried every pod and
checks, from /metrics and /proc:

  - event writes waiting never exceed 1,000 (upstream's maxQueuedEvents):
    ksched_cluster_requests_in_flight{client="events"} <= 1000 and the
    surplus counted in ksched_events_dropped_total (>= 300);
  - status patches waiting are bounded by the pods (one per pending pod
    at most, plus the informers' watches);
  - the worker's resident set stays small (< 150 MB; under a sanitizer,
    whose shadow memory and quarantine grow it by themselves, it is
    printed, not checked: KSCHED_SANITIZE), and serve keeps answering.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from cluster_test import (Api, Serve, apply_rbac, cluster_up,  # noqa: E402
                          k8s_scripts, node_obj, pod_obj, write)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)

PODS = 1400

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 2
  burst: 2
profiles:
- schedulerName: ksched
"""


def metric(text, name, labels=""):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)),
                  text, re.M)
    return float(m.group(1)) if m else None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-throttled-")
    d, env = cluster_up(up, tmp)
    srv = None
    try:
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--config", cfg,
                             "--kubeconfig",
                             os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(60)), "serve --kubeconfig becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        admin.must("POST", "/api/v1/nodes", node_obj("small", cpu="1"))
        t0 = time.time()
        for i in range(PODS):
            admin.must("POST", "/api/v1/namespaces/default/pods",
                       pod_obj("p%04d" % i, cpu="4"))
        print("created %d pods in %.1f s" % (PODS, time.time() - t0))

        peak = {"events": 0.0, "writes": 0.0, "rss": 0.0}
        last = {}

        def tried_all():
            st, text = srv.get("/metrics")
            if st != 200:
                return False
            ev = metric(text, "ksched_cluster_requests_in_flight",
                        '{client="events"}') or 0.0
            wr = metric(text, "ksched_cluster_requests_in_flight",
                        '{client="writes"}') or 0.0
            peak["events"] = max(peak["events"], ev)
            peak["writes"] = max(peak["writes"], wr)
            peak["rss"] = max(peak["rss"], srv.rss() / 1048576.0)
            last["dropped"] = metric(text, "ksched_events_dropped_total")
            att = 0.0
            for m in re.finditer(r'^scheduler_schedule_attempts_total\{[^}]*'
                                 r'result="unschedulable"[^}]*\} (\S+)$',
                                 text, re.M):
                att += float(m.group(1))
            last["attempts"] = att
            return att >= PODS

        ok = wait_for("every pod tried", tried_all, 120, 0.5)
        check(ok, "every pod was tried (%s unschedulable attempts)"
              % last.get("attempts"))
        for _ in range(6):  # a few more samples while the writes wait
            tried_all()
            time.sleep(0.5)
        print("peaks: events in flight %d, writes in flight %d, RSS %.1f MB;"
              " events dropped %s" % (peak["events"], peak["writes"],
                                      peak["rss"], last.get("dropped")))
        check(0 < peak["events"] <= 1000,
              "event writes waiting stay at most 1,000 (peak %d)"
              % peak["events"])
        check((last.get("dropped") or 0) >= PODS - 1000 - 100,
              "the events past 1,000 are dropped and counted (%s)"
              % last.get("dropped"))
        check(peak["writes"] <= PODS + 16,
              "status patches waiting are bounded by the pods (peak %d)"
              % peak["writes"])
        if os.environ.get("KSCHED_SANITIZE", "none") in ("", "none"):
            check(peak["rss"] < 150, "RSS stays under 150 MB (peak %.1f MB)"
                  % peak["rss"])
        else:
            print("RSS not checked under -Db_sanitize=%s (peak %.1f MB)"
                  % (os.environ["KSCHED_SANITIZE"], peak["rss"]))
        st, _ = srv.get("/healthz")
        check(st == 200, "serve still answers /healthz")
        rc = srv.stop()
        check(rc == 0, "serve exits 0 on SIGTERM with writes waiting "
              "(got %s)" % rc)
        srv = None
    finally:
        if srv is not None:
            srv.stop()
            print("\n".join(srv.lines[-40:]))
        subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
