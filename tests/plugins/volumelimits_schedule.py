#!/usr/bin/env python3
"""VolumeRestrictions and NodeVolumeLimits end to end through `ksched
schedule`: claims, volumes, classes, CSINodes and VolumeAttachments from
the snapshot go to the stores the plugins declare (SDK ABI 1.3).

Two nodes take one volume of driver csi.a each (CSINode count 1, one of
them with an attachment of another volume already): of three pods with
their own claim one binds, the others get upstream's "exceed max volume
count"; a pod sharing the bound volume still fits. Of two pods using one
ReadWriteOncePod claim the second is refused with upstream's message; a
pod of higher priority takes such a claim from the bound pod using it
(preemption through VolumeRestrictions' RemovePod); a missing claim is
reported by name. Two pods pinned to n1 that mount one GCE persistent
disk (inline gcePersistentDisk, SDK ABI 1.4) cannot both go there
(upstream's "node(s) had no available disk"), unless both mount it
read-only; two unpinned ones sharing a disk land on the two nodes.

Skipped (exit 77) while the host's configuration reader still refuses
these plugins' names as unmodelled volume plugins.

Usage: volumelimits_schedule.py KSCHED PLUGIN_DIR
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
SA = "storage.k8s.io/v1"
MAX = "node(s) exceed max volume count"
RWOP = ("node(s) unavailable due to PersistentVolumeClaim with "
        "ReadWriteOncePod access mode already in-use by another pod")


def node(name):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def csinode(name, count):
    return {"apiVersion": SA, "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": "csi.a", "nodeID": name,
                                  "allocatable": {"count": count}}]}}


def pv(name, driver, claim=None):
    """A CSI volume, bound to claim shop/<claim> as the PV controller
    leaves it."""
    v = {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": name},
         "spec": {"capacity": {"storage": "1Gi"},
                  "accessModes": ["ReadWriteOnce"],
                  "persistentVolumeReclaimPolicy": "Delete",
                  "csi": {"driver": driver, "volumeHandle": name}},
         "status": {"phase": "Available"}}
    if claim:
        v["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim",
                                 "apiVersion": "v1", "namespace": "shop",
                                 "name": claim}
        v["status"]["phase"] = "Bound"
    return v


def pvc(name, volume, mode="ReadWriteOnce"):
    """A claim bound to `volume` (bind completed, as the PV controller
    marks it)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "shop",
                         "annotations": {
                             "pv.kubernetes.io/bind-completed": "yes",
                             "pv.kubernetes.io/bound-by-controller": "yes"}},
            "spec": {"accessModes": [mode], "volumeName": volume,
                     "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound", "accessModes": [mode],
                       "capacity": {"storage": "1Gi"}}}


def va(name, node_name, volume):
    return {"apiVersion": SA, "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": "csi.a", "nodeName": node_name,
                     "source": {"persistentVolumeName": volume}}}


