#!/usr/bin/env python3
"""Shadow mode on a real kube-apiserver beside the real kube-scheduler.

Usage: shadow_cluster_test.py KSCHED PLUGIN_DIR K8S_DIR SOURCE_ROOT

kube-scheduler v1.24 (K8S_DIR/bin) schedules a stream of pods as
default-scheduler on four nodes in two zones; every other pod spreads over
the zones (PodTopologySpread, ScheduleAnyway) and away from its kind
(preferred anti-affinity), so the scores of every default plugin count. Two `ksched serve --shadow default-scheduler` run
beside it as a user whose RBAC allows only reads (deploy/shadow/rbac.yaml's
ClusterRole): one with the default profile, one with NodeResourcesFit's
MostAllocated (profiles/examples/most-allocated.yaml).

  - with the default profile every decision is same or tied;
  - with MostAllocated the differences are counted and listed in
    /debug/shadow, with NodeResourcesFit named, both nodes' --explain
    lines, and a log line each at -v;
  - a pod that fits nowhere is unschedulable for real: same for the
    default profile, placed for a profile without NodeResourcesFit's
    Filter;
  - a plugin replaced in place (the first one's NodeResourcesFit .so)
    and a hot swap of the second one's configuration to the default profile
    starts a new period: its metrics carry generation 2, whose decisions
    are same or tied;
  - neither tried a write: no POST, PUT, PATCH or DELETE in their REST
    client metrics and nothing forbidden in their logs; nothing of ksched
    on the API server (no events).

Skipped (77) without K8S_DIR's `up`, etcd or openssl (cluster_test.py).
Standard library only.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
import ksched_test  # noqa: E402
from ksched_test import check, fatal, keep_or_remove, summary, wait_for  # noqa: E402,E501
from cluster_test import (Api, cluster_up, k8s_scripts, node_obj,  # noqa: E402
                          pod_obj, write)
from extender_compare_test import (kube_scheduler_bin,  # noqa: E402
                                   stop_kube_scheduler)

NODES = [("n1", "4", "z1"), ("n2", "8", "z1"), ("n3", "8", "z2"),
         ("n4", "16", "z2")]
# (name, cpu): created one at a time, each waited for until bound
PODS1 = [("a%02d" % i, c) for i, c in enumerate(
    ["500m", "1", "250m", "2", "750m", "1500m", "300m", "1", "600m", "2",
     "400m", "1", "200m", "900m"])]
# spread over zones and away from each other (scores only): the plugins
# v1.24 and v1.36 both run by default
SPREAD = {
    "topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}}}],
    "affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 50, "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "web"}}}}]}}}
PODS2 = [("b%02d" % i, c) for i, c in enumerate(
    ["500m", "1", "250m", "700m", "1200m", "300m"])]

# deploy/shadow/rbac.yaml's ClusterRole, as JSON (the test checks the
# manifest names the same resources)
READER_RULES = [
    {"apiGroups": [""], "resources": [
        "pods", "nodes", "namespaces", "services", "replicationcontrollers",
        "persistentvolumeclaims", "persistentvolumes"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["storage.k8s.io"], "resources": [
        "storageclasses", "csinodes", "csidrivers", "csistoragecapacities",
        "volumeattachments"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["resource.k8s.io"], "resources": [
        "resourceclaims", "resourceslices", "deviceclasses",
        "resourceclaimtemplates"], "verbs": ["get", "list", "watch"]},
]

KUBE_SCHEDULER_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
"""

# A profile without NodeResourcesFit's Filter: it places what fits nowhere.
LOOSE_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      disabled:
      - name: NodeResourcesFit
