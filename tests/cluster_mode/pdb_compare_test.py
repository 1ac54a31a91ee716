#!/usr/bin/env python3
"""Preemption that must spare PodDisruptionBudget-protected victims:
ksched and the real kube-scheduler, side by side on a real control plane.

Usage: pdb_compare_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR is the shared k8s folder (`up`, `controllers`, `down`,
`bin/unpack`; see its README): a real etcd + kube-apiserver on loopback,
the real kube-controller-manager (its disruption controller computes the
budgets' status) and the real kube-scheduler (v1.24). Without it (or
without etcd) the test is skipped with exit 77 and says why.

The same cluster, twice on a fresh control plane: run 1 with
kube-scheduler, run 2 with `ksched serve` (the default profile, one
profile named default-scheduler). No kubelet runs, so the test makes the
running pods Ready (status PATCH: phase Running, Ready=True), which is
what the disruption controller counts. The scheduler runs from the start;
each scenario brings its own nodes of 4 CPUs, budgets and running pods
(placed by spec.nodeName), waits until the disruption controller has
computed every budget's status (status.observedGeneration and
disruptionsAllowed as expected), creates its preemptor, and is deleted
whole before the next one:

spare (budgets "db": app=db, minAvailable 2, so 0 allowed; "web":
app=web, minAvailable 1, so 1 allowed). The pod `high` (priority 1000,
3 CPUs) fits nowhere and preempts:

  n1  db-0 (priority 10, 3 CPUs, app=db): it must go and violates "db":
      1 violation, highest victim 10.
  n2  web-0 (20, 1 CPU, app=web), db-1 (5, 1 CPU, app=db): one must go.
      db-1 violates "db", so it is reprieved first and web-0 (within
      "web"'s budget) goes instead: no violation, highest victim 20.
      (Without budgets db-1 would go.)
  n3  web-1 (40, 4 CPUs, app=web): no violation, highest victim 40.

  Fewest violations, then the lowest highest-priority victim: n2, evicting
  web-0 (ignoring violations would choose n1; reprieving in priority
  order alone would evict db-1 on n2). Both schedulers must agree.

order (budget "q": app=q, minAvailable 2, so 0 allowed). The pod
`top` (priority 1000, 4 CPUs) must empty one node:

  m1  v (5, 2 CPUs, app=q), w (30, 2 CPUs, app=w): both go, v violating
      (reprieved first, and still a victim): 1 violation.
  m2  u (20, 4 CPUs, app=q): 1 violation.

  Equal violations; then the highest-priority victim. Upstream v1.36
  sorts a node's victims by importance after the reprieve when both
  groups gave victims: m1's is w (30), m2's u (20): m2. v1.24.1 kept them
  in reprieve order, violating first, and took m1's v (5) as its highest:
  m1. ksched follows v1.36 (README, Conformance): this is the one
  expected difference (V124_V136).

Compared per scenario: the preemptor's nominatedNodeName, the message of
its first FailedScheduling event (the FitError of the attempt that
preempted), the Preempted events (victim and message), which pods were
deleted, and its node once the test has finished the victims' deletion
(as a kubelet would). A table of both is printed; any difference other
than V124_V136 fails the test. The PodScheduled condition is not
compared: it follows the preemptor's later attempts while its victims
terminate, and when those happen depends on the queue (ksched's
QueueingHints are v1.36's; see README, Conformance), not on preemption.
Standard library only.
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
                          without_dra,
                          k8s_scripts, node_obj, write)
from extender_compare_test import (kube_scheduler_bin,  # noqa: E402
                                   stop_kube_scheduler, tail)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)
import ksched_test  # noqa: E402

NS = "default"
CORE = "/api/v1"
POLICY = "/apis/policy/v1"
CLASSES = {"p5": 5, "p10": 10, "p20": 20, "p30": 30, "p40": 40,
           "high": 1000}
# Each scenario: its nodes (4 CPUs each); its budgets (name, app,
# minAvailable, the disruptionsAllowed the controller must reach, the
# number of pods it selects); its running pods (name, node, priority
# class, CPUs, app); its preemptor (name, CPUs).
SCENARIOS = [
    ("spare", ["n1", "n2", "n3"],
     [("db", "db", 2, 0, 2), ("web", "web", 1, 1, 2)],
     [("db-0", "n1", "p10", "3", "db"),
      ("web-0", "n2", "p20", "1", "web"),
      ("db-1", "n2", "p5", "1", "db"),
      ("web-1", "n3", "p40", "4", "web")],
     ("high", "3")),
    ("order", ["m1", "m2"],
     [("q", "q", 2, 0, 2)],
     [("v", "m1", "p5", "2", "q"),
      ("w", "m1", "p30", "2", "w"),
      ("u", "m2", "p20", "4", "q")],
     ("top", "4")),
]

CONFIG_KUBE = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
"""

