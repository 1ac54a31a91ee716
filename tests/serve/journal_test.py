#!/usr/bin/env python3
"""The embedded API's objects survive a worker's death and serve's restart.

Usage: journal_test.py KSCHED PLUGIN_BUILD_DIR

1. Supervised serve: nodes and pods are created and bound; the worker is
   killed (SIGKILL, outside any plugin call): the supervisor starts a new
   one, which comes back with the same nodes, the bound pods on the same
   nodes, and schedules the pods created after the kill's restart; a pod
   created while the worker was down is refused or accepted, never half.
   A bindings watch resumes from the last resourceVersion it saw and gets
   exactly the bindings after it.
2. --state-file: serve is stopped (SIGTERM) and started again on the same
   file: the same objects come back; deleted ones stay deleted.
"""
import json
import os
import re
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test  # noqa: E402
from ksched_test import check, fatal, wait_for  # noqa: E402

NS = "/api/v1/namespaces/default/pods"


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
            "labels": {"zone": "z1"}, "annotations": {"kept": "yes"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def pod(name, cpu="500m"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources":
                                     {"requests": {"cpu": cpu}}}]}}


def call(srv, method, path, body=None):
    c = srv.conn(10)
    try:
        c.request(method, path, json.dumps(body) if body else None,
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read().decode()
    except OSError:
        return 0, ""
    finally:
        c.close()


def placement(srv):
    st, text = call(srv, "GET", "/api/v1/pods")
    if st != 200:
        return None
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "")
            for p in json.loads(text)["items"]}


def watch_events(srv, query, n, timeout=20):
    """The first n events of a bindings watch with `query`."""
    c = srv.conn(timeout)
    c.request("GET", "/api/v1/bindings?watch=true" + query)
    r = c.getresponse()
    out = []
    while len(out) < n:
        line = r.readline()
        if not line:
            break
        if line.strip():
            out.append(json.loads(line))
    c.close()
    return out


def supervised(ksched, plugins):
    srv = ksched_test.Serve(ksched, ["--embedded", "--listen", "127.0.0.1:0",
                                     "--plugin-dir", plugins,
                                     "--no-default-plugin-path"])
    try:
        for i in range(3):
            check(call(srv, "POST", "/api/v1/nodes", node("n%d" % i))[0]
                  == 201, "node n%d created" % i)
        for i in range(6):
            check(call(srv, "POST", NS, pod("a%d" % i))[0] == 201,
                  "pod a%d created" % i)
        wait_for("a0..a5 bound", lambda: all(
            (placement(srv) or {}).get("a%d" % i) for i in range(6)), 30)
        before = placement(srv)
        first = watch_events(srv, "&sendInitialEvents=true", 6)
        rvs = sorted(int(e["resourceVersion"]) for e in first)
        check(rvs == list(range(1, 7)),
              "the six bindings carry resourceVersions 1..6, got %r" % rvs)
        check(call(srv, "DELETE", NS + "/a5")[0] == 200, "a5 deleted")

        old = srv.worker_pid()
        check(old != srv.proc.pid, "serve runs a worker under a supervisor")
        os.kill(old, signal.SIGKILL)
        check(srv.log_has(r"worker %d died from SIGKILL outside plugin code"
                          % old), "the supervisor says the worker died")
        check(srv.log_has(r"journal: restored 3 node\(s\) and 5 pod\(s\) "
                          r"\(5 bound, 0 to schedule\)"),
              "the new worker restores the nodes and pods")
        wait_for("the new worker answers",
                 lambda: srv.worker_pid() != old and
                 call(srv, "GET", "/readyz")[0] == 200, 30)
        after = placement(srv)
        check(after == {k: v for k, v in before.items() if k != "a5"},
              "the bound pods are back on the same nodes, a5 stays deleted: "
              "%r" % after)
        st, text = call(srv, "GET", "/api/v1/nodes/n1")
        check(st == 200 and json.loads(text)["metadata"]["labels"]
              .get("zone") == "z1", "node n1 is back with its labels")
        for i in range(3):
            check(call(srv, "POST", NS, pod("b%d" % i))[0] == 201,
                  "pod b%d created after the restart" % i)
        wait_for("b0..b2 bound", lambda: all(
            (placement(srv) or {}).get("b%d" % i) for i in range(3)), 30)
        # Resume after the fourth binding: a4 (rv 5), b0..b2 (rv 7..9), in
        # order; a5 (rv 6) was deleted.
        ev = watch_events(srv, "&resourceVersion=4", 4)
        got = [(e["pod"], e["resourceVersion"]) for e in ev]
        want_pods = [first[[int(x["resourceVersion"]) for x in first]
                           .index(5)]["pod"]] + \
            ["default/b%d" % i for i in range(3)]
        check([p for p, _ in got] == want_pods and
              [int(r) for _, r in got] == [5, 7, 8, 9],
              "the watch resumes after resourceVersion 4: %r" % got)
    finally:
        rc = srv.stop()
        check(rc == 0, "serve stops cleanly (status %r)" % rc)


def state_file(ksched, plugins):
    tmp = tempfile.mkdtemp(prefix="ksched-journal-")
    path = os.path.join(tmp, "state.journal")
    args = ["--embedded", "--listen", "127.0.0.1:0", "--plugin-dir", plugins,
            "--no-default-plugin-path", "--state-file", path]
    srv = ksched_test.Serve(ksched, args)
    try:
        for i in range(2):
            call(srv, "POST", "/api/v1/nodes", node("m%d" % i))
        for i in range(4):
            call(srv, "POST", NS, pod("s%d" % i))
        wait_for("s0..s3 bound", lambda: all(
            (placement(srv) or {}).get("s%d" % i) for i in range(4)), 30)
        check(call(srv, "DELETE", NS + "/s3")[0] == 200, "s3 deleted")
        check(call(srv, "DELETE", "/api/v1/nodes/m1")[0] == 200,
              "m1 deleted")
        before = placement(srv)
    finally:
        check(srv.stop() == 0, "first serve stops cleanly")
    with open(path) as f:
        lines = [json.loads(l) for l in f]
    check(all(isinstance(l, dict) for l in lines) and lines,
          "the state file holds JSON records")
    srv = ksched_test.Serve(ksched, args)
    try:
        check(srv.log_has(r"journal: restored 1 node\(s\) and 3 pod\(s\)"),
              "the second serve restores 1 node and 3 pods")
        check(placement(srv) == before,
              "the same pods on the same nodes: %r" % placement(srv))
        check(call(srv, "GET", "/api/v1/nodes/m1")[0] == 404,
              "the deleted node stays deleted")
    finally:
        check(srv.stop() == 0, "second serve stops cleanly")
    with open(path) as f:
        recs = [json.loads(l) for l in f]
    check(len(recs) == 4 and sum(1 for r in recs if "n" in r) == 1,
          "after a restart the file is compacted to 1 node and 3 pods: %d "
          "records" % len(recs))
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugins = sys.argv[1:]
    supervised(ksched, plugins)
    state_file(ksched, plugins)
    print("%d check(s) failed" % len(ksched_test.failures)
          if ksched_test.failures else "all checks passed")
    return 1 if ksched_test.failures else 0


if __name__ == "__main__":
    sys.exit(main())
