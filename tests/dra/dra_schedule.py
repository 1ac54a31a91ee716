#!/usr/bin/env python3
"""DynamicResources end to end through `ksched schedule` (SDK ABI 1.5's pod
claims, 1.3's stores, 1.4's record mode): ResourceSlices, a DeviceClass,
claims the test makes from a ResourceClaimTemplate (as the resourceclaim
controller would: generated name, the pod as controller owner, the pod's
status.resourceClaimStatuses), and pods; the claim writes recorded under
`requests`.

  nodes   n0 without devices, n1 with one GPU (a100), n2 with two (a100,
          PCIe roots r0, r0), n3 with two (h100, roots r0 and r1)
  g0..g4  one GPU each from the template: five GPUs, five pods, one per
          device (n0 never; n1 at most one pod, n2 and n3 at most two)
  g5      a sixth: no device left anywhere (upstream's FitError)
  pair    a claim for two GPUs on one PCIe root (matchAttribute): only n2
          has two on one root -- but n2's GPUs go to g0..g4 first, so it
          is scheduled first (created first) and takes n2
  nogen   a template claim the controller has not made yet: PreEnqueue's
          "ResourceClaim not created yet" (and, alone, a claim another pod
          controls, a claim being deleted)
  fa      firstAvailable (h100, then any): the allocation names the
          subrequest
  s0, s1  one claim shared by two pods (resourceClaimName): both on the
          node of its one allocation, each reserving it

Usage: dra_schedule.py KSCHED PLUGIN_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

KSCHED, PLUGIN_DIR = sys.argv[1:3]
DRV = "gpu.example.com"
FIN = "resource.kubernetes.io/delete-protection"


def node(name):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi",
                                       "pods": "110"}}}


def gpu(name, model, root):
    return {"name": name, "attributes": {
        "model": {"string": model},
        "pcieRoot": {"string": root},
        DRV + "/memory": {"int": 80}},
        "capacity": {"memory": {"value": "80Gi"}}}


def rslice(node_name, devices, gen=1):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s" % (node_name, DRV),
                         "uid": "slice-" + node_name,
                         "resourceVersion": "1"},
            "spec": {"driver": DRV, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": gen,
                              "resourceSliceCount": 1},
                     "devices": devices}}


CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": "gpu.example.com", "uid": "class-gpu",
                      "resourceVersion": "1"},
         "spec": {"selectors": [{"cel": {"expression":
                                         'device.driver == "%s"' % DRV}}]}}

ONE_GPU = {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}

PAIR = {"devices": {"requests": [
    {"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com",
                                 "allocationMode": "ExactCount",
                                 "count": 2}}],
    "constraints": [{"requests": ["gpus"],
                     "matchAttribute": DRV + "/pcieRoot"}]}}

FIRST_AVAILABLE = {"devices": {"requests": [
    {"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu.example.com",
         "selectors": [{"cel": {"expression":
                                'device.attributes["%s"].model == "h100"'
                                % DRV}}]},
        {"name": "any", "deviceClassName": "gpu.example.com"}]}]}}

TEMPLATES = {"one-gpu": ONE_GPU, "pair": PAIR, "fa": FIRST_AVAILABLE}


def template(name, spec):
    return {"apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default",
                         "uid": "tmpl-" + name},
            "spec": {"spec": spec}}


def pod_and_claim(name, tmpl, make_claim=True):
    """A pod using `tmpl`, and the claim the controller makes for it."""
    uid = "uid-" + name
    claim_name = "%s-gpu-x7k2p" % name
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "uid": uid},
           "spec": {"containers": [{"name": "c", "image": "cuda",
                                    "resources": {"claims": [
                                        {"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu",
                                        "resourceClaimTemplateName": tmpl}]}}
    if not make_claim:
        return [pod]
    pod["status"] = {"resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": claim_name}]}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": claim_name, "namespace": "default",
                          "uid": "claim-" + name, "resourceVersion": "5",
                          "annotations": {
                              "resource.kubernetes.io/pod-claim-name":
                              "gpu"},
                          "ownerReferences": [{
                              "apiVersion": "v1", "kind": "Pod",
                              "name": name, "uid": uid,
                              "controller": True,
                              "blockOwnerDeletion": True}]},
             "spec": TEMPLATES[tmpl]}
    return [claim, pod]


def cluster():
    items = [node("n0"), node("n1"), node("n2"), node("n3"),
             rslice("n1", [gpu("gpu-0", "a100", "r0")]),
             rslice("n2", [gpu("gpu-0", "a100", "r0"),
                           gpu("gpu-1", "a100", "r0")]),
             rslice("n3", [gpu("gpu-0", "h100", "r0"),
                           gpu("gpu-1", "h100", "r1")]),
             CLASS]
    items += [template(n, s) for n, s in TEMPLATES.items()]
    items += pod_and_claim("pair", "pair")
    for i in range(6):
        items += pod_and_claim("g%d" % i, "one-gpu")
    items += pod_and_claim("nogen", "one-gpu", make_claim=False)
    return {"apiVersion": "v1", "kind": "List", "items": items}


CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResources
"""