CONFIG_KSCHED = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
"""


# --- objects ----------------------------------------------------------------------


def pod(name, cls, cpu, app=None, node=None):
    spec = {"schedulerName": "default-scheduler",
            "priorityClassName": cls,
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "c", "image": "pause:3.7",
                            "resources": {"requests": {"cpu": cpu,
                                                       "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": NS}
    if app:
        meta["labels"] = {"app": app}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec}


def budget(name, app, min_available):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"minAvailable": min_available,
                     "selector": {"matchLabels": {"app": app}}}}


def make_ready(api, name):
    """What a kubelet would report for a started pod: Running, Ready."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    st, doc = api.call(
        "PATCH", CORE + "/namespaces/%s/pods/%s/status" % (NS, name),
        {"status": {"phase": "Running", "startTime": now,
                    "conditions": [{"type": "Ready", "status": "True",
                                    "lastTransitionTime": now}]}},
        ctype="application/merge-patch+json")
    if st != 200:
        fatal("PATCH %s status -> %d %s" % (name, st, doc))


def setup_cluster(api):
    for name, value in CLASSES.items():
        api.must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                 {"apiVersion": "scheduling.k8s.io/v1",
                  "kind": "PriorityClass", "metadata": {"name": name},
                  "value": value})


def setup_scenario(api, scenario):
    """The scenario's nodes, budgets and running (Ready) pods; returns
    once the disruption controller has computed every budget's status for
    its current spec with the expected disruptionsAllowed."""
    name, nodes, budgets, running, _ = scenario
    for n in nodes:
        api.must("POST", CORE + "/nodes",
                 node_obj(n, cpu="4", memory="64Gi"))
    for b, app, min_av, _, _ in budgets:
        api.must("POST", POLICY + "/namespaces/%s/poddisruptionbudgets" % NS,
                 budget(b, app, min_av))
    for p, node, cls, cpu, app in running:
        api.must("POST", CORE + "/namespaces/%s/pods" % NS,
                 pod(p, cls, cpu, app, node))
        make_ready(api, p)
    seen = {}

    def computed():
        for b, _, _, allowed, expected in budgets:
            st, o = api.call("GET", POLICY + "/namespaces/%s/"
                             "poddisruptionbudgets/%s" % (NS, b))
            if st != 200:
                return None
            s = o.get("status") or {}
            seen[b] = s
            if (s.get("observedGeneration") != o["metadata"].get("generation")
                    or s.get("disruptionsAllowed") != allowed
                    or s.get("expectedPods") != expected):
                return None
        return True
    ok = wait_for("%s: budgets computed" % name, computed, 90, 0.3)
    if not check(bool(ok), "%s: the disruption controller computed the "
                 "budgets (got %s)" % (name, seen)):
        fatal("the budgets' status never came")
    # The scheduler's informer gets the same status update.
    time.sleep(1)


def teardown_scenario(api, scenario):
    """Delete the scenario's pods, budgets and nodes, so that the next one
    starts on its own nodes (every node's verdict is in a FitError)."""
    _, nodes, budgets, running, (pname, _) = scenario
    for p in [r[0] for r in running] + [pname]:
        api.call("DELETE", CORE + "/namespaces/%s/pods/%s" % (NS, p),
                 {"apiVersion": "v1", "kind": "DeleteOptions",
                  "gracePeriodSeconds": 0})
    for b in budgets:
        api.call("DELETE", POLICY + "/namespaces/%s/poddisruptionbudgets/%s"
                 % (NS, b[0]))
    wait_for("pods gone", lambda: not pods(api), 30)
    for n in nodes:
        api.call("DELETE", CORE + "/nodes/" + n)
    wait_for("nodes gone", lambda: not api.must("GET", CORE + "/nodes")
             .get("items"), 30)


