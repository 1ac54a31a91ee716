#!/usr/bin/env python3
"""A pod deleted by a plugin through the host API is gone for everyone.

Usage: serve_delete_test.py KSCHED PLUGIN_BUILD_DIR FIXTURE_PLUGIN_DIR

The fixture plugin Deleter deletes, by the pod's label, the pod it is
scheduling at Reserve, at Permit (answering Wait) or at PreBind, or at
Reserve another pending pod. Each time the deleted pod must be gone from
the API (404, not listed), must not be bound (no Binding event), must not
hold its node's resources (a pod that needs all of them then fits), and its
name must be usable again (the new pod schedules). Before the fix the
server dropped its index entry but the scheduler bound the pod anyway: the
node stayed full and the name came back stuck "already in the cache".
"""
import http.client
import json
import os
import shutil
import sys
import tempfile
import threading

from hardening_util import (Server, check, fatal, finish, node_obj, pod_obj,
                            request, wait_for)

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preEnqueue:
      enabled:
      - name: Deleter
    reserve:
      enabled:
      - name: Deleter
    permit:
      enabled:
      - name: Deleter
    preBind:
      enabled:
      - name: Deleter
"""

NS = "/api/v1/namespaces/default/pods"


class Watch:
    """Every event of GET /api/v1/bindings?watch=true, from the start."""

    def __init__(self, srv):
        self.events = []
        self.conn = srv.conn(timeout=300)
        self.conn.request("GET", "/api/v1/bindings?watch=true")
        self.resp = self.conn.getresponse()
        self.thread = threading.Thread(target=self.pump, daemon=True)
        self.thread.start()

    def pump(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    return
                line = line.strip()
                if line:
                    self.events.append(json.loads(line))
        except (OSError, ValueError, http.client.HTTPException):
            return

    def has(self, typ, pod):
        return any(e.get("type") == typ and e.get("pod") == pod
                   for e in self.events)


def get_pod(srv, name):
    c = srv.conn()
    st, doc, _ = request(c, "GET", NS + "/" + name)
    c.close()
    return st, doc


def bound_node(srv, name):
    st, doc = get_pod(srv, name)
    if st != 200:
        return None
    return doc.get("spec", {}).get("nodeName") or None


def create(srv, name, cpu, labels=None):
    c = srv.conn()
    st, doc, _ = request(c, "POST", NS, pod_obj(name, cpu, labels))
    c.close()
    return check(st == 201, "create %s: 201 (got %d %s)" % (name, st, doc))


def delete(srv, name):
    c = srv.conn()
    st, _, _ = request(c, "DELETE", NS + "/" + name)
    c.close()
    return st


def listed(srv, name):
    c = srv.conn()
    st, doc, _ = request(c, "GET", "/api/v1/pods")
    c.close()
    return any(p["metadata"]["name"] == name for p in doc["items"])


def self_delete(srv, watch, mode):
    name = "doomed-" + mode
    if not create(srv, name, "1", {"ksched-test/delete": mode}):
        return
    # The deletion is reported (Preempted: the host API's delete_pod is
    # the one preemption uses) and the pod disappears.
    wait_for(lambda: watch.has("Preempted", "default/" + name))
    check(watch.has("Preempted", "default/" + name),
          "%s: the plugin's deletion is reported" % mode)
    st, doc = get_pod(srv, name)
    check(st == 404, "%s: the deleted pod is gone (GET: %d %s)"
          % (mode, st, doc))
    check(not listed(srv, name), "%s: the deleted pod is not listed" % mode)
    check(delete(srv, name) == 404, "%s: DELETE of the deleted pod is 404"
          % mode)
    # Its node is free: a pod that needs the whole node fits.
    create(srv, "fill-" + mode, "1")
    node = wait_for(lambda: bound_node(srv, "fill-" + mode))
    check(node == "n1", "%s: the deleted pod's cpu is free (a 1-cpu pod "
          "binds to n1: %s)" % (mode, node))
    check(delete(srv, "fill-" + mode) == 200, "%s: fill pod deleted" % mode)
    # The name can be used again, and the new pod schedules.
    create(srv, name, "1")
    node = wait_for(lambda: bound_node(srv, name))
    check(node == "n1", "%s: the name is created again and binds (%s)"
          % (mode, node))
    check(delete(srv, name) == 200, "%s: the new pod is deleted" % mode)


def victim_delete(srv, watch):
    # A pending pod no node can take, then a pod that deletes it at its own
    # Reserve.
    create(srv, "victim", "100", {"ksched-test/role": "victim"})
    wait_for(lambda: (get_pod(srv, "victim")[1] or {}).get("status", {})
             .get("conditions"))
    create(srv, "killer", "500m", {"ksched-test/delete": "victim"})
    node = wait_for(lambda: bound_node(srv, "killer"))
    check(node == "n1", "victim: the deleting pod binds (%s)" % node)
    st, doc = get_pod(srv, "victim")
    check(st == 404, "victim: the pending pod deleted by a plugin is gone "
          "(GET: %d %s)" % (st, doc))
    check(not listed(srv, "victim"), "victim: not listed")
    # The watch is read by another thread: the event can arrive after the
    # GET that saw the killer bound.
    wait_for(lambda: watch.has("Preempted", "default/victim"))
    check(watch.has("Preempted", "default/victim"),
          "victim: the deletion is reported")
    create(srv, "victim", "500m")
    node = wait_for(lambda: bound_node(srv, "victim"))
    check(node == "n1", "victim: the name is created again and binds (%s)"
          % node)


def main():
    if len(sys.argv) != 4:
        fatal(__doc__)
    ksched, plugin_dir, fixture_dir = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-serve-delete-")
    cfg = os.path.join(tmp, "config.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    env = dict(os.environ)
    env.pop("KSCHED_PLUGIN_PATH", None)
    env["TMPDIR"] = tmp
    srv = Server(ksched, ["--config", cfg, "--plugin-dir", plugin_dir,
                          "--plugin-dir", fixture_dir,
                          "--no-default-plugin-path",
                          "--listen", "127.0.0.1:0"], env)
    try:
        c = srv.conn()
        st, _, _ = request(c, "POST", "/api/v1/nodes", node_obj("n1", "1"))
        c.close()
        check(st == 201, "node n1 (1 cpu) created")
        watch = Watch(srv)
        for mode in ("reserve", "permit", "prebind"):
            self_delete(srv, watch, mode)
        victim_delete(srv, watch)
        # The new victim's binding is the last event: once the watch thread
        # has read it, it has read every binding before it.
        wait_for(lambda: watch.has("Binding", "default/victim"))
        for mode in ("reserve", "permit", "prebind"):
            pod = "default/doomed-" + mode
            n = sum(1 for e in watch.events
                    if e.get("type") == "Binding" and e.get("pod") == pod)
            # One binding: the pod created again under the same name.
            check(n == 1, "%s: no binding was reported for the deleted pod "
                  "(%d bindings of %s, 1 expected: the new one)"
                  % (mode, n, pod))
        srv.proc.terminate()
        check(srv.wait_exit() == 0, "serve exits 0 on SIGTERM")
    finally:
        srv.kill()
        print("--- serve stderr (last 40 lines) ---")
        print(srv.log())
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
