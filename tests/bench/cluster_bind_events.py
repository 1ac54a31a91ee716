#!/usr/bin/env python3
"""The API server's ceiling for a scheduler's writes per pod, no scheduler.

  cluster_bind_events.py K8S_LOAD DIR M --nodes N [--prefix bind-] [--threads 16]

For each pending pod PREFIX0..M-1 (created beforehand with the shared
folder's `load pods M --scheduler nobody --prefix bind-`) one client thread
POSTs what a scheduler writes for a pod it binds: the Binding (round robin
over node-0..N-1) and then an events.k8s.io/v1 Event "Scheduled" shaped as
ksched and kube-scheduler write it. K8S_LOAD is the shared folder's `load`
script; its client (one HTTPS keep-alive connection per thread, retries on
429/5xx) is reused so this ceiling and the Binding-only one are measured
with the same client. Prints one JSON line like `load bind`, with
"what": "bind+event" and the events written."""
import datetime
import importlib.machinery
import importlib.util
import sys


def load_module(path):
    loader = importlib.machinery.SourceFileLoader("k8s_load", path)
    spec = importlib.util.spec_from_loader("k8s_load", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def event(name, uid, node, seq):
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "%s.%x%04x" % (name, int(now.timestamp() * 1e9), seq & 0xffff),
                         "namespace": "default"},
            "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-bench",
            "action": "Binding", "reason": "Scheduled", "type": "Normal",
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                          "name": name, "uid": uid},
            "note": "Successfully assigned default/%s to %s" % (name, node)}


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    load = load_module(args[0])
    d = args[1]
    rest = args[2:]
    threads = load.opt(rest, "--threads", 16)
    prefix = load.opt(rest, "--prefix", "bind-")
    n = load.opt(rest, "--nodes", 0)
    if n <= 0 or not rest:
        sys.exit("cluster_bind_events.py needs M and --nodes N")
    m = int(rest[0])
    api = load.Api(d)

    def one(j):
        name = prefix + str(j)
        node = "node-%d" % (j % n)
        api.call("POST", "/api/v1/namespaces/default/pods/%s/binding" % name,
                 {"apiVersion": "v1", "kind": "Binding",
                  "metadata": {"name": name, "namespace": "default"},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        api.call("POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                 event(name, uids.get(name, ""), node, j))

    # The pods' uids, listed before the clock starts (a scheduler knows
    # them from its watch).
    uids = {}
    cont = ""
    while True:
        q = "/api/v1/namespaces/default/pods?limit=500" + ("&continue=" + cont if cont else "")
        _, out = api.call("GET", q)
        doc = load.json.loads(out)
        for p in doc.get("items", []):
            uids[p["metadata"]["name"]] = p["metadata"]["uid"]
        cont = doc.get("metadata", {}).get("continue", "")
        if not cont:
            break
    list_cpu = load.time.process_time()
    secs = load.parallel(m, threads, one)
    load.report("bind+event", m, secs, api, threads=threads, events=m,
                list_cpu_s=round(list_cpu, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
