#!/usr/bin/env python3
"""VolumeZone end to end through `ksched schedule`: the snapshot's
PersistentVolumeClaims, PersistentVolumes and StorageClasses go to the
stores the plugin declares (SDK ABI 1.3), from YAML and from JSON alike.

Pods whose claim is bound to a zonal volume land in that zone; a
WaitForFirstConsumer claim is ignored; a volume in a zone no node has, and
a missing claim, give upstream's FitError messages. Kinds no plugin
declares are still skipped with a notice.

Usage: volumezone_schedule.py KSCHED PLUGIN_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from ksched_test import fit_error  # noqa: E402

KSCHED, PLUGIN_DIR = sys.argv[1:3]
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def node(name, zone):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {ZONE: zone, REGION: "r1",
                                    "kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def pod(name, claim=None):
    spec = {"containers": [{"name": "c", "image": "pause",
                            "resources": {"requests": {"cpu": "100m"}}}]}
    if claim is not None:
        spec["volumes"] = [{"name": "data",
                            "persistentVolumeClaim": {"claimName": claim}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def pvc(name, volume=None, sc=None):
    """A claim; with `volume`, bound to it as the PV controller leaves a
    bound claim (VolumeBinding, in the default profile, reads a claim as
    bound only with the bind-completed annotation, as upstream)."""
    spec = {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}
    md = {"name": name, "namespace": "shop"}
    out = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": md, "spec": spec}
    if volume:
        spec["volumeName"] = volume
        md["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        out["status"] = {"phase": "Bound"}
    if sc:
        spec["storageClassName"] = sc
    return out


def pv(name, zone, claim=None):
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}
    out = {"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": {"name": name, "labels": {ZONE: zone}}, "spec": spec}
    if claim:
        spec["claimRef"] = {"namespace": "shop", "name": claim}
        out["status"] = {"phase": "Bound"}
    return out


def sc(name, mode):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": "x",
            "volumeBindingMode": mode}


CLUSTER = {"apiVersion": "v1", "kind": "List", "items": [
    node("a1", "z1"), node("a2", "z1"), node("b1", "z2"),
    sc("late", "WaitForFirstConsumer"),
    pv("pv-a", "z1", "data-a"), pv("pv-b", "z2", "data-b"),
    pv("pv-x", "z3", "data-x"), pv("pv-ab", "z1__z2", "data-ab"),
    pvc("data-a", volume="pv-a"), pvc("data-b", volume="pv-b"),
    pvc("data-x", volume="pv-x"), pvc("data-ab", volume="pv-ab"),
    pvc("later", sc="late"),
    {"apiVersion": "v1", "kind": "ConfigMap",
     "metadata": {"name": "cfg", "namespace": "shop"}},
    pod("a-0", "data-a"), pod("a-1", "data-a"), pod("a-2", "data-a"),
    pod("b-0", "data-b"), pod("b-1", "data-b"),
    pod("ab-0", "data-ab"), pod("ab-1", "data-ab"),
    pod("wait-0", "later"),
    pod("x-0", "data-x"),
    pod("missing-0", "nope"),
]}

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: VolumeZone
"""


def to_yaml(obj, indent=0):
    """A small YAML writer (block style) so the YAML path is exercised
    without a YAML library."""
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


def run(fmt):
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "config.yaml")
        cl = os.path.join(d, "cluster." + fmt)
        with open(cfg, "w") as f:
            f.write(CONFIG)
        with open(cl, "w") as f:
            if fmt == "json":
                json.dump(CLUSTER, f)
            else:
                f.write(to_yaml(CLUSTER) + "\n")
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
    out, err = run("yaml")
    got = {b["name"]: b["node"] for b in out["bindings"]}
    zone_of = {"a1": "z1", "a2": "z1", "b1": "z2"}
    want_zone = {"a-0": "z1", "a-1": "z1", "a-2": "z1", "b-0": "z2",
                 "b-1": "z2"}
    for name, zone in want_zone.items():
        if zone_of.get(got.get(name)) != zone:
            print("FAIL %s on %r, want a node in %s" % (name, got.get(name),
                                                         zone))
            ok = False
    for name in ("ab-0", "ab-1", "wait-0"):
        if got.get(name) not in zone_of:
            print("FAIL %s not bound: %r" % (name, got.get(name)))
            ok = False
    # The WaitForFirstConsumer claim does not constrain: wait-0 may go to
    # any zone, and with equal scores elsewhere is spread like a plain pod.
    msgs = {u["name"]: fit_error(u["message"])
            for u in out["unschedulable"]}
    want_msgs = {
        "x-0": "0/3 nodes are available: 3 node(s) had no available volume "
               "zone.",
        "missing-0": "0/3 nodes are available: persistentvolumeclaim "
                     "\"nope\" not found.",
    }
    if msgs != want_msgs:
        print("FAIL unschedulable: %r\n want %r" % (msgs, want_msgs))
        ok = False
    if "skipping PersistentVolume" in err or "skipping StorageClass" in err:
        print("FAIL declared kinds were skipped: %s" % err)
        ok = False
    if "skipping ConfigMap shop/cfg" not in err:
        print("FAIL no notice for the undeclared ConfigMap: %s" % err)
        ok = False
    if "persistentVolumeClaim, which ksched does not model" in err:
        print("FAIL the claim is still reported as not modelled: %s" % err)
        ok = False
    # The same cluster as JSON decides the same.
    out_json, _ = run("json")
    if out_json != out:
        print("FAIL YAML and JSON inputs differ:\n%r\n%r" % (out, out_json))
        ok = False
    print("ok" if ok else "failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
