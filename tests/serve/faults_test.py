#!/usr/bin/env python3
"""Fault isolation: a plugin that crashes or hangs never takes scheduling
down (`ksched serve` under its supervisor, and `ksched schedule`).

Usage: faults_test.py KSCHED PLUGIN_BUILD_DIR FAULTY_DIR PROFILE

FAULTY_DIR holds the fixture plugin "Faulty" built once per fault
(tests/fixtures/faulty); PROFILE enables it at Filter, Score and Permit
next to ksched's own plugins.

- Batch mode: `ksched schedule` with each bad variant exits 5 (crash) or 6
  (deadline) with one line on stderr naming the plugin, version, file,
  extension point and pod.
- Hot swap under a stream of pods, once per bad variant (NULL write in
  Filter, abort() in create, endless Score, 10 s sleep in Permit, NULL
  write after 30 Filter calls), in `serve --embedded` with a plugin folder
  of the test's own (faulty_ok.so copied in as faulty.so; the bad variant
  renamed over it), --probation 1s and --plugin-deadline Faulty=300ms:
  the supervisor's log line, the /debug/plugins fault entry and the
  metric ksched_plugin_faults_total of the new worker name the culprit;
  the new worker runs Faulty 1.0.0 again (automatic rollback) and pods
  bind; nodes and pods posted before the crash survive it, pending ones
  are scheduled, every pod ends bound exactly once (the bindings watch is
  resumed with ?watch=true&resourceVersion=N) and none is lost. The
  recovery time (fault to the first binding after it) is printed, not
  asserted.
- A crash in the first generation: with --quarantine=disable the new
  worker runs without Faulty and pods bind; without it the worker refuses
  to start, restarts with growing backoff, names the quarantine and the
  fix, and starts once the file is replaced.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402

DEADLINE_MS = 300
AFTER = 30  # the filter_segv_after variant's calls before its NULL write
NODES = ["n0", "n1", "n2"]
# Where a persistence check failed: the embedded mode's store across a
# worker restart (host/server/journal.c) is what they test.
persistence_failures = []


def persist_check(cond, what):
    if not cond:
        persistence_failures.append(what)
    return check(cond, "persistence: " + what)


# --- HTTP -----------------------------------------------------------------

def request(srv, method, path, body=None, timeout=10):
    """(status, parsed JSON or text) of one request; (0, None) when the
    server cannot be reached or the connection broke."""
    try:
        c = srv.conn(timeout)
        c.request(method, path, body=json.dumps(body) if body else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read().decode(errors="replace")
        c.close()
    except (OSError, http.client.HTTPException):
        return 0, None
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data


def request_retry(srv, method, path, body=None, timeout=20):
    """The same, retried while the server is unreachable (a worker
    restart is a short window of refused connections)."""
    end = time.time() + timeout
    while True:
        st, doc = request(srv, method, path, body)
        if st != 0 or time.time() > end:
            return st, doc
        time.sleep(0.05)


def node_obj(name):
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": "1000", "memory": "4000Gi",
                                       "pods": "20000"}}}


def pod_obj(name):
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests":
                                                   {"cpu": "10m"}}}]}}


def debug_plugins(srv):
    st, doc = request_retry(srv, "GET", "/debug/plugins")
    return doc if st == 200 and isinstance(doc, dict) else {}


def faulty_version(doc):
    for p in doc.get("plugins", []):
        if p["name"] == "Faulty":
            return p["version"]
    return None


def metric(text, name, **labels):
    """The value of one sample of `name` with exactly `labels`, or None."""
    want = ",".join('%s="%s"' % kv for kv in labels.items())
    for line in (text or "").splitlines():
        if line.startswith(name + "{"):
            lab, _, val = line[len(name) + 1:].rpartition("} ")
            if sorted(lab.split(",")) == sorted(want.split(",")):
                return float(val)
    return None


# --- the bindings watch, resumed across worker restarts ---------------------

def event_rv(ev):
    rv = ev.get("resourceVersion")
    if rv is None:
        rv = (ev.get("metadata") or {}).get("resourceVersion")
    try:
        return int(rv)
    except (TypeError, ValueError):
        return None


class Watch:
    """Every event of /api/v1/bindings?watch=true with the time it came,
    reconnecting after a worker restart from the last resourceVersion
    seen (?watch=true&resourceVersion=N)."""

    def __init__(self, srv):
        self.srv = srv
        self.events = []  # (time received, event)
        self.lock = threading.Lock()
        self.stopping = False
        self.segments = 0
        self.resumed_with_rv = 0
        self.no_rv = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        last_rv = None
        while not self.stopping:
            path = "/api/v1/bindings?watch=true"
            if last_rv is not None:
                path += "&resourceVersion=%d" % last_rv
            try:
                c = self.srv.conn(5)
                c.request("GET", path)
                r = c.getresponse()
                if r.status != 200:
                    r.read()
                    c.close()
                    time.sleep(0.1)
                    continue
                self.segments += 1
                if last_rv is not None:
                    self.resumed_with_rv += 1
                c.sock.settimeout(0.5)
                buf = b""
                while not self.stopping:
                    try:
                        chunk = r.read1(65536)
                    except TimeoutError:
                        continue
                    if not chunk:
                        break
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        if not line.strip():
                            continue
                        ev = json.loads(line)
                        rv = event_rv(ev)
                        if rv is None:
                            self.no_rv += 1
                        else:
                            last_rv = rv
                        with self.lock:
                            self.events.append((time.time(), ev))
                c.close()
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.05)

    def stop(self):
        self.stopping = True
        self.thread.join(5)

    def bindings(self):
        with self.lock:
            return [(t, e) for t, e in self.events if e["type"] == "Binding"]

    def failed(self):
        with self.lock:
            return {e["pod"] for _, e in self.events
                    if e["type"] == "FailedScheduling"}


class Stream:
    """Pods s-PREFIX-0, 1, ... posted every `every` seconds until stopped;
    a POST that finds the server restarting is retried. `accepted`: the
    pods the API took (201, or 409 for a retried POST whose first try had
    been taken)."""

    def __init__(self, srv, prefix, every=0.02):
        self.srv, self.prefix, self.every = srv, prefix, every
        self.accepted = []
        self.stopping = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        i = 0
        while not self.stopping:
            name = "%s-%d" % (self.prefix, i)
            st, _ = request_retry(self.srv, "POST",
                                  "/api/v1/namespaces/default/pods",
                                  pod_obj(name), timeout=30)
            if st in (201, 409):
                self.accepted.append("default/" + name)
            i += 1
            time.sleep(self.every)

    def stop(self):
        self.stopping = True
        self.thread.join(40)


def pods_now(srv):
    st, doc = request_retry(srv, "GET", "/api/v1/pods")
    if st != 200 or not isinstance(doc, dict):
        return None
    return {"%s/%s" % (p["metadata"].get("namespace", "default"),
                       p["metadata"]["name"]): p["spec"].get("nodeName")
            for p in doc.get("items", [])}


def ensure_nodes(srv, what):
    """Check the nodes survived; create the missing ones so that the rest
    of the scenario can go on."""
    st, doc = request_retry(srv, "GET", "/api/v1/nodes")
    have = [n["metadata"]["name"] for n in doc.get("items", [])] \
        if st == 200 and isinstance(doc, dict) else []
    persist_check(sorted(have) == NODES, "%s: the nodes posted before the "
                  "crash are still there after the restart (%s)"
                  % (what, have))
    for n in NODES:
        if n not in have:
            request_retry(srv, "POST", "/api/v1/nodes", node_obj(n))


# --- batch mode --------------------------------------------------------------

BATCH_CASES = [
    # variant, pods, exit code, how it fails, where, pod
    ("filter_segv", 1, 5, "crashed with SIGSEGV", "Filter", "default/p0"),
    ("create_abort", 1, 5, "crashed with SIGABRT", "create", None),
    ("score_loop", 1, 6, "overran its %d ms deadline" % DEADLINE_MS, "Score",
     "default/p0"),
    ("permit_sleep", 1, 6, "overran its %d ms deadline" % DEADLINE_MS,
     "Permit", "default/p0"),
    # Two nodes, one Filter call each per pod: call 31 is pod 15's first.
    ("filter_segv_after", 20, 5, "crashed with SIGSEGV", "Filter",
     "default/p15"),
]


def cluster_yaml(n_pods):
    docs = []
    for n in ("n0", "n1"):
        docs.append("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"
                    "status: {allocatable: {cpu: '64', memory: 64Gi, "
                    "pods: '110'}}\n" % n)
    for i in range(n_pods):
        docs.append("apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, "
                    "namespace: default}\nspec: {containers: [{name: c, "
                    "image: x}]}\n" % i)
    return "---\n".join(docs)


def version_of(variant):
    if variant == "ok":
        return "1.0.0"
    if variant == "filter_segv_after":
        return "2.0.0-filter-segv-after-%d" % AFTER
    return "2.0.0-" + variant.replace("_", "-")


def batch_checks(ksched, faulty_dir, profile, tmp):
    pd = os.path.join(tmp, "batch-plugins")
    os.mkdir(pd)
    so = os.path.join(pd, "faulty.so")
    for variant, n_pods, code, how, point, pod in BATCH_CASES:
        cl = os.path.join(tmp, "batch-%d.yaml" % n_pods)
        with open(cl, "w") as f:
            f.write(cluster_yaml(n_pods))
        shutil.copyfile(os.path.join(faulty_dir, "faulty_%s.so" % variant),
                        so)
        # Filter runs on several threads: each one's call crashes at once,
        # and the report must still be one whole line.
        p = subprocess.run([ksched, "schedule", "--cluster", cl,
                            "--config", profile, "--plugin-dir", pd,
                            "--deterministic", "--plugin-deadline",
                            "Faulty=%dms" % DEADLINE_MS],
                           capture_output=True, text=True, timeout=120)
        want = ('ksched: plugin "Faulty" version %s (%s) %s in %s%s\n'
                % (version_of(variant), so, how, point,
                   " while scheduling pod " + pod if pod else ""))
        check(p.returncode == code, "schedule with %s exits %d (got %d)"
              % (variant, code, p.returncode))
        check(p.stderr == want, "schedule with %s: stderr is the one line "
              "%r (got %r)" % (variant, want, p.stderr))
        check(p.stdout == "", "schedule with %s prints no result (got %r)"
              % (variant, p.stdout[:200]))
    # The good version runs to the end.
    shutil.copyfile(os.path.join(faulty_dir, "faulty_ok.so"), so)
    cl = os.path.join(tmp, "batch-20.yaml")
    p = subprocess.run([ksched, "schedule", "--cluster", cl, "--config",
                        profile, "--plugin-dir", pd, "--plugin-deadline",
                        "Faulty=%dms" % DEADLINE_MS],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and "20 bound, 0 could not be placed" in p.stdout,
          "schedule with faulty_ok binds all 20 pods (exit %d, %r)"
          % (p.returncode, p.stderr))


# --- serve ---------------------------------------------------------------------

def serve_args(profile, pd, plugin_build_dir, extra=()):
    return ["--embedded", "--listen", "127.0.0.1:0", "--config", profile,
            "--plugin-dir", pd, "--plugin-dir", plugin_build_dir,
            "--probation", "1s", "--plugin-deadline",
            "Faulty=%dms" % DEADLINE_MS] + list(extra)


def install(faulty_dir, variant, pd):
    """Put a variant in as faulty.so the way a deploy would: a copy under
    a temporary name in the same folder, renamed over the old file."""
    tmp = os.path.join(pd, ".faulty.so.new")
    shutil.copyfile(os.path.join(faulty_dir, "faulty_%s.so" % variant), tmp)
    os.rename(tmp, os.path.join(pd, "faulty.so"))


# How each variant fails: (kind, signal, extension point, pod expected).
FAULTS = {
    "filter_segv": ("signal", "SIGSEGV", "Filter", True),
    "create_abort": ("signal", "SIGABRT", "create", False),
    "score_loop": ("deadline", "", "Score", True),
    "permit_sleep": ("deadline", "", "Permit", True),
    "filter_segv_after": ("signal", "SIGSEGV", "Filter", True),
}


def supervisor_line_rx(variant, so):
    kind, sig, point, has_pod = FAULTS[variant]
    culprit = re.escape('plugin "Faulty" version %s (%s) '
                        % (version_of(variant), so))
    pod = r" while scheduling pod (default/s-[a-z-]+-\d+)" if has_pod else ""
    if kind == "signal":
        return (r"ksched serve: supervisor: worker \d+ died from %s: "
                r"%scrashed with %s in %s%s; quarantined; starting a new "
                r"worker$" % (sig, culprit, sig, point, pod))
    return (r"ksched serve: supervisor: %soverran its %d ms deadline in "
            r"%s%s; quarantined; replacing worker \d+$"
            % (culprit, DEADLINE_MS, point, pod))


def settle(srv, watch, stream, what, timeout=60):
    """Wait until every accepted pod is bound or reported unschedulable;
    return the pods' nodes."""
    def done():
        pods = pods_now(srv)
        if pods is None:
            return None
        failed = watch.failed()
        # Pods missing from the API are reported as lost by the caller.
        return all(pods.get(k) or k in failed or k not in pods
                   for k in stream.accepted) and pods
    pods = kt.wait_for(what + ": every pod bound or unschedulable", done,
                       timeout)
    return pods or pods_now(srv) or {}


