#!/usr/bin/env python3
"""/metrics of ksched and of the real kube-scheduler, on the same workload,
scraped by a real Prometheus.

Usage: metrics_compare_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR is the shared k8s folder (`up`, `down`, `bin/unpack`; see its
README): a real etcd + kube-apiserver on loopback and the real
kube-scheduler (v1.24). Without it (or without etcd) the test is skipped
with exit 77 and says why. KSCHED_K8S_UP may name another `up`; K8S_BIN
another folder holding kube-scheduler. It needs Debian's `prometheus`
(prometheus, promtool) and `python3-prometheus-client`, and fails saying
so when they are missing.

Twice, each on a fresh API server, the same workload: five nodes, twenty
pods that fit, one that fits nowhere, and a high-priority pod that
preempts two of three low-priority ones. Run 1 is the real kube-scheduler
(serving /metrics without authentication:
--authorization-always-allow-paths=/metrics --authentication-skip-lookup),
run 2 `ksched serve --kubeconfig`. In each run a real Prometheus scrapes
the scheduler every second as job "kube-scheduler", and after the workload
answers the queries of the kube-prometheus scheduler dashboard, recording
rules and alerts (QUERIES below).

The test fails when:
  - a scheduler_* or process_* family kube-scheduler exposed is missing in
    ksched, has another type, other label names, another set of histogram
    buckets (except where ksched follows v1.36's buckets: BUCKETS_V136),
    or no series where kube-scheduler had some;
  - one of the v1.36 names ksched claims (V136_NAMES) is missing;
  - ksched's exposition does not pass `promtool check metrics`, the
    prometheus_client text parser, or the structural checks (HELP and
    TYPE before every family's samples, histogram buckets in increasing
    `le` order ending with +Inf, cumulative counts, +Inf == _count, a _sum);
  - a query that returned data for kube-scheduler returns none for ksched
    (the Go runtime's series, go_*, excepted: GO_ONLY).
"""
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from cluster_test import (Api, cluster_up, cond, k8s_scripts,  # noqa: E402
                          node_obj, pod_obj, write)
from extender_compare_test import (kube_scheduler_bin,  # noqa: E402
                                   stop_kube_scheduler, tail)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)
import ksched_test  # noqa: E402

SCHEDULER_NAME = "default-scheduler"

# The names the v1.24 kube-scheduler of the shared folder exposes.
V124_NAMES = [
    "scheduler_framework_extension_point_duration_seconds",
    "scheduler_pending_pods",
    "scheduler_plugin_execution_duration_seconds",
    "scheduler_pod_scheduling_attempts",
    "scheduler_pod_scheduling_duration_seconds",
    "scheduler_preemption_attempts_total",
    "scheduler_preemption_victims",
    "scheduler_queue_incoming_pods_total",
    "scheduler_schedule_attempts_total",
    "scheduler_scheduler_cache_size",
    "scheduler_scheduler_goroutines",
    "scheduler_scheduling_algorithm_duration_seconds",
    "scheduler_scheduling_attempt_duration_seconds",
    # not in v1.24.0; the shared folder's build (a commit after it) has it
    "scheduler_unschedulable_pods",
]

PROCESS_NAMES = [
    "process_cpu_seconds_total", "process_max_fds", "process_open_fds",
    "process_resident_memory_bytes", "process_start_time_seconds",
    "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
]

# v1.36 names (pkg/scheduler/metrics) ksched exposes besides v1.24's, with
# their type and label names.
V136_NAMES = {
    "scheduler_pod_scheduling_sli_duration_seconds": ("histogram",
                                                      {"attempts"}),
    "scheduler_cache_size": ("gauge", {"type"}),
    "scheduler_goroutines": ("gauge", {"operation"}),
    "scheduler_queue_incoming_entities_total": ("counter",
                                                {"queue", "event", "type"}),
    "scheduler_queued_entities": ("gauge", {"queue", "type"}),
    "scheduler_inflight_events": ("gauge", {"event"}),
    "scheduler_unschedulable_pods": ("gauge", {"plugin", "profile"}),
    "scheduler_pod_scheduled_after_flush_total": ("counter", set()),
    "scheduler_event_handling_duration_seconds": ("histogram", {"event"}),
    "scheduler_permit_wait_duration_seconds": ("histogram", None),
    "scheduler_queueing_hint_execution_duration_seconds": ("histogram",
                                                           None),
}

