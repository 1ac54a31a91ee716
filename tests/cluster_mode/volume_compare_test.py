#!/usr/bin/env python3
"""Volumes on the real control plane: ksched and the real kube-scheduler,
side by side.

Usage: volume_compare_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR is the shared k8s folder (`up`, `controllers`, `down`,
`bin/unpack`; see its README): a real etcd + kube-apiserver on loopback,
the real kube-controller-manager (the PV binder, PVC/PV protection, the
StatefulSet controller) and the real kube-scheduler (v1.24). Without it
(or without etcd) the test is skipped with exit 77 and says why.

The same cluster, twice on a fresh control plane: run 1 with
kube-scheduler, run 2 with `ksched serve` (one profile named
default-scheduler, the volume plugins enabled, the same pluginConfig:
VolumeBinding's bindTimeoutSeconds 5). A small provisioner
(test_provisioner.py) plays the external CSI provisioner of two
StorageClasses: it creates a PV for a claim once the scheduler has written
the selected-node annotation, pinned to that node. Four nodes of
different sizes (no score ties) in three zones; the scenarios, in order:

  sts       a StatefulSet of 3 with a WaitForFirstConsumer claim template:
            every claim provisioned on its pod's node and bound, every pod
            bound (the scheduler's selected-node annotation did it); the
            set of nodes compared (which replica goes first is not
            defined for either scheduler)
  local     a local PV (kubernetes.io/no-provisioner) on n1: its pod goes
            to n1; a second claim of that class has no PV left:
            unschedulable, with upstream's message
  zonal     an Immediate claim bound to a PV pinned to zone z2: its pod
            goes to the z2 node
  topology  a class whose allowedTopologies name zone z1
  capacity  a CSI driver with storageCapacity, CSIStorageCapacity too small
            in z3 and absent in z1: the pod goes to z2
  limit     n3's CSINode allows one volume of that driver, taken: a second
            claim of that class fits nowhere
  rwop      a ReadWriteOncePod claim in use: a second pod of it cannot run
            (ReadWriteOncePod is alpha in v1.24: the control plane and
            kube-scheduler run with its feature gate)
  timeout   a class nobody provisions: the pod waits in PreBind for
            bindTimeoutSeconds, then fails with the binding error (v1.24's
            text from kube-scheduler, v1.36's from ksched: V124_V136)

Compared: each pod's node, the claims' selected nodes and the PVs bound,
and the PodScheduled reason and message of pods that did not bind. A table
of both is printed; any difference fails the test.
Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from cluster_test import (Api, apply_rbac, cluster_up, cond,  # noqa: E402
                          without_dra,
                          k8s_scripts, node_obj, write)
from extender_compare_test import (kube_scheduler_bin,  # noqa: E402
                                   stop_kube_scheduler, tail)
from ksched_test import (check, fatal, keep_or_remove,  # noqa: E402
                         summary, wait_for)
from test_provisioner import Provisioner  # noqa: E402
import ksched_test  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
NODES = [("n1", "4", "z1"), ("n2", "8", "z1"), ("n3", "16", "z2"),
         ("n4", "32", "z3")]
PROVISIONERS = ["test.example.com", "cap.example.com"]
NS = "default"
BIND_TIMEOUT = 5
GATES = "--feature-gates=ReadWriteOncePod=true"

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
  pluginConfig:
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: %d
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
  plugins:
    multiPoint:
      enabled:
      - name: VolumeBinding
      - name: VolumeRestrictions
      - name: VolumeZone
      - name: NodeVolumeLimits
  pluginConfig:
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: %d
"""


# --- objects ----------------------------------------------------------------------


def sc(name, provisioner, wffc=True, topo_zones=None):
    o = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": name}, "provisioner": provisioner,
         "volumeBindingMode": "WaitForFirstConsumer" if wffc else
         "Immediate"}
    if topo_zones:
        o["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": ZONE, "values": topo_zones}]}]
    return o


