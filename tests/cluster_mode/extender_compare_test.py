#!/usr/bin/env python3
"""ksched and the real kube-scheduler, side by side, with an extender that
answers in lower-case JSON.

Usage: extender_compare_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR is the shared k8s folder (`up`, `down`, `bin/unpack`; see its
README): a real etcd + kube-apiserver on loopback and the real
kube-scheduler (v1.24). Without it (or without etcd) the test is skipped
with exit 77 and says why. KSCHED_K8S_UP may name another `up`; K8S_BIN
another folder holding kube-scheduler.

An HTTP extender inside this script (nodeCacheCapable, filterVerb and
prioritizeVerb) answers as extenders written outside Go often do, with
lower-case field names: filter {"nodenames", "failednodes",
"failedandunresolvablenodes", "error"}, prioritize [{"host", "score"}].
kube-scheduler reads them with Go's encoding/json (case-insensitive field
names), and so must ksched. Its answers are functions of (pod, node)
only: per pod some nodes rejected with a reason, some unresolvable, a
distinct score for every node it keeps (no ties), and four pods for which
it rejects every node it is sent (with in-tree rejections for one).

The same configuration (KubeSchedulerConfiguration v1beta3, the in-tree
Score plugins disabled so the extender's scores decide, the same
extenders stanza) and the same cluster, twice on a fresh API server:

  run 1: the real kube-scheduler; run 2: `ksched serve`.

12 nodes of different sizes, then 15 pods created one at a time (each
waits until it is bound or has PodScheduled=False with a message). The
test compares every pod's node, every unschedulable pod's PodScheduled
reason and message, and the set of nodes each scheduler sent in the
extender's first filter call for each pod; it prints a table of both
and fails on any difference.
Standard library only.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from cluster_test import (Api, cluster_up, cond, k8s_scripts,  # noqa: E402
                          without_dra,
                          node_obj, pod_obj, write)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)
import ksched_test  # noqa: E402


# --- the cluster and the pods ---------------------------------------------------

NODE_CPUS = ["2", "2", "4", "4", "4", "4", "8", "8", "8", "8", "16", "16"]
NODES = ["n%02d" % i for i in range(len(NODE_CPUS))]

# (name, cpu request); p04, p09, p11 and p13 are made unschedulable by the
# extender (p13 also asks for more CPU than most nodes have).
PODS = [("p00", "1"), ("p01", "2"), ("p02", "500m"), ("p03", "1"),
        ("p04", "1"), ("p05", "3"), ("p06", "2"), ("p07", "1"),
        ("p08", "4"), ("p09", "1"), ("p10", "2"), ("p11", "1"),
        ("p12", "6"), ("p13", "12"), ("p14", "1")]

SCHEDULER_NAME = "default-scheduler"


# --- the extender ---------------------------------------------------------------


def h(*parts):
    """A stable hash of the parts (the same in every run and process)."""
    return int(hashlib.sha256("/".join(parts).encode()).hexdigest()[:12], 16)


def rank(pod, node):
    """The node's place (0 = best) in the pod's own order of all nodes."""
    order = sorted(NODES, key=lambda n: h(pod, n))
    return order.index(node)


def verdict(pod, node):
    """The extender's filter decision for (pod, node): ("ok", None),
    ("failed", reason) or ("unresolvable", reason)."""
    i = NODES.index(node)
    if pod == "p04":  # every node rejected; 10 share one reason, 2 another
        return ("failed", "zone quota exceeded" if i < 2 else "rack is full")
    if pod == "p09":  # 5 unresolvable, 7 rejected
        if i < 10 and i % 2 == 0:
            return ("unresolvable", "license missing")
        return ("failed", "rack is full")
    if pod in ("p11", "p13"):  # every node it is sent unresolvable
        return ("unresolvable", "license missing")
    if rank(pod, node) == len(NODES) - 1:
        # The pod's last choice never passes: the scores 10..0 of the
        # other eleven are then all different.
        return ("failed", "not preferred")
    k = h(pod, node, "filter") % 7
    if k == 0:
        return ("failed", "rack is full")
    if k == 1:
        return ("failed", "disk pressure")
    if k == 2:
        return ("unresolvable", "license missing")
    return ("ok", None)


def score(pod, node):
    return 10 - rank(pod, node)  # 10..0 for ranks 0..10 (11 never passes)


class Extender:
    """The extender on 127.0.0.1:PORT/ext/{filter,prioritize}; every call
    kept in `calls` as (verb, pod, [node names sent])."""

    def __init__(self):
        ext = self
        self.calls = []
        self.errors = []
        self.lock = threading.Lock()

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                verb = self.path.rstrip("/").split("/")[-1]
                try:
                    out = ext.answer(verb, json.loads(raw))
                    code = 200
                except Exception as e:  # noqa: BLE001 (reported below)
                    with ext.lock:
                        ext.errors.append("%s: %r" % (verb, e))
                    out, code = {"error": "test extender: %r" % e}, 500
                data = json.dumps(out).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()

    def answer(self, verb, body):
        # kube-scheduler sends Go's field names (Pod, NodeNames).
        pod = body["Pod"]["metadata"]["name"]
        names = body.get("NodeNames")
        if names is None:
            raise ValueError("no NodeNames in a nodeCacheCapable call")
        with self.lock:
            self.calls.append((verb, pod, list(names)))
        if verb == "filter":
            keep, failed, unres = [], {}, {}
            for n in names:
                v, why = verdict(pod, n)
                if v == "ok":
                    keep.append(n)
                elif v == "failed":
                    failed[n] = why
                else:
                    unres[n] = why
            return {"nodenames": keep, "failednodes": failed,
                    "failedandunresolvablenodes": unres, "error": ""}
        if verb == "prioritize":
            return [{"host": n, "score": score(pod, n)} for n in names]
        raise ValueError("unknown verb " + verb)

    def reset(self):
        with self.lock:
            calls, self.calls = self.calls, []
        return calls

    def stop(self):
        self.srv.shutdown()


def config_text(kubeconfig, ext_port):
    """The configuration both schedulers run (only the kubeconfig path
    differs between the runs)."""
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
  plugins:
    score:
      disabled:
      - name: "*"
extenders:
- urlPrefix: http://127.0.0.1:%d/ext
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  nodeCacheCapable: true
  enableHTTPS: false
""" % (json.dumps(kubeconfig), SCHEDULER_NAME, ext_port)