# --- deciding ---------------------------------------------------------------------


def pods(api):
    st, doc = api.call("GET", CORE + "/namespaces/%s/pods" % NS)
    if st != 200:
        fatal("listing pods: %d %s" % (st, doc))
    return {p["metadata"]["name"]: p for p in doc.get("items", [])}


def events(api):
    """The namespace's events (events.k8s.io/v1, as both schedulers write
    them), oldest first."""
    st, doc = api.call("GET", "/apis/events.k8s.io/v1/namespaces/%s/events"
                       % NS)
    if st != 200:
        fatal("listing events: %d %s" % (st, doc))
    return sorted(doc.get("items", []),
                  key=lambda e: (e.get("eventTime") or
                                 e["metadata"].get("creationTimestamp", ""),
                                 e["metadata"].get("resourceVersion", "")))


def run_scenario(api, alive, scenario, out):
    name, _, _, running, (pname, cpu) = scenario
    mine = [r[0] for r in running]

    def note(key, val):
        out["%s: %s" % (name, key)] = val
        print("  %-32s %s" % ("%s: %s" % (name, key), val), flush=True)

    api.must("POST", CORE + "/namespaces/%s/pods" % NS,
             pod(pname, "high", cpu))

    def nominated():
        if not alive():
            return "exited"
        p = pods(api).get(pname, {})
        return p.get("status", {}).get("nominatedNodeName") or None
    nom = wait_for("%s nominated" % pname, nominated, 60)
    if nom == "exited":
        fatal("the scheduler exited while %s was pending" % pname)
    # Every victim's DELETE is sent with the nomination; let them land.
    time.sleep(2)
    ps = pods(api)
    note("nominatedNodeName", nom)
    evs = events(api)
    failed = [e for e in evs if e.get("reason") == "FailedScheduling" and
              e["regarding"]["name"] == pname]
    note("first FailedScheduling", failed[0].get("note") if failed else None)
    note("Preempted events", sorted(
        (e["regarding"]["name"], e.get("note")) for e in evs
        if e.get("reason") == "Preempted" and
        e["regarding"]["name"] in mine))
    deleted = sorted(n for n in mine if n not in ps or
                     ps[n]["metadata"].get("deletionTimestamp"))
    note("deleted", deleted)
    # No kubelet: finish the victims' graceful deletion as one would.
    for v in deleted:
        api.call("DELETE", CORE + "/namespaces/%s/pods/%s" % (NS, v),
                 {"apiVersion": "v1", "kind": "DeleteOptions",
                  "gracePeriodSeconds": 0})

    def bound():
        if not alive():
            return "exited"
        return pods(api).get(pname, {}).get("spec", {}).get("nodeName")
    node = wait_for("%s bound" % pname, bound, 60)
    if node == "exited":
        fatal("the scheduler exited before %s was bound" % pname)
    note("bound to", node)
    note("pods left", sorted(n for n in pods(api) if n in mine))


def run_scenarios(api, alive):
    out = {}
    for sc in SCENARIOS:
        setup_scenario(api, sc)
        run_scenario(api, alive, sc, out)
        teardown_scenario(api, sc)
    return out


# --- the runs ----------------------------------------------------------------------