def claim(name, cls, size="1Gi", volume=None, modes=None):
    spec = {"accessModes": modes or ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def pv(name, affinity_key, values, cls, size="1Gi", labels=None,
       local=False):
    spec = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": cls,
            "nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": affinity_key, "operator": "In",
                                       "values": values}]}]}}}
    if local:
        spec["local"] = {"path": "/mnt/" + name}
    else:
        spec["hostPath"] = {"path": "/tmp/" + name}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def pod_spec(claims):
    return {"schedulerName": "default-scheduler",
            "containers": [{"name": "c", "image": "pause:3.7",
                            "resources": {"requests": {"cpu": "1",
                                                       "memory": "1Gi"}}}],
            "volumes": [{"name": "v%d" % i,
                         "persistentVolumeClaim": {"claimName": c}}
                        for i, c in enumerate(claims)]}


def pod(name, claims):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"app": name}},
            "spec": pod_spec(claims)}


def statefulset(name, replicas, cls):
    spec = pod_spec([])
    spec["containers"][0]["volumeMounts"] = [{"name": "data",
                                              "mountPath": "/data"}]
    del spec["volumes"]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "serviceName": name,
                     "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": spec},
                     "volumeClaimTemplates": [{
                         "metadata": {"name": "data"},
                         "spec": {"accessModes": ["ReadWriteOnce"],
                                  "storageClassName": cls,
                                  "resources": {"requests": {
                                      "storage": "1Gi"}}}}]}}


CORE = "/api/v1"
STORAGE = "/apis/storage.k8s.io/v1"


def create(api, path, obj):
    api.must("POST", path, obj)


def setup_cluster(api):
    for name, cpu, zone in NODES:
        api.must("POST", CORE + "/nodes",
                 node_obj(name, cpu=cpu, memory="64Gi",
                          labels={ZONE: zone,
                                  "topology.kubernetes.io/region": "r1"}))
    for o in (sc("wffc", "test.example.com"),
              sc("local", "kubernetes.io/no-provisioner"),
              sc("topo", "test.example.com", topo_zones=["z1"]),
              sc("cap", "cap.example.com"),
              sc("never", "never.example.com")):
        create(api, STORAGE + "/storageclasses", o)
    create(api, STORAGE + "/csidrivers",
           {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "cap.example.com"},
            "spec": {"attachRequired": False, "storageCapacity": True}})
    create(api, STORAGE + "/csinodes",
           {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": "n3"},
            "spec": {"drivers": [{"name": "cap.example.com", "nodeID": "n3",
                                  "allocatable": {"count": 1}}]}})
    for name, zone, size in (("cap-z2", "z2", "10Gi"),
                             ("cap-z3", "z3", "500Mi")):
        create(api, STORAGE + "/namespaces/%s/csistoragecapacities" % NS,
               {"apiVersion": "storage.k8s.io/v1",
                "kind": "CSIStorageCapacity",
                "metadata": {"name": name, "namespace": NS},
                "storageClassName": "cap", "capacity": size,
                "nodeTopology": {"matchLabels": {ZONE: zone}}})


# --- deciding -------------------------------------------------------------------


def decided(api, name, alive, timeout=60):
    """('bound', node) or (reason, message) of PodScheduled=False."""
    path = CORE + "/namespaces/%s/pods/%s" % (NS, name)
    seen = {}

    def f():
        if not alive():
            return "exited"
        st, p = api.call("GET", path)
        if st != 200:
            return None
        seen["pod"] = p
        node = p["spec"].get("nodeName")
        if node:
            return ("bound", node)
        c = cond(p, "PodScheduled")
        if c and c.get("status") == "False" and c.get("message"):
            return (c.get("reason"), c["message"])
        return None
    r = wait_for("%s decided" % name, f, timeout, 0.1)
    if r == "exited":
        fatal("the scheduler exited while %s was pending" % name)
    if not r:
        r = ("timeout", json.dumps(cond(seen.get("pod", {}),
                                        "PodScheduled")))
    return r


