#!/usr/bin/env python3
"""The pod shapes of ksched-bench's workloads, decided by ksched and by the
real kube-scheduler on one real API server.

Usage: placement_compare_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR is the shared k8s folder (`up`, `down`, `bin/unpack`; see its
README): a real etcd + kube-apiserver on loopback and the real
kube-scheduler (v1.24). Without it (or without etcd) the test is skipped
with exit 77 and says why.

One control plane. Run 1 starts kube-scheduler, runs every scenario in
the namespace `run-kube` and stops it; run 2 starts `ksched serve` (the
default plugins, one profile named default-scheduler) and runs the same
scenarios in `run-ksched`. Each scenario brings its own six nodes (4
CPUs, 32Gi; n0..n5, zone-(i%3), so two nodes a zone) and is deleted whole
before the next one. Its pods are created one at a time, each once the one
before is bound or has its FailedScheduling event, so that the order the
scheduler sees is the order written here:

spread (TopologySpreading: zone maxSkew 1, DoNotSchedule, app=spread).
  Pods of 4 CPUs fill n2 and n5 first (placed by spec.nodeName, another
  label), so zone-2 holds none of the selected pods and takes no more.
  s0 and s1 (1 CPU) go one to zone-0 and one to zone-1; s2 fits nowhere:
  2 nodes lack CPU and 4 would break the skew.
anti (SchedulingPodAntiAffinity: required hostname anti-affinity to the
  pods of its own app). a0..a5 take the six nodes, one each; a6 fits
  nowhere.
affinity (SchedulingNodeAffinity: required node affinity bench In [yes];
  n0, n2 and n4 carry bench=yes). f0..f2 (3 CPUs) take those three; f3
  fits nowhere: 3 nodes lack CPU, 3 do not match.
deployment (SchedulingDeployment: a ReplicaSet, replicas 0, owns each pod
  and a Service selects them, so the system-default spreading applies:
  hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway). d0..d11 (100m)
  end two a node: spreading, LeastAllocated and BalancedAllocation all
  prefer the emptier node.

Compared per scenario: the zones (spread), nodes (anti, affinity) or
per-node counts (deployment) of the bound pods, and the message of the
FailedScheduling event of the pod that fits nowhere (without
DynamicResources' PostFilter text, which the v1.24 kube-scheduler does
not have). Which node of a zone a pod takes is a tie both schedulers
break at random, so it is not compared. Each run must give the expected
placements; the two must agree on every compared field. A table of both
is printed. Standard library only.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from cluster_test import (Api, apply_rbac, cluster_up,  # noqa: E402
                          k8s_scripts, node_obj, without_dra, write)
from extender_compare_test import (kube_scheduler_bin,  # noqa: E402
                                   stop_kube_scheduler, tail)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)
import ksched_test  # noqa: E402
# the same two configurations: one profile, default-scheduler
from pdb_compare_test import CONFIG_KSCHED, CONFIG_KUBE  # noqa: E402

CORE = "/api/v1"
APPS = "/apis/apps/v1"
NODES = ["n%d" % i for i in range(6)]
ZONE_KEY = "topology.kubernetes.io/zone"

def zone_of(node):
    return "zone-%d" % (int(node[1:]) % 3)


# --- objects ----------------------------------------------------------------------


def pod(ns, name, cpu, app, node=None, extra=None, owner=None):
    spec = {"schedulerName": "default-scheduler",
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "pause:3.7",
                            "resources": {"requests": {"cpu": cpu,
                                                       "memory": "256Mi"}}}]}
    if node:
        spec["nodeName"] = node
    spec.update(extra or {})
    meta = {"name": name, "namespace": ns, "labels": {"app": app}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1",
                                    "kind": "ReplicaSet", "name": owner[0],
                                    "uid": owner[1], "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec}


SPREAD = {"topologySpreadConstraints": [{
    "maxSkew": 1, "topologyKey": ZONE_KEY,
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "spread"}}}]}
ANTI = {"affinity": {"podAntiAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "anti"}},
        "topologyKey": "kubernetes.io/hostname"}]}}}
AFFINITY = {"affinity": {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{
            "key": "bench", "operator": "In", "values": ["yes"]}]}]}}}}

# name: (labels of node i, pods placed by nodeName [(name, node, cpu)],
#        pods to schedule in order [(name, cpu, app, spec extra)],
#        whether the pods are owned by a ReplicaSet behind a Service)
SCENARIOS = [
    ("spread", lambda i: {},
     [("fill-2", "n2", "4"), ("fill-5", "n5", "4")],
     [("s%d" % k, "1", "spread", SPREAD) for k in range(3)], False),
    ("anti", lambda i: {},
     [],
     [("a%d" % k, "1", "anti", ANTI) for k in range(7)], False),
    ("affinity", lambda i: {"bench": "yes"} if i % 2 == 0 else {},
     [],
     [("f%d" % k, "3", "affinity", AFFINITY) for k in range(4)], False),
    ("deployment", lambda i: {},
     [],
     [("d%d" % k, "100m", "deploy", None) for k in range(12)], True),
]


# --- one scenario -------------------------------------------------------------------


def failed_note(api, ns, name):
    """The message of the pod's first FailedScheduling event, or None."""
    st, doc = api.call("GET", "/apis/events.k8s.io/v1/namespaces/%s/events"
                       % ns)
    if st != 200:
        fatal("listing events: %d %s" % (st, doc))
    notes = [e for e in doc.get("items", [])
             if e.get("reason") == "FailedScheduling" and
             e.get("regarding", {}).get("name") == name]
    notes.sort(key=lambda e: e.get("eventTime") or
               e["metadata"].get("creationTimestamp", ""))
    return notes[0].get("note") if notes else None


