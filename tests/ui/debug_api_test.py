#!/usr/bin/env python3
"""The console's JSON endpoints, without a browser.

Usage: debug_api_test.py KSCHED PLUGIN_DIR SWAPSCORE_V1 SWAPSCORE_V2

- /debug/cluster: every node with allocatable and requested resources,
  taints and zone; labels and pods only with fields=; paging with limit
  and continue over 5,000 nodes (each page bounded in items and bytes,
  every node exactly once); filter=.
- /debug/queue: the unschedulable pod with its FitError, the plugin that
  rejected it and the events that would move it.
- /debug/pods/NS/NAME: the last attempts (result, node, durations per
  extension point); 404 for an unknown pod.
- POST /debug/explain/NS/NAME: every node's verdict per Filter plugin,
  the Score plugins' scores and totals, the chosen node; nothing bound;
  a flood is answered 429 with Retry-After.
- /debug/plugins: hashes, profiles' extension points and deadlines, the
  hot swap with what changed; /debug/rates: samples once a second;
  /debug/shadow: 404 outside shadow mode.
- /ui: the page, its script and style with their content types, ETag and
  Cache-Control; served without a token, while every /debug endpoint
  needs one under --token-file (the health endpoints stay open).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402
from console_util import Console  # noqa: E402

BIG_NODES = 5000


def check_cluster(c, n_nodes):
    st, doc, _, _ = c.request("GET", "/debug/cluster")
    check(st == 200 and doc["total"] == n_nodes,
          "/debug/cluster lists %d nodes (%s %s)" % (n_nodes, st,
                                                     doc and doc["total"]))
    n0 = doc["items"][0]
    check(n0["name"] == "node-0" and n0["zone"] == "zone-a",
          "a node has its name and zone: %s" % n0)
    check(n0["allocatable"]["cpu"] == 4000 and
          n0["allocatable"]["memory"] == 16 << 30 and
          n0["allocatable"]["pods"] == 110, "allocatable cpu, memory, pods")
    check("labels" not in n0 and "pods" not in n0,
          "labels and pods only on demand")
    used = sum(n["requested"]["cpu"] for n in doc["items"])
    check(used == 5 * 500, "the bound pods' requests are counted (%d m)"
          % used)
    check(sum(n["nPods"] for n in doc["items"]) == 5, "pods per node")
    st, doc, _, _ = c.request("GET", "/debug/cluster?fields=labels,pods")
    n0 = doc["items"][0]
    check(n0["labels"].get("pool") == "pool-0", "fields=labels: %s"
          % n0.get("labels"))
    check(any(n.get("pods") for n in doc["items"]) and all(
        p.startswith("default/web-") for n in doc["items"]
        for p in n["pods"]), "fields=pods names the pods on each node")
    tainted = [n for n in doc["items"] if n["taints"]]
    check(len(tainted) == 1 and tainted[0]["taints"][0] ==
          {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
          "taints: %s" % tainted)


def check_queue(c):
    st, doc, _, _ = c.request("GET", "/debug/queue")
    check(st == 200, "/debug/queue answers (%s)" % st)
    big = [p for p in doc["items"] if p["name"] == "big"]
    check(len(big) == 1, "the queue holds big")
    if not big:
        return
    b = big[0]
    check(b["queue"] == "unschedulable" and
          doc["counts"]["unschedulable"] >= 1, "big is unschedulable: %s" % b)
    check("Insufficient cpu" in (b["message"] or ""),
          "its last FitError: %s" % b["message"])
    rej = {r["name"]: r for r in b["rejectedBy"]}
    check("NodeResourcesFit" in rej, "rejected by NodeResourcesFit: %s"
          % b["rejectedBy"])
    if "NodeResourcesFit" in rej:
        evs = [e["event"] for e in rej["NodeResourcesFit"]["events"]]
        check(any(e.startswith("Node/") and "Add" in e for e in evs) and
              any(e.startswith("Pod/") and "Delete" in e for e in evs),
              "a node added or a pod deleted would move it: %s" % evs)
    st, doc, _, _ = c.request("GET", "/debug/queue?queue=active")
    check(st == 200 and all(p["queue"] == "active" for p in doc["items"]),
          "queue= filters")
    st, doc, _, _ = c.request("GET", "/debug/queue?limit=x")
    check(st == 400, "a malformed limit is 400 (%s)" % st)


def check_pod(c):
    st, doc, _, _ = c.request("GET", "/debug/pods/default/web-0")
    check(st == 200 and doc["state"] == "bound" and doc.get("node"),
          "/debug/pods: web-0 is bound (%s %s)" % (st, doc))
    a = doc["attempts"][0] if doc and doc.get("attempts") else {}
    check(a.get("result") == "bound" and a.get("node") == doc.get("node"),
          "its attempt bound it to its node: %s" % a)
    check("Filter" in a.get("extensionPoints", {}) and a.get("seconds", 0) > 0
          and a.get("nodes") == 6 and a.get("feasible", 0) >= 5,
          "the attempt's times per extension point and node counts")
    sc = a.get("score", {})
    parts = [x["score"] for x in sc.get("plugins", []) if x["score"] is not None]
    check(sc and sum(parts) == sc["total"] and sc["runnerUp"] <= sc["total"]
          and any(x["name"] == "NodeResourcesFit" and x["weight"] == 1
                  for x in sc["plugins"]),
          "the chosen node's score: the plugins' weighted scores add up to "
          "its total, no other node had more (%s)" % sc)
    st, doc, _, _ = c.request("GET", "/debug/pods/default/big")
    check(st == 200 and doc["state"] == "pending" and
          doc["attempts"][0]["result"] == "unschedulable" and
          "Insufficient cpu" in doc["attempts"][0]["message"] and
          doc["queue"]["queue"] == "unschedulable",
          "big's attempts say unschedulable, with the FitError")
    st, _, _, _ = c.request("GET", "/debug/pods/default/nope")
    check(st == 404, "an unknown pod is 404 (%s)" % st)


def check_explain(c):
    before = c.request("GET", "/debug/pods/default/big")[1]["attemptsTotal"]
    st, doc, _, _ = c.request("POST", "/debug/explain/default/big")
    check(st == 200, "explain big answers (%s %s)" % (st, doc))
    if st != 200:
        return
    fit = doc["filterPlugins"].index("NodeResourcesFit")
    check(len(doc["nodes"]) == 6 and doc["selected"] is None and
          doc["feasible"] == 0, "explain: 6 nodes, none feasible")
    for n in doc["nodes"]:
        if n["name"] == "node-5":  # tainted: TaintToleration first
            check(n["rejectedBy"] == "TaintToleration" and
                  n["rejectedAt"] == doc["filterPlugins"].index(
                      "TaintToleration"),
                  "the tainted node is rejected by TaintToleration: %s" % n)
            continue
        check(n["rejectedBy"] == "NodeResourcesFit" and
              n["rejectedAt"] == fit and n["reason"] == "Insufficient cpu",
              "node %s: passes the plugins before NodeResourcesFit, fails "
              "it, the rest not run: %s" % (n["name"], n))
    st, doc, _, _ = c.request("POST", "/debug/explain/default/web-1")
    check(st == 200 and doc["selected"] and doc["podState"] == "bound",
          "explain a bound pod: a node is chosen (%s)" % (doc or {}).get(
              "selected"))
    if st == 200:
        names = [p["name"] for p in doc["scorePlugins"]]
        feas = [n for n in doc["nodes"] if n["feasible"]]
        check("NodeResourcesFit" in names and len(feas) == 5,
              "5 feasible nodes (one is tainted), scored by %s" % names)
        ok = True
        for n in feas:
            tot = sum(v for v in n["scores"] if v is not None)
            ok = ok and tot == n["total"]
        check(ok, "each total is the sum of the weighted scores")
        best = max(n["total"] for n in feas)
        chosen = [n for n in feas if n["name"] == doc["selected"]]
        check(chosen and chosen[0]["total"] == best,
              "the chosen node has the best total")
    st, doc, _, _ = c.request("GET", "/debug/pods/default/big")
    check(doc["attemptsTotal"] == before and doc["state"] == "pending" and
          doc["queue"]["queue"] == "unschedulable",
          "explain is no attempt: big is still unschedulable after %d "
          "attempts (%d)" % (before, doc["attemptsTotal"]))
    st, doc, _, _ = c.request("GET", "/debug/pods/default/web-1")
    check(doc["state"] == "bound" and doc["attemptsTotal"] == 1,
          "explain is no attempt: web-1 still has one (%s)"
          % doc["attemptsTotal"])
    # a flood: the bucket holds 5, refilled at 2 a second
    codes = []
    for _ in range(12):
        st, _, hdrs, _ = c.request("POST", "/debug/explain/default/big")
        codes.append(st)
        if st == 429:
            check(hdrs.get("retry-after") == "1", "429 says Retry-After: 1")
            break
    check(429 in codes, "a flood of explain requests is limited: %s" % codes)
    st, _, _, _ = c.request("GET", "/debug/explain/default/big")
    check(st == 405, "explain is POST only (%s)" % st)
    time.sleep(1.1)
    st, _, _, _ = c.request("POST", "/debug/explain/default/big")
    check(st == 200, "the bucket refills (%s)" % st)
    # the running scheduler goes on after explains (its plugins' host
    # environment is its own again)
    c.pod("after-explain")
    bound = kt.wait_for("after-explain bound", lambda: c.request(
        "GET", "/api/v1/namespaces/default/pods/after-explain")[1].get(
            "spec", {}).get("nodeName"), 30)
    check(bool(bound), "a pod created after the explains is bound (%s)"
          % bound)


def check_plugins(c, v2):
    st, doc, _, _ = c.request("GET", "/debug/plugins")
    sw = [p for p in doc["plugins"] if p["name"] == "SwapScore"]
    check(st == 200 and sw and sw[0]["version"] == "1.0.0" and
          len(sw[0]["hash"]) == 16, "SwapScore 1.0.0 with its hash")
    prof = doc["profiles"][0]
    check(prof["name"] == "default-scheduler" and
          "Filter" in prof["extensionPoints"] and
          {"name": "NodeResourcesFit", "weight": 1} in
          prof["extensionPoints"]["Score"] and
          "NodeResourcesFit" in prof["deadlineMs"],
          "profiles: extension points, weights and deadlines")
    c.install(v2)
    gen = c.reload()
    st, doc, _, _ = c.request("GET", "/debug/plugins")
    check(doc["generation"] >= 2 and doc["generation"] >= (gen or 0),
          "the new generation runs (%s)" % doc["generation"])
    sw = [p for p in doc["plugins"] if p["name"] == "SwapScore"]
    check(sw and sw[0]["version"] == "2.0.0", "SwapScore 2.0.0 now")
    ch = [x for r in doc["reloads"] for x in r.get("changes", [])
          if x["plugin"] == "SwapScore"]
    check(ch and ch[0]["fromVersion"] == "1.0.0" and
          ch[0]["toVersion"] == "2.0.0" and ch[0]["change"] == "replaced",
          "the history says what changed: %s" % ch)


def check_rates(c):
    time.sleep(2.2)
    st, doc, _, _ = c.request("GET", "/debug/rates")
    check(st == 200 and len(doc["samples"]) >= 2, "/debug/rates samples "
          "once a second (%d)" % len(doc["samples"]))
    cols = doc["columns"]
    last = doc["samples"][-1]
    check(last[cols.index("scheduled")] >= 5 and
          last[cols.index("unschedulablePool")] >= 0 and
          last[cols.index("p99")] > 0, "scheduled count and latency: %s"
          % dict(zip(cols, last)))
    st, doc, _, _ = c.request("GET", "/debug/rates?seconds=1")
    check(len(doc["samples"]) == 1, "seconds= keeps the last samples")


def check_ui(c):
    for path in ("/ui", "/ui/"):
        st, _, hdrs, body = c.request("GET", path, token=False)
        check(st == 200 and hdrs["content-type"].startswith("text/html") and
              b"ksched console" in body and hdrs.get("etag") and
              hdrs.get("cache-control") == "no-cache",
              "%s: the page, without a token (%s)" % (path, st))
    st, _, hdrs, body = c.request("GET", "/ui/console.js", token=False)
    check(st == 200 and hdrs["content-type"].startswith("text/javascript")
          and "immutable" in hdrs.get("cache-control", ""),
          "console.js with its type and Cache-Control")
    st, _, hdrs, _ = c.request("GET", "/ui/console.css", token=False)
    check(st == 200 and hdrs["content-type"].startswith("text/css"),
          "console.css")
    st, _, _, _ = c.request("GET", "/ui/nope.js", token=False)
    check(st == 404, "an unknown asset is 404 (%s)" % st)
    st, _, _, _ = c.request("POST", "/api/v1/namespaces/default/pods",
                            {"metadata": {"name": "other"}, "spec": {
                                "schedulerName": "someone-else",
                                "containers": [{"name": "c",
                                                "image": "x"}]}})
    st, doc, _, _ = c.request("GET", "/debug/pods/default/other")
    check(st == 200 and doc["state"] == "otherScheduler",
          "a pod of another scheduler says so (%s %s)" % (st, doc))


def check_big_cluster(c):
    t0 = time.time()
    for i in range(6, BIG_NODES):
        st = c.request("POST", "/api/v1/nodes", {
            "metadata": {"name": "node-%d" % i, "labels": {
                "topology.kubernetes.io/zone": "zone-%d" % (i % 7),
                "pool": "pool-%d" % (i % 3)}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi",
                                       "pods": "110"}}})[0]
        if st != 201:
            check(False, "node-%d created (%s)" % (i, st))
            return
    print("created %d nodes in %.1f s" % (BIG_NODES, time.time() - t0))
    seen, cont, pages, biggest = [], "", 0, 0
    while True:
        path = "/debug/cluster?limit=1000" + (
            "&continue=" + cont if cont else "")
        st, doc, _, raw = c.request("GET", path)
        if st != 200:
            check(False, "page %d answers (%s)" % (pages, st))
            return
        pages += 1
        biggest = max(biggest, len(raw))
        check(len(doc["items"]) <= 1000, "a page has at most limit items")
        seen += [n["name"] for n in doc["items"]]
        cont = doc.get("continue", "")
        if not cont:
            break
    check(len(seen) == BIG_NODES and len(set(seen)) == BIG_NODES and
          pages == 5, "5,000 nodes in 5 pages, each once (%d, %d pages)"
          % (len(seen), pages))
    check(biggest < 400 * 1000, "a 1,000-node page stays small (%d bytes)"
          % biggest)
    print("largest page of 1,000 nodes: %d bytes" % biggest)
    st, doc, _, raw = c.request("GET", "/debug/cluster")
    check(len(doc["items"]) == 500 and doc["continue"],
          "the default page is 500 nodes (%d bytes)" % len(raw))
    st, doc, _, raw = c.request("GET", "/debug/cluster?limit=5000")
    check(len(doc["items"]) == 1000, "limit is capped at 1,000")
    st, doc, _, _ = c.request("GET", "/debug/cluster?filter=node-499")
    names = [n["name"] for n in doc["items"]]
    check(sorted(names) == ["node-499", "node-4990", "node-4991",
                            "node-4992", "node-4993", "node-4994",
                            "node-4995", "node-4996", "node-4997",
                            "node-4998", "node-4999"],
          "filter= matches names: %s" % names)
    t0 = time.time()
    st, doc, _, raw = c.request("POST", "/debug/explain/default/big")
    el = time.time() - t0
    check(st in (200, 429), "explain over 5,000 nodes (%s)" % st)
    if st == 200:
        check(len(doc["nodes"]) == BIG_NODES, "every node has a verdict")
        check(len(raw) < 120 * BIG_NODES, "about 100 bytes a rejected node "
              "(%d bytes)" % len(raw))
        print("explain over %d nodes: %.3f s, %.3f s in the cycle, %d bytes"
              % (BIG_NODES, el, doc["seconds"], len(raw)))


def bound_node(c, name):
    return kt.wait_for(name + " bound", lambda: c.request(
        "GET", "/api/v1/namespaces/default/pods/" + name)[1].get(
            "spec", {}).get("nodeName"), 30)


def check_token(ksched, plugin_dir, v1):
    c = Console(ksched, plugin_dir, v1, token=True)
    try:
        # Nobody looks yet: with more than 64 feasible nodes the chosen
        # node's scores are not kept (no pass over the totals); once the
        # console is used, they are.
        for i in range(70):
            c.node("n-%d" % i, "zone-a")
        c.pod("unwatched")
        check(bool(bound_node(c, "unwatched")), "unwatched is bound")
        st, doc, _, _ = c.request("GET", "/debug/pods/default/unwatched")
        check(st == 200 and doc["attempts"][0]["feasible"] == 70 and
              "score" not in doc["attempts"][0],
              "while nobody looks, a cycle over 70 feasible nodes keeps no "
              "scores")
        c.pod("watched")
        check(bool(bound_node(c, "watched")), "watched is bound")
        st, doc, _, _ = c.request("GET", "/debug/pods/default/watched")
        check(st == 200 and doc["attempts"][0].get("score", {}).get(
            "total") is not None, "once the console is used, it does")
        for path in ("/debug/cluster", "/debug/queue", "/debug/rates",
                     "/debug/plugins", "/debug/pods/default/x"):
            st, _, hdrs, _ = c.request("GET", path, token=False)
            check(st == 401 and "bearer" in hdrs.get(
                "www-authenticate", "").lower(),
                "%s needs the token (%s)" % (path, st))
            st, _, _, _ = c.request("GET", path)
            check(st in (200, 404), "%s with the token (%s)" % (path, st))
        st, _, _, _ = c.request("POST", "/debug/explain/default/x",
                                token=False)
        check(st == 401, "explain needs the token (%s)" % st)
        for path in ("/ui", "/ui/", "/ui/console.js", "/healthz",
                     "/readyz"):
            st, _, _, _ = c.request("GET", path, token=False)
            check(st == 200, "%s is open (%s)" % (path, st))
        for path in ("/ui/nope.js", "/ui/../debug/cluster",
                     "/ui/x/console.js", "/uix"):
            st, _, _, _ = c.request("GET", path, token=False)
            check(st == 401, "%s needs the token (%s)" % (path, st))
    finally:
        c.close()


def main():
    if len(sys.argv) != 5:
        kt.fatal(__doc__)
    ksched, plugin_dir, v1, v2 = sys.argv[1:]
    c = Console(ksched, plugin_dir, v1)
    try:
        c.populate(6)
        check_cluster(c, 6)
        check_queue(c)
        check_pod(c)
        check_explain(c)
        check_plugins(c, v2)
        check_rates(c)
        check_ui(c)
        st, _, _, _ = c.request("GET", "/debug/shadow")
        check(st == 404, "/debug/shadow is 404 outside shadow mode (%s)"
              % st)
        check_big_cluster(c)
    finally:
        c.close()
    check_token(ksched, plugin_dir, v1)
    return kt.summary()


if __name__ == "__main__":
    sys.exit(main())
