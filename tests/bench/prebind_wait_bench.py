#!/usr/bin/env python3
"""Do pods waiting in VolumeBinding's PreBind slow the others down?

Usage: prebind_wait_bench.py KSCHED PLUGIN_DIR K8S_DIR [PLAIN] [WAITING]
                             [ROUNDS]

On a real API server (`up` from the shared k8s folder), enough nodes for
every round's pods (at least 100), ksched
in cluster mode with the default profile (VolumeBinding in it), in one run:

  phase A  PLAIN pods (default 1000) without volumes, created pending
           while ksched is stopped; ksched started; the clock runs from its
           /readyz to the last pod bound.
  phase B  WAITING pods (default 100) whose claim is of a
           WaitForFirstConsumer class nobody provisions (so each waits in
           PreBind for bindTimeoutSeconds, 600 s) and PLAIN more pods
           without volumes, all created pending while ksched is stopped;
           ksched started; the same clock for the PLAIN pods; then the
           waiting pods and claims are deleted.

A then B, ROUNDS times (default 3), alternating so that the machine's
load falls on both alike. Prints both rates (pods bound per second) and
their ratio per round, and the medians; checks that the waiting pods
really waited (their claims carry the scheduler's selected-node
annotation, the pods are not bound). A benchmark, not a
test: it prints figures; it fails only when a phase does not finish.
Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
from cluster_test import Api, cluster_up, k8s_scripts, write  # noqa: E402
import ksched_test  # noqa: E402

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: ksched
"""


def load(k8s, d, *args):
    r = subprocess.run([os.path.join(k8s, "load"), d] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit("load %s: %s" % (" ".join(args),
                                  r.stderr.decode(errors="replace")))
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def bound_count(api, prefix):
    doc = api.must("GET", "/api/v1/namespaces/default/pods")
    return sum(1 for p in doc["items"]
               if p["metadata"]["name"].startswith(prefix) and
               p["spec"].get("nodeName"))


def phase(ksched, plugin_dir, cfg, kc, api, prefix, n):
    srv = ksched_test.Serve(ksched, ["--kubeconfig", kc, "--config", cfg,
                                     "--listen", "127.0.0.1:0",
                                     "--plugin-dir", plugin_dir])
    try:
        if not srv.ready(120):
            sys.exit("ksched serve not ready:\n" + "\n".join(srv.lines[-20:]))
        t0 = time.time()
        while bound_count(api, prefix) < n:
            if time.time() - t0 > 300:
                sys.exit("%s: only %d of %d bound after 300 s"
                         % (prefix, bound_count(api, prefix), n))
            time.sleep(0.05)
        return n / (time.time() - t0)
    finally:
        srv.stop()


def make_waiting(api, prefix, n):
    """n pods, each with a claim of the class nobody provisions."""
    for i in range(n):
        name = "%s%d" % (prefix, i)
        api.must("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                 {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": name},
                  "spec": {"accessModes": ["ReadWriteOnce"],
                           "storageClassName": "never",
                           "resources": {"requests": {"storage": "1Gi"}}}})
        api.must("POST", "/api/v1/namespaces/default/pods",
                 {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": name},
                  "spec": {"schedulerName": "ksched",
                           "containers": [{"name": "c", "image": "pause"}],
                           "volumes": [{"name": "d",
                                        "persistentVolumeClaim": {
                                            "claimName": name}}]}})


def drop_waiting(api, prefix, n):
    for i in range(n):
        name = "%s%d" % (prefix, i)
        for kind in ("pods", "persistentvolumeclaims"):
            api.call("DELETE", "/api/v1/namespaces/default/%s/%s"
                     % (kind, name))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:4]
    plain = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    waiting = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    up, down = k8s_scripts(k8s)
    k8s = os.path.dirname(up)
    tmp = tempfile.mkdtemp(prefix="ksched-pbw-")
    d, env = cluster_up(up, tmp)
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        kc = os.path.join(d, "admin.kubeconfig")
        # 40 of the load's 100m pods fit a node (4 cpu): room for every
        # round's pods, with a margin.
        nodes = max(100, (2 * plain * rounds + waiting) * 13 // 400)
        load(k8s, d, "nodes", str(nodes))
        api.must("POST", "/apis/storage.k8s.io/v1/storageclasses",
                 {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "never"},
                  "provisioner": "never.example.com",
                  "volumeBindingMode": "WaitForFirstConsumer"})
        pairs = []
        selected = waited = 0
        for rnd in range(rounds):
            a, b, w = "a%d-" % rnd, "b%d-" % rnd, "w%d-" % rnd
            load(k8s, d, "pods", str(plain), "--scheduler", "ksched",
                 "--prefix", a)
            r1 = phase(ksched, plugin_dir, cfg, kc, api, a, plain)
            make_waiting(api, w, waiting)
            load(k8s, d, "pods", str(plain), "--scheduler", "ksched",
                 "--prefix", b)
            r2 = phase(ksched, plugin_dir, cfg, kc, api, b, plain)
            claims = api.must("GET", "/api/v1/namespaces/default/"
                              "persistentvolumeclaims")["items"]
            selected = sum(1 for c in claims
                           if c["metadata"]["name"].startswith(w) and
                           (c["metadata"].get("annotations") or {}).get(
                               "volume.kubernetes.io/selected-node"))
            waited = waiting - bound_count(api, w)
            if selected < waiting or waited != waiting:
                sys.exit("round %d: the volume pods did not all wait in "
                         "PreBind (%d selected, %d unbound)"
                         % (rnd, selected, waited))
            drop_waiting(api, w, waiting)
            pairs.append((r1, r2))
            print(json.dumps({"round": rnd, "rate_alone": round(r1, 1),
                              "rate_with_waiting": round(r2, 1),
                              "ratio": round(r2 / r1, 3)}), flush=True)
        ratios = sorted(r2 / r1 for r1, r2 in pairs)
        print(json.dumps({
            "plain_pods": plain, "waiting_pods": waiting, "rounds": rounds,
            "median_rate_alone": round(sorted(p[0] for p in pairs)[
                rounds // 2], 1),
            "median_rate_with_waiting": round(sorted(p[1] for p in pairs)[
                rounds // 2], 1),
            "median_ratio": round(ratios[rounds // 2], 3)}))
    finally:
        subprocess.run([down, d])
        ksched_test.keep_or_remove(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