def run(items, extra=(), fmt="json", config=CONFIG):
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "config.yaml")
        cl = os.path.join(d, "cluster.json")
        with open(cfg, "w") as f:
            f.write(config)
        with open(cl, "w") as f:
            json.dump(items, f)
        return subprocess.run([KSCHED, "schedule", "--cluster", cl,
                               "--config", cfg, "--plugin-dir", PLUGIN_DIR,
                               "--deterministic", "-o", fmt] + list(extra),
                              capture_output=True, text=True, timeout=120)


def main():
    ok = True
    items = cluster()
    r = run(items)
    if r.returncode not in (0, 3):
        print("FAIL ksched exited %d: %s" % (r.returncode, r.stderr))
        return 1
    out = json.loads(r.stdout)
    got = {b["name"]: b["node"] for b in out["bindings"]}
    msgs = {u["name"]: u["message"].split(" preemption:")[0].rstrip(",")
            for u in out["unschedulable"]}
    # pair: the only two GPUs on one root are n2's
    if got.get("pair") != "n2":
        print("FAIL pair on %r, want n2" % got.get("pair"))
        ok = False
    # g0..g4: the five other GPUs... but only three are left (n1's and
    # n3's two): g0..g2 placed there, g3..g5 and nogen not
    per_node = {}
    for name, n in got.items():
        if name.startswith("g"):
            per_node[n] = per_node.get(n, 0) + 1
    if per_node != {"n1": 1, "n3": 2}:
        print("FAIL one-GPU pods per node %r (bindings %r)" % (per_node, got))
        ok = False
    want_unsched = {"g3", "g4", "g5", "nogen"}
    if set(msgs) != want_unsched:
        print("FAIL unschedulable %r, want %r" % (sorted(msgs),
                                                   sorted(want_unsched)))
        ok = False
    fit = msgs.get("g5", "")
    # DynamicResources' PostFilter (before DefaultPreemption, as upstream)
    if fit != ("0/4 nodes are available: 4 cannot allocate all claims. "
               "still not schedulable"):
        print("FAIL g5's FitError %r" % fit)
        ok = False
    if "ResourceClaim not created yet" not in msgs.get("nogen", ""):
        print("FAIL nogen's message %r" % msgs.get("nogen"))
        ok = False
    # the writes: per allocated claim a finalizer PATCH and a status PATCH
    reqs = out.get("requests", [])
    by_claim = {}
    for q in reqs:
        if q["plugin"] != "DynamicResources":
            continue
        by_claim.setdefault(q["path"].split("/")[7], []).append(q)
    for name, n in got.items():
        claim = "%s-gpu-x7k2p" % name
        qs = by_claim.get(claim, [])
        if len(qs) != 2:
            print("FAIL %s: %d requests for %s" % (name, len(qs), claim))
            ok = False
            continue
        fin, st = qs
        base = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/"
        want_fin = {"metadata": {"uid": "claim-" + name,
                                 "resourceVersion": "5",
                                 "finalizers": [FIN]}}
        if (fin["method"], fin["path"], fin["contentType"],
                json.loads(fin["body"])) != (
                "PATCH", base + claim, "application/merge-patch+json",
                want_fin):
            print("FAIL %s finalizer request %r" % (name, fin))
            ok = False
        body = json.loads(st["body"])
        alloc = body.get("status", {}).get("allocation", {})
        results = alloc.get("devices", {}).get("results", [])
        want_sel = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [n]}]}]}
        if (st["path"] != base + claim + "/status" or
                body.get("metadata") != {"uid": "claim-" + name} or
                body["status"].get("reservedFor") != [
                    {"resource": "pods", "name": name,
                     "uid": "uid-" + name}] or
                alloc.get("nodeSelector") != want_sel or
                not results or any(x["pool"] != n or x["driver"] != DRV
                                   for x in results)):
            print("FAIL %s status request %s" % (name, json.dumps(st)))
            ok = False
        if name == "pair" and [x["device"] for x in results] != [
                "gpu-0", "gpu-1"]:
            print("FAIL pair's devices %r" % results)
            ok = False
    used = set()
    for name, n in got.items():
        for q in by_claim.get("%s-gpu-x7k2p" % name, [])[1:]:
            for x in json.loads(q["body"])["status"]["allocation"][
                    "devices"]["results"]:
                key = (x["pool"], x["device"])
                if key in used:
                    print("FAIL device %r allocated twice" % (key,))
                    ok = False
                used.add(key)

    # PreEnqueue's other messages: a template's claim controlled by
    # another pod, a claim being deleted
    pe = [i for i in cluster()["items"]
          if i["kind"] not in ("Pod", "ResourceClaim")]
    notmine = pod_and_claim("notmine", "one-gpu")
    notmine[0]["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    deleting = pod_and_claim("deleting", "one-gpu")
    deleting[0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    deleting[0]["metadata"]["finalizers"] = [FIN]
    r = run({"apiVersion": "v1", "kind": "List",
             "items": pe + notmine + deleting})
    out = json.loads(r.stdout) if r.returncode in (0, 3) else {}
    msgs = {u["name"]: u["message"] for u in out.get("unschedulable", [])}
    want = {"notmine": "ResourceClaim default/notmine-gpu-x7k2p was not "
                       "created for pod default/notmine (pod is not owner)",
            "deleting": 'resourceclaim "deleting-gpu-x7k2p" is being '
                        'deleted'}
    if msgs != want:
        print("FAIL PreEnqueue messages %r (%s)" % (msgs, r.stderr))
        ok = False

    # firstAvailable: alone on the cluster, the h100 subrequest on n3
    fa = [i for i in cluster()["items"]
          if i["kind"] not in ("Pod", "ResourceClaim")]
    fa += pod_and_claim("fa", "fa")
    r = run({"apiVersion": "v1", "kind": "List", "items": fa})
    out = json.loads(r.stdout) if r.returncode in (0, 3) else {}
    got = {b["name"]: b["node"] for b in out.get("bindings", [])}
    st = [q for q in out.get("requests", []) if q["path"].endswith("/status")]
    res = (json.loads(st[0]["body"])["status"]["allocation"]["devices"]
           ["results"] if st else [])
    if got != {"fa": "n3"} or [x["request"] for x in res] != ["gpu/h100"]:
        print("FAIL firstAvailable: %r %r (%s)" % (got, res, r.stderr))
        ok = False

    # a shared claim (resourceClaimName): both pods on the node the first
    # one's allocation chose; the second only adds itself to reservedFor
    sh = [i for i in cluster()["items"]
          if i["kind"] not in ("Pod", "ResourceClaim")]
    sh.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": "team", "namespace": "default",
                            "uid": "claim-team", "resourceVersion": "3"},
               "spec": ONE_GPU})
    for n in ("s0", "s1"):
        sh.append({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": n, "namespace": "default",
                                "uid": "uid-" + n},
                   "spec": {"containers": [{"name": "c", "image": "x"}],
                            "resourceClaims": [
                                {"name": "gpu",
                                 "resourceClaimName": "team"}]}})
    r = run({"apiVersion": "v1", "kind": "List", "items": sh})
    out = json.loads(r.stdout) if r.returncode in (0, 3) else {}
    got = {b["name"]: b["node"] for b in out.get("bindings", [])}
    st = [json.loads(q["body"])["status"] for q in out.get("requests", [])
          if q["path"].endswith("/team/status")]
    allocs = [x for x in st if "allocation" in x]
    reserved = sorted(r0["name"] for x in st for r0 in x["reservedFor"])
    if (len(got) != 2 or len(set(got.values())) != 1 or len(allocs) != 1 or
            reserved != ["s0", "s1"]):
        print("FAIL shared claim: %r %s (%s)" % (got, json.dumps(st),
                                                 r.stderr))
        ok = False

    # --explain names the plugin's verdicts
    r = run(items, ["--explain", "default/g5"], fmt="table")
    if ("DynamicResources" not in r.stdout or
            "cannot allocate all claims" not in r.stdout):
        print("FAIL --explain:\n%s%s" % (r.stdout, r.stderr))
        ok = False
    # filterTimeout: a duration; a negative one is refused at load
    args = CONFIG + """  pluginConfig:
  - name: DynamicResources
    args:
      filterTimeout: %s
"""
    r = run(items, config=args % "250ms")
    if r.returncode not in (0, 3):
        print("FAIL filterTimeout 250ms: %d %s" % (r.returncode, r.stderr))
        ok = False
    r = run(items, config=args % "-1s")
    if r.returncode == 0 or "filterTimeout: Invalid value" not in r.stderr:
        print("FAIL filterTimeout -1s: %d %s" % (r.returncode, r.stderr))
        ok = False
    # the shipped example: tests/dra/gpus.yaml with
    # profiles/examples/dynamic-resources.yaml
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..")
    r = subprocess.run([KSCHED, "schedule", "--cluster",
                        os.path.join(src, "tests", "dra", "gpus.yaml"),
                        "--config", os.path.join(src, "profiles", "examples",
                                                 "dynamic-resources.yaml"),
                        "--plugin-dir", PLUGIN_DIR, "--deterministic"],
                       capture_output=True, text=True, timeout=120)
    if (r.returncode != 3 or
            "3 bound, 1 could not be placed, 6 API requests recorded"
            not in r.stdout or
            "0/3 nodes are available: 3 cannot allocate all claims."
            not in r.stdout):
        print("FAIL the shipped example: %d\n%s%s" % (r.returncode,
                                                     r.stdout, r.stderr))
        ok = False
    print("ok" if ok else "failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