"""

DEFAULT_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def grant_read_only(admin, root):
    manifest = open(os.path.join(root, "deploy", "shadow",
                                 "rbac.yaml")).read()
    for rule in READER_RULES:
        for r in rule["resources"]:
            check('"%s"' % r in manifest, "deploy/shadow/rbac.yaml grants "
                  "%s too" % r)
    check(not re.search(r'"(create|update|patch|delete)"', manifest),
          "deploy/shadow/rbac.yaml grants no write verb")
    admin.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "ksched-shadow-reader"},
                "rules": READER_RULES})
    admin.must("POST",
               "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "ksched-shadow-reader"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole",
                            "name": "ksched-shadow-reader"},
                "subjects": [{"kind": "User", "name": "ksched",
                              "apiGroup": "rbac.authorization.k8s.io"}]})


def place(api, pods, alive):
    for name, cpu in pods:
        p = pod_obj(name, sched="default-scheduler", cpu=cpu,
                    memory="256Mi",
                    labels={"app": "web" if name[-1] in "02468" else "t"})
        if name[-1] in "02468":
            p["spec"].update(SPREAD)
        api.must("POST", "/api/v1/namespaces/default/pods", p)
        path = "/api/v1/namespaces/default/pods/" + name

        def bound():
            if not alive():
                fatal("kube-scheduler exited")
            return api.must("GET", path)["spec"].get("nodeName")
        node = wait_for("kube-scheduler binds " + name, bound, 60, 0.1)
        print("  kube-scheduler: %s (cpu %s) -> %s" % (name, cpu, node),
              flush=True)


def copy_plugins(src, dst):
    """The built plugins' .so files, side by side in dst (the folder serve
    watches for replaced files)."""
    os.makedirs(dst, exist_ok=True)
    for d, dirs, files in os.walk(src):
        dirs[:] = [x for x in dirs if not x.endswith(".p")]
        for f in files:
            if f.endswith(".so"):
                shutil.copy2(os.path.join(d, f), os.path.join(dst, f))


def shadow_doc(srv):
    st, text = srv.get("/debug/shadow")
    return json.loads(text) if st == 200 else {}


def decided(srv, generation=None):
    """Decisions counted (in one generation, or all)."""
    n = 0
    for p in shadow_doc(srv).get("periods", []):
        if generation is None or p["generation"] == generation:
            n += sum(p["decisions"].values())
    return n


def counts(srv, generation):
    out = {}
    for p in shadow_doc(srv).get("periods", []):
        if p["generation"] == generation:
            for k, v in p["decisions"].items():
                out[k] = out.get(k, 0) + v
    return out


def no_writes(name, srv):
    st, text = srv.get("/metrics")
    writes = re.findall(r'rest_client_requests_total\{code="\d+",'
                        r'verb="(POST|PUT|PATCH|DELETE)"\} ([1-9]\d*)', text)
    check(st == 200 and not writes, "%s: no write was tried (REST client "
          "metrics: %s)" % (name, writes or "reads only"))
    check(not any(re.search(r"forbidden", line, re.I)
                  for line in srv.lines),
          "%s: nothing was refused (no \"forbidden\" in the log)" % name)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s, root = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    exe = kube_scheduler_bin(os.path.dirname(up))
    tmp = tempfile.mkdtemp(prefix="ksched-shadow-")
    d, env = cluster_up(up, tmp)
    servers, kube = [], None
    try:
        admin = Api(env, env["ADMIN_TOKEN"])
        grant_read_only(admin, root)
        for name, cpu, zone in NODES:
            admin.must("POST", "/api/v1/nodes", node_obj(
                name, cpu=cpu, memory="32Gi",
                labels={"topology.kubernetes.io/zone": zone}))
        kc = os.path.join(d, "ksched.kubeconfig")
        cfg_default = os.path.join(tmp, "default.yaml")
        write(cfg_default, DEFAULT_CONFIG)
        cfg_most = os.path.join(tmp, "most.yaml")
        write(cfg_most, open(os.path.join(root, "profiles", "examples",
                                          "most-allocated.yaml")).read())
        # the default-profile one runs a copy of the plugins, one of which
        # is replaced in place later
        own_plugins = os.path.join(tmp, "plugins")
        copy_plugins(plugin_dir, own_plugins)
        same = ksched_test.Serve(ksched, [
            "--listen", "127.0.0.1:0", "--plugin-dir", own_plugins,
            "--no-default-plugin-path", "--config", cfg_default,
            "--kubeconfig", kc, "--shadow", "default-scheduler", "-v"])
        servers.append(same)
        most = ksched_test.Serve(ksched, [
            "--listen", "127.0.0.1:0", "--plugin-dir", plugin_dir,
            "--no-default-plugin-path", "--config", cfg_most,
            "--kubeconfig", kc, "--shadow", "default-scheduler", "-v"])
        servers.append(most)
        cfg_loose = os.path.join(tmp, "loose.yaml")
        write(cfg_loose, LOOSE_CONFIG)
        loose = ksched_test.Serve(ksched, [
            "--listen", "127.0.0.1:0", "--plugin-dir", plugin_dir,
            "--no-default-plugin-path", "--config", cfg_loose,
            "--kubeconfig", kc, "--shadow", "default-scheduler"])
        servers.append(loose)
        for n, s in (("default profile", same), ("MostAllocated", most),
                     ("no Fit filter", loose)):
            if not check(bool(s.ready(60)), "%s: serve --shadow becomes "
                         "ready as the read-only user" % n):
                fatal("\n".join(s.lines[-30:]))
        check(same.log_has(r"shadow mode, read-only: comparing "
                           r"default-scheduler with profile "
                           r"default-scheduler", 5) is not None,
              "the log says what is compared")
        st, _ = same.get("/debug/shadow")
        check(st == 200, "/debug/shadow answers 200")

        scfg = os.path.join(tmp, "kube-scheduler.yaml")
        write(scfg, KUBE_SCHEDULER_CONFIG %
              json.dumps(os.path.join(d, "admin.kubeconfig")))
        klog = open(os.path.join(tmp, "kube-scheduler.log"), "w")
        kube = subprocess.Popen([exe, "--config", scfg, "--secure-port", "0",
                                 "-v=2"], stdout=klog, stderr=klog)
        print("kube-scheduler v1.24 schedules %d pods" % len(PODS1),
              flush=True)
        place(admin, PODS1, lambda: kube.poll() is None)
        n1 = len(PODS1)
        for n, s in (("default profile", same), ("MostAllocated", most),
                     ("no Fit filter", loose)):
            check(wait_for("%s: %d decisions" % (n, n1),
                           lambda: decided(s) >= n1, 30),
                  "%s: every binding compared (%d)" % (n, decided(s)))

        # the default profile: same or tied
        c = counts(same, 1)
        print("default profile:", c)
        check(c.get("same", 0) + c.get("tied", 0) == n1,
              "default profile: every decision same or tied: %s" % c)
        for x in shadow_doc(same).get("differences", []):
            check(x["result"] == "tied", "default profile: only ties are "
                  "listed: %s" % json.dumps(x, indent=1))

        # MostAllocated: differences, NodeResourcesFit named
        c = counts(most, 1)
        print("MostAllocated:", c)
        doc = shadow_doc(most)
        diffs = [x for x in doc.get("differences", [])
                 if x["result"] == "different"]
        check(c.get("different", 0) > 0 and len(diffs) == c["different"],
              "MostAllocated: differences counted and listed (%d)" %
              len(diffs))
        for x in diffs:
            check(x["decidedBy"] and
                  x["decidedBy"][0]["plugin"] == "NodeResourcesFit" and
                  x["scoreGap"] == x["kschedScore"] - x["realScore"] > 0 and
                  "NodeResourcesFit" in x["explainReal"] and
                  x["explainKsched"].lstrip().startswith(x["kschedNode"]),
                  "MostAllocated: %s/%s: %s (%s)" % (
                      x["namespace"], x["name"], x["reason"],
                      x["decidedBy"][:1]))
        check(most.log_has(r"shadow: pod default/\S+, profile "
                           r"default-scheduler: different: real node \S+, "
                           r"ksched \S+: \S+ scores \d+, \S+ scores \d+ "
                           r"\(NodeResourcesFit", 5) is not None,
              "MostAllocated: a log line per difference at -v")
        st, text = most.get("/metrics")
        m = re.search(r'ksched_shadow_decisions_total\{profile="default-'
                      r'scheduler",result="different",generation="1"\} '
                      r'(\d+)', text)
        check(m is not None and int(m.group(1)) == c["different"],
              "/metrics: ksched_shadow_decisions_total by result and "
              "generation")
        check(re.search(r'ksched_shadow_score_gap_count\{profile="default-'
                        r'scheduler",generation="1"\} %d' % n1, text)
              is not None, "/metrics: the score-gap histogram counts every "
              "decision whose real node passes")

        # a pod that fits nowhere: unschedulable for real; the default
        # profile agrees (same), the one without the Fit filter places it
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   pod_obj("huge", sched="default-scheduler", cpu="64",
                           memory="256Mi"))
        check(wait_for("the huge pod unschedulable", lambda: any(
            c.get("type") == "PodScheduled" and c.get("reason") ==
            "Unschedulable" for c in admin.must(
                "GET", "/api/v1/namespaces/default/pods/huge").get(
                    "status", {}).get("conditions", [])), 30),
              "kube-scheduler finds no node for a pod of 64 cpus")
        for n, s in (("default profile", same), ("MostAllocated", most),
                     ("no Fit filter", loose)):
            check(wait_for("%s: %d decisions" % (n, n1 + 1),
                           lambda: decided(s) >= n1 + 1, 30),
                  "%s: the unschedulable pod compared too" % n)
        c = counts(same, 1)
        check(c.get("same", 0) + c.get("tied", 0) == n1 + 1 and
              c.get("placed", 0) == 0, "default profile: unschedulable "
              "for both is same: %s" % c)
        cl = counts(loose, 1)
        huge = [x for x in shadow_doc(loose).get("differences", [])
                if x["name"] == "huge"]
        check(cl.get("placed", 0) == 1 and
              cl.get("same", 0) + cl.get("tied", 0) == n1 and huge and
              huge[0]["result"] == "placed" and
              huge[0]["realNode"] == "" and huge[0]["kschedNode"],
              "no Fit filter: the huge pod is placed, the rest agree: %s %s"
              % (cl, huge[:1]))
        c = counts(most, 1)

        # hot swap: the default profile in the second one
        write(cfg_most, DEFAULT_CONFIG)
        # (the changed file reloads it; SIGHUP if the watch missed it)
        if not wait_for("generation 2", lambda: shadow_doc(most).get(
                "generation") == 2, 10):
            most.proc.send_signal(signal.SIGHUP)
        check(wait_for("generation 2", lambda: shadow_doc(most).get(
            "generation") == 2, 30), "the hot swap makes generation 2 "
            "(%s)" % shadow_doc(most).get("generation"))
        # hot swap of a plugin: NodeResourcesFit's .so replaced in place
        fit = os.path.join(own_plugins, "noderesourcesfit.so")
        shutil.copy2(os.path.join(plugin_dir, "NodeResourcesFit",
                                  "noderesourcesfit.so"), fit + ".new")
        os.rename(fit + ".new", fit)
        check(wait_for("the plugin swap: generation 2", lambda: shadow_doc(
            same).get("generation") == 2, 30), "a replaced .so makes "
            "generation 2 (%s)" % shadow_doc(same).get("generation"))
        place(admin, PODS2, lambda: kube.poll() is None)
        n2 = len(PODS2)
        check(wait_for("generation 2: %d decisions" % n2,
                       lambda: decided(most, 2) >= n2, 30),
              "after the swap every binding is compared in generation 2")
        c2 = counts(most, 2)
        check(c2.get("same", 0) + c2.get("tied", 0) == n2,
              "generation 2 (default profile): same or tied: %s" % c2)
        check(counts(most, 1) == c, "generation 1's counts are kept apart")
        check(wait_for("plugin swap: %d decisions" % n2,
                       lambda: decided(same, 2) >= n2, 30),
              "after the plugin swap every binding is compared in "
              "generation 2")
        c2 = counts(same, 2)
        check(c2.get("same", 0) + c2.get("tied", 0) == n2,
              "generation 2 (the replaced plugin): same or tied: %s" % c2)
        st, text = most.get("/metrics")
        check(re.search(r'ksched_shadow_decisions_total\{profile="default-'
                        r'scheduler",result="same",generation="2"\} \d+',
                        text) is not None,
              "/metrics carries generation 2 after the swap")

        for n, s in (("default profile", same), ("MostAllocated", most),
                     ("no Fit filter", loose)):
            no_writes(n, s)
        ev = admin.must("GET", "/apis/events.k8s.io/v1/events")["items"]
        check(not [e for e in ev if "ksched" in
                   json.dumps(e.get("reportingController", ""))],
              "no event from ksched on the API server")
        for n, s in (("default profile", same), ("MostAllocated", most),
                     ("no Fit filter", loose)):
            rc = s.stop()
            check(rc == 0, "%s: serve exits 0 (got %s)" % (n, rc))
        servers = []
    finally:
        for s in servers:
            s.stop()
            print("--- ksched log (tail) ---\n" + "\n".join(s.lines[-30:]))
        if kube is not None:
            stop_kube_scheduler(kube)
        subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
