"""Shared helpers of the serve hardening tests: start `ksched serve`, talk
to it over HTTP (or HTTPS), check and report (the checks and the report
are ../lib/ksched_test's). Standard library only."""
import http.client
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from ksched_test import (ServeProcess, check, failures,  # noqa: E402,F401
                         fatal, recv_until_closed, summary as finish)


class Server(ServeProcess):
    """`ksched serve ARGS`, its stderr collected; addr is what it printed
    after "listening on" (http://HOST:PORT, https://HOST:PORT)."""

    def __init__(self, ksched, args, env, wait=True):
        super().__init__(ksched, args, env)
        if not wait:
            return
        if not self.started.wait(60) or self.addr is None:
            self.kill()
            fatal("serve did not start: " + "\n".join(self.lines))
        scheme, rest = self.addr.split("://", 1)
        host, port = rest.rsplit(":", 1)
        self.scheme, self.host, self.port = scheme, host, int(port)

    def conn(self, timeout=60, context=None):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port,
                                               timeout=timeout,
                                               context=context)
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=timeout)

    def wait_exit(self, timeout=60):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(10)

    def log(self):
        return "\n".join(self.lines[-40:])


def request(conn, method, path, body=None, headers=None):
    h = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    raw = r.read()
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        doc = None
    return r.status, doc, r


def node_obj(name, cpu="1", pods="110"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi",
                                       "pods": pods}}}


def pod_obj(name, cpu="100m", labels=None):
    md = {"name": name}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests":
                                                   {"cpu": cpu}}}]}}


def wait_for(fn, timeout=30, step=0.05):
    """Poll fn() until it returns something true (then return it), or
    give up after `timeout` seconds (then return the last value)."""
    deadline = time.time() + timeout
    v = fn()
    while not v and time.time() < deadline:
        time.sleep(step)
        v = fn()
    return v
