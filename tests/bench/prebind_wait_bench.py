#!/usr/bin/env python3
"""Do pods waiting in VolumeBinding's PreBind slow the others down?

Usage: prebind_wait_bench.py KSCHED PLUGIN_DIR K8S_DIR [PLAIN] [WAITING]

On a real API server (`up` from the shared k8s folder), 100 nodes, ksched
in cluster mode with the default profile (VolumeBinding in it), in one run:

  phase 1  PLAIN pods (default 1000) without volumes, created pending
           while ksched is stopped; ksched started; the clock runs from its
           /readyz to the last pod bound.
  phase 2  WAITING pods (default 100) whose claim is of a
           WaitForFirstConsumer class nobody provisions (so each waits in
           PreBind for bindTimeoutSeconds, 600 s) and PLAIN more pods
           without volumes, all created pending while ksched is stopped;
           ksched started; the same clock for the PLAIN pods.

Prints both rates (pods bound per second) and their ratio, and checks
that the waiting pods really waited (their claims carry the scheduler's
selected-node annotation, the pods are not bound). A benchmark, not a
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


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:4]
    plain = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    waiting = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    up, down = k8s_scripts(k8s)
    k8s = os.path.dirname(up)
    tmp = tempfile.mkdtemp(prefix="ksched-pbw-")
    d, env = cluster_up(up, tmp)
    try:
        api = Api(env, env["ADMIN_TOKEN"])
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        kc = os.path.join(d, "admin.kubeconfig")
        load(k8s, d, "nodes", "100")
        api.must("POST", "/apis/storage.k8s.io/v1/storageclasses",
                 {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "never"},
                  "provisioner": "never.example.com",
                  "volumeBindingMode": "WaitForFirstConsumer"})
        load(k8s, d, "pods", str(plain), "--scheduler", "ksched",
             "--prefix", "a-")
        r1 = phase(ksched, plugin_dir, cfg, kc, api, "a-", plain)
        for i in range(waiting):
            api.must("POST", "/api/v1/namespaces/default/"
                     "persistentvolumeclaims",
                     {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": "w-%d" % i},
                      "spec": {"accessModes": ["ReadWriteOnce"],
                               "storageClassName": "never",
                               "resources": {"requests": {
                                   "storage": "1Gi"}}}})
            api.must("POST", "/api/v1/namespaces/default/pods",
                     {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "w-%d" % i},
                      "spec": {"schedulerName": "ksched",
                               "containers": [{"name": "c",
                                               "image": "pause"}],
                               "volumes": [{"name": "d",
                                            "persistentVolumeClaim": {
                                                "claimName": "w-%d" % i}}]}})
        load(k8s, d, "pods", str(plain), "--scheduler", "ksched",
             "--prefix", "b-")
        r2 = phase(ksched, plugin_dir, cfg, kc, api, "b-", plain)
        claims = api.must("GET", "/api/v1/namespaces/default/"
                          "persistentvolumeclaims")["items"]
        selected = sum(1 for c in claims
                       if (c["metadata"].get("annotations") or {}).get(
                           "volume.kubernetes.io/selected-node"))
        waited = waiting - bound_count(api, "w-")
        print(json.dumps({
            "plain_pods": plain, "waiting_pods": waiting,
            "rate_alone": round(r1, 1), "rate_with_waiting": round(r2, 1),
            "ratio": round(r2 / r1, 3),
            "claims_with_selected_node": selected,
            "waiting_pods_unbound": waited}))
        if selected < waiting or waited != waiting:
            sys.exit("the volume pods did not all wait in PreBind")
    finally:
        subprocess.run([down, d])
        ksched_test.keep_or_remove(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