def exp_buckets(start, factor, n):
    """Upstream's metrics.ExponentialBuckets."""
    return [start * factor ** i for i in range(n)]


# v1.36's buckets of the histograms v1.24 did not have (checked when ksched
# has a series of them).
V136_BUCKETS = {
    "scheduler_pod_scheduling_sli_duration_seconds": exp_buckets(0.01, 2, 20),
    "scheduler_event_handling_duration_seconds": exp_buckets(0.0001, 2, 12),
    "scheduler_queueing_hint_execution_duration_seconds":
        exp_buckets(0.00001, 1.5, 20),
    "scheduler_permit_wait_duration_seconds": exp_buckets(0.001, 2, 15),
}

# Families whose buckets ksched takes from v1.36, where v1.24 had others:
# preemption_victims was LinearBuckets(5, 5, 10) in v1.24 and is
# ExponentialBuckets(1, 2, 7) since.
BUCKETS_V136 = {
    "scheduler_preemption_victims": [1, 2, 4, 8, 16, 32, 64],
}

# The queries, written after the kube-prometheus scheduler dashboard
# ("Kubernetes / Scheduler"), its recording rules and its alerts, all from
# the kubernetes-monitoring/kubernetes-mixin project that kube-prometheus
# ships (dashboards/scheduler.libsonnet, rules/kube_scheduler.libsonnet,
# alerts/kube_scheduler.libsonnet), with the dashboard's $cluster and
# $instance variables dropped and $__rate_interval as 5m. Each: (what, the
# PromQL).
QUERIES = [
    ("dashboard: Up",
     'sum(up{job="kube-scheduler"})'),
    ("dashboard: Scheduling Rate, e2e (v1.22 and older)",
     'sum(rate(scheduler_e2e_scheduling_duration_seconds_count'
     '{job="kube-scheduler"}[5m])) by (instance)'),
    ("dashboard: Scheduling Rate, attempts (newer mixins)",
     'sum(rate(scheduler_scheduling_attempt_duration_seconds_count'
     '{job="kube-scheduler"}[5m])) by (instance)'),
    ("dashboard: Scheduling Rate, algorithm",
     'sum(rate(scheduler_scheduling_algorithm_duration_seconds_count'
     '{job="kube-scheduler"}[5m])) by (instance)'),
    ("dashboard: Scheduling Rate, binding (v1.22 and older)",
     'sum(rate(scheduler_binding_duration_seconds_count'
     '{job="kube-scheduler"}[5m])) by (instance)'),
    ("dashboard: Scheduling latency 99th quantile, e2e (v1.22 and older)",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_e2e_scheduling_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) by (instance, le))'),
    ("dashboard: Scheduling latency 99th quantile, attempts",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_scheduling_attempt_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) by (instance, le))'),
    ("dashboard: Scheduling latency 99th quantile, algorithm",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_scheduling_algorithm_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) by (instance, le))'),
    ("dashboard: Kube API Request Rate, 2xx",
     'sum(rate(rest_client_requests_total{job="kube-scheduler",'
     'code=~"2.."}[5m]))'),
    ("dashboard: Post Request Latency 99th quantile",
     'histogram_quantile(0.99, sum(rate('
     'rest_client_request_duration_seconds_bucket{job="kube-scheduler",'
     'verb="POST"}[5m])) by (verb, url, le))'),
    ("dashboard: Get Request Latency 99th quantile",
     'histogram_quantile(0.99, sum(rate('
     'rest_client_request_duration_seconds_bucket{job="kube-scheduler",'
     'verb="GET"}[5m])) by (verb, url, le))'),
    ("dashboard: Memory",
     'process_resident_memory_bytes{job="kube-scheduler"}'),
    ("dashboard: CPU usage",
     'rate(process_cpu_seconds_total{job="kube-scheduler"}[5m])'),
    ("dashboard: Goroutines",
     'go_goroutines{job="kube-scheduler"}'),
    ("rule: cluster_quantile:scheduler_e2e_scheduling_duration_seconds"
     ":histogram_quantile",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_e2e_scheduling_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) without(instance, pod))'),
    ("rule: cluster_quantile:scheduler_scheduling_algorithm_duration_"
     "seconds:histogram_quantile",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_scheduling_algorithm_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) without(instance, pod))'),
    ("rule: cluster_quantile:scheduler_binding_duration_seconds"
     ":histogram_quantile",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_binding_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) without(instance, pod))'),
    ("alert: KubeSchedulerDown (the target is up: no alert)",
     'absent(up{job="kube-scheduler"} == 1)'),
    ("pending pods by queue",
     'sum(scheduler_pending_pods{job="kube-scheduler"}) by (queue)'),
    ("schedule attempts by result",
     'sum(rate(scheduler_schedule_attempts_total{job="kube-scheduler"}'
     '[5m])) by (result)'),
    ("pod scheduling duration 99th quantile (v1.24 name)",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_pod_scheduling_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) by (le))'),
    ("pod scheduling SLI 99th quantile (v1.36 name)",
     'histogram_quantile(0.99, sum(rate('
     'scheduler_pod_scheduling_sli_duration_seconds_bucket'
     '{job="kube-scheduler"}[5m])) by (le))'),
    ("preemption victims",
     'sum(scheduler_preemption_victims_count{job="kube-scheduler"})'),
    ("cache size by type",
     'sum(scheduler_scheduler_cache_size{job="kube-scheduler"}) by (type)'),
]

