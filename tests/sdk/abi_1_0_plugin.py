#!/usr/bin/env python3
"""Plugins built against the ABI 1.0 to 1.7 headers (abi_1_0/ to abi_1_7/)
load in the current host and decide exactly as the same source built
against the current headers: same bindings, same FitError messages,
hand-checked.

Usage: abi_1_0_plugin.py KSCHED PLUGIN_DIR PROBE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from ksched_test import fit_error  # noqa: E402

KSCHED, PLUGIN_DIR, PROBE_DIR = sys.argv[1:4]


def node(name, **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def pod(name, **labels):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


CLUSTER = {"apiVersion": "v1", "kind": "List", "items": [
    node("n1", **{"abi/pool": "blue"}),
    node("n2", **{"abi/pool": "green", "abi/preferred": "yes"}),
    node("n3", **{"abi/blocked": "true", "abi/preferred": "yes"}),
    node("n4", **{"abi/pool": "green"}),
    # p1: n2 is the only preferred node that is not blocked.
    pod("p1"),
    # p2 avoids green: n1 is left (n2, n4 avoided, n3 blocked).
    pod("p2", **{"abi/avoid": "green"}),
    # p3 avoids blue: n2 (preferred) wins over n4 (green, not preferred).
    pod("p3", **{"abi/avoid": "blue"}),
    # p4 avoids green and selects green nodes: unschedulable, with the
    # probe's own reason in the FitError.
    pod("p4", **{"abi/avoid": "green"}),
]}
CLUSTER["items"][-1]["spec"]["nodeSelector"] = {"abi/pool": "green"}

WANT_BINDINGS = {"p1": "n2", "p2": "n1", "p3": "n2"}


def run(name):
    config = ("apiVersion: kubescheduler.config.k8s.io/v1\n"
              "kind: KubeSchedulerConfiguration\n"
              "profiles:\n"
              "- schedulerName: default-scheduler\n"
              "  plugins:\n"
              "    multiPoint:\n"
              "      enabled:\n"
              "      - name: %s\n"
              "        weight: 50\n" % name)
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "config.yaml")
        cl = os.path.join(d, "cluster.yaml")
        with open(cfg, "w") as f:
            f.write(config)
        with open(cl, "w") as f:
            json.dump(CLUSTER, f)
        r = subprocess.run([KSCHED, "schedule", "--cluster", cl, "--config",
                            cfg, "--plugin-dir", PLUGIN_DIR, "--plugin-dir",
                            PROBE_DIR, "--deterministic", "-o", "json"],
                           capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 3):
        raise SystemExit("%s: ksched exited %d: %s" % (name, r.returncode,
                                                       r.stderr))
    return json.loads(r.stdout)


def main():
    old = run("AbiProbe10")
    ok = True
    got = {b["name"]: b["node"] for b in old["bindings"]}
    if got != WANT_BINDINGS:
        print("FAIL 1.0 plugin bindings: %r, want %r" % (got, WANT_BINDINGS))
        ok = False
    for name in ("AbiProbe11", "AbiProbe12", "AbiProbe13", "AbiProbe14",
                 "AbiProbe15", "AbiProbe16", "AbiProbe17",
                 "AbiProbe18", "AbiProbe18Min0"):
        new = run(name)
        if old != new:
            print("FAIL the 1.0 build and %s differ:\n%r\n%r"
                  % (name, old, new))
            ok = False
    # n1 and n3 fail NodeAffinity first (a node's filters stop at the
    # first failure); n2 and n4 are green.
    want_msg = ("0/4 nodes are available: 2 node(s) didn't match Pod's node "
                "affinity/selector, 2 node(s) in pool green, which the pod "
                "avoids.")
    msgs = [(u["name"], fit_error(u["message"]))
            for u in old["unschedulable"]]
    if msgs != [("p4", want_msg)]:
        print("FAIL unschedulable: %r, want p4: %r" % (msgs, want_msg))
        ok = False
    # The descriptors' ABI versions, as `ksched plugins` loads them.
    r = subprocess.run([KSCHED, "plugins", "--no-default-plugin-path",
                        "--plugin-dir", PROBE_DIR],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or any(n not in r.stdout for n in
                                ("AbiProbe10", "AbiProbe11", "AbiProbe12",
                                 "AbiProbe13", "AbiProbe14",
                                 "AbiProbe15", "AbiProbe16",
                                 "AbiProbe17", "AbiProbe18",
                                 "AbiProbe18Min0")):
        print("FAIL ksched plugins: %d %s %s" % (r.returncode, r.stdout,
                                                 r.stderr))
        ok = False
    print("ok" if ok else "failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