def start_controllers(controllers, d):
    r = subprocess.run([controllers, d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode != 0:
        fatal("controllers failed: " + r.stdout.decode(errors="replace"))


def run_kube_scheduler(up, down, controllers, exe, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-kube-scheduler"))
    proc = None
    log = os.path.join(d, "kube-scheduler.log")
    try:
        start_controllers(controllers, d)
        api = Api(env, env["ADMIN_TOKEN"])
        setup_cluster(api)
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, CONFIG_KUBE % os.path.join(d, "admin.kubeconfig"))
        with open(log, "w") as lf:
            proc = subprocess.Popen([exe, "--config", cfg, "--secure-port",
                                     "0", "-v=2"], stdout=lf, stderr=lf)
        return run_scenarios(api, lambda: proc.poll() is None)
    finally:
        if proc is not None:
            stop_kube_scheduler(proc)
        if ksched_test.failures:
            print("--- kube-scheduler log (tail) ---\n" + tail(log))
        subprocess.run([down, d])


def run_ksched(up, down, controllers, ksched, plugin_dir, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-ksched"))
    srv = None
    try:
        start_controllers(controllers, d)
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        setup_cluster(admin)
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, CONFIG_KSCHED)
        srv = ksched_test.Serve(ksched, [
            "--kubeconfig", os.path.join(d, "ksched.kubeconfig"),
            "--config", cfg, "--listen", "127.0.0.1:0",
            "--plugin-dir", plugin_dir])
        if not check(bool(srv.ready(60)), "ksched serve becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        return run_scenarios(admin, srv.alive)
    finally:
        if srv is not None:
            rc = srv.stop()
            check(rc == 0, "ksched serve exits 0 on SIGTERM (got %s)" % rc)
            if ksched_test.failures:
                print("--- ksched log (tail) ---\n" +
                      "\n".join(srv.lines[-40:]))
        subprocess.run([down, d])


# What each run must show (upstream's rules: the same in v1.24 and v1.36
# for "spare").
EXPECTED = {
    "spare: nominatedNodeName": "n2", "spare: deleted": ["web-0"],
    "spare: bound to": "n2", "spare: pods left": ["db-0", "db-1", "web-1"],
}

# Where v1.36's rules differ from v1.24's (README, Conformance): what
# kube-scheduler v1.24 and ksched must each give. v1.36 sorts the victims
# by importance after the reprieve, so m1's highest-priority victim is w
# (30), not v (5): m2 wins.
V124_V136 = {
    "order: nominatedNodeName": ("m1", "m2"),
    "order: Preempted events": (
        [("v", "Preempted by default/top on node m1"),
         ("w", "Preempted by default/top on node m1")],
        [("u", "Preempted by default/top on node m2")]),
    "order: deleted": (["v", "w"], ["u"]),
    "order: bound to": ("m1", "m2"),
    "order: pods left": (["u"], ["v", "w"]),
}


def compare(kube, ks):
    # compared without DynamicResources' PostFilter text (cluster_test.py)
    ks = {k: without_dra(v) for k, v in ks.items()}
    print("\n%-32s  %-36s  %s" % ("", "kube-scheduler", "ksched"))
    for key in kube:
        a, b = kube.get(key), ks.get(key)
        print("%-32s  %-36s  %s%s" % (key, str(a)[:36], str(b)[:36],
                                      "" if a == b else
                                      "   (v1.24 / v1.36)" if key in V124_V136
                                      else "   <-- differs"))
    for key in kube:
        a, b = kube.get(key), ks.get(key)
        if key in V124_V136:
            continue
        check(a == b, "%s: ksched as kube-scheduler (kube-scheduler: %s; "
              "ksched: %s)" % (key, a, b))


def expect(who, res, which):
    """The run's decisions as EXPECTED and V124_V136 (which: 0 for
    kube-scheduler v1.24, 1 for ksched) say."""
    want = dict(EXPECTED)
    want.update({k: v[which] for k, v in V124_V136.items()})
    for key, val in want.items():
        check(res.get(key) == val, "%s: %s gives %s (got %s)"
              % (key, who, val, res.get(key)))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    controllers = os.path.join(os.path.dirname(up), "controllers")
    exe = kube_scheduler_bin(os.path.dirname(up))
    ksched_test.QUIET_OK = True
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="ksched-pdbcmp-")
    try:
        only = os.environ.get("PDBCMP_ONLY", "")
        kube = ks = {}
        if only != "ksched":
            print("run 1: kube-scheduler", flush=True)
            kube = run_kube_scheduler(up, down, controllers, exe, tmp)
        if only != "kube":
            print("run 2: ksched serve", flush=True)
            ks = run_ksched(up, down, controllers, ksched, plugin_dir, tmp)
        if only != "ksched":
            expect("kube-scheduler", kube, 0)
        if only != "kube":
            expect("ksched", ks, 1)
        if not only:
            compare(kube, ks)
        print("\n%.0f s in all" % (time.time() - t0))
    finally:
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