def outcome(api, ns, name, alive):
    """("bound", node) or ("unschedulable", message) once either is
    known; "exited" when the scheduler died."""
    if not alive():
        return "exited"
    st, p = api.call("GET", CORE + "/namespaces/%s/pods/%s" % (ns, name))
    if st != 200:
        fatal("GET pod %s: %d %s" % (name, st, p))
    node = p.get("spec", {}).get("nodeName")
    if node:
        return ("bound", node)
    note = failed_note(api, ns, name)
    return ("unschedulable", without_dra(note)) if note else None


def run_scenario(api, ns, alive, scenario, out):
    name, labels, placed, order, owned = scenario

    def note(key, val):
        out["%s: %s" % (name, key)] = val
        print("  %-34s %s" % ("%s: %s" % (name, key), val), flush=True)

    for i, n in enumerate(NODES):
        lab = {ZONE_KEY: zone_of(n)}
        lab.update(labels(i))
        api.must("POST", CORE + "/nodes", node_obj(n, labels=lab))
    for pname, node, cpu in placed:
        api.must("POST", CORE + "/namespaces/%s/pods" % ns,
                 pod(ns, pname, cpu, "fill", node=node))
    owner = None
    if owned:
        rs = api.must("POST", APPS + "/namespaces/%s/replicasets" % ns, {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "rs", "namespace": ns},
            "spec": {"replicas": 0,
                     "selector": {"matchLabels": {"app": "deploy"}},
                     "template": {"metadata": {"labels": {"app": "deploy"}},
                                  "spec": {"containers": [{
                                      "name": "c", "image": "pause:3.7"}]}}}})
        owner = ("rs", rs["metadata"]["uid"])
        api.must("POST", CORE + "/namespaces/%s/services" % ns, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "svc", "namespace": ns},
            "spec": {"selector": {"app": "deploy"},
                     "ports": [{"port": 80, "targetPort": 80}]}})
    # The scheduler's informers see the nodes, placed pods and owners.
    time.sleep(1.5)
    got = {}
    for pname, cpu, app, extra in order:
        api.must("POST", CORE + "/namespaces/%s/pods" % ns,
                 pod(ns, pname, cpu, app, extra=extra, owner=owner))
        res = wait_for("%s decided" % pname,
                       lambda: outcome(api, ns, pname, alive), 60, 0.1)
        if res == "exited":
            fatal("the scheduler exited while %s was pending" % pname)
        if res is None:
            fatal("%s was neither bound nor failed within 60 s" % pname)
        got[pname] = res
    bound = {p: r[1] for p, r in got.items() if r[0] == "bound"}
    failed = {p: r[1] for p, r in got.items() if r[0] == "unschedulable"}
    if name == "spread":
        note("zones", sorted(zone_of(n) for n in bound.values()))
    elif name in ("anti", "affinity"):
        note("nodes", sorted(bound.values()))
    else:
        counts = {}
        for n in bound.values():
            counts[n] = counts.get(n, 0) + 1
        note("pods per node", [counts.get(n, 0) for n in NODES])
    note("unschedulable", sorted(failed))
    for p in sorted(failed):
        note("%s message" % p, failed[p])
    teardown(api, ns, [p[0] for p in placed] + [p[0] for p in order],
             owned)


def teardown(api, ns, names, owned):
    for p in names:
        api.call("DELETE", CORE + "/namespaces/%s/pods/%s" % (ns, p),
                 {"apiVersion": "v1", "kind": "DeleteOptions",
                  "gracePeriodSeconds": 0})
    if owned:
        api.call("DELETE", APPS + "/namespaces/%s/replicasets/rs" % ns)
        api.call("DELETE", CORE + "/namespaces/%s/services/svc" % ns)
    wait_for("pods gone", lambda: not api.must(
        "GET", CORE + "/namespaces/%s/pods" % ns).get("items"), 30)
    for n in NODES:
        api.call("DELETE", CORE + "/nodes/" + n)
    wait_for("nodes gone", lambda: not api.must("GET", CORE + "/nodes")
             .get("items"), 30)


