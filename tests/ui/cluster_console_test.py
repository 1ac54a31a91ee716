#!/usr/bin/env python3
"""The console in cluster mode: `ksched serve --kubeconfig` against a real
kube-apiserver (the shared k8s folder's `up`, as tests/cluster_mode), the
same endpoints and page as on the embedded API.

Usage: cluster_console_test.py KSCHED PLUGIN_DIR K8S_DIR SHOTS

Two nodes, a pod that fits and `big`, which fits neither: /debug/cluster
lists the nodes with the bound pod's requests, /debug/queue has big with
its FitError, /debug/pods has both pods' attempts, explain names
NodeResourcesFit on each node for big and chooses a node for the bound
pod; in headless Chromium the Cluster view has both tiles and the Queue
view big's FitError. Then `serve --shadow default-scheduler` compares
three bindings made by hand, and its Shadow view shows the agreement. Exits 77 when the API server, etcd, chromium,
chromedriver or Selenium is absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402
import cluster_test as ct  # noqa: E402
import console_test as ui  # noqa: E402


def get(srv, method, path):
    c = srv.conn(60)
    try:
        c.request(method, path)
        r = c.getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, None
    finally:
        c.close()


def main():
    if len(sys.argv) != 5:
        kt.fatal(__doc__)
    ksched, plugin_dir, k8s, shots = sys.argv[1:]
    if ui.webdriver is None:
        kt.skip("python3-selenium is not installed")
    for f in (ui.CHROMIUM, ui.CHROMEDRIVER):
        if not os.access(f, os.X_OK):
            kt.skip("%s is absent (Debian's chromium and chromium-driver)"
                    % f)
    up, down = ct.k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-ui-cluster-")
    d, env = ct.cluster_up(up, tmp)
    srv = drv = None
    try:
        admin = ct.Api(env, env["ADMIN_TOKEN"])
        ct.apply_rbac(admin)
        cfg = os.path.join(tmp, "config.yaml")
        ct.write(cfg, ct.CONFIG)
        srv = ct.Serve(ksched, ["--plugin-dir", plugin_dir, "--config", cfg,
                                "--kubeconfig",
                                os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(60)), "serve --kubeconfig is ready"):
            kt.fatal("\n".join(srv.lines[-30:]))
        check(any(re.search(r"console at http://127\.0\.0\.1:\d+/ui", l)
                  for l in srv.lines), "serve prints the console's address")
        for n in ("c-0", "c-1"):
            admin.must("POST", "/api/v1/nodes", ct.node_obj(n))
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   ct.pod_obj("fit"))
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   ct.pod_obj("big", cpu="64"))
        kt.wait_for("fit bound", lambda: ct.pods_by_name(admin)["fit"]
                    ["spec"].get("nodeName"), 60)
        node = ct.pods_by_name(admin)["fit"]["spec"].get("nodeName")
        kt.wait_for("big unschedulable", lambda: any(
            p["name"] == "big" and p["queue"] == "unschedulable"
            for p in get(srv, "GET", "/debug/queue")[1]["items"]), 60)
        st, doc = get(srv, "GET", "/debug/cluster")
        check(st == 200 and doc["total"] == 2 and sum(
            n["requested"]["cpu"] for n in doc["items"]) == 100,
            "/debug/cluster: 2 nodes, the bound pod's 100m counted")
        st, doc = get(srv, "GET", "/debug/queue")
        big = [p for p in doc["items"] if p["name"] == "big"]
        check(big and "0/2 nodes are available" in big[0]["message"] and
              "Insufficient cpu" in big[0]["message"] and
              big[0]["rejectedBy"][0]["name"] == "NodeResourcesFit",
              "/debug/queue: big with its FitError and NodeResourcesFit")
        st, doc = get(srv, "GET", "/debug/pods/default/fit")
        check(st == 200 and doc["state"] == "bound" and
              doc["node"] == node and doc["attempts"] and
              doc["attempts"][0]["result"] == "bound",
              "/debug/pods: fit bound to %s, its attempt recorded (%s)"
              % (node, doc))
        st, doc = get(srv, "POST", "/debug/explain/default/big")
        check(st == 200 and len(doc["nodes"]) == 2 and all(
            n["rejectedBy"] == "NodeResourcesFit" for n in doc["nodes"]),
            "explain big: both nodes rejected by NodeResourcesFit")
        st, doc = get(srv, "POST", "/debug/explain/default/fit")
        check(st == 200 and doc["selected"] in ("c-0", "c-1") and
              doc["boundNode"] == node, "explain fit: a node chosen, its "
              "node marked (%s)" % (doc and doc.get("selected")))
        check(ct.pods_by_name(admin)["big"]["spec"].get("nodeName") is None,
              "explain bound nothing")
        os.makedirs(shots, exist_ok=True)
        drv = ui.browser()
        drv.get(srv.addr + "/ui/")
        ui.wait(drv, "2 tiles", lambda: len(ui.css(drv, ".tile")) == 2)
        check(sorted(e.get_attribute("data-node") for e in
                     ui.css(drv, ".tile")) == ["c-0", "c-1"],
              "the Cluster view has both nodes")
        ui.shot(drv, shots, "cluster-mode-cluster")
        drv.get(srv.addr + "/ui/#queue")
        row = ui.wait(drv, "big in the queue", lambda: ui.css(
            drv, "#queue-table tr[data-pod='default/big']"))
        check(bool(row) and "Insufficient cpu" in row[0].text,
              "the Queue view shows big's FitError in cluster mode")
        ui.shot(drv, shots, "cluster-mode-queue")
        # Shadow mode: another serve compares the bindings of
        # default-scheduler's pods (made here by hand, as another scheduler
        # would) with its own choice; the Shadow view shows them.
        shadow = ct.Serve(ksched, ["--plugin-dir", plugin_dir, "--kubeconfig",
                                   os.path.join(d, "ksched.kubeconfig"),
                                   "--shadow", "default-scheduler"])
        try:
            check(bool(shadow.ready(60)), "serve --shadow is ready")
            for i, node in enumerate(("c-0", "c-1", "c-0")):
                name = "sh-%d" % i
                admin.must("POST", "/api/v1/namespaces/default/pods",
                           ct.pod_obj(name, sched="default-scheduler"))
                admin.must("POST", "/api/v1/namespaces/default/pods/%s/"
                           "binding" % name, {
                               "apiVersion": "v1", "kind": "Binding",
                               "metadata": {"name": name},
                               "target": {"apiVersion": "v1", "kind": "Node",
                                          "name": node}})
            done = kt.wait_for("3 decisions", lambda: sum(sum(
                p["decisions"].values()) for p in get(
                    shadow, "GET", "/debug/shadow")[1]["periods"]) >= 3, 60)
            check(bool(done), "the shadow compared the 3 bindings")
            drv.get(shadow.addr + "/ui/#shadow")
            ok = ui.wait(drv, "the shadow table", lambda: ui.css(
                drv, "#shadow-body table tbody tr"))
            text = drv.find_element(ui.By.ID, "shadow-body").text
            check(bool(ok) and "Comparing default-scheduler with profile "
                  "default-scheduler" in text and "%" in text,
                  "the Shadow view shows the agreement: %s" % text[:200])
            ui.shot(drv, shots, "cluster-mode-shadow")
        finally:
            check(shadow.stop() == 0, "serve --shadow exits 0")
        rc = srv.stop()
        check(rc == 0, "serve exits 0 (%s)" % rc)
        srv = None
    finally:
        if drv is not None:
            drv.quit()
        if srv is not None:
            srv.stop()
            print("\n".join(srv.lines[-40:]))
        subprocess.run([down, d])
        kt.keep_or_remove(tmp)
    return kt.summary()


if __name__ == "__main__":
    sys.exit(main())