def check_every_pod_once(srv, watch, stream, what):
    pods = settle(srv, watch, stream, what)
    lost = [k for k in stream.accepted if k not in pods]
    persist_check(not lost, "%s: no pod lost: all %d accepted pods are in "
                  "GET /api/v1/pods (lost %d: %s)"
                  % (what, len(stream.accepted), len(lost), lost[:5]))
    failed = watch.failed()
    pending = [k for k in stream.accepted if k in pods and not pods[k]
               and k not in failed]
    persist_check(not pending, "%s: every surviving pod is bound or "
                  "reported unschedulable (%d neither: %s)"
                  % (what, len(pending), pending[:5]))
    counts, nodes = {}, {}
    for _, e in watch.bindings():
        counts[e["pod"]] = counts.get(e["pod"], 0) + 1
        nodes[e["pod"]] = e["node"]
    twice = sorted(k for k, c in counts.items() if c > 1)
    check(not twice, "%s: no pod bound twice (%s)" % (what, twice[:5]))
    bound = [k for k in stream.accepted if pods.get(k)]
    unseen = [k for k in bound if k not in counts]
    persist_check(not unseen, "%s: the resumed bindings watch saw every "
                  "binding (%d of %d missing: %s)"
                  % (what, len(unseen), len(bound), unseen[:5]))
    wrong = [k for k in bound if k in nodes and nodes[k] != pods[k]]
    check(not wrong, "%s: spec.nodeName is the node of the Binding event "
          "(%s)" % (what, wrong[:5]))
    return pods


