#!/usr/bin/env python3
"""VolumeZone in cluster mode, on a real kube-apiserver: the stores of the
resources plugins declare (SDK ABI 1.3) are filled by informers.

Usage: volumezone_cluster.py KSCHED PLUGIN_DIR CRD_FIXTURE_DIR K8S_DIR

  - a plugin that declares a resource the server does not serve (the
    fixture WidgetReader, widgets.example.com/v1, no CRD installed): only
    loaded from a plugin directory, it costs nothing (serve is ready, no
    informer, no RBAC needed); enabled in a profile, serve stays not
    ready, /readyz and the log say which resource and why;
  - with VolumeZone enabled (and the default profile's VolumeBinding, so
    the real PV controller binds the claims and a test provisioner serves
    the WaitForFirstConsumer class): a pod whose claim is bound to a
    volume in zone z1 lands on the z1 node; a claim of a
    WaitForFirstConsumer class does not constrain VolumeZone; a volume in a zone no node has gives
    PodScheduled=False with upstream's message; a volume and claim
    created after ksched started (the watch) are used, and their add
    event queues the pod they were missing for again.

Skipped (exit 77) when the shared k8s folder or etcd is absent.
Standard library only.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
from ksched_test import check, fatal, keep_or_remove, summary, wait_for  # noqa
from cluster_test import (Api, Serve, apply_rbac, cluster_up,  # noqa: E402
                          k8s_scripts, node_obj, pod_obj)
from test_provisioner import Provisioner  # noqa: E402

ZONE = "topology.kubernetes.io/zone"

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: ksched
  plugins:
    multiPoint:
      enabled:
      - name: VolumeZone
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def pv(name, zone):
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {ZONE: zone}},
            "spec": {"capacity": {"storage": "1Gi"},
                     "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/tmp/" + name}}}


def pvc(name, volume=None, sc=None):
    spec = {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    if sc:
        spec["storageClassName"] = sc
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def claim_pod(name, claim):
    p = pod_obj(name)
    p["spec"]["volumes"] = [{"name": "data",
                             "persistentVolumeClaim": {"claimName": claim}}]
    return p


def node_of(admin, name):
    doc = admin.must("GET", "/api/v1/namespaces/default/pods/" + name)
    return doc["spec"].get("nodeName") or None


def sched_condition(admin, name):
    doc = admin.must("GET", "/api/v1/namespaces/default/pods/" + name)
    for c in doc.get("status", {}).get("conditions", []):
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message", "")
    return None


def claim_phase(admin, name):
    doc = admin.must("GET", "/api/v1/namespaces/default/"
                     "persistentvolumeclaims/" + name)
    return doc.get("status", {}).get("phase")


def grant_widgets(admin):
    """What a deployment of a plugin reading a custom resource grants: list
    and watch it (without this the server answers 403 before it looks for
    the resource)."""
    admin.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole", "metadata": {"name": "ksched-widgets"},
                "rules": [{"apiGroups": ["example.com"],
                           "resources": ["widgets"],
                           "verbs": ["get", "list", "watch"]}]})
    admin.must("POST",
               "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "ksched-widgets"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole", "name": "ksched-widgets"},
                "subjects": [{"kind": "User", "name": "ksched",
                              "apiGroup": "rbac.authorization.k8s.io"}]})


WIDGETS = CONFIG + "      - name: WidgetReader\n"


def scenario_crd_missing(ksched, plugin_dir, crd_dir, cfg, d):
    # Loaded (its plugin directory is searched) but enabled nowhere: its
    # resource gets no informer.
    srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--plugin-dir", crd_dir,
                         "--config", cfg, "--kubeconfig",
                         os.path.join(d, "ksched.kubeconfig")])
    try:
        check(bool(srv.ready(60)), "a plugin only loaded needs no informer: "
                                   "serve is ready")
        check(not any("widgets.example.com" in l for l in srv.lines),
              "and nothing watches its resource")
    finally:
        srv.stop()
    wcfg = cfg + ".widgets"
    write(wcfg, WIDGETS)
    srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--plugin-dir", crd_dir,
                         "--config", wcfg, "--kubeconfig",
                         os.path.join(d, "ksched.kubeconfig")])
    try:
        found = srv.log_has(r"does not serve widgets\.example\.com \(404 on "
                            r"/apis/example\.com/v1/widgets\)", 30)
        check(bool(found), "a declared resource the server does not serve "
                           "is named in the log")
        st, body = srv.get("/readyz")
        check(st == 503 and "widgets.example.com" in body and
              "CustomResourceDefinition" in body,
              "/readyz is 503 and says which resource (%d %s)"
              % (st, body.strip()[:300]))
    finally:
        srv.stop()


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, crd_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-volzone-")
    d, env = cluster_up(up, tmp)
    srv = prov = None
    try:
        # The PV controller binds the pre-bound claims, and a provisioner
        # serves the WaitForFirstConsumer class, as in a real cluster:
        # VolumeBinding (default profile) needs bound claims bound for real.
        r = subprocess.run([os.path.join(os.path.dirname(up), "controllers"),
                            d, "persistentvolume-binder,pvc-protection"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            fatal("controllers: " + r.stdout.decode(errors="replace"))
        admin = Api(env, env["ADMIN_TOKEN"])
        prov = Provisioner(admin, ["x.example"]).start()
        apply_rbac(admin)
        grant_widgets(admin)
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        scenario_crd_missing(ksched, plugin_dir, crd_dir, cfg, d)

        for n, z in (("a1", "z1"), ("b1", "z2")):
            admin.must("POST", "/api/v1/nodes", node_obj(n, labels={ZONE: z}))
        admin.must("POST", "/apis/storage.k8s.io/v1/storageclasses",
                   {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                    "metadata": {"name": "late"}, "provisioner": "x.example",
                    "volumeBindingMode": "WaitForFirstConsumer"})
        for name, zone in (("pv-a", "z1"), ("pv-x", "z3")):
            admin.must("POST", "/api/v1/persistentvolumes", pv(name, zone))
        for c in (pvc("data-a", volume="pv-a"), pvc("data-x", volume="pv-x"),
                  pvc("later", sc="late")):
            admin.must("POST", "/api/v1/namespaces/default/"
                       "persistentvolumeclaims", c)

        # The pre-bound claims must be Bound before their pods exist: a
        # claim the PV controller has not bound yet is an "unbound
        # immediate" claim, and VolumeBinding (as upstream) rejects the pod
        # for that first, before VolumeZone looks at the zone.
        for name in ("data-a", "data-x"):
            phase = wait_for("%s Bound" % name,
                             lambda n=name: claim_phase(admin, n) == "Bound",
                             60)
            if not check(phase, "claim %s is Bound by the PV controller"
                         % name):
                fatal("claim %s: phase %r" % (name, claim_phase(admin, name)))
        extra = os.path.join(tmp, "extra-plugins")
        os.mkdir(extra)
        srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--plugin-dir", extra,
                             "--config", cfg, "--kubeconfig",
                             os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(60)), "serve --kubeconfig becomes ready "
                                          "with the volume informers"):
            fatal("\n".join(srv.lines[-30:]))
        for p in (claim_pod("a-0", "data-a"), claim_pod("a-1", "data-a"),
                  claim_pod("w-0", "later"), claim_pod("x-0", "data-x")):
            admin.must("POST", "/api/v1/namespaces/default/pods", p)
        for name in ("a-0", "a-1"):
            got = wait_for("%s bound" % name,
                           lambda n=name: node_of(admin, n), 60)
            check(got == "a1", "%s (claim bound to a z1 volume) is on a1 "
                               "(got %r)" % (name, got))
        got = wait_for("w-0 bound", lambda: node_of(admin, "w-0"), 60)
        check(got in ("a1", "b1"), "w-0 (WaitForFirstConsumer claim) is "
                                   "bound (got %r)" % got)
        msg = wait_for("x-0 unschedulable",
                       lambda: sched_condition(admin, "x-0"), 60)
        check(msg is not None and msg.startswith(
            "0/2 nodes are available: 2 node(s) had no available volume "
            "zone."), "x-0: PodScheduled=False with upstream's message "
                      "(%r)" % msg)
        check(node_of(admin, "x-0") is None, "x-0 stays unbound")

        # A pod whose claim does not exist yet is rejected; the claim and
        # its volume created afterwards reach the stores by the watch, and
        # the claim's add event (KS_RES_OBJECT, VolumeZone's hint) queues
        # the pod again: bound well before the 5-minute flush.
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   claim_pod("b-0", "data-b"))
        msg = wait_for("b-0 unschedulable",
                       lambda: sched_condition(admin, "b-0"), 60)
        check(msg is not None and msg.startswith(
            "0/2 nodes are available: persistentvolumeclaim \"data-b\" "
            "not found."), "b-0: rejected for its missing claim (%r)" % msg)
        admin.must("POST", "/api/v1/persistentvolumes", pv("pv-b", "z2"))
        admin.must("POST", "/api/v1/namespaces/default/"
                   "persistentvolumeclaims", pvc("data-b", volume="pv-b"))
        got = wait_for("b-0 bound", lambda: node_of(admin, "b-0"), 120)
        check(got == "b1", "b-0 (its claim and a z2 volume created later) "
                           "is on b1 (got %r)" % got)
        st, text = srv.get("/metrics")
        if not check(st == 200 and 'event="PersistentVolumeClaimAdd"' in text,
                     "/metrics counts the PersistentVolumeClaimAdd event"):
            print("\n".join(l for l in text.splitlines()
                            if "event=" in l and "_count" in l))
        # A plugin that declares a new resource arrives by a reload that
        # also enables it: its store gets an informer (here: not served, so
        # the 404 is said).
        shutil.copy(os.path.join(crd_dir, "widgetreader.so"),
                    os.path.join(extra, ".widgetreader.so.tmp"))
        os.rename(os.path.join(extra, ".widgetreader.so.tmp"),
                  os.path.join(extra, "widgetreader.so"))
        write(cfg + ".tmp", WIDGETS)
        os.rename(cfg + ".tmp", cfg)
        check(bool(srv.log_has(r"does not serve widgets\.example\.com \(404",
                               30)),
              "a resource declared by a plugin a reload loaded gets an "
              "informer (its 404 is reported)")
        rc = srv.stop()
        check(rc == 0, "serve exits 0 on SIGTERM (got %s)" % rc)
        bad = [l for l in srv.lines if "Sanitizer" in l or
               "runtime error" in l]
        check(not bad, "no sanitizer report from serve (%s)" % bad[:3])
        srv = None
    finally:
        if prov is not None:
            prov.stop()
        if srv is not None:
            srv.stop()
            print("\n".join(srv.lines[-40:]))
        subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
