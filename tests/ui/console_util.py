"""Shared pieces of the console tests: an embedded `ksched serve` with a
few nodes and pods (one unschedulable), requests with an optional bearer
token, and the hot swap of SwapScore (tests/serve/swapscore.c).

Standard library only.
"""
import http.client
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402

TOKEN = "console-test-token-0123456789"


class Console:
    """`ksched serve` (embedded API, the default profile, SwapScore 1.0.0
    in a swap folder), optionally with --token-file."""

    def __init__(self, ksched, plugin_dir, swapscore_v1, token=False):
        self.tmp = tempfile.mkdtemp(prefix="ksched-ui-test-")
        self.swap_dir = os.path.join(self.tmp, "swap")
        os.mkdir(self.swap_dir)
        self.install(swapscore_v1)
        args = ["--plugin-dir", plugin_dir, "--plugin-dir", self.swap_dir,
                "--no-default-plugin-path", "--listen", "127.0.0.1:0",
                "--drain-timeout", "2"]
        self.token = None
        if token:
            self.token = TOKEN
            tf = os.path.join(self.tmp, "tokens")
            with open(tf, "w") as f:
                f.write(TOKEN + "\n")
            args += ["--token-file", tf]
        env = dict(os.environ)
        env.pop("KSCHED_PLUGIN_PATH", None)
        env["TMPDIR"] = self.tmp
        self.srv = kt.Serve(ksched, args, env)
        self.base = self.srv.addr
        self.conn = self.srv.conn(60)

    def install(self, src):
        tmp = os.path.join(self.swap_dir, ".swapscore.so.new")
        shutil.copyfile(src, tmp)
        os.replace(tmp, os.path.join(self.swap_dir, "swapscore.so"))

    def request(self, method, path, body=None, token=True, headers=None):
        """(status, parsed JSON or None, headers dict, raw bytes)."""
        hdrs = {"Content-Type": "application/json"}
        if token and self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        if headers:
            hdrs.update(headers)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=hdrs)
                r = self.conn.getresponse()
                data = r.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = self.srv.conn(60)
                if attempt:
                    raise
        try:
            doc = json.loads(data) if data else None
        except ValueError:
            doc = None
        return r.status, doc, {k.lower(): v for k, v in r.getheaders()}, data

    def node(self, name, zone, cpu="4", labels=None, taints=None):
        lab = {"kubernetes.io/hostname": name,
               "topology.kubernetes.io/zone": zone}
        lab.update(labels or {})
        obj = {"metadata": {"name": name, "labels": lab},
               "status": {"allocatable": {"cpu": cpu, "memory": "16Gi",
                                          "pods": "110"}}}
        if taints:
            obj["spec"] = {"taints": taints}
        st = self.request("POST", "/api/v1/nodes", obj)[0]
        kt.check(st == 201, "node %s created (%s)" % (name, st))

    def pod(self, name, cpu="500m"):
        obj = {"metadata": {"name": name},
               "spec": {"containers": [{"name": "c", "image": "nginx",
                                        "resources": {"requests":
                                                      {"cpu": cpu}}}]}}
        st = self.request("POST", "/api/v1/namespaces/default/pods",
                          obj)[0]
        kt.check(st == 201, "pod %s created (%s)" % (name, st))

    def populate(self, n_nodes=6):
        """Nodes in two zones (the last one tainted dedicated=gpu), five
        pods that fit and `big`, which fits no node (Insufficient cpu)."""
        for i in range(n_nodes):
            self.node("node-%d" % i, "zone-%s" % "ab"[i % 2],
                      labels={"pool": "pool-%d" % (i % 3)},
                      taints=[{"key": "dedicated", "value": "gpu",
                               "effect": "NoSchedule"}]
                      if i == n_nodes - 1 else None)
        for i in range(5):
            self.pod("web-%d" % i)
        self.pod("big", cpu="64")
        kt.wait_for("web pods bound", lambda: all(
            self.request("GET", "/api/v1/namespaces/default/pods/web-%d"
                         % i)[1].get("spec", {}).get("nodeName")
            for i in range(5)), 30)
        kt.wait_for("big is unschedulable", lambda: any(
            p["name"] == "big" and p["queue"] == "unschedulable"
            for p in self.request("GET", "/debug/queue")[1]["items"]), 30)

    def reload(self):
        st, doc, _, _ = self.request("POST", "/-/reload")
        kt.check(st == 200, "POST /-/reload answers 200 (%s %s)" % (st, doc))
        return doc.get("generation") if isinstance(doc, dict) else None

    def close(self):
        try:
            self.conn.close()
        except OSError:
            pass
        rc = self.srv.stop()
        kt.check(rc == 0, "serve stops with status 0 (%s)" % rc)
        if kt.failures:
            print("--- serve stderr (last 30 lines) ---\n" +
                  "\n".join(self.srv.lines[-30:]))
        shutil.rmtree(self.tmp, ignore_errors=True)