def hot_swap(ksched, plugin_build_dir, faulty_dir, profile, tmp, variant,
             use_reload):
    what = "hot swap of %s" % variant
    kind, sig, point, has_pod = FAULTS[variant]
    pd = os.path.join(tmp, "plugins-" + variant)
    os.mkdir(pd)
    so = os.path.join(pd, "faulty.so")
    install(faulty_dir, "ok", pd)
    srv = kt.Serve(ksched, serve_args(profile, pd, plugin_build_dir))
    watch = stream = None
    try:
        for n in NODES:
            st, _ = request(srv, "POST", "/api/v1/nodes", node_obj(n))
            check(st == 201, "%s: node %s created" % (what, n))
        watch = Watch(srv)
        # The watch is connected before the first pod can bind.
        kt.wait_for("the bindings watch", lambda: watch.segments >= 1, 30)
        stream = Stream(srv, "s-" + variant.replace("_", "-"))
        good = kt.wait_for("probation", lambda: debug_plugins(srv).get(
            "faults", {}).get("generationPassedProbation"), 30)
        check(bool(good), "%s: generation 1 passes its 1 s probation" % what)
        kept = [g for g in debug_plugins(srv).get("faults", {})
                .get("knownGood", []) if g["name"] == "Faulty"]
        check([g["version"] for g in kept] == ["1.0.0"],
              "%s: Faulty 1.0.0 is kept as known-good (%s)" % (what, kept))
        kt.wait_for("10 bindings", lambda: len(watch.bindings()) >= 10, 30)
        bound_before = len(watch.bindings())
        check(bound_before >= 10, "%s: pods bind with 1.0.0 (%d)"
              % (what, bound_before))
        old_worker = srv.worker_pid()
        install(faulty_dir, variant, pd)
        if use_reload:
            # The worker may die while answering (create_abort): any answer
            # or none is fine; the file watcher would reload anyway.
            request(srv, "POST", "/-/reload")
        rx = re.compile(supervisor_line_rx(variant, so))
        line = kt.wait_for("the supervisor's fault line", lambda: next(
            (l for l in srv.lines if rx.search(l)), None), 60)
        check(line is not None, "%s: the supervisor names the culprit: /%s/"
              "\n%s" % (what, rx.pattern, "\n".join(srv.lines[-15:])))
        culprit_pod = rx.search(line).group(1) if line and has_pod else None
        if has_pod:
            check(culprit_pod in stream.accepted, "%s: the pod named is one "
                  "of the stream's (%s)" % (what, culprit_pod))
        ready = kt.wait_for("new worker", lambda: srv.worker_pid() !=
                            old_worker and request(srv, "GET", "/readyz")[0]
                            == 200, 30)
        check(bool(ready), "%s: a new worker serves" % what)
        doc = debug_plugins(srv)
        check(faulty_version(doc) == "1.0.0", "%s: rolled back: the new "
              "worker runs Faulty 1.0.0 (got %s)"
              % (what, faulty_version(doc)))
        rollback = 'rolling back to version 1.0.0 of generation 1'
        check(any(so in l and rollback in l for l in srv.lines),
              "%s: the new worker logs the rollback (%r)" % (what, rollback))
        faults = doc.get("faults", {}).get("faults", [])
        f = faults[-1] if faults else {}
        check(len(faults) == 1 and f.get("plugin") == "Faulty" and
              f.get("version") == version_of(variant) and
              f.get("kind") == kind and f.get("signal") == sig and
              f.get("extensionPoint") == point and
              f.get("file") == so and
              (f.get("pod") == culprit_pod if has_pod else
               f.get("pod") == ""),
              "%s: /debug/plugins faults[] names plugin, version, kind, "
              "extension point and pod (%s)" % (what, faults))
        check(doc.get("faults", {}).get("workerStarts") == 2,
              "%s: the second worker (%s)"
              % (what, doc.get("faults", {}).get("workerStarts")))
        _, text = request_retry(srv, "GET", "/metrics")
        v = metric(text, "ksched_plugin_faults_total", plugin="Faulty",
                   version=version_of(variant), kind=kind)
        check(v == 1, "%s: ksched_plugin_faults_total{plugin=\"Faulty\","
              "version=\"%s\",kind=\"%s\"} 1 in the new worker (%s)"
              % (what, version_of(variant), kind, v))
        ensure_nodes(srv, what)
        t_fault = f.get("time") or time.time()
        after = kt.wait_for("a binding after the fault", lambda: next(
            (t for t, e in watch.bindings() if t > t_fault), None), 60)
        check(after is not None, "%s: pods bind again after the restart"
              % what)
        if after is not None:
            print("RECOVERY %s: %.3f s from the fault to the first new "
                  "binding" % (variant, after - t_fault), flush=True)
        n_after = len(stream.accepted)
        kt.wait_for("20 more pods", lambda: len(stream.accepted) >=
                    n_after + 20, 30)
        stream.stop()
        pods = check_every_pod_once(srv, watch, stream, what)
        if culprit_pod:
            persist_check(bool(pods.get(culprit_pod)), "%s: the pod being "
                          "scheduled at the fault (%s) is rescheduled and "
                          "bound" % (what, culprit_pod))
        persist_check(watch.no_rv == 0 and watch.resumed_with_rv >= 1,
                      "%s: bindings events carry a resourceVersion and "
                      "the watch resumed from one (%d without, %d "
                      "resumes)" % (what, watch.no_rv,
                                    watch.resumed_with_rv))
    finally:
        if stream:
            stream.stop()
        if watch:
            watch.stop()
        rc = srv.stop()
    check(rc == 0, "%s: serve exits 0 on SIGTERM (got %s)" % (what, rc))
    if kt.failures:
        print("--- serve log (%s) ---\n%s" % (variant,
                                              "\n".join(srv.lines[-30:])))