# --- one run --------------------------------------------------------------------


def create_nodes(api):
    for name, cpu in zip(NODES, NODE_CPUS):
        api.must("POST", "/api/v1/nodes", node_obj(name, cpu=cpu,
                                                     memory="64Gi"))
    got = sorted(n["metadata"]["name"] for n in
                 api.must("GET", "/api/v1/nodes")["items"])
    if got != NODES:
        fatal("nodes on the API server: %s" % got)


def place_pods(api, who, alive):
    """Create the pods one at a time; each pod's outcome:
    ("bound", node) or (PodScheduled reason, message), or ("timeout", what
    was seen)."""
    out = {}
    for name, cpu in PODS:
        api.must("POST", "/api/v1/namespaces/default/pods",
                 pod_obj(name, sched=SCHEDULER_NAME, cpu=cpu,
                         memory="256Mi"))
        path = "/api/v1/namespaces/default/pods/" + name
        seen = {}

        def decided():
            if not alive():
                return "exited"
            p = api.must("GET", path)
            seen["pod"] = p
            node = p["spec"].get("nodeName")
            if node:
                return ("bound", node)
            c = cond(p, "PodScheduled")
            if c and c.get("status") == "False" and c.get("message"):
                return (c.get("reason"), c["message"])
            return None
        r = wait_for("%s: %s decided" % (who, name), decided, 90, 0.1)
        if r == "exited":
            fatal("%s exited while %s was pending" % (who, name))
        if not r:
            c = cond(seen.get("pod", {}), "PodScheduled")
            r = ("timeout", json.dumps(c))
        out[name] = r
        print("  %s %s: %s" % (who, name, r if r[0] == "bound" else
                                 "%s: %s" % r), flush=True)
    return out


def first_filters(calls):
    """The set of node names each pod's first filter call carried."""
    out = {}
    for verb, pod, names in calls:
        if verb == "filter" and pod not in out:
            out[pod] = sorted(names)
    return out


