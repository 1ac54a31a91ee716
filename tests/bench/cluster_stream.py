#!/usr/bin/env python3
"""A stream of pending pods into a real API server, timed pod by pod.

Usage: cluster_stream.py K8S_DIR PODS [--threads T] [--scheduler NAME]
                         [--prefix P] [--timeout S]
                         [--shape plain|deployment|spread|anti]
                         [--create-only | --placement]

K8S_DIR is a directory made by the shared k8s folder's `up` (its env file
names the server, CA and admin token). Creates PODS pods (one container,
100m CPU, 256Mi) from T threads as fast as the API server takes them while
a watch records when each pod is first seen with spec.nodeName. Prints one
JSON line: pods created per second, pods/s from the first pod created to
the last pod bound, and the scheduling latency (from the moment the
pod's creation was acknowledged to the moment the watch saw it bound)
p50/p90/p99/max in milliseconds. Exits 1 if not every pod was bound before
the timeout. Standard library only.

--shape deployment gives the pods of scheduler_perf's SchedulingDeployment:
100 ReplicaSets `rs-K` (replicas 0, so a running controller-manager adds
nothing) and 100 Services `svc-K` are created first, and pod i carries
label app=rs-(i%100) and a controller ownerReference to its ReplicaSet,
so PodTopologySpread's system-default constraints (hostname maxSkew 3,
zone maxSkew 5, ScheduleAnyway) apply to it in kube-scheduler and ksched
alike. --create-only creates the objects and pods, prints one JSON line
(created, create_rate) and exits without watching: a backlog for a
scheduler started afterwards.

--shape spread gives the pods of scheduler_perf's TopologySpreading
(label app=spread, zone maxSkew 1, DoNotSchedule over that label); --shape
anti the pods of SchedulingPodAntiAffinity (pod i carries app=anti-(i%10)
and required hostname anti-affinity to the pods of its own app, so each
node takes at most one pod of each of the 10 apps).

--placement creates nothing: it lists the pods named PREFIX* and the
nodes, and prints one JSON line saying whether the placement keeps the
shape's rules: bound pods, the most pods on one node, the bound pods per
zone (topology.kubernetes.io/zone) and their largest difference, and the
most pods of one app label on one node. Exits 1 when a hard rule of the
shape is broken (spread: zone skew above 1; anti: two pods of one app on a
node).
"""
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse


def env_of(d):
    e = {}
    for line in open(os.path.join(d, "env")):
        k, _, v = line.strip().partition("=")
        e[k] = v
    return e


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return type(default)(v)
    return default


def make_owners(u, ctx, hdr, count=100):
    """Creates ReplicaSets rs-0..rs-(count-1) (replicas 0) and a Service
    selecting each one's pods; returns [(name, uid)]. An object that exists
    already is read back for its uid."""
    c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx,
                                    timeout=120)

    def call(method, path, body=None):
        c.request(method, path, body=json.dumps(body) if body else None,
                  headers=hdr)
        r = c.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    owners = []
    for k in range(count):
        rs = "rs-%d" % k
        st, o = call("POST", "/apis/apps/v1/namespaces/default/replicasets", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs, "namespace": "default"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": rs}},
                     "template": {"metadata": {"labels": {"app": rs}},
                                  "spec": {"containers": [{
                                      "name": "pause",
                                      "image": "pause:3.7"}]}}}})
        if st == 409:
            st, o = call("GET",
                         "/apis/apps/v1/namespaces/default/replicasets/" + rs)
        if st not in (200, 201):
            sys.exit("cluster_stream.py: ReplicaSet %s: HTTP %d: %s"
                     % (rs, st, o.get("message", "")))
        owners.append((rs, o["metadata"]["uid"]))
        st, o = call("POST", "/api/v1/namespaces/default/services", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "svc-%d" % k, "namespace": "default"},
            "spec": {"selector": {"app": rs},
                     "ports": [{"port": 80, "targetPort": 80}]}})
        if st not in (201, 409):
            sys.exit("cluster_stream.py: Service svc-%d: HTTP %d: %s"
                     % (k, st, o.get("message", "")))
    c.close()
    return owners


SHAPES = ("plain", "deployment", "spread", "anti")
ANTI_APPS = 10