def pod(name, claim, priority=0, node_name=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "shop"},
         "spec": {"priority": priority,
                  "containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests":
                                                {"cpu": "100m"}}}],
                  "volumes": [{"name": "data", "persistentVolumeClaim":
                               {"claimName": claim}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


def pd_pod(name, pd_name, on=None, read_only=False):
    """A pod mounting GCE persistent disk `pd_name` inline, pinned to node
    `on` by a nodeSelector when given."""
    p = pod(name, None)
    p["spec"]["volumes"] = [{"name": "disk", "gcePersistentDisk": {
        "pdName": pd_name, "fsType": "ext4", "readOnly": read_only}}]
    if on:
        p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": on}
    return p


CLUSTER = {"apiVersion": "v1", "kind": "List", "items": [
    node("n1"), node("n2"), csinode("n1", 1), csinode("n2", 1),
    pv("pv-1", "csi.a", "c1"), pv("pv-2", "csi.a", "c2"),
    pv("pv-3", "csi.a", "c3"), pv("pv-busy", "csi.a"),
    pv("pv-solo", "csi.b", "solo"), pv("pv-held", "csi.b", "held"),
    pvc("c1", "pv-1"), pvc("c2", "pv-2"), pvc("c3", "pv-3"),
    pvc("solo", "pv-solo", "ReadWriteOncePod"),
    pvc("held", "pv-held", "ReadWriteOncePod"),
    va("va-busy", "n2", "pv-busy"),
    pod("v-1", "c1"), pod("v-2", "c2"), pod("v-3", "c3"),
    pod("w-1", "c1"),
    pod("s-1", "solo"), pod("s-2", "solo"),
    pod("r-low", "held", 0, "n2"), pod("r-high", "held", 1000),
    pod("missing-0", "nope"),
    pd_pod("pd-a", "disk-1", "n1"), pd_pod("pd-b", "disk-1", "n1"),
    pd_pod("pd-ro-a", "disk-2", "n2", True),
    pd_pod("pd-ro-b", "disk-2", "n2", True),
    pd_pod("pd-x", "disk-3"), pd_pod("pd-y", "disk-3"),
]}

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: VolumeRestrictions
      - name: NodeVolumeLimits
"""


def run():
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "config.yaml")
        cl = os.path.join(d, "cluster.json")
        with open(cfg, "w") as f:
            f.write(CONFIG)
        with open(cl, "w") as f:
            json.dump(CLUSTER, f)
        r = subprocess.run([KSCHED, "schedule", "--cluster", cl, "--config",
                            cfg, "--plugin-dir", PLUGIN_DIR,
                            "--deterministic", "-o", "json"],
                           capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 3):
        if "is not available in ksched (volumes are not modelled)" in r.stderr:
            print("SKIP the host refuses the volume plugins' names: %s"
                  % r.stderr.strip())
            sys.exit(77)
        raise SystemExit("ksched exited %d: %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout), r.stderr


def main():
    ok = True
    out, err = run()
    got = {b["name"]: b["node"] for b in out["bindings"]}
    msgs = {u["name"]: fit_error(u["message"])
            for u in out["unschedulable"]}

    def fail(what):
        nonlocal ok
        print("FAIL " + what)
        ok = False

    # n2 already has an attachment of csi.a: only n1 takes a new volume
    bound = [p for p in ("v-1", "v-2", "v-3") if p in got]
    if len(bound) != 1 or got[bound[0]] != "n1":
        fail("want one of v-1..v-3 on n1, got %r" % got)
    for p in ("v-1", "v-2", "v-3"):
        if p not in got and msgs.get(p) != \
                "0/2 nodes are available: 2 " + MAX + ".":
            fail("%s: %r" % (p, msgs.get(p)))
    # a pod sharing v-1's volume adds nothing new on v-1's node
    if "v-1" in got and got.get("w-1") != got["v-1"]:
        fail("w-1 on %r, want v-1's node %r" % (got.get("w-1"),
                                                  got.get("v-1")))
    solo = [p for p in ("s-1", "s-2") if p in got]
    if len(solo) != 1:
        fail("want one of s-1, s-2 bound, got %r" % got)
    for p in ("s-1", "s-2"):
        if p not in got and msgs.get(p) != \
                "0/2 nodes are available: 2 " + RWOP + ".":
            fail("%s: %r" % (p, msgs.get(p)))
    # only the bound low-priority pod stands in r-high's way: preempted
    if got.get("r-high") != "n2":
        fail("r-high on %r, want n2 (r-low preempted)" % got.get("r-high"))
    if 'persistentvolumeclaim "nope" not found' not in \
            msgs.get("missing-0", ""):
        fail("missing-0: %r" % msgs.get("missing-0"))
    # one GCE PD, read-write, on one node: the second pod has no node
    pd = [p for p in ("pd-a", "pd-b") if p in got]
    if pd != ["pd-a"] or got["pd-a"] != "n1":
        fail("want pd-a on n1 and pd-b unschedulable, got %r" % got)
    if msgs.get("pd-b") != (
            "0/2 nodes are available: 1 node(s) didn't match Pod's node "
            "affinity/selector, 1 node(s) had no available disk."):
        fail("pd-b: %r" % msgs.get("pd-b"))
    # both read-only: they share the node
    if got.get("pd-ro-a") != "n2" or got.get("pd-ro-b") != "n2":
        fail("want pd-ro-a and pd-ro-b on n2, got %r" % got)
    if "pd-x" not in got or "pd-y" not in got or \
            got["pd-x"] == got["pd-y"]:
        fail("want pd-x and pd-y on different nodes, got %r" % got)
    for kind in ("CSINode", "VolumeAttachment", "PersistentVolume ",
                 "PersistentVolumeClaim"):
        if "skipping " + kind in err:
            fail("declared kind %s was skipped: %s" % (kind, err))
    if not ok:
        print(json.dumps(out, indent=1))
    print("ok" if ok else "failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