def first_generation(ksched, plugin_build_dir, faulty_dir, profile, tmp,
                     disable):
    what = "first-generation crash%s" % (" with --quarantine=disable"
                                          if disable else "")
    pd = os.path.join(tmp, "plugins-first-%d" % disable)
    os.mkdir(pd)
    so = os.path.join(pd, "faulty.so")
    install(faulty_dir, "filter_segv", pd)
    extra = ["--quarantine=disable"] if disable else []
    srv = kt.Serve(ksched, serve_args(profile, pd, plugin_build_dir, extra))
    try:
        for n in NODES:
            request(srv, "POST", "/api/v1/nodes", node_obj(n))
        st, _ = request(srv, "POST", "/api/v1/namespaces/default/pods",
                        pod_obj("first-0"))
        check(st == 201, "%s: pod created" % what)
        rx = re.compile(supervisor_line_rx("filter_segv", so).replace(
            "default/s-[a-z-]+-\\d+", "default/first-0"))
        check(bool(srv.log_has(rx.pattern, 30)), "%s: the supervisor names "
              "the culprit" % what)
        if disable:
            left_out = ('%s: quarantined (plugin "Faulty" version '
                        '2.0.0-filter-segv (%s) crashed with SIGSEGV in '
                        'Filter while scheduling pod default/first-0); no '
                        'earlier good version, so plugin "Faulty" is left '
                        'out of every profile (--quarantine=disable)'
                        % (so, so))
            check(bool(srv.log_has(re.escape(left_out), 30)),
                  "%s: the new worker says it runs without Faulty" % what)
            ready = kt.wait_for("a ready worker", lambda: request(
                srv, "GET", "/readyz")[0] == 200, 30)
            check(bool(ready), "%s: the new worker serves\n%s"
                  % (what, "\n".join(srv.lines[-10:])))
            if not ready:
                return
            doc = debug_plugins(srv)
            check(ready and doc.get("plugins") and
                  faulty_version(doc) is None,
                  "%s: Faulty is not loaded (%s)"
                  % (what, faulty_version(doc)))
            ensure_nodes(srv, what)
            st, _ = request_retry(srv, "GET",
                                  "/api/v1/namespaces/default/pods/first-0")
            persist_check(st == 200, "%s: the pod posted before the crash "
                          "survives it (%d)" % (what, st))
            if st != 200:
                request_retry(srv, "POST", "/api/v1/namespaces/default/pods",
                              pod_obj("first-0"))
            request_retry(srv, "POST", "/api/v1/namespaces/default/pods",
                          pod_obj("first-1"))
            bound = kt.wait_for("pods bound", lambda: (pods_now(srv) or {})
                                .get("default/first-1") and
                                (pods_now(srv) or {}).get("default/first-0"),
                                30)
            check(bool(bound), "%s: pods bind without Faulty" % what)
        else:
            refusal = ('%s: quarantined: plugin "Faulty" version '
                       '2.0.0-filter-segv (%s) crashed with SIGSEGV in '
                       'Filter while scheduling pod default/first-0; no '
                       'version of "Faulty" was serving when this one was '
                       'swapped in, and no earlier one ran through its '
                       'probation, so there is nothing to roll back to; '
                       'replace the file (a reload picks it up), or pass '
                       '--quarantine=disable to run without the plugin'
                       % (so, so))
            check(bool(srv.log_has("^" + re.escape(refusal) + "$", 30)),
                  "%s: the new worker refuses to start, naming the "
                  "quarantine and the fix" % what)
            backoff = r"^ksched serve: supervisor: worker \d+ refused to " \
                r"start: a quarantined plugin version has no earlier good " \
                r"version \(replace the file or pass --quarantine=disable\)" \
                r"; retrying in %d ms$"
            check(bool(srv.log_has(backoff % 100, 30)) and
                  bool(srv.log_has(backoff % 200, 30)),
                  "%s: restarts with growing backoff (100 ms, 200 ms)" % what)
            # Meanwhile the supervisor answers on the worker's address.
            got = kt.wait_for("the stand-in's 503", lambda: (lambda r: r if
                              r[0] == 503 else None)(request(srv, "GET",
                                                             "/readyz")), 20)
            st, body = got if got else (0, None)
            why = (r"^not ready: the worker refused a quarantined plugin "
                   r"version and restarts in \d+ ms; last plugin fault: %s "
                   r"\(quarantined; replace the plugin file or pass "
                   r"--quarantine=disable\)"
                   % re.escape('plugin "Faulty" version 2.0.0-filter-segv '
                               '(%s) crashed with SIGSEGV in Filter while '
                               'scheduling pod default/first-0' % so))
            check(srv.alive() and st == 503 and isinstance(body, str) and
                  re.search(why, body) is not None,
                  "%s: the supervisor keeps running and /readyz says why: "
                  "503 /%s/ (got %s %r)" % (what, why, st, body))
            # A scrape meanwhile gets the supervisor's own process_*
            # series (dashboards keep their CPU and memory panels).
            got = kt.wait_for("the stand-in's metrics", lambda: (
                lambda r: r if r[0] == 200 else None)(
                    request(srv, "GET", "/metrics")), 20)
            st, body = got if got else (0, None)
            names = set(re.findall(r"^# TYPE (\S+) ", body, re.M)
                        if isinstance(body, str) else [])
            want = {"process_cpu_seconds_total", "process_resident_memory_"
                    "bytes", "process_start_time_seconds", "process_open_fds",
                    "process_max_fds", "process_virtual_memory_bytes",
                    "ksched_build_info"}
            check(st == 200 and want <= names and
                  not any(n.startswith("scheduler_") for n in names),
                  "%s: meanwhile GET /metrics answers 200 with the "
                  "supervisor's process_* series and ksched_build_info "
                  "(got %s, missing %s)" % (what, st, sorted(want - names)))
            # The fix: replace the file; the next restart loads it.
            n_listen = sum(1 for l in srv.lines if "listening on" in l)
            install(faulty_dir, "ok", pd)
            started = kt.wait_for("a worker that starts", lambda: sum(
                1 for l in srv.lines if "listening on" in l) > n_listen and
                request(srv, "GET", "/readyz")[0] == 200, 60)
            check(bool(started), "%s: once the file is replaced a worker "
                  "starts" % what)
            check(faulty_version(debug_plugins(srv)) == "1.0.0",
                  "%s: and runs the replacement, Faulty 1.0.0" % what)
    finally:
        rc = srv.stop()
    check(rc == 0, "%s: serve exits 0 on SIGTERM (got %s)" % (what, rc))
    if kt.failures:
        print("--- serve log (%s) ---\n%s" % (what,
                                              "\n".join(srv.lines[-30:])))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_build_dir, faulty_dir, profile = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-faults-")
    try:
        batch_checks(ksched, faulty_dir, profile, tmp)
        # Each bad variant swapped in; half reload through POST /-/reload,
        # half through the plugin folder's watcher.
        for variant, use_reload in (("filter_segv", True),
                                    ("create_abort", True),
                                    ("score_loop", False),
                                    ("permit_sleep", True),
                                    ("filter_segv_after", False)):
            hot_swap(ksched, plugin_build_dir, faulty_dir, profile, tmp,
                     variant, use_reload)
        first_generation(ksched, plugin_build_dir, faulty_dir, profile, tmp,
                         True)
        first_generation(ksched, plugin_build_dir, faulty_dir, profile, tmp,
                         False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if persistence_failures:
        print("%d persistence check(s) failed (the embedded store across a "
              "worker restart)" % len(persistence_failures))
    if kt.failures:
        print("%d check(s) failed" % len(kt.failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
