#!/usr/bin/env python3
"""DynamicResources in cluster mode, on a real kube-apiserver (v1.24): the
server does not serve resource.k8s.io, so the test installs
CustomResourceDefinitions for the four kinds under that group (the
api-approved.kubernetes.io annotation allows a *.k8s.io group; claims get
a status subresource) and grants ksched's user what system:kube-scheduler
grants on v1.34 and later.

  - serve --kubeconfig with DynamicResources enabled becomes ready: its
    informers list and watch ResourceSlices, DeviceClasses, ResourceClaims
    and ResourceClaimTemplates;
  - a pod without claims is scheduled as usual (PreFilter skips it).

A v1.24 server drops a pod's spec.resourceClaims (the field is newer), so
the whole chain is tested in `ksched schedule` (dra-schedule) and the
embedded serve (dra-serve).

Usage: dra_cluster.py KSCHED PLUGIN_DIR K8S_DIR
Skipped (exit 77) when the shared k8s folder or etcd is absent.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
from ksched_test import check, fatal, keep_or_remove, summary, wait_for  # noqa
from cluster_test import (Api, Serve, apply_rbac, cluster_up,  # noqa: E402
                          k8s_scripts, node_obj, pod_obj, write)

DRV = "gpu.example.com"
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ksched
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResources
"""

KINDS = [("resourceslices", "ResourceSlice", "Cluster", False),
         ("deviceclasses", "DeviceClass", "Cluster", False),
         ("resourceclaims", "ResourceClaim", "Namespaced", True),
         ("resourceclaimtemplates", "ResourceClaimTemplate", "Namespaced",
          False)]


def crd(plural, kind, scope, status):
    version = {"name": "v1", "served": True, "storage": True,
               "schema": {"openAPIV3Schema": {
                   "type": "object",
                   "x-kubernetes-preserve-unknown-fields": True}}}
    if status:
        version["subresources"] = {"status": {}}
    return {"apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": plural + ".resource.k8s.io",
                         "annotations": {
                             "api-approved.kubernetes.io":
                             "https://github.com/kubernetes/enhancements/"
                             "pull/4381"}},
            "spec": {"group": "resource.k8s.io", "scope": scope,
                     "names": {"plural": plural, "kind": kind,
                               "singular": kind.lower()},
                     "versions": [version]}}


def established(admin, name):
    st, doc = admin.call("GET", "/apis/apiextensions.k8s.io/v1/"
                         "customresourcedefinitions/" + name)
    if st != 200:
        return None
    for c in doc.get("status", {}).get("conditions", []):
        if c.get("type") == "Established" and c.get("status") == "True":
            return True
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-dra-")
    d, env = cluster_up(up, tmp)
    srv = None
    try:
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)  # resource.k8s.io included, as since v1.34
        for k in KINDS:
            admin.must("POST", "/apis/apiextensions.k8s.io/v1/"
                       "customresourcedefinitions", crd(*k))
        for k in KINDS:
            check(wait_for("CRD " + k[0], lambda k=k: established(
                admin, k[0] + ".resource.k8s.io"), 60) is True,
                "CRD %s.resource.k8s.io established" % k[0])
        admin.must("POST", "/api/v1/nodes", node_obj("n1"))
        admin.must("POST", "/apis/resource.k8s.io/v1/deviceclasses",
                   {"apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceClass", "metadata": {"name": DRV},
                    "spec": {"selectors": [{"cel": {
                        "expression": 'device.driver == "%s"' % DRV}}]}})
        admin.must("POST", "/apis/resource.k8s.io/v1/resourceslices",
                   {"apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": "n1-gpu"},
                    "spec": {"driver": DRV, "nodeName": "n1",
                             "pool": {"name": "n1", "generation": 1,
                                      "resourceSliceCount": 1},
                             "devices": [{"name": "gpu-0"}]}})
        admin.must("POST", "/apis/resource.k8s.io/v1/namespaces/default/"
                   "resourceclaims",
                   {"apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim", "metadata": {"name": "c1"},
                    "spec": {"devices": {"requests": [
                        {"name": "gpu",
                         "exactly": {"deviceClassName": DRV}}]}}})
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--config", cfg,
                             "--kubeconfig",
                             os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(90)),
                     "serve --kubeconfig with DynamicResources becomes "
                     "ready: the four resource.k8s.io informers synced"):
            fatal("\n".join(srv.lines[-30:]))
        check(not any("does not serve" in l or " 403" in l
                      for l in srv.lines),
              "no informer was refused (404 or 403)")
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   pod_obj("plain"))

        def node_of():
            st, doc = admin.call("GET",
                                 "/api/v1/namespaces/default/pods/plain")
            return doc.get("spec", {}).get("nodeName") if st == 200 else None
        check(wait_for("plain bound", node_of, 60) == "n1",
              "a pod without claims is scheduled to n1")
    finally:
        if srv is not None:
            srv.stop()
        subprocess.run([down, d])
        keep_or_remove(tmp, [srv] if srv else [])
    return summary()


if __name__ == "__main__":
    sys.exit(main())