def kube_scheduler_bin(k8s):
    b = os.environ.get("K8S_BIN")
    if not b:
        r = subprocess.run([os.path.join(k8s, "bin", "unpack")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            fatal("bin/unpack failed: " + r.stderr.decode(errors="replace"))
        b = r.stdout.decode().strip()
    exe = os.path.join(b, "kube-scheduler")
    if not os.access(exe, os.X_OK):
        fatal("no kube-scheduler in " + b)
    return exe


def stop_kube_scheduler(proc):
    """kube-scheduler v1.24 without leader election ignores the first
    SIGTERM while its queue is empty; the second one stops it."""
    for _ in range(2):
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def run_kube_scheduler(up, down, exe, ext, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-kube-scheduler"))
    proc = None
    log = os.path.join(d, "kube-scheduler.log")
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        create_nodes(api)
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, config_text(os.path.join(d, "admin.kubeconfig"),
                               ext.port))
        ext.reset()
        with open(log, "w") as lf:
            proc = subprocess.Popen([exe, "--config", cfg, "--secure-port",
                                     "0", "-v=2"], stdout=lf, stderr=lf)
        t0 = time.time()
        res = place_pods(api, "kube-scheduler",
                         lambda: proc.poll() is None)
        print("kube-scheduler: %.1f s for the pods" % (time.time() - t0))
        return res, ext.reset(), log
    finally:
        if proc is not None:
            stop_kube_scheduler(proc)
        if ksched_test.failures or (proc is not None and
                                    proc.returncode not in (0, 1, -15)):
            print("--- kube-scheduler log (tail) ---\n" + tail(log))
        subprocess.run([down, d])


def run_ksched(up, down, ksched, plugin_dir, ext, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-ksched"))
    srv = None
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        create_nodes(api)
        kc = os.path.join(d, "admin.kubeconfig")
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, config_text(kc, ext.port))
        r = subprocess.run([ksched, "validate", "--config", cfg],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(r.returncode == 0, "ksched validate accepts the configuration "
              "kube-scheduler ran (rc %d)" % r.returncode)
        if r.returncode != 0:
            print(r.stdout.decode(errors="replace"))
        ext.reset()
        srv = ksched_test.Serve(ksched, [
            "--kubeconfig", kc, "--config", cfg, "--listen", "127.0.0.1:0",
            "--plugin-dir", plugin_dir])
        if not check(bool(srv.ready(60)), "ksched serve becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        t0 = time.time()
        res = place_pods(api, "ksched", srv.alive)
        print("ksched: %.1f s for the pods" % (time.time() - t0))
        return res, ext.reset(), srv
    finally:
        if srv is not None:
            rc = srv.stop()
            check(rc == 0, "ksched serve exits 0 on SIGTERM (got %s)" % rc)
            if ksched_test.failures:
                print("--- ksched log (tail) ---\n" +
                      "\n".join(srv.lines[-40:]))
        subprocess.run([down, d])


# --- the comparison -------------------------------------------------------------


def show(r):
    if r is None:
        return "-"
    if r[0] == "bound":
        return "bound to " + r[1]
    return "%s: %s" % r


def compare(kube, ks, kube_calls, ks_calls):
    # compared without DynamicResources' PostFilter text (cluster_test.py)
    ks = {k: without_dra(v) for k, v in ks.items()}
    print("\n%-4s  %-8s  %-8s  %s" % ("pod", "kube", "ksched", "same"))
    for name, _ in PODS:
        a, b = kube.get(name), ks.get(name)
        short = [r[1] if r and r[0] == "bound" else
                 (r[0][:8] if r else "-") for r in (a, b)]
        print("%-4s  %-8s  %-8s  %s" % (name, short[0], short[1],
                                        "yes" if a == b else "NO"))
    print("\nunschedulable pods, PodScheduled reason and message:")
    for name, _ in PODS:
        a, b = kube.get(name), ks.get(name)
        if (a and a[0] != "bound") or (b and b[0] != "bound"):
            print("%s\n  kube-scheduler: %s\n  ksched:         %s"
                  % (name, show(a), show(b)))
    for name, _ in PODS:
        a, b = kube.get(name), ks.get(name)
        check(a is not None and a[0] != "timeout",
              "kube-scheduler decided %s (%s)" % (name, show(a)))
        check(a == b, "%s: ksched decides as kube-scheduler "
              "(kube-scheduler: %s; ksched: %s)" % (name, show(a), show(b)))
    fk, fs = first_filters(kube_calls), first_filters(ks_calls)
    for name, _ in PODS:
        check(fk.get(name) == fs.get(name),
              "%s: the first filter call sent the same nodes (kube-scheduler:"
              " %s; ksched: %s)" % (name, fk.get(name), fs.get(name)))
    n_prio = [sum(1 for c in calls if c[0] == "prioritize")
              for calls in (kube_calls, ks_calls)]
    # Retries of unschedulable pods depend on timing and queue policy, so
    # the number of calls is shown, not compared.
    for name, _ in PODS:
        cnt = ["%d filter, %d prioritize" % (
            sum(1 for c in calls if c[:2] == ("filter", name)),
            sum(1 for c in calls if c[:2] == ("prioritize", name)))
            for calls in (kube_calls, ks_calls)]
        if cnt[0] != cnt[1]:
            print("extender calls for %s: kube-scheduler %s; ksched %s"
                  % (name, cnt[0], cnt[1]))
    print("extender calls: kube-scheduler %d (%d prioritize), ksched %d "
          "(%d prioritize)" % (len(kube_calls), n_prio[0], len(ks_calls),
                               n_prio[1]))
    check(n_prio[0] > 0 and n_prio[1] > 0,
          "both schedulers asked the extender's prioritize")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    exe = kube_scheduler_bin(os.path.dirname(up))
    ksched_test.QUIET_OK = True
    t_start = time.time()
    tmp = tempfile.mkdtemp(prefix="ksched-extcmp-")
    ext = Extender()
    try:
        print("run 1: kube-scheduler", flush=True)
        kube, kube_calls, _ = run_kube_scheduler(up, down, exe, ext, tmp)
        print("run 2: ksched serve", flush=True)
        ks, ks_calls, _ = run_ksched(up, down, ksched, plugin_dir, ext, tmp)
        check(not ext.errors, "the extender understood every call (%s)"
              % ext.errors[:3])
        compare(kube, ks, kube_calls, ks_calls)
        placed = sum(1 for r in kube.values() if r[0] == "bound")
        print("\n%d pods: %d placed, %d unschedulable (kube-scheduler); "
              "%.0f s in all" % (len(PODS), placed, len(PODS) - placed,
                                  time.time() - t_start))
    finally:
        ext.stop()
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