def claim_state(api, name):
    st, c = api.call("GET", CORE + "/namespaces/%s/persistentvolumeclaims/%s"
                     % (NS, name))
    if st != 200:
        return ("absent",)
    ann = c["metadata"].get("annotations") or {}
    return (c.get("status", {}).get("phase"),
            ann.get("volume.kubernetes.io/selected-node", ""),
            c["spec"].get("volumeName", "")[:4])


def claim_bound(api, name, timeout=40):
    return wait_for("claim %s bound" % name,
                    lambda: claim_state(api, name)[0] == "Bound" or None,
                    timeout, 0.2)


def run_scenarios(api, alive, prov):
    out = {}

    def note(key, val):
        out[key] = val
        print("  %-22s %s" % (key, val), flush=True)

    # sts: provisioned on the pod's node, every pod bound.
    create(api, "/apis/apps/v1/namespaces/%s/statefulsets" % NS,
           statefulset("web", 3, "wffc"))
    for i in range(3):
        wait_for("web-%d created" % i, lambda i=i: api.call(
            "GET", CORE + "/namespaces/%s/pods/web-%d" % (NS, i))[0] == 200
            or None, 30, 0.2)
    # The StatefulSet controller creates its 3 pods within one second
    # (Parallel): which replica a scheduler takes first among equal
    # timestamps is not defined, for kube-scheduler as for ksched, so the
    # nodes are compared as a set, and each claim against its own pod.
    placed, follow = [], []
    for i in range(3):
        r = decided(api, "web-%d" % i, alive)
        placed.append(r[1] if r[0] == "bound" else "%s: %s" % r)
        c = "data-web-%d" % i
        claim_bound(api, c)
        st = claim_state(api, c)
        follow.append(st[0] == "Bound" and st[1] == placed[-1] and
                      st[2] == "pvc-")
    note("pods web-*", sorted(placed))
    note("claims web-*", "Bound, provisioned on their pod's node"
         if all(follow) else "NOT: %s" % follow)
    # local: n1's PV for the first, none for the second.
    create(api, CORE + "/persistentvolumes",
           pv("local-n1", "kubernetes.io/hostname", ["n1"], "local",
              local=True))
    for name in ("local-a", "local-b"):
        create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
               claim(name, "local"))
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("local-a",
                                                       ["local-a"]))
    note("pod local-a", decided(api, "local-a", alive))
    claim_bound(api, "local-a")
    note("claim local-a", claim_state(api, "local-a"))
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("local-b",
                                                       ["local-b"]))
    note("pod local-b", decided(api, "local-b", alive))
    # zonal: an Immediate claim bound beforehand to a PV in z2.
    create(api, CORE + "/persistentvolumes",
           pv("zonal", ZONE, ["z2"], "", labels={ZONE: "z2"}))
    create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
           claim("zonal", "", volume="zonal"))
    claim_bound(api, "zonal")
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("zonal-pod",
                                                       ["zonal"]))
    note("pod zonal-pod", decided(api, "zonal-pod", alive))
    # topology, capacity: provisioned where the class allows and there is
    # room.
    for name, cls in (("topo", "topo"), ("cap", "cap")):
        create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
               claim(name, cls))
        create(api, CORE + "/namespaces/%s/pods" % NS,
               pod(name + "-pod", [name]))
        note("pod %s-pod" % name, decided(api, name + "-pod", alive))
        claim_bound(api, name)
        note("claim " + name, claim_state(api, name))
    # limit: n3's CSINode allows one cap.example.com volume, which cap-pod
    # holds; another cap claim fits nowhere else (capacity).
    create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
           claim("cap2", "cap"))
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("cap2-pod", ["cap2"]))
    note("pod cap2-pod", decided(api, "cap2-pod", alive))
    # rwop: a ReadWriteOncePod claim in use by a bound pod.
    create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
           claim("solo", "wffc", modes=["ReadWriteOncePod"]))
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("solo-a", ["solo"]))
    note("pod solo-a", decided(api, "solo-a", alive))
    claim_bound(api, "solo")
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("solo-b", ["solo"]))
    note("pod solo-b", decided(api, "solo-b", alive))
    # timeout: nobody provisions "never"; PreBind gives up.
    create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
           claim("slow", "never"))
    t0 = time.time()
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("slow-pod", ["slow"]))
    r = decided(api, "slow-pod", alive, timeout=BIND_TIMEOUT + 40)
    note("pod slow-pod", r)
    note("slow-pod waited", "%s" % (time.time() - t0 >= BIND_TIMEOUT))
    note("claim slow", claim_state(api, "slow"))
    # gone: the claim is deleted while its pod waits in PreBind (the
    # pvc-protection finalizer keeps it, being deleted, while a pod uses
    # it).
    create(api, CORE + "/namespaces/%s/persistentvolumeclaims" % NS,
           claim("gone", "never"))
    create(api, CORE + "/namespaces/%s/pods" % NS, pod("gone-pod", ["gone"]))
    wait_for("gone: the scheduler selected a node", lambda: claim_state(
        api, "gone")[1:2] != ("",) or None, 30, 0.1)
    api.must("DELETE", CORE + "/namespaces/%s/persistentvolumeclaims/gone"
             % NS)
    note("pod gone-pod", decided(api, "gone-pod", alive,
                                 timeout=BIND_TIMEOUT + 40))
    check(not prov.errors, "the provisioner had no errors (%s)"
          % prov.errors[:3])
    return out


