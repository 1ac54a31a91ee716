#!/usr/bin/env python3
"""DefaultPreemption and PodDisruptionBudgets through `ksched schedule`:
the snapshot's policy/v1 PodDisruptionBudgets go to the store the plugin
declares (SDK ABI 1.3), from YAML and from JSON alike.

Two nodes of 4 CPUs, each full with one 3-CPU pod: db-0 (priority 10,
app=db) on n1 and web-0 (priority 50, app=web) on n2. The pod `big`
(priority 1000, 2 CPUs) must preempt one of them. Without a budget the
lowest highest-priority victim decides: db-0, so `big` binds to n1. With a
budget over app=db whose status allows no disruption, evicting db-0 would
violate it: the node without violations wins and `big` binds to n2 (web-0
evicted). The cases around it follow upstream's rules (v1.36, the same as
v1.24 here): a budget that still allows a disruption, one in another
namespace, one whose status already lists db-0 in disruptedPods, and an
empty selector (matches nothing in the scheduler) change nothing.

The reprieve order, on one node of 5 CPUs with db-0 (priority 10, app=db)
and cache-0 (priority 20, app=cache), 2 CPUs each, and `big` (2 CPUs):
one of them must go. Without a budget cache-0, the more important, is
reprieved first and db-0 is the victim; with db protected, db-0 (a
violating victim) is reprieved first and cache-0 goes instead. A probe pod
(priority 0, a required pod affinity to app=db on the node) tells which
survived: it binds only next to db-0.

Usage: pdb_schedule.py KSCHED PLUGIN_DIR
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

KSCHED, PLUGIN_DIR = sys.argv[1:3]


def node(name, cpu="4"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi",
                                       "pods": "110"}}}


def pod(name, app, prio, cpu, node_name=None):
    o = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default"},
         "spec": {"priority": prio,
                  "containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests": {"cpu": cpu}}}]}}
    if app:
        o["metadata"]["labels"] = {"app": app}
    if node_name:
        o["spec"]["nodeName"] = node_name
        o["status"] = {"phase": "Running",
                       "startTime": "2022-05-01T00:00:00Z"}
    return o


def pdb(name, ns="default", selector=None, allowed=0, disrupted=None):
    o = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": name, "namespace": ns},
         "spec": {"minAvailable": 1},
         "status": {"disruptionsAllowed": allowed, "currentHealthy": 1,
                    "desiredHealthy": 1, "expectedPods": 1}}
    o["spec"]["selector"] = ({"matchLabels": {"app": "db"}}
                             if selector is None else selector)
    if disrupted:
        o["status"]["disruptedPods"] = {p: "2022-05-01T00:00:00Z"
                                        for p in disrupted}
    return o


BASE = [node("n1"), node("n2"),
        pod("db-0", "db", 10, "3", "n1"), pod("web-0", "web", 50, "3", "n2"),
        pod("big", None, 1000, "2")]

# name, extra objects, the node `big` must bind to
CASES = [
    ("no budget", [], "n1"),
    ("db protected", [pdb("db")], "n2"),
    ("db protected, expression selector",
     [pdb("db", selector={"matchExpressions": [
         {"key": "app", "operator": "In", "values": ["db", "cache"]}]})],
     "n2"),
    ("one disruption allowed", [pdb("db", allowed=1)], "n1"),
    ("budget in another namespace", [pdb("db", ns="other")], "n1"),
    ("db-0 already in disruptedPods", [pdb("db", disrupted=["db-0"])], "n1"),
    ("empty selector", [pdb("db", selector={})], "n1"),
    # both protected: one violation each, then the lowest victim (db-0)
    ("both protected", [pdb("db"), pdb("web", selector={
        "matchLabels": {"app": "web"}})], "n1"),
]

PROBE = pod("probe", None, 0, "100m")
PROBE["spec"]["affinity"] = {"podAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "kubernetes.io/hostname"}]}}
ONE_NODE = [node("n1", "5"), pod("db-0", "db", 10, "2", "n1"),
            pod("cache-0", "cache", 20, "2", "n1"), pod("big", None, 1000, "2"),
            PROBE]

# name, objects, the node of `big`, the node of `probe` (None: unplaced)
REPRIEVE = [
    ("reprieve: no budget, db-0 evicted", [], "n1", None),
    ("reprieve: db protected, cache-0 evicted", [pdb("db")], "n1", "n1"),
]

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def to_yaml(obj, indent=0):
    """A small block-style YAML writer (no YAML library needed)."""
    pad = "  " * indent
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                out.append("%s%s:" % (pad, json.dumps(k)))
                out.append(to_yaml(v, indent + 1))
            else:
                out.append("%s%s: %s" % (pad, json.dumps(k), json.dumps(v)))
    else:
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                inner = to_yaml(v, indent + 1).lstrip()
                out.append("%s- %s" % (pad, inner))
            else:
                out.append("%s- %s" % (pad, json.dumps(v)))
    return "\n".join(out)


def run(items, fmt):
    cluster = {"apiVersion": "v1", "kind": "List", "items": items}
    with tempfile.TemporaryDirectory(prefix="pdb-schedule-") as d:
        cfg = os.path.join(d, "config.yaml")
        cl = os.path.join(d, "cluster." + fmt)
        with open(cfg, "w") as f:
            f.write(CONFIG)
        with open(cl, "w") as f:
            if fmt == "json":
                json.dump(cluster, f)
            else:
                f.write(to_yaml(cluster) + "\n")
        r = subprocess.run([KSCHED, "schedule", "--cluster", cl, "--config",
                            cfg, "--plugin-dir", PLUGIN_DIR,
                            "--deterministic", "-o", "json"],
                           capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 3):
        raise SystemExit("%s: ksched exited %d: %s" % (fmt, r.returncode,
                                                       r.stderr))
    return json.loads(r.stdout), r.stderr


def main():
    ok = True
    for name, extra, want in CASES:
        for fmt in ("yaml", "json"):
            out, err = run(copy.deepcopy(BASE) + extra, fmt)
            got = {b["name"]: b["node"] for b in out["bindings"]}
            if got.get("big") != want:
                print("FAIL %s (%s): big on %r, want %s\n%s" %
                      (name, fmt, got.get("big"), want, err))
                ok = False
            elif "PodDisruptionBudget" in err:
                print("FAIL %s (%s): the budget was not read: %s" %
                      (name, fmt, err))
                ok = False
            else:
                print("ok   %s (%s): big on %s" % (name, fmt, want))
    for name, extra, want_big, want_probe in REPRIEVE:
        for fmt in ("yaml", "json"):
            out, err = run(copy.deepcopy(ONE_NODE) + extra, fmt)
            got = {b["name"]: b["node"] for b in out["bindings"]}
            if (got.get("big"), got.get("probe")) != (want_big, want_probe):
                print("FAIL %s (%s): big on %r, probe on %r; want %s, %s\n%s"
                      % (name, fmt, got.get("big"), got.get("probe"),
                         want_big, want_probe, err))
                ok = False
            else:
                print("ok   %s (%s): big on %s, probe on %s" %
                      (name, fmt, want_big, want_probe))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
