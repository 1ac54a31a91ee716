#!/usr/bin/env python3
"""DynamicResources in the embedded `serve`: slices, a class and claims
created through the embedded API, pods with claims; the plugin's writes
applied to the claims' store.

  n1  no devices; n2 one GPU; n3 one GPU already allocated to the claim
      "taken" (its status.allocation set through the API)
  p1  claim c1 (one GPU): bound to n2, the only node with a free device;
      c1 then has the finalizer, status.allocation (n2's gpu-0, a node
      selector for n2) and reservedFor p1 (with its uid)
  p2  claim c2: no free device; deallocating "taken" (status.allocation
      removed through the API, upstream's "claim deallocated" hint) frees
      n3's GPU and p2 is bound there
  p3  a claim of a class that does not exist: upstream's "device class
      ... does not exist" (PreFilter)
  p5  after n2's pool is republished with generation 2 and a new device
      (gpu-9), a new claim gets it on n2
  p6  a claim allocated for a node that is gone and reserved for nobody:
      PostFilter clears its allocation (upstream's deallocation), the
      claim's update retries the pod, and it gets n1's GPU
  p4  a claim that does not exist: PreEnqueue keeps the pod waiting with
      upstream's not-found text

Usage: dra_serve.py KSCHED PLUGIN_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test  # noqa: E402
from ksched_test import check, fatal, wait_for  # noqa: E402

DRV = "gpu.example.com"
API = "/apis/resource.k8s.io/v1"
CLAIMS = API + "/namespaces/default/resourceclaims"
MERGE = "application/merge-patch+json"
FIN = "resource.kubernetes.io/delete-protection"

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResources
"""


def call(srv, method, path, body=None, ctype="application/json"):
    c = srv.conn(10)
    try:
        c.request(method, path,
                  body if isinstance(body, str) or body is None
                  else json.dumps(body), {"Content-Type": ctype})
        r = c.getresponse()
        text = r.read().decode()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text
    except OSError:
        return 0, None
    finally:
        c.close()


def node(name):
    return {"metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def rslice(node_name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node_name + "-gpu"},
            "spec": {"driver": DRV, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1,
                              "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {
                         "model": {"string": "a100"}}}]}}


def claim(name, cls="gpu.example.com"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": cls}}]}}}


def pod(name, claim_name):
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x"}],
                     "resourceClaims": [{"name": "gpu",
                                         "resourceClaimName": claim_name}]}}


def queue_has(srv, text):
    """The pending pods' FitErrors (/debug/queue) say text."""
    st, doc = call(srv, "GET", "/debug/queue")
    return True if st == 200 and text in json.dumps(doc) else None


def bound_node(srv, name):
    st, doc = call(srv, "GET", "/api/v1/namespaces/default/pods/" + name)
    return doc.get("spec", {}).get("nodeName") if st == 200 else None


