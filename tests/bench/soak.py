#!/usr/bin/env python3
"""Soak: pod create -> bind -> delete cycles through `ksched serve`'s
embedded API, watching the scheduler's memory.

Usage: soak.py KSCHED PLUGIN_DIR [CYCLES] [--annotation BYTES]

Starts `ksched serve` (embedded API, loopback, a free port) with three
large nodes, then runs CYCLES (default 1,000,000) cycles in batches of
500: POST the pods (each with a distinct name and uid, and an annotation
of BYTES bytes, default 1024), read the bindings watch until all 500 are
bound, DELETE them. Prints one JSON line at the start and after every
tenth of the run: cycles done, the scheduler's RSS (VmRSS) and peak
(VmHWM), and the cycle rate over that tenth; then a summary with the RSS
at 10% and at the end relative to the start. Standard library only.
"""
import http.client
import json
import re
import subprocess
import sys
import threading
import time

BATCH = 500


def worker(pid):
    """The supervisor's worker (its child): the process that schedules."""
    try:
        kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
    except OSError:
        kids = []
    return int(kids[0]) if kids else pid


def rss(pid):
    out = {}
    for line in open("/proc/%d/status" % pid):
        if line.startswith(("VmRSS:", "VmHWM:")):
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0]) * 1024
    return out


def main():
    args = sys.argv[1:]
    ann = 1024
    if "--annotation" in args:
        i = args.index("--annotation")
        ann = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    ksched, plugins = args[0], args[1]
    cycles = int(args[2]) if len(args) > 2 else 1000000
    p = subprocess.Popen([ksched, "serve", "--plugin-dir", plugins,
                          "--listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    port = None
    for raw in p.stderr:
        m = re.search(rb"listening on http://127.0.0.1:(\d+)", raw)
        if m:
            port = int(m.group(1))
            break
    threading.Thread(target=lambda: [None for _ in p.stderr],
                     daemon=True).start()
    if port is None:
        sys.exit("serve did not start")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(method, path, body=None):
        c.request(method, path, body=json.dumps(body) if body else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        if r.status >= 300 and not (method == "DELETE" and r.status == 404):
            sys.exit("%s %s -> %d %s" % (method, path, r.status, data[:200]))
        return data

    for i in range(3):
        call("POST", "/api/v1/nodes", {
            "metadata": {"name": "n%d" % i},
            "status": {"allocatable": {"cpu": "1000", "memory": "4Ti",
                                       "pods": "100000"}}})
    w = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    w.request("GET", "/api/v1/bindings?watch=true")
    wr = w.getresponse()
    note = "x" * ann
    start = rss(worker(p.pid))
    print(json.dumps({"what": "start", "cycles": 0, "rss": start["VmRSS"],
                      "hwm": start["VmHWM"]}), flush=True)
    marks = {}
    done = 0
    t_mark = time.time()
    tenth = max(BATCH, cycles // 10)
    next_mark = tenth
    while done < cycles:
        names = ["p%d" % (done + j) for j in range(BATCH)]
        for nm in names:
            call("POST", "/api/v1/namespaces/default/pods", {
                "metadata": {"name": nm, "uid": "uid-" + nm,
                             "annotations": {"soak/note": note}},
                "spec": {"containers": [{"name": "c", "image": "pause",
                                         "resources": {"requests": {
                                             "cpu": "10m"}}}]}})
        seen = 0
        while seen < BATCH:
            line = wr.readline()
            if not line:
                sys.exit("the bindings watch ended")
            if b'"Binding"' in line:
                seen += 1
        for nm in names:
            call("DELETE", "/api/v1/namespaces/default/pods/" + nm)
        done += BATCH
        if done >= next_mark or done >= cycles:
            now = time.time()
            m = rss(worker(p.pid))
            marks[done] = m["VmRSS"]
            print(json.dumps({"what": "progress", "cycles": done,
                              "rss": m["VmRSS"], "hwm": m["VmHWM"],
                              "rate": round(tenth / (now - t_mark), 1)}),
                  flush=True)
            t_mark = now
            next_mark += tenth
    ten = marks[min(marks)]
    end = marks[max(marks)]
    print(json.dumps({"what": "summary", "cycles": done,
                      "annotation_bytes": ann, "rss_start": start["VmRSS"],
                      "rss_at_10pct": ten, "rss_end": end,
                      "end_vs_10pct": round(end / ten, 3)}), flush=True)
    p.terminate()
    p.wait(20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