# --- the runs ----------------------------------------------------------------------


def start_controllers(controllers, d):
    r = subprocess.run([controllers, d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode != 0:
        fatal("controllers failed: " + r.stdout.decode(errors="replace"))


def run_kube_scheduler(up, down, controllers, exe, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-kube-scheduler"))
    proc = prov = None
    log = os.path.join(d, "kube-scheduler.log")
    try:
        start_controllers(controllers, d)
        api = Api(env, env["ADMIN_TOKEN"])
        setup_cluster(api)
        prov = Provisioner(api, PROVISIONERS).start()
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, CONFIG_KUBE % (os.path.join(d, "admin.kubeconfig"),
                                  BIND_TIMEOUT))
        with open(log, "w") as lf:
            proc = subprocess.Popen([exe, "--config", cfg, "--secure-port",
                                     "0", "-v=2", GATES], stdout=lf,
                                    stderr=lf)
        return run_scenarios(api, lambda: proc.poll() is None, prov)
    finally:
        if prov:
            prov.stop()
        if proc is not None:
            stop_kube_scheduler(proc)
        if ksched_test.failures:
            print("--- kube-scheduler log (tail) ---\n" + tail(log))
        subprocess.run([down, d])


def run_ksched(up, down, controllers, ksched, plugin_dir, tmp):
    d, env = cluster_up(up, os.path.join(tmp, "run-ksched"))
    srv = prov = None
    try:
        start_controllers(controllers, d)
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        setup_cluster(admin)
        prov = Provisioner(admin, PROVISIONERS).start()
        cfg = os.path.join(d, "scheduler.yaml")
        write(cfg, CONFIG_KSCHED % BIND_TIMEOUT)
        srv = ksched_test.Serve(ksched, [
            "--kubeconfig", os.path.join(d, "ksched.kubeconfig"),
            "--config", cfg, "--listen", "127.0.0.1:0",
            "--plugin-dir", plugin_dir])
        if not check(bool(srv.ready(60)), "ksched serve becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        return run_scenarios(admin, srv.alive, prov)
    finally:
        if prov:
            prov.stop()
        if srv is not None:
            rc = srv.stop()
            check(rc == 0, "ksched serve exits 0 on SIGTERM (got %s)" % rc)
            if ksched_test.failures:
                print("--- ksched log (tail) ---\n" +
                      "\n".join(srv.lines[-40:]))
        subprocess.run([down, d])


# Where v1.36's rules differ from v1.24's (README, Conformance): the text
# each scheduler must give. VolumeBinding's PreBind wait became a context
# deadline (wait.PollUntilContextTimeout) after v1.24.
V124_V136 = {
    "pod slow-pod": (
        ("SchedulerError", 'running PreBind plugin "VolumeBinding": binding '
         'volumes: timed out waiting for the condition'),
        ("SchedulerError", 'running PreBind plugin "VolumeBinding": binding '
         'volumes: context deadline exceeded')),
    # ReadWriteOncePod: v1.24 rejects at PreFilter (every node, unresolvable,
    # its own text); v1.36 at Filter, Unschedulable, in upstream #129145's
    # words, and the bound PV's hostname affinity leaves one node in
    # VolumeBinding's PreFilter result (the others absent: not helpful).
    "pod solo-b": (
        ("Unschedulable", "0/4 nodes are available: 4 node has pod using "
         "PersistentVolumeClaim with the same name and ReadWriteOncePod "
         "access mode. preemption: 0/4 nodes are available: 4 Preemption is "
         "not helpful for scheduling."),
        ("Unschedulable", "0/4 nodes are available: 1 node(s) unavailable "
         "due to PersistentVolumeClaim with ReadWriteOncePod access mode "
         "already in-use by another pod. preemption: 0/4 nodes are "
         "available: 1 No preemption victims found for incoming pod, 3 "
         "Preemption is not helpful for scheduling.")),
}


def compare(kube, ks):
    # compared without DynamicResources' PostFilter text (cluster_test.py)
    ks = {k: without_dra(v) for k, v in ks.items()}
    print("\n%-22s  %-40s  %s" % ("", "kube-scheduler", "ksched"))
    for key in kube:
        a, b = kube.get(key), ks.get(key)
        print("%-22s  %-40s  %s%s" % (key, str(a)[:40], str(b)[:40],
                                      "" if a == b else
                                      "   (v1.24 / v1.36)" if key in V124_V136
                                      else "   <-- differs"))
    for key in kube:
        a, b = kube.get(key), ks.get(key)
        if key.startswith("pod "):
            check(a is not None and a[0] != "timeout",
                  "kube-scheduler decided %s (%s)" % (key, a))
        if key in V124_V136:
            v124, v136 = V124_V136[key]
            check(a == v124 and b == v136, "%s: v1.24's text from "
                  "kube-scheduler, v1.36's from ksched (kube-scheduler: %s; "
                  "ksched: %s)" % (key, a, b))
            continue
        check(a == b, "%s: ksched as kube-scheduler (kube-scheduler: %s; "
              "ksched: %s)" % (key, a, b))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    controllers = os.path.join(os.path.dirname(up), "controllers")
    exe = kube_scheduler_bin(os.path.dirname(up))
    ksched_test.QUIET_OK = True
    # ReadWriteOncePod is alpha in v1.24: on for the API server, the
    # controllers and kube-scheduler (v1.36 has it GA, as ksched).
    for var in ("APISERVER_ARGS", "KCM_ARGS"):
        os.environ[var] = (os.environ.get(var, "") + " " + GATES).strip()
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="ksched-volcmp-")
    try:
        only = os.environ.get("VOLCMP_ONLY", "")
        kube = ks = {}
        if only != "ksched":
            print("run 1: kube-scheduler", flush=True)
            kube = run_kube_scheduler(up, down, controllers, exe, tmp)
        if only != "kube":
            print("run 2: ksched serve", flush=True)
            ks = run_ksched(up, down, controllers, ksched, plugin_dir, tmp)
        if not only:
            compare(kube, ks)
        print("\n%.0f s in all" % (time.time() - t0))
    finally:
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