def run(srv):
    for n in ("n1", "n2", "n3"):
        check(call(srv, "POST", "/api/v1/nodes", node(n))[0] == 201,
              "node %s created" % n)
    st, cls = call(srv, "POST", API + "/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {
            "expression": 'device.driver == "%s"' % DRV}}]}})
    check(st == 201, "DeviceClass created (%s %s)" % (st, cls))
    for n in ("n2", "n3"):
        st, doc = call(srv, "POST", API + "/resourceslices", rslice(n))
        check(st == 201, "ResourceSlice for %s created (%s %s)"
              % (n, st, doc))
    check(call(srv, "POST", CLAIMS, claim("taken"))[0] == 201,
          "claim 'taken' created")
    st, doc = call(srv, "PATCH", CLAIMS + "/taken/status", {"status": {
        "allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRV, "pool": "n3",
             "device": "gpu-0"}]}}}}, MERGE)
    check(st == 200, "'taken' allocated n3's gpu-0 (%s %s)" % (st, doc))
    st, c1 = call(srv, "POST", CLAIMS, claim("c1"))
    check(st == 201, "claim c1 created")
    st, p1 = call(srv, "POST", "/api/v1/namespaces/default/pods",
                  pod("p1", "c1"))
    check(st == 201, "pod p1 created (%s %s)" % (st, p1))
    check(wait_for("p1 bound", lambda: bound_node(srv, "p1"), 30) == "n2",
          "p1 is bound to n2, the only node with a free device")
    st, c1 = call(srv, "GET", CLAIMS + "/c1")
    want_alloc = {"devices": {"results": [
        {"request": "gpu", "driver": DRV, "pool": "n2", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}
    status = c1.get("status", {}) if st == 200 else {}
    check(status.get("allocation") == want_alloc,
          "c1's status.allocation in the store: %s" % status)
    check(status.get("reservedFor") == [
        {"resource": "pods", "name": "p1",
         "uid": p1.get("metadata", {}).get("uid")}],
        "c1 is reserved for p1 (%s)" % status.get("reservedFor"))
    check(FIN in c1.get("metadata", {}).get("finalizers", []),
          "c1 has the finalizer %s" % FIN)

    check(call(srv, "POST", CLAIMS, claim("c2"))[0] == 201,
          "claim c2 created")
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p2", "c2"))[0] == 201, "pod p2 created")
    check(wait_for("p2 unschedulable",
                   lambda: queue_has(srv, "cannot allocate all claims"), 30),
          "p2 is unschedulable: no free device")
    check(bound_node(srv, "p2") is None, "p2 is not bound")
    st, doc = call(srv, "PATCH", CLAIMS + "/taken/status",
                   {"status": {"allocation": None}}, MERGE)
    check(st == 200, "'taken' deallocated (%s)" % st)
    check(wait_for("p2 bound", lambda: bound_node(srv, "p2"), 30) == "n3",
          "once n3's GPU is free, p2 is bound to n3")

    check(call(srv, "POST", CLAIMS, claim("c3", "fpga.example.com"))[0]
          == 201, "claim c3 created, of a class that does not exist")
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p3", "c3"))[0] == 201, "pod p3 created")
    check(wait_for("p3's class message",
                   lambda: queue_has(srv, "request gpu: device class "
                                     "fpga.example.com does not exist"), 30),
          "p3: upstream's 'device class ... does not exist'")
    # the driver republishes n2's pool with a new generation and a new
    # device: the old gpu-0 (c1's) is gone from the pool, gpu-9 is free
    st, doc = call(srv, "PATCH", API + "/resourceslices/n2-gpu", {
        "spec": {"pool": {"name": "n2", "generation": 2,
                          "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-9", "attributes": {
                     "model": {"string": "a100"}}}]}}, MERGE)
    check(st == 200, "n2's slice republished with generation 2 (%s)" % st)
    check(call(srv, "POST", CLAIMS, claim("c5"))[0] == 201,
          "claim c5 created")
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p5", "c5"))[0] == 201, "pod p5 created")
    check(wait_for("p5 bound", lambda: bound_node(srv, "p5"), 30) == "n2",
          "p5 is bound to n2, on the new generation's device")
    st, c5 = call(srv, "GET", CLAIMS + "/c5")
    got = (c5.get("status", {}).get("allocation", {}).get("devices", {})
           .get("results", []) if st == 200 else [])
    check([r.get("device") for r in got] == ["gpu-9"],
          "c5 got gpu-9 (%s)" % got)
    # PostFilter: a claim allocated for a node that is gone, reserved for
    # nobody; the pod fits nowhere with it, so the plugin clears the
    # allocation, and the claim's update retries the pod, which then gets
    # n1's new GPU
    st, doc = call(srv, "POST", API + "/resourceslices", rslice("n1"))
    check(st == 201, "a ResourceSlice for n1 created (%s)" % st)
    check(call(srv, "POST", CLAIMS, claim("stale"))[0] == 201,
          "claim 'stale' created")
    st, doc = call(srv, "PATCH", CLAIMS + "/stale/status", {"status": {
        "allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRV, "pool": "n9",
             "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": ["n9"]}]}]}}}}, MERGE)
    check(st == 200, "'stale' allocated on n9, a node that is gone")
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p6", "stale"))[0] == 201, "pod p6 created")
    check(wait_for("p6 bound", lambda: bound_node(srv, "p6"), 30) == "n1",
          "PostFilter deallocated 'stale' and p6 is bound to n1")
    st, stale = call(srv, "GET", CLAIMS + "/stale")
    got = (stale.get("status", {}).get("allocation", {}) if st == 200
           else {})
    check([r.get("pool") for r in got.get("devices", {}).get("results", [])]
          == ["n1"], "'stale' is allocated again, on n1 (%s)" % got)
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p4", "c4"))[0] == 201, "pod p4 created")
    check(wait_for("p4 gated",
                   lambda: queue_has(srv, 'resourceclaim.resource.k8s.io '
                                     '\\"c4\\" not found'), 30),
          "p4 waits for its claim (PreEnqueue: upstream's not-found text)")
    check(bound_node(srv, "p3") is None, "p3 is not bound")


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugins = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-dra-")
    cfg = os.path.join(tmp, "config.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    srv = ksched_test.Serve(ksched, ["--embedded", "--listen",
                                     "127.0.0.1:0", "--config", cfg,
                                     "--plugin-dir", plugins,
                                     "--no-default-plugin-path"])
    try:
        run(srv)
    finally:
        check(srv.stop() == 0, "serve stops cleanly")
        os.unlink(cfg)
        os.rmdir(tmp)
    print("%d check(s) failed" % len(ksched_test.failures)
          if ksched_test.failures else "all checks passed")
    return 1 if ksched_test.failures else 0


if __name__ == "__main__":
    sys.exit(main())