# Families both schedulers fill in a sample of their cycles only (10%,
# drawn at random): kube-scheduler leaves the family out of /metrics until
# a sampled cycle ran; ksched always lists it. Compared when both have
# series; neither is required to have one.
SAMPLED = {"scheduler_plugin_execution_duration_seconds"}

# Families whose series (label values) and values depend only on the
# workload's end state, not on timing: each series kube-scheduler has,
# ksched has with the same value. SERIES_SAME: each series kube-scheduler
# has, ksched has too (values may differ with timing: retries).
VALUES_SAME = ["scheduler_pending_pods", "scheduler_scheduler_cache_size",
               "scheduler_scheduler_goroutines",
               "scheduler_unschedulable_pods"]
SERIES_SAME = ["scheduler_schedule_attempts_total",
               "scheduler_scheduling_attempt_duration_seconds",
               "scheduler_preemption_attempts_total",
               "scheduler_preemption_victims",
               "scheduler_pod_scheduling_attempts"]

# kube-scheduler's other families that have no meaning in ksched: the Go
# runtime's, and those of the serving library it links (its serving
# certificate's reload work queues, audit and client-certificate metrics
# of an API server it does not run). Any other family kube-scheduler
# exposes must be in ksched, the authentication filter's included.
NOT_IN_KSCHED = ("go_", "workqueue_", "apiserver_")

# Panels that read the Go runtime: kube-scheduler is a Go program, ksched
# is not, and exposes no go_* series (ksched_build_info stands for go_info).
GO_ONLY = {"dashboard: Goroutines"}


# --- the workload -----------------------------------------------------------------

MAIN_NODES = ["n0", "n1", "n2", "n3"]
N_PODS = 20  # of 500m each: 10 of the 16 CPUs


def make_pod(name, cpu, pool, priority_class=None):
    p = pod_obj(name, sched=SCHEDULER_NAME, cpu=cpu, memory="128Mi",
                ns="default", priority_class=priority_class)
    p["spec"]["nodeSelector"] = {"pool": pool}
    return p


def pod(api, name):
    return api.must("GET", "/api/v1/namespaces/default/pods/" + name)