def run_scenarios(api, ns, alive):
    api.must("POST", CORE + "/namespaces",
             {"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": ns}})
    out = {}
    for sc in SCENARIOS:
        run_scenario(api, ns, alive, sc, out)
    return out


# --- the runs -----------------------------------------------------------------------


def run_kube_scheduler(api, d, exe):
    log = os.path.join(d, "kube-scheduler.log")
    cfg = os.path.join(d, "kube-scheduler.yaml")
    write(cfg, CONFIG_KUBE % os.path.join(d, "admin.kubeconfig"))
    proc = None
    try:
        with open(log, "w") as lf:
            proc = subprocess.Popen([exe, "--config", cfg, "--secure-port",
                                     "0", "-v=2"], stdout=lf, stderr=lf)
        time.sleep(3)  # its informers sync; it has no readiness endpoint
        return run_scenarios(api, "run-kube", lambda: proc.poll() is None)
    finally:
        if proc is not None:
            stop_kube_scheduler(proc)
        if ksched_test.failures:
            print("--- kube-scheduler log (tail) ---\n" + tail(log))


def run_ksched(api, d, ksched, plugin_dir):
    cfg = os.path.join(d, "ksched.yaml")
    write(cfg, CONFIG_KSCHED)
    srv = ksched_test.Serve(ksched, [
        "--kubeconfig", os.path.join(d, "ksched.kubeconfig"),
        "--config", cfg, "--listen", "127.0.0.1:0",
        "--plugin-dir", plugin_dir])
    try:
        if not check(bool(srv.ready(60)), "ksched serve becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        return run_scenarios(api, "run-ksched", srv.alive)
    finally:
        rc = srv.stop()
        check(rc == 0, "ksched serve exits 0 on SIGTERM (got %s)" % rc)
        if ksched_test.failures:
            print("--- ksched log (tail) ---\n" + "\n".join(srv.lines[-40:]))


# What each run must give (upstream's rules, the same in v1.24 and v1.36).
EXPECTED = {
    "spread: zones": ["zone-0", "zone-1"],
    "spread: unschedulable": ["s2"],
    "anti: nodes": NODES,
    "anti: unschedulable": ["a6"],
    "affinity: nodes": ["n0", "n2", "n4"],
    "affinity: unschedulable": ["f3"],
    "deployment: pods per node": [2] * 6,
    "deployment: unschedulable": [],
}
# The Filter part of each message (ksched_test.fit_error), as both give it.
EXPECTED_FIT = {
    "spread: s2 message": "0/6 nodes are available: 2 Insufficient cpu, "
    "4 node(s) didn't match pod topology spread constraints.",
    "anti: a6 message": "0/6 nodes are available: 6 node(s) didn't match "
    "pod anti-affinity rules.",
    "affinity: f3 message": "0/6 nodes are available: 3 Insufficient cpu, "
    "3 node(s) didn't match Pod's node affinity/selector.",
}


def expect(who, res):
    for key, val in EXPECTED.items():
        check(res.get(key) == val, "%s: %s gives %s (got %s)"
              % (key, who, val, res.get(key)))
    for key, val in EXPECTED_FIT.items():
        msg = res.get(key)
        check(msg is not None and ksched_test.fit_error(msg) == val,
              "%s: %s says %r (got %r)" % (key, who, val, msg))


def compare(kube, ks):
    print("\n%-34s  %-40s  %s" % ("", "kube-scheduler", "ksched"))
    for key in sorted(set(kube) | set(ks)):
        a, b = kube.get(key), ks.get(key)
        print("%-34s  %-40s  %s%s" % (key, str(a)[:40], str(b)[:40],
                                      "" if a == b else "   <-- differs"))
    for key in sorted(set(kube) | set(ks)):
        check(kube.get(key) == ks.get(key),
              "%s: ksched as kube-scheduler (kube-scheduler: %s; ksched: %s)"
              % (key, kube.get(key), ks.get(key)))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    exe = kube_scheduler_bin(os.path.dirname(up))
    ksched_test.QUIET_OK = True
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="ksched-placecmp-")
    d = None
    try:
        d, env = cluster_up(up, tmp)
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        print("run 1: kube-scheduler", flush=True)
        kube = run_kube_scheduler(admin, d, exe)
        print("run 2: ksched serve", flush=True)
        ks = run_ksched(admin, d, ksched, plugin_dir)
        expect("kube-scheduler", kube)
        expect("ksched", ks)
        compare(kube, ks)
        print("\n%.0f s in all" % (time.time() - t0))
    finally:
        if d is not None:
            subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
