#!/usr/bin/env python3
"""Pod fields that change kube-scheduler v1.36's decisions, through
`ksched schedule`: each case is scheduled twice, with the field and with a
control that differs only by the field, and both placements are asserted
(hand-checked below), so a field ksched ignored would fail the first.

Usage: test_pod_fields.py KSCHED PLUGIN_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

KSCHED, PLUGIN_DIR = sys.argv[1], sys.argv[2]


def node(name, zone, cpu="2", memory="4Gi"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name,
                                    "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory,
                                       "pods": "110"}}}


def pod(name, labels=None, node_name=None, cpu="100m", spec=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default",
                      "labels": labels or {}},
         "spec": {"containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests": {"cpu": cpu}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    p["spec"].update(spec or {})
    return p


def prefer(node_name):
    """A preferred node affinity strong enough to win every score tie."""
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchFields": [
            {"key": "metadata.name", "operator": "In",
             "values": [node_name]}]}}]}}


def schedule(items):
    """Run ksched schedule on the objects; return ({pod: node}, stderr)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
        path = f.name
    try:
        r = subprocess.run([KSCHED, "schedule", "--cluster", path,
                            "--plugin-dir", PLUGIN_DIR, "--deterministic",
                            "-o", "json"],
                           capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(path)
    if r.returncode not in (0, 3):
        raise AssertionError("ksched exited %d: %s" % (r.returncode, r.stderr))
    out = json.loads(r.stdout)
    placed = {b["name"]: b["node"] for b in out["bindings"]}
    for u in out["unschedulable"]:
        placed[u["name"]] = None
    return placed, r.stderr


FAILURES = []


def expect(case, items, pod_name, want):
    got = schedule(items)[0].get(pod_name, "<missing>")
    status = "ok" if got == want else "FAIL"
    print("%-4s %s: %s -> %s (want %s)" % (status, case, pod_name, got, want))
    if got != want:
        FAILURES.append(case)


def sidecar_case(restart_policy):
    # small: 1 cpu, preferred; big: 2 cpu. The main container asks 500m, the
    # init container 600m. As a sidecar it runs beside the main container:
    # 500m + 600m = 1100m does not fit small. As a plain init container the
    # pod needs max(500m, 600m) = 600m and fits small.
    init = {"name": "proxy", "image": "pause",
            "resources": {"requests": {"cpu": "600m"}}}
    if restart_policy:
        init["restartPolicy"] = restart_policy
    return [node("small", "a", cpu="1"), node("big", "b"),
            pod("p", cpu="500m", spec={"initContainers": [init],
                                       "affinity": prefer("small")})]


def sidecar_order_case():
    # An init container after a sidecar runs beside it: 300m + 800m = 1100m
    # > 1 cpu; before it, max(800m, 300m + 100m) = 800m fits. Either way the
    # sidecar also counts with the main container: 100m + 300m = 400m.
    side = {"name": "proxy", "image": "pause", "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "300m"}}}
    setup = {"name": "setup", "image": "pause",
             "resources": {"requests": {"cpu": "800m"}}}
    return side, setup


def pod_level_case(with_field):
    # Pod-level requests of 1500m replace the containers' 100m: only big
    # (2 cpu) fits; without them the pod fits small (1 cpu, preferred).
    spec = {"affinity": prefer("small")}
    if with_field:
        spec["resources"] = {"requests": {"cpu": "1500m"}}
    return [node("small", "a", cpu="1"), node("big", "b"),
            pod("p", cpu="100m", spec=spec)]


def pod_level_limits_case():
    # Pod-level limits alone: the API server defaults the pod-level cpu
    # request from the containers' 100m (not from the 1900m limit), and the
    # memory request from the 3Gi limit, which fits big only.
    spec = {"affinity": prefer("small"),
            "resources": {"limits": {"cpu": "1900m", "memory": "3Gi"}}}
    return [node("small", "a", cpu="2", memory="2Gi"), node("big", "b"),
            pod("p", cpu="100m", spec=spec)]


def spread_case(with_keys):
    # zone a runs 3 pods of revision v1, zone b one of revision v2; the new
    # pod is v2. Counting app=web only, a has 3 and b 1: maxSkew 1 forces b.
    # With matchLabelKeys [rev] only v2 pods count (a 0, b 1): a is forced.
    items = [node("na", "a"), node("nb", "b")]
    for i in range(3):
        items.append(pod("old-%d" % i, {"app": "web", "rev": "v1"}, "na"))
    items.append(pod("new-0", {"app": "web", "rev": "v2"}, "nb"))
    tsc = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
           "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}
    if with_keys:
        tsc["matchLabelKeys"] = ["rev"]
    items.append(pod("new-1", {"app": "web", "rev": "v2"},
                     spec={"topologySpreadConstraints": [tsc]}))
    return items


def affinity_match_case(with_keys, merged_by_api=False):
    # Pods of app=web run in zone a (rev v1) and zone b (rev v2). The new
    # v2 pod requires affinity to app=web pods in its zone and prefers na.
    # With matchLabelKeys [rev] only zone b qualifies.
    items = [node("na", "a"), node("nb", "b"),
             pod("web-v1", {"app": "web", "rev": "v1"}, "na"),
             pod("web-v2", {"app": "web", "rev": "v2"}, "nb")]
    term = {"labelSelector": {"matchLabels": {"app": "web"}},
            "topologyKey": "topology.kubernetes.io/zone"}
    if with_keys:
        term["matchLabelKeys"] = ["rev"]
    if merged_by_api:
        # As read back from the API server: the requirement is already in
        # the selector, and ksched must not add it again with the pod's
        # current value (rev was relabelled to v1 after creation).
        term["labelSelector"]["matchExpressions"] = [
            {"key": "rev", "operator": "In", "values": ["v2"]}]
    labels = {"app": "web", "rev": "v1" if merged_by_api else "v2"}
    aff = prefer("na")
    aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution":
                          [term]}
    items.append(pod("new", labels, spec={"affinity": aff}))
    return items


def anti_affinity_mismatch_case(with_keys):
    # Each node runs an app=web pod of another tenant. The new tenant t1
    # pod has required anti-affinity to app=web per host: without keys both
    # hosts are excluded; with mismatchLabelKeys [tenant] only pods of other
    # tenants repel it, so the node running t1's pod qualifies.
    items = [node("na", "a"), node("nb", "b"),
             pod("web-t1", {"app": "web", "tenant": "t1"}, "na"),
             pod("web-t2", {"app": "web", "tenant": "t2"}, "nb")]
    term = {"labelSelector": {"matchLabels": {"app": "web"}},
            "topologyKey": "kubernetes.io/hostname"}
    if with_keys:
        term["mismatchLabelKeys"] = ["tenant"]
    items.append(pod("new", {"app": "web", "tenant": "t1"}, spec={
        "affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}))
    return items


def host_network_case(host_network):
    # na already uses host port 8080; the new pod declares container port
    # 8080 without a host port. With hostNetwork the API server makes it a
    # host port, so na conflicts and nb is chosen despite preferring na.
    items = [node("na", "a"), node("nb", "b")]
    user = pod("user", node_name="na")
    user["spec"]["containers"][0]["ports"] = [
        {"containerPort": 8080, "hostPort": 8080}]
    items.append(user)
    p = pod("new", spec={"affinity": prefer("na"),
                         "hostNetwork": host_network})
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    items.append(p)
    return items


def notices():
    items = [node("na", "a")]
    claim = pod("claim-0", spec={"resourceClaims": [
        {"name": "gpu", "resourceClaimTemplateName": "gpu"}]})
    items.append(claim)
    # persistentVolumeClaim is modelled since SDK ABI 1.3 (the volume
    # plugins read it), inline in-tree sources (gcePersistentDisk, rbd, ...)
    # since ABI 1.4, and inline csi volumes are not counted upstream: no
    # volume gives a notice any more.
    items.append(pod("pvc-0", spec={"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]}))
    items.append(pod("csi-0", spec={"volumes": [
        {"name": "data", "csi": {"driver": "d"}}]}))
    for i in range(2):
        items.append(pod("gce-%d" % i, spec={"volumes": [
            {"name": "data", "gcePersistentDisk": {"pdName": "d"}}]}))
    items.append(pod("rbd-0", spec={"volumes": [
        {"name": "data", "rbd": {"monitors": ["m"], "image": "i"}}]}))
    _, err = schedule(items)
    # spec.resourceClaims is modelled since SDK ABI 1.5 (the
    # DynamicResources plugin reads it): no notice either.
    want = []
    got = [l for l in err.splitlines() if "does not model" in l]
    ok = got == want
    print("%-4s notices: %r" % ("ok" if ok else "FAIL", got))
    if not ok:
        FAILURES.append("notices")


def main():
    expect("sidecar", sidecar_case("Always"), "p", "big")
    expect("sidecar control (plain init container)", sidecar_case(None),
           "p", "small")
    side, setup = sidecar_order_case()
    items = sidecar_case(None)
    items[-1]["spec"]["initContainers"] = [side, setup]
    expect("init container after a sidecar", items, "p", "big")
    items = sidecar_case(None)
    items[-1]["spec"]["initContainers"] = [setup, side]
    expect("init container before a sidecar", items, "p", "small")
    expect("pod-level requests", pod_level_case(True), "p", "big")
    expect("pod-level control", pod_level_case(False), "p", "small")
    expect("pod-level limits defaulting", pod_level_limits_case(), "p", "big")
    expect("spread matchLabelKeys", spread_case(True), "new-1", "na")
    expect("spread control", spread_case(False), "new-1", "nb")
    expect("affinity matchLabelKeys", affinity_match_case(True), "new", "nb")
    expect("affinity control", affinity_match_case(False), "new", "na")
    expect("affinity merged by the API server",
           affinity_match_case(True, merged_by_api=True), "new", "nb")
    expect("anti-affinity mismatchLabelKeys",
           anti_affinity_mismatch_case(True), "new", "na")
    expect("anti-affinity control", anti_affinity_mismatch_case(False),
           "new", None)
    expect("hostNetwork ports", host_network_case(True), "new", "nb")
    expect("hostNetwork control", host_network_case(False), "new", "na")
    notices()
    if FAILURES:
        print("%d failed: %s" % (len(FAILURES), ", ".join(FAILURES)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
