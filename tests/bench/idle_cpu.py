#!/usr/bin/env python3
"""The CPU an idle or nearly idle `ksched serve` takes, per parallelism.

Usage: idle_cpu.py KSCHED PLUGIN_DIR [--nodes N] [--pods P] [--gap S]
                   [--idle S] [--parallelism 1,2]

For each parallelism: starts `ksched serve` (standalone, a configuration
with that `parallelism`), creates N nodes (default 5,000), then measures
the scheduling worker's CPU (user + system, every thread, from
/proc/PID/stat) over two phases:

- idle: S seconds (default 5) with nothing to schedule;
- trickle: P pods (default 20) created one every S seconds (default 0.5),
  the arrival rate of a quiet cluster, each waited for until bound.

Prints one JSON line per parallelism: the CPU seconds of each phase, the
share of one core they are, and the CPU per pod of the trickle. A pool
whose workers spun between such pods would show up as a share of a core
per extra worker. Standard library only; a benchmark, not a test (it
prints figures and checks only that every pod was bound). Exit 1 when a
pod was not bound or serve failed, 2 on a usage error.
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return type(default)(v)
    return default


def cpu_s(pid):
    """utime + stime of every thread of pid, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=json.dumps(body) if body else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def worker_pid(sup):
    """serve's supervisor runs the scheduler in a child process."""
    for _ in range(100):
        try:
            with open("/proc/%d/task/%d/children" % (sup, sup)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.05)
    return sup


def run(ksched, plugins, par, nodes, pods, gap, idle):
    d = tempfile.mkdtemp(prefix="idle-cpu-")
    cfg = os.path.join(d, "config.yaml")
    with open(cfg, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\n"
                "kind: KubeSchedulerConfiguration\n"
                "parallelism: %d\n"
                "profiles:\n- schedulerName: default-scheduler\n" % par)
    log = open(os.path.join(d, "serve.log"), "w+")
    p = subprocess.Popen([ksched, "serve", "--config", cfg, "--plugin-dir",
                          plugins, "--no-default-plugin-path", "--listen",
                          "127.0.0.1:0"], stdout=subprocess.DEVNULL,
                         stderr=log)
    try:
        port = None
        for _ in range(300):
            log.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)",
                          log.read())
            if m:
                port = int(m.group(1))
                break
            if p.poll() is not None:
                break
            time.sleep(0.05)
        if port is None:
            log.seek(0)
            sys.exit("idle_cpu: serve did not start:\n" + log.read())
        for i in range(nodes):
            st, _ = call(port, "POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "node-%d" % i, "labels": {
                    "kubernetes.io/hostname": "node-%d" % i,
                    "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}},
                "status": {"allocatable": {"cpu": "4", "memory": "32Gi",
                                           "pods": "110"}}})
            if st not in (200, 201):
                sys.exit("idle_cpu: POST node: HTTP %d" % st)
        w = worker_pid(p.pid)
        time.sleep(1.0)  # the node events settle
        c0 = cpu_s(w)
        t0 = time.time()
        time.sleep(idle)
        idle_cpu = cpu_s(w) - c0
        idle_wall = time.time() - t0
        c0 = cpu_s(w)
        t0 = time.time()
        unbound = 0
        for j in range(pods):
            name = "trickle-%d" % j
            st, _ = call(port, "POST", "/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{
                    "name": "c", "image": "pause",
                    "resources": {"requests": {"cpu": "100m",
                                               "memory": "256Mi"}}}]}})
            if st not in (200, 201):
                sys.exit("idle_cpu: POST pod: HTTP %d" % st)
            deadline = time.time() + 10
            bound = False
            while time.time() < deadline and not bound:
                st, body = call(port, "GET",
                                "/api/v1/namespaces/default/pods/" + name)
                bound = st == 200 and \
                    json.loads(body).get("spec", {}).get("nodeName")
                if not bound:
                    time.sleep(0.01)
            unbound += 0 if bound else 1
            time.sleep(gap)
        trickle_cpu = cpu_s(w) - c0
        trickle_wall = time.time() - t0
        out = {"parallelism": par, "nodes": nodes,
               "idle_s": round(idle_wall, 2),
               "idle_cpu_s": round(idle_cpu, 3),
               "idle_core_share": round(idle_cpu / idle_wall, 4),
               "trickle_pods": pods, "trickle_gap_s": gap,
               "trickle_s": round(trickle_wall, 2),
               "trickle_cpu_s": round(trickle_cpu, 3),
               "trickle_core_share": round(trickle_cpu / trickle_wall, 4),
               "cpu_ms_per_pod": round(1000 * trickle_cpu / pods, 2),
               "unbound": unbound}
        print(json.dumps(out), flush=True)
        return 0 if unbound == 0 else 1
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
        log.close()


def main():
    args = sys.argv[1:]
    nodes = opt(args, "--nodes", 5000)
    pods = opt(args, "--pods", 20)
    gap = opt(args, "--gap", 0.5)
    idle = opt(args, "--idle", 5.0)
    pars = opt(args, "--parallelism", "1,2")
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rc = 0
    for par in [int(x) for x in pars.split(",")]:
        rc |= run(args[0], args[1], par, nodes, pods, gap, idle)
    return rc


if __name__ == "__main__":
    sys.exit(main())