def workload(api, who, alive):
    """The same steps for both schedulers; each waits for its outcome."""
    for n in MAIN_NODES:
        api.must("POST", "/api/v1/nodes", node_obj(n, cpu="4",
                                                     labels={"pool": "main"}))
    api.must("POST", "/api/v1/nodes", node_obj("pn", cpu="3",
                                                 labels={"pool": "pre"}))
    api.must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
             {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": "high"}, "value": 1000})

    def bound(name):
        return lambda: (not alive()) or bool(
            pod(api, name)["spec"].get("nodeName"))

    for i in range(N_PODS):
        api.must("POST", "/api/v1/namespaces/default/pods",
                 make_pod("w%d" % i, "500m", "main"))
    for i in range(N_PODS):
        check(wait_for("%s: w%d bound" % (who, i), bound("w%d" % i), 60) and
              alive(), "%s: w%d is bound" % (who, i))
    api.must("POST", "/api/v1/namespaces/default/pods",
             make_pod("huge", "64", "main"))

    def huge_failed():
        c = cond(pod(api, "huge"), "PodScheduled")
        return (not alive()) or (c is not None and c.get("status") == "False")
    check(wait_for("%s: huge unschedulable" % who, huge_failed, 60) and
          alive(), "%s: the 64-CPU pod is unschedulable" % who)
    for i in range(3):
        api.must("POST", "/api/v1/namespaces/default/pods",
                 make_pod("low%d" % i, "1", "pre"))
    for i in range(3):
        check(wait_for("%s: low%d bound" % (who, i), bound("low%d" % i), 60)
              and alive(), "%s: low%d is bound" % (who, i))
    api.must("POST", "/api/v1/namespaces/default/pods",
             make_pod("high", "1500m", "pre", priority_class="high"))

    def terminating():
        out = []
        for i in range(3):
            p = pod(api, "low%d" % i)
            if p["metadata"].get("deletionTimestamp"):
                out.append("low%d" % i)
        return out
    victims = wait_for("%s: victims" % who,
                       lambda: (not alive()) or len(terminating()) >= 2, 60)
    victims = terminating() if victims else []
    check(len(victims) == 2, "%s: preemption deletes two victims (got %s)"
          % (who, victims))
    for v in victims:  # no kubelet: finish the deletion as one would
        api.call("DELETE", "/api/v1/namespaces/default/pods/" + v,
                 {"apiVersion": "v1", "kind": "DeleteOptions",
                  "gracePeriodSeconds": 0})
    check(wait_for("%s: high bound" % who, bound("high"), 60) and alive(),
          "%s: the preemptor binds once its victims are gone" % who)


# --- Prometheus -------------------------------------------------------------------


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Prometheus:
    """A real Prometheus scraping one target every second as job
    kube-scheduler."""

    def __init__(self, d, url):
        u = urllib.parse.urlparse(url)
        self.port = free_port()
        cfg = os.path.join(d, "prometheus.yml")
        write(cfg, """global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: kube-scheduler
  scheme: %s
  metrics_path: %s
  tls_config:
    insecure_skip_verify: true
  static_configs:
  - targets: ['%s']
""" % (u.scheme, u.path, u.netloc))
        self.log = os.path.join(d, "prometheus.log")
        with open(self.log, "w") as lf:
            self.proc = subprocess.Popen(
                ["prometheus", "--config.file=" + cfg,
                 "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                 "--web.listen-address=127.0.0.1:%d" % self.port],
                stdout=lf, stderr=lf)

    def query(self, q):
        """The result vector of an instant query; None when Prometheus
        does not answer."""
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (
            self.port, urllib.parse.urlencode({"query": q}))
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                doc = json.loads(r.read())
        except (OSError, ValueError):
            return None
        if doc.get("status") != "success":
            fatal("query %s: %s" % (q, doc))
        return doc["data"]["result"]

    def scrapes_since(self, t0):
        """Successful scrapes of the target since time t0."""
        secs = max(1, int(time.time() - t0))
        r = self.query('sum_over_time(up{job="kube-scheduler"}[%ds])' % secs)
        return float(r[0]["value"][1]) if r else 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def observe(who, url, alive, api, d):
    """Run the workload with Prometheus scraping `url`; returns the final
    /metrics text and {query: result vector}."""
    prom = Prometheus(d, url)
    try:
        check(wait_for("%s: Prometheus answers" % who,
                       lambda: prom.query("up") is not None, 60),
              "%s: Prometheus starts" % who)
        workload(api, who, alive)
        t_end = time.time()
        # Three scrapes after the workload: every series it created is in
        # at least two, which rate() needs.
        check(wait_for("%s: three scrapes" % who,
                       lambda: prom.scrapes_since(t_end) >= 3, 60),
              "%s: Prometheus scraped the scheduler after the workload"
              % who)
        text = scrape(url)
        results = {what: prom.query(q) for what, q in QUERIES}
        return text, results
    finally:
        prom.stop()
        if ksched_test.failures:
            print("--- prometheus log (tail) ---\n" + tail(prom.log, 15))


def scrape(url):
    import ssl
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(url, timeout=10, context=ctx
                                if url.startswith("https") else None) as r:
        return r.read().decode()


# --- the two runs -----------------------------------------------------------------


def config_text(kubeconfig):
    return """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 100
  burst: 200
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
""" % (json.dumps(kubeconfig), SCHEDULER_NAME)


def run_kube_scheduler(up, down, exe, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-kube-scheduler"))
    proc = None
    log = os.path.join(d, "kube-scheduler.log")
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, config_text(os.path.join(d, "admin.kubeconfig")))
        port = free_port()
        os.makedirs(os.path.join(d, "certs"), exist_ok=True)
        with open(log, "w") as lf:
            proc = subprocess.Popen(
                [exe, "--config", cfg, "--bind-address", "127.0.0.1",
                 "--secure-port", str(port),
                 "--cert-dir", os.path.join(d, "certs"),
                 "--authorization-always-allow-paths=/metrics",
                 "--authentication-skip-lookup", "-v=1"],
                stdout=lf, stderr=lf)
        url = "https://127.0.0.1:%d/metrics" % port

        def serving():
            try:
                return bool(scrape(url))
            except OSError:
                return proc.poll() is not None
        if not (wait_for("kube-scheduler /metrics", serving, 60) and
                proc.poll() is None):
            fatal("kube-scheduler does not serve /metrics:\n" + tail(log))
        return observe("kube-scheduler", url, lambda: proc.poll() is None,
                       api, d)
    finally:
        if proc is not None:
            stop_kube_scheduler(proc)
        if ksched_test.failures:
            print("--- kube-scheduler log (tail) ---\n" + tail(log))
        subprocess.run([down, d])


def run_ksched(up, down, ksched, plugin_dir, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-ksched"))
    srv = None
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        kc = os.path.join(d, "admin.kubeconfig")
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, config_text(kc))
        srv = ksched_test.Serve(ksched, [
            "--kubeconfig", kc, "--config", cfg, "--listen", "127.0.0.1:0",
            "--plugin-dir", plugin_dir])
        if not check(bool(srv.ready(60)), "ksched serve becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        url = "http://%s:%d/metrics" % (srv.host, srv.port)
        return observe("ksched", url, srv.alive, api, d)
    finally:
        if srv is not None:
            rc = srv.stop()
            check(rc == 0, "ksched serve exits 0 on SIGTERM (got %s)" % rc)
            if ksched_test.failures:
                print("--- ksched log (tail) ---\n" +
                      "\n".join(srv.lines[-40:]))
        subprocess.run([down, d])


# --- the comparisons --------------------------------------------------------------


def families(text):
    """{name: (type, label names, bucket bounds, series count)} with the
    names as exposed (counters keep _total), read by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families
    typed = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(None, 3)
            typed[name] = typ
    out = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name
        if fam.type == "counter" and name + "_total" in typed:
            name += "_total"
        labels, bounds, series = set(), set(), 0
        for s in fam.samples:
            ls = dict(s.labels)
            bound = ls.pop("le", None)
            if bound is not None:
                bounds.add(float(bound))
            ls.pop("quantile", None)
            labels |= set(ls)
            if not s.name.endswith(("_bucket", "_sum", "_created")):
                series += 1
        out[name] = (fam.type, labels, sorted(b for b in bounds
                                              if not math.isinf(b)), series)
    return out


def series(text):
    """{family: {label pairs: value}}: counters' and gauges' samples,
    histograms' _count, read by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name
        for smp in fam.samples:
            if fam.type == "histogram" and not smp.name.endswith("_count"):
                continue
            if fam.type == "counter":
                name = smp.name
            key = tuple(sorted(smp.labels.items()))
            out.setdefault(name, {})[key] = smp.value
    return out


def check_structure(text):
    """HELP and TYPE before each family's samples; histogram buckets in
    increasing le order ending with +Inf, cumulative, +Inf == _count, a
    _sum. Returns a list of problems."""
    problems, helped, typed = [], set(), {}
    hist = {}  # (name, labels without le) -> [(le, count)], sum, count
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            name, typ = line.split()[2:4]
            if name not in helped:
                problems.append("%s: TYPE without HELP before it" % name)
            typed[name] = typ
            continue
        if line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, labels = head.partition("{")
        base = name
        for suf in ("_bucket", "_sum", "_count"):
            if name.endswith(suf) and typed.get(name[:-len(suf)]) in \
                    ("histogram", "summary"):
                base = name[:-len(suf)]
        if base not in typed:
            problems.append("%s: a sample before its TYPE line" % name)
            continue
        if typed[base] != "histogram":
            continue
        pairs = [p for p in labels.rstrip("}").split('",') if p]
        le = None
        rest = []
        for p in pairs:
            k, _, v = p.partition('="')
            if k == "le":
                le = v.rstrip('"')
            else:
                rest.append(p.rstrip('"') + '"')
        key = (base, ",".join(rest))
        h = hist.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name.endswith("_bucket"):
            h["buckets"].append((float(le), float(value)))
        elif name.endswith("_sum"):
            h["sum"] = float(value)
        elif name.endswith("_count"):
            h["count"] = float(value)
    for (base, labels), h in hist.items():
        what = "%s{%s}" % (base, labels)
        les = [b for b, _ in h["buckets"]]
        counts = [c for _, c in h["buckets"]]
        if not les or not math.isinf(les[-1]):
            problems.append("%s: the last bucket is not +Inf" % what)
        if les != sorted(les) or len(set(les)) != len(les):
            problems.append("%s: le not in increasing order" % what)
        if counts != sorted(counts):
            problems.append("%s: bucket counts not cumulative" % what)
        if h["sum"] is None or h["count"] is None:
            problems.append("%s: no _sum or _count" % what)
        elif counts and counts[-1] != h["count"]:
            problems.append("%s: +Inf bucket %s != _count %s"
                            % (what, counts[-1], h["count"]))
    return problems


def broken(text):
    """A copy of an exposition with three faults: a family's HELP line
    dropped, a histogram's first two buckets swapped, its _sum line
    dropped."""
    lines = text.splitlines()
    fam = "scheduler_scheduling_attempt_duration_seconds"
    lines.remove(next(l for l in lines if l.startswith("# HELP %s " % fam)))
    i = next(i for i, l in enumerate(lines)
             if l.startswith(fam + "_bucket{"))
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    lines.remove(next(l for l in lines if l.startswith(fam + "_sum")))
    return "\n".join(lines) + "\n"


def compare(kube_text, ks_text, kube_q, ks_q):
    kube, ks = families(kube_text), families(ks_text)
    print("\n%-56s %-10s %-10s %s" % ("family", "kube", "ksched", "labels"))
    for name in sorted(n for n in kube if n.startswith(("scheduler_",
                                                         "process_"))):
        kt, kl, kb, kn = kube[name]
        st, sl, sb, sn = ks.get(name, (None, set(), [], 0))
        print("%-56s %-10s %-10s %s" % (name, kt, st or "-",
                                        ",".join(sorted(kl))))
        if not check(st == kt, "%s: ksched exposes it with type %s (got %s)"
                     % (name, kt, st)):
            continue
        if kn and sn:
            check(sl == kl, "%s: the same label names %s (ksched: %s)"
                  % (name, sorted(kl), sorted(sl)))
        if kn and name not in SAMPLED:
            check(sn > 0, "%s: ksched has series too (kube-scheduler had "
                  "%d)" % (name, kn))
        if kt == "histogram" and (sn or name not in SAMPLED):
            # (a sampled family without series has no buckets to show:
            # ksched drew none of its cycles, 10% each, in this run)
            want = BUCKETS_V136.get(name, kb)
            check(sb == want, "%s: buckets %s (ksched: %s)%s" % (
                name, want, sb, " (v1.36's; v1.24's were %s)" % kb
                if name in BUCKETS_V136 else ""))
    for name in V124_NAMES + PROCESS_NAMES:
        if name not in SAMPLED:
            check(name in kube, "kube-scheduler exposed %s in this run"
                  % name)
        elif name not in kube:
            print("note: kube-scheduler sampled no cycle for %s" % name)
        check(name in ks, "ksched exposes %s" % name)
    others = sorted(n for n in kube if n not in ks)
    print("\nkube-scheduler's families ksched has not: %s" % ", ".join(
        "%s* (%d)" % (p, sum(1 for n in others if n.startswith(p)))
        for p in NOT_IN_KSCHED))
    unexplained = [n for n in others if not n.startswith(NOT_IN_KSCHED)]
    check(not unexplained, "every family kube-scheduler exposes is in "
          "ksched, but for %s (missing: %s)" % (list(NOT_IN_KSCHED),
                                                unexplained))
    for name, (typ, labels) in sorted(V136_NAMES.items()):
        got = ks.get(name)
        check(got is not None and got[0] == typ and
              (labels is None or got[1] == labels or got[3] == 0),
              "ksched exposes v1.36's %s (%s, labels %s; got %s)"
              % (name, typ, sorted(labels or []), got and got[:2]))
    kube_s, ks_s = series(kube_text), series(ks_text)
    print("\nseries of kube-scheduler / ksched:")
    for name in VALUES_SAME + SERIES_SAME:
        k, s = kube_s.get(name, {}), ks_s.get(name, {})
        for key in sorted(set(k) | set(s)):
            print("  %s{%s} %s / %s" % (name, ",".join(
                '%s="%s"' % kv for kv in key), k.get(key, "-"),
                s.get(key, "-")))
        for key, v in sorted(k.items()):
            what = "%s{%s}" % (name, ",".join('%s="%s"' % kv for kv in key))
            if name in VALUES_SAME:
                check(s.get(key) == v, "%s: ksched has it with kube-"
                      "scheduler's value %s (got %s)" % (what, v, s.get(key)))
            else:
                check(key in s, "%s: ksched has the series too" % what)
    for name, want in sorted(V136_BUCKETS.items()):
        got = ks.get(name)
        if got and got[3]:
            check(len(got[2]) == len(want) and all(
                math.isclose(a, b, rel_tol=1e-9) for a, b in zip(got[2],
                                                                  want)),
                  "%s: v1.36's buckets (got %s)" % (name, got[2]))
    check("ksched_build_info" in ks and
          ks["ksched_build_info"][1] == {"version", "abi"},
          "ksched exposes ksched_build_info{version,abi}")
    check(not any(n.startswith("go_") for n in ks),
          "ksched exposes no go_* series")

    # The exposition, read by real parsers.
    r = subprocess.run(["promtool", "check", "metrics"],
                       input=ks_text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(r.returncode == 0, "promtool check metrics passes ksched's "
          "/metrics (%s)" % r.stdout.decode(errors="replace").strip())
    problems = check_structure(ks_text)
    check(not problems, "ksched's exposition: HELP/TYPE before samples, "
          "histograms well formed (%s)" % "; ".join(problems[:10]))
    check(len(check_structure(broken(ks_text))) >= 3, "the structural "
          "checks find the three faults put into a copy of ksched's text")
    problems = check_structure(kube_text)
    check(not problems, "the same structural checks pass on "
          "kube-scheduler's exposition (the checks are sound; %s)"
          % "; ".join(problems[:10]))

    # The dashboard's, rules' and alerts' queries.
    print("\n%-4s %-4s  %s" % ("kube", "ks", "query"))
    for what, _ in QUERIES:
        k, s = kube_q.get(what), ks_q.get(what)
        print("%-4s %-4s  %s" % (len(k) if k is not None else "-",
                                 len(s) if s is not None else "-", what))
        check(k is not None and s is not None,
              "%s: Prometheus answered for both" % what)
        if k and what in GO_ONLY:
            check(not s, "%s: no data for ksched (no go_* series; the "
                  "README says so)" % what)
        elif k:
            check(bool(s), "%s: kube-scheduler's query has data, so has "
                  "ksched's" % what)


def main():
    if len(sys.argv) != 4:
        fatal("usage: metrics_compare_test.py KSCHED PLUGIN_DIR K8S_DIR")
    ksched, plugin_dir, k8s = sys.argv[1:4]
    up, down = k8s_scripts(k8s)
    for tool, pkg in (("prometheus", "prometheus"), ("promtool",
                                                     "prometheus")):
        if shutil.which(tool) is None:
            fatal("no %s on PATH: apt-get install %s" % (tool, pkg))
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError:
        fatal("no prometheus_client for %s: apt-get install "
              "python3-prometheus-client" % sys.executable)
    exe = kube_scheduler_bin(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-metrics-")
    try:
        kube_text, kube_q = run_kube_scheduler(up, down, exe, tmp)
        ks_text, ks_q = run_ksched(up, down, ksched, plugin_dir, tmp)
        write(os.path.join(tmp, "kube-scheduler.metrics"), kube_text)
        write(os.path.join(tmp, "ksched.metrics"), ks_text)
        compare(kube_text, ks_text, kube_q, ks_q)
    finally:
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