def shape_pod(shape, i, meta, spec):
    """Pod i's labels and constraints for the spread and anti shapes."""
    if shape == "spread":
        meta["labels"] = {"app": "spread"}
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}}}]
    elif shape == "anti":
        app = "anti-%d" % (i % ANTI_APPS)
        meta["labels"] = {"app": app}
        spec["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": app}},
                "topologyKey": "kubernetes.io/hostname"}]}}


def list_all(u, ctx, hdr, path):
    """Every item of a list, 500 at a time."""
    items, cont = [], ""
    while True:
        q = urllib.parse.urlencode({"limit": "500", "continue": cont})
        c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx,
                                        timeout=120)
        c.request("GET", path + "?" + q, headers=hdr)
        r = c.getresponse()
        doc = json.loads(r.read())
        c.close()
        if r.status != 200:
            sys.exit("cluster_stream.py: GET %s: HTTP %d: %s"
                     % (path, r.status, doc.get("message", "")))
        items += doc.get("items", [])
        cont = doc.get("metadata", {}).get("continue", "")
        if not cont:
            return items


def check_placement(u, ctx, hdr, prefix, shape):
    zone = {n["metadata"]["name"]:
            n["metadata"].get("labels", {}).get("topology.kubernetes.io/zone",
                                                "")
            for n in list_all(u, ctx, hdr, "/api/v1/nodes")}
    per_node, per_zone, per_app_node = {}, {}, {}
    for p in list_all(u, ctx, hdr, "/api/v1/namespaces/default/pods"):
        name = p["metadata"]["name"]
        node = p.get("spec", {}).get("nodeName")
        if not name.startswith(prefix) or not node:
            continue
        app = p["metadata"].get("labels", {}).get("app", "")
        per_node[node] = per_node.get(node, 0) + 1
        z = zone.get(node, "")
        per_zone[z] = per_zone.get(z, 0) + 1
        per_app_node[(app, node)] = per_app_node.get((app, node), 0) + 1
    zones = [per_zone.get(z, 0) for z in sorted(set(zone.values()))]
    skew = max(zones) - min(zones) if zones else 0
    same = max(per_app_node.values()) if per_app_node else 0
    ok = not ((shape == "spread" and skew > 1) or
              (shape == "anti" and same > 1))
    print(json.dumps({"what": "placement", "shape": shape,
                      "bound": sum(per_node.values()),
                      "max_pods_per_node": max(per_node.values())
                      if per_node else 0,
                      "pods_per_zone": zones, "zone_skew": skew,
                      "max_same_app_per_node": same, "rules_kept": ok}),
          flush=True)
    return 0 if ok else 1


