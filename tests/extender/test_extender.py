#!/usr/bin/env python3
"""A scheduler extender for tests (standard library only).

Speaks k8s.io/kube-scheduler/extender/v1 JSON on POST /<verb>. What it
answers comes from a JSON control file (re-read on every request), so a
test can change the behaviour per case:

  {"filter":     {"reject": {"node": "reason"}, "unresolvable": {...},
                  "mode": "ok|error|garbage|http500|slow|hang",
                  "delay": seconds, "message": "Error text"},
                  "answer": "nodes|names" (default: NodeNames when they
                  were sent, else Nodes),
   "prioritize": {"scores": {"node": 0..10}, "mode": ..., "delay": ...},
   "bind":       {"mode": ..., "message": ...},
   "preempt":    {"drop": [node], "victims": {"node": [uid]}, "mode": ...},
   "case":       "lower|camel|upper" (the answers' field names so spelled,
                  as extenders written outside Go often answer)}
  A filter's "drop": [node] leaves nodes out of its answer without a
  reason in FailedNodes.

Every request is appended to <control>.log as one JSON line
{"verb", "body"} so tests can check what ksched sent.

Usage: test_extender.py CONTROL_FILE  (prints the port it listens on)
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTROL = sys.argv[1]


def control():
    try:
        with open(CONTROL) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


GO_FIELDS = {"NodeNames", "Nodes", "FailedNodes", "FailedAndUnresolvableNodes",
             "Error", "Host", "Score", "NodeNameToMetaVictims", "Pods", "UID",
             "NumPDBViolations", "items", "metadata", "name"}


def spell(key, case):
    if key not in GO_FIELDS:
        return key
    if case == "lower":
        return key.lower()
    if case == "upper":
        return key.upper()
    if case == "camel":
        return key[0].lower() + key[1:]
    return key


def respell(v, case, in_map=False):
    """The answer with its Go field names spelled in `case` (map keys, the
    node names of FailedNodes and NodeNameToMetaVictims, are left)."""
    if isinstance(v, list):
        return [respell(x, case) for x in v]
    if isinstance(v, dict):
        return {(k if in_map else spell(k, case)):
                respell(x, case, k in ("FailedNodes", "FailedAndUnresolvableNodes",
                                       "NodeNameToMetaVictims") and not in_map)
                for k, x in v.items()}
    return v


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body):
        case = control().get("case")
        if case and code == 200 and isinstance(body, str):
            try:
                body = json.dumps(respell(json.loads(body), case))
            except ValueError:
                pass
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"null")
        verb = self.path.strip("/").split("/")[-1]
        with open(CONTROL + ".log", "a") as f:
            f.write(json.dumps({"verb": verb, "body": body}) + "\n")
        c = control().get(verb, {})
        mode = c.get("mode", "ok")
        if c.get("delay"):
            time.sleep(c["delay"])
        if mode == "http500":
            return self.reply(500, "{}")
        if mode == "garbage":
            return self.reply(200, "{not json")
        if mode == "error":
            return self.reply(200, json.dumps({"Error": c.get("message", "extender failed")}))
        if verb == "filter":
            return self.filter(body, c)
        if verb == "prioritize":
            return self.prioritize(body, c)
        if verb == "bind":
            return self.reply(200, json.dumps({"Error": ""}))
        if verb == "preempt":
            return self.preempt(body, c)
        return self.reply(404, "{}")

    def preempt(self, body, c):
        # Victims as UIDs, from whichever map was sent; "drop" removes
        # nodes, "victims" replaces a node's victims by UIDs (a node not
        # sent is added).
        if body.get("NodeNameToMetaVictims") is not None:
            m = {n: [p["UID"] for p in v["Pods"]]
                 for n, v in body["NodeNameToMetaVictims"].items()}
        else:
            m = {n: [p["metadata"]["uid"] for p in v["Pods"]]
                 for n, v in body["NodeNameToVictims"].items()}
        for n in c.get("drop", []):
            m.pop(n, None)
        m.update(c.get("victims", {}))
        return self.reply(200, json.dumps({"NodeNameToMetaVictims": {
            n: {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": 0}
            for n, uids in m.items()}}))

    def names(self, body):
        if body.get("NodeNames") is not None:
            return list(body["NodeNames"])
        return [n["metadata"]["name"] for n in body["Nodes"]["items"]]

    def filter(self, body, c):
        rej = c.get("reject", {})
        unr = c.get("unresolvable", {})
        names = self.names(body)
        drop = c.get("drop", [])
        keep = [n for n in names if n not in rej and n not in unr and
                n not in drop]
        res = {"FailedNodes": {n: r for n, r in rej.items() if n in names},
               "FailedAndUnresolvableNodes": {n: r for n, r in unr.items() if n in names},
               "Error": ""}
        answer = c.get("answer",
                       "names" if body.get("NodeNames") is not None else "nodes")
        if answer == "names":
            res["NodeNames"] = keep
            res["Nodes"] = None
        elif body.get("Nodes") is not None:
            res["Nodes"] = {"items": [n for n in body["Nodes"]["items"]
                                      if n["metadata"]["name"] in keep]}
            res["NodeNames"] = None
        else:  # a NodeList of objects the extender builds from the names
            res["Nodes"] = {"apiVersion": "v1", "kind": "NodeList",
                            "items": [{"metadata": {"name": n}} for n in keep]}
            res["NodeNames"] = None
        return self.reply(200, json.dumps(res))

    def prioritize(self, body, c):
        sc = c.get("scores", {})
        return self.reply(200, json.dumps(
            [{"Host": n, "Score": sc.get(n, 0)} for n in self.names(body)]))


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # ksched gave up on a slow answer (httpTimeout): expected


srv = Server(("127.0.0.1", 0), H)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