def main():
    args = sys.argv[1:]
    threads = opt(args, "--threads", 16)
    sched = opt(args, "--scheduler", "default-scheduler")
    prefix = opt(args, "--prefix", "s-")
    timeout = opt(args, "--timeout", 3600.0)
    shape = opt(args, "--shape", "plain")
    create_only = "--create-only" in args
    if create_only:
        args.remove("--create-only")
    placement = "--placement" in args
    if placement:
        args.remove("--placement")
    if shape not in SHAPES:
        sys.exit("cluster_stream.py: --shape is one of %s, not %r"
                 % (", ".join(SHAPES), shape))
    if len(args) != 2:
        sys.exit(__doc__)
    e = env_of(args[0])
    n = int(args[1])
    u = urllib.parse.urlparse(e["K8S_URL"])
    ctx = ssl.create_default_context(cafile=e["K8S_CA"])
    hdr = {"Authorization": "Bearer " + e["ADMIN_TOKEN"],
           "Content-Type": "application/json", "Accept": "application/json"}
    if placement:
        return check_placement(u, ctx, hdr, prefix, shape)
    owners = make_owners(u, ctx, hdr) if shape == "deployment" else None
    created = {}
    bound = {}
    lock = threading.Lock()
    done = threading.Event()
    ready = threading.Event()

    def watch():
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector":
                                    "spec.nodeName!=", "timeoutSeconds":
                                    str(int(timeout))})
        while not done.is_set():
            c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx,
                                            timeout=timeout)
            try:
                c.request("GET", "/api/v1/pods?" + q, headers=hdr)
                r = c.getresponse()
                ready.set()
                while not done.is_set():
                    line = r.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    o = ev.get("object", {})
                    name = o.get("metadata", {}).get("name", "")
                    if ev.get("type") in ("ADDED", "MODIFIED") and \
                            name.startswith(prefix) and \
                            o.get("spec", {}).get("nodeName"):
                        now = time.time()
                        with lock:
                            bound.setdefault(name, now)
                            if len(bound) >= n:
                                done.set()
            except (OSError, http.client.HTTPException):
                time.sleep(0.2)
            finally:
                ready.set()
                c.close()

    def create(k):
        c = None
        for i in range(k, n, threads):
            name = "%s%d" % (prefix, i)
            meta = {"name": name, "namespace": "default",
                    "labels": {"app": "stream"}}
            if owners is not None:
                rs, uid = owners[i % len(owners)]
                meta["labels"] = {"app": rs}
                meta["ownerReferences"] = [{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": rs, "uid": uid, "controller": True}]
            spec = {"schedulerName": sched, "containers": [{
                "name": "pause", "image": "pause:3.7",
                "resources": {"requests": {"cpu": "100m",
                                           "memory": "256Mi"}}}]}
            shape_pod(shape, i, meta, spec)
            body = json.dumps({"apiVersion": "v1", "kind": "Pod",
                               "metadata": meta, "spec": spec})
            for _ in range(50):
                try:
                    if c is None:
                        c = http.client.HTTPSConnection(
                            u.hostname, u.port, context=ctx, timeout=120)
                    c.request("POST", "/api/v1/namespaces/default/pods",
                              body=body, headers=hdr)
                    r = c.getresponse()
                    r.read()
                    if r.status in (201, 409):
                        with lock:
                            created[name] = time.time()
                        break
                except (OSError, http.client.HTTPException):
                    c = None
                time.sleep(0.05)

    if create_only:
        t0 = time.time()
        ts = [threading.Thread(target=create, args=(k,))
              for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print(json.dumps({"what": "create", "shape": shape, "pods": n,
                          "created": len(created),
                          "create_rate": round(len(created) /
                                               (time.time() - t0), 1)}),
              flush=True)
        return 0 if len(created) == n else 1
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    ready.wait(30)
    t0 = time.time()
    ts = [threading.Thread(target=create, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    t_created = time.time()
    done.wait(max(1, timeout - (t_created - t0)))
    lat = sorted(max(0.0, bound[k] - created[k]) * 1000
                 for k in bound if k in created)
    last = max(bound.values()) if bound else time.time()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 1) \
            if lat else None
    # Exactly once: one Scheduled event per pod (series counted).
    sched_events = {}
    cont = ""
    while True:
        q = urllib.parse.urlencode({"limit": "500", "continue": cont})
        c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx,
                                        timeout=120)
        c.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events?"
                  + q, headers=hdr)
        doc = json.loads(c.getresponse().read())
        c.close()
        for ev in doc.get("items", []):
            name = ev.get("regarding", {}).get("name", "")
            if ev.get("reason") == "Scheduled" and name.startswith(prefix):
                sched_events[name] = sched_events.get(name, 0) + \
                    (ev.get("series") or {}).get("count", 1)
        cont = doc.get("metadata", {}).get("continue", "")
        if not cont:
            break
    out = {"what": "stream", "shape": shape, "scheduler": sched, "pods": n,
           "scheduled_events": len(sched_events),
           "scheduled_twice": sum(1 for v in sched_events.values() if v > 1),
           "created": len(created), "bound": len(bound),
           "create_rate": round(len(created) / (t_created - t0), 1),
           "e2e_seconds": round(last - t0, 3),
           "e2e_rate": round(len(bound) / (last - t0), 1) if bound else 0,
           "latency_ms_p50": pct(0.50), "latency_ms_p90": pct(0.90),
           "latency_ms_p99": pct(0.99), "latency_ms_max":
           round(lat[-1], 1) if lat else None}
    print(json.dumps(out), flush=True)
    return 0 if len(bound) >= n else 1


if __name__ == "__main__":
    sys.exit(main())
