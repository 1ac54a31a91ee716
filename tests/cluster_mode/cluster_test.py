#!/usr/bin/env python3
"""Cluster mode against a real kube-apiserver: `ksched serve --kubeconfig`.

Usage: cluster_test.py KSCHED PLUGIN_DIR K8S_DIR

K8S_DIR holds `up` and `down` (a real etcd + kube-apiserver on loopback,
RBAC on; see its README). Without it (or without etcd), the test is
skipped with exit 77 and says why. KSCHED_K8S_UP may name another `up`.

What it shows, each on the real API server:
  - N pods bound, each exactly once (one Binding, one Scheduled event
    "Successfully assigned NS/POD to NODE" from reportingController ksched);
  - an unschedulable pod gets PodScheduled=False, reason Unschedulable,
    with upstream's FitError message, and a FailedScheduling event whose
    repeats are aggregated;
  - pods of another schedulerName are left alone, and when bound (by
    someone else) occupy their node in ksched's cache at once;
  - a node added later makes a waiting unschedulable pod schedule;
  - preemption deletes exactly the victims (with the DisruptionTarget
    condition) and sets status.nominatedNodeName on the preemptor;
  - kubeconfig variants (token file, client certificate, exec plugin)
    each connect; a wrong CA, an invalid token and a user without RBAC
    each fail with a message that says which.
Standard library only.
"""
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from ksched_test import (DRA_POSTFILTER, check, failures,  # noqa: E402
                         fatal, keep_or_remove, skip, summary, wait_for)
import ksched_test  # noqa: E402


# --- the API server -----------------------------------------------------------


class Api:
    def __init__(self, env, token):
        u = urllib.parse.urlparse(env["K8S_URL"])
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=env["K8S_CA"])
        self.token = token

    def call(self, method, path, body=None, ctype="application/json"):
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                        timeout=60)
        hdr = {"Authorization": "Bearer " + self.token, "Accept":
               "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdr["Content-Type"] = ctype
        try:
            c.request(method, path, body=data, headers=hdr)
            r = c.getresponse()
            out = r.read()
            try:
                doc = json.loads(out) if out else None
            except ValueError:
                doc = out.decode(errors="replace")
            return r.status, doc
        finally:
            c.close()

    def must(self, method, path, body=None, ok=(200, 201)):
        st, doc = self.call(method, path, body)
        if st not in ok:
            fatal("%s %s -> %d %s" % (method, path, st, doc))
        return doc


def node_obj(name, cpu="4", memory="32Gi", pods="110", labels=None):
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    lab = {"kubernetes.io/hostname": name}
    lab.update(labels or {})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": lab},
            "status": {"capacity": res, "allocatable": res}}


def pod_obj(name, sched="ksched", cpu="100m", memory="128Mi", ns="default",
            priority_class=None, node=None, labels=None):
    spec = {"schedulerName": sched,
            "containers": [{"name": "c", "image": "pause:3.7",
                            "resources": {"requests": {"cpu": cpu,
                                                       "memory": memory}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns,
                         "labels": labels or {"app": "t"}},
            "spec": spec}


# --- ksched serve ---------------------------------------------------------------


class Serve(ksched_test.Serve):
    """`ksched serve --listen 127.0.0.1:0 ARGS...`; a run that fails before
    it listens is not fatal (the connection checks expect some to)."""

    def __init__(self, ksched, args, env=None):
        super().__init__(ksched, ["--listen", "127.0.0.1:0"] + args, env=env,
                         must_start=False)


CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 500
  burst: 1000
profiles:
- schedulerName: ksched
"""


def without_dra(v):
    """A decision as the comparisons record it (a message, (reason,
    message) or ('bound', node)) with DynamicResources' PostFilter text
    taken out (ksched_test.DRA_POSTFILTER: the v1.24 kube-scheduler the
    comparisons run beside had no DynamicResources)."""
    if isinstance(v, str):
        return v.replace(DRA_POSTFILTER, "")
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str):
        return (v[0], v[1].replace(DRA_POSTFILTER, ""))
    return v


def pods_by_name(api, ns="default"):
    doc = api.must("GET", "/api/v1/namespaces/%s/pods" % ns)
    return {p["metadata"]["name"]: p for p in doc["items"]}


def events_for(api, ns="default"):
    doc = api.must("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % ns)
    return doc["items"]


def cond(pod, ctype):
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == ctype:
            return c
    return None


# --- scenarios ---------------------------------------------------------------------


def scenario_bind_and_fail(api, srv):
    """Pods bound once each; an unschedulable pod's condition and event;
    pods of another scheduler left alone but counted on their node."""
    for i in range(3):
        api.must("POST", "/api/v1/nodes", node_obj("n%d" % i))
    # Another scheduler's pod, bound by "it" to n0, takes 3.5 of n0's 4 CPUs.
    api.must("POST", "/api/v1/namespaces/default/pods",
             pod_obj("other-bound", sched="other", cpu="3500m"))
    api.must("POST", "/api/v1/namespaces/default/pods/other-bound/binding",
             {"apiVersion": "v1", "kind": "Binding",
              "metadata": {"name": "other-bound"},
              "target": {"kind": "Node", "name": "n0"}})
    api.must("POST", "/api/v1/namespaces/default/pods",
             pod_obj("other-pending", sched="other"))
    n = 30
    for i in range(n):
        api.must("POST", "/api/v1/namespaces/default/pods",
                 pod_obj("p%d" % i, cpu="1"))
    api.must("POST", "/api/v1/namespaces/default/pods",
             pod_obj("huge", cpu="100"))

    def all_bound():
        ps = pods_by_name(api)
        return all(ps.get("p%d" % i, {}).get("spec", {}).get("nodeName")
                   for i in range(8))
    # 3 nodes x 4 CPUs, n0 has 0.5 free: exactly 8 one-CPU pods fit.
    check(wait_for("8 pods bound", all_bound, 60), "8 of the 1-CPU pods bound")
    time.sleep(2)
    ps = pods_by_name(api)
    bound = {k: v["spec"]["nodeName"] for k, v in ps.items()
             if k.startswith("p") and v["spec"].get("nodeName")}
    check(len(bound) == 8, "exactly 8 pods fit and were bound (got %d)"
          % len(bound))
    check(all(v in ("n1", "n2") for v in bound.values()),
          "no ksched pod on n0, whose CPU another scheduler's pod holds")
    check(not ps["other-pending"]["spec"].get("nodeName"),
          "a pending pod of another schedulerName is left alone")
    evs = events_for(api)
    sched = {}
    for e in evs:
        if e.get("reason") == "Scheduled" and \
                e.get("reportingController") == "ksched":
            name = e["regarding"]["name"]
            sched[name] = sched.get(name, 0) + \
                (e.get("series") or {}).get("count", 1)
            exp = "Successfully assigned default/%s to %s" % (
                name, bound.get(name, "?"))
            check(e.get("note") == exp and e.get("type") == "Normal" and
                  e.get("action") == "Binding",
                  "Scheduled event of %s says %r" % (name, exp))
    check(sorted(sched) == sorted(bound) and
          all(v == 1 for v in sched.values()),
          "one Scheduled event per bound pod, none for others")
    huge = ps["huge"]
    c = cond(huge, "PodScheduled")
    exp = ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 "
           "nodes are available: 3 No preemption victims found for incoming "
           "pod.")
    check(c is not None and c.get("status") == "False" and
          c.get("reason") == "Unschedulable",
          "unschedulable pod has PodScheduled=False reason Unschedulable")
    check(c is not None and c.get("message") == exp,
          "its condition message is the FitError: %r (got %r)"
          % (exp, c and c.get("message")))
    fs = [e for e in evs if e.get("reason") == "FailedScheduling" and
          e["regarding"]["name"] == "huge"]
    check(len(fs) == 1 and fs[0].get("type") == "Warning" and
          fs[0].get("note") == exp,
          "one FailedScheduling event with the FitError for the pod")
    # Unschedulable 1-CPU pods: the same message shape.
    pend = [k for k in ps if k.startswith("p") and k not in bound]
    check(len(pend) == n - 8, "the other %d pods stay pending" % (n - 8))
    return pend


def scenario_node_added(api, srv, pend):
    """A node added later makes the waiting pods schedule."""
    api.must("POST", "/api/v1/nodes", node_obj("n3", cpu="32"))

    def placed():
        ps = pods_by_name(api)
        return all(ps[k]["spec"].get("nodeName") == "n3" for k in pend)
    check(wait_for("pods placed on the new node", placed, 60),
          "all %d waiting pods bound to the node added later" % len(pend))


def scenario_preemption(api, srv):
    """A high-priority pod preempts exactly the victims it needs: they get
    the DisruptionTarget condition and a graceful DELETE, the preemptor
    gets status.nominatedNodeName, and binds once the victims are gone
    (no kubelet runs here: the test finishes their deletion, as a kubelet
    would)."""
    api.must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
             {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": "high"}, "value": 1000})
    api.must("POST", "/api/v1/namespaces",
             {"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": "pre"}})
    api.must("POST", "/api/v1/nodes",
             node_obj("pn", cpu="3", labels={"pool": "pre"}))
    for i in range(3):
        p = pod_obj("low%d" % i, ns="pre", cpu="1")
        p["spec"]["nodeSelector"] = {"pool": "pre"}
        api.must("POST", "/api/v1/namespaces/pre/pods", p)

    def low_bound():
        ps = pods_by_name(api, "pre")
        return all(ps.get("low%d" % i, {}).get("spec", {}).get("nodeName")
                   == "pn" for i in range(3))
    check(wait_for("low-priority pods bound", low_bound, 60),
          "three low-priority 1-CPU pods bound to pn (3 CPUs)")
    hp = pod_obj("high", ns="pre", cpu="1500m", priority_class="high")
    hp["spec"]["nodeSelector"] = {"pool": "pre"}
    api.must("POST", "/api/v1/namespaces/pre/pods", hp)

    def terminating():
        ps = pods_by_name(api, "pre")
        return sorted(k for k, v in ps.items() if k.startswith("low") and
                      v["metadata"].get("deletionTimestamp"))
    victims = wait_for("victims deleted", lambda: len(terminating()) >= 2,
                       60) and terminating()
    check(victims is not None and len(victims) == 2,
          "exactly two victims are deleted (1.5 CPU needs 2 of 3 freed; "
          "got %s)" % victims)
    ps = pods_by_name(api, "pre")
    for v in victims or []:
        dc = cond(ps[v], "DisruptionTarget")
        check(dc is not None and dc.get("status") == "True" and
              dc.get("reason") == "PreemptionByScheduler" and
              dc.get("message") == "ksched: preempting to accommodate a "
                                   "higher priority pod",
              "victim %s has DisruptionTarget, reason PreemptionByScheduler"
              % v)
    check(wait_for("nominatedNodeName", lambda: pods_by_name(api, "pre")
                   .get("high", {}).get("status", {})
                   .get("nominatedNodeName") == "pn", 30),
          "the preemptor's status.nominatedNodeName is pn")
    evs = events_for(api, "pre")
    pre = sorted(e["regarding"]["name"] for e in evs
                 if e.get("reason") == "Preempted")
    check(pre == sorted(victims or []),
          "Preempted events for exactly the victims (got %s)" % pre)
    fs = [e for e in evs if e.get("reason") == "FailedScheduling" and
          e["regarding"]["name"] == "high"]
    check(len(fs) == 1 and "Insufficient cpu" in fs[0].get("note", ""),
          "one FailedScheduling event for the preemptor's first attempt")
    time.sleep(1)
    check(pods_by_name(api, "pre").get("high", {}).get("spec", {})
          .get("nodeName") is None,
          "the preemptor waits while its victims are terminating")
    for v in victims or []:
        api.call("DELETE", "/api/v1/namespaces/pre/pods/" + v,
                 {"apiVersion": "v1", "kind": "DeleteOptions",
                  "gracePeriodSeconds": 0})

    def high_bound():
        ps = pods_by_name(api, "pre")
        return ps.get("high", {}).get("spec", {}).get("nodeName") == "pn"
    check(wait_for("the preemptor bound", high_bound, 60),
          "the preemptor binds to pn once its victims are gone")
    ps = pods_by_name(api, "pre")
    left = sorted(k for k in ps if k.startswith("low"))
    check(len(left) == 1 and left[0] not in (victims or []),
          "the pod that was not a victim is still there (%s)" % left)


def grant_cluster_role(admin, name, user, rules):
    """A ClusterRole `name` with `rules`, bound to `user`."""
    admin.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole", "metadata": {"name": name},
                "rules": rules})
    admin.must("POST",
               "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding", "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "User", "name": user,
                              "apiGroup": "rbac.authorization.k8s.io"}]})


def apply_rbac(admin, user="ksched"):
    """What a deployment grants ksched's user: the built-in scheduler
    roles, and its own leader Lease (system:kube-scheduler covers only the
    Lease named kube-scheduler)."""
    for role in ("system:kube-scheduler", "system:volume-scheduler"):
        admin.must("POST",
                   "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                   {"apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": "ksched-" + role.split(":")[1]},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                "kind": "ClusterRole", "name": role},
                    "subjects": [{"kind": "User", "name": user,
                                  "apiGroup": "rbac.authorization.k8s.io"}]})
    # NodeVolumeLimits reads VolumeAttachments (deploy/rbac.yaml grants it
    # the same way: v1.24's system:kube-scheduler does not).
    grant_cluster_role(admin, "ksched-volume-attachments", user,
                       [{"apiGroups": ["storage.k8s.io"],
                         "resources": ["volumeattachments"],
                         "verbs": ["get", "list", "watch"]}])
    # DynamicResources (in the default profile) reads and writes
    # resource.k8s.io, as system:kube-scheduler allows since v1.34; on this
    # older server the group is not served (404: ksched sees none), but
    # RBAC answers 403 before the server looks, so grant it too.
    grant_cluster_role(admin, "ksched-dynamic-resources", user,
                       [{"apiGroups": ["resource.k8s.io"],
                         "resources": ["resourceclaims", "resourceslices",
                                       "deviceclasses",
                                       "resourceclaimtemplates"],
                         "verbs": ["get", "list", "watch"]},
                        {"apiGroups": ["resource.k8s.io"],
                         "resources": ["resourceclaims",
                                       "resourceclaims/status"],
                         "verbs": ["update", "patch"]}])
    admin.must("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/"
               "kube-system/roles",
               {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "ksched-leader",
                             "namespace": "kube-system"},
                "rules": [{"apiGroups": ["coordination.k8s.io"],
                           "resources": ["leases"],
                           "resourceNames": ["ksched"],
                           "verbs": ["get", "update"]},
                          {"apiGroups": ["coordination.k8s.io"],
                           "resources": ["leases"], "verbs": ["create"]}]})
    admin.must("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/"
               "kube-system/rolebindings",
               {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "ksched-leader",
                             "namespace": "kube-system"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "Role", "name": "ksched-leader"},
                "subjects": [{"kind": "User", "name": user,
                              "apiGroup": "rbac.authorization.k8s.io"}]})


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def kubeconfig(server, ca, user_fields):
    return json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server,
                                                "certificate-authority": ca}}],
        "users": [{"name": "u", "user": user_fields}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x"})


def scenario_connections(ksched, plugin_dir, cfg, env, tmp):
    server, ca = env["K8S_URL"], env["K8S_CA"]
    tok = env["KSCHED_TOKEN"]
    base = ["--plugin-dir", plugin_dir, "--config", cfg]
    # token file
    write(os.path.join(tmp, "token"), tok + "\n")
    write(os.path.join(tmp, "tf.kubeconfig"),
          kubeconfig(server, ca, {"tokenFile": os.path.join(tmp, "token")}))
    # client certificates signed by the cluster's CA: CN=ksched (the RBAC
    # user bound above) and CN=norbac (known to the API server, granted
    # nothing by RBAC)
    d = env["K8S_DIR"]
    for cn in ("ksched", "norbac"):
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes",
                        "-subj", "/CN=" + cn, "-keyout",
                        os.path.join(tmp, cn + ".key"), "-out",
                        os.path.join(tmp, cn + ".csr")], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "x509", "-req", "-in",
                        os.path.join(tmp, cn + ".csr"), "-CA",
                        os.path.join(d, "ca.crt"), "-CAkey",
                        os.path.join(d, "ca.key"), "-CAcreateserial",
                        "-CAserial", os.path.join(tmp, "ca.srl"), "-days",
                        "1", "-out", os.path.join(tmp, cn + ".crt")],
                       check=True, stderr=subprocess.DEVNULL)
    write(os.path.join(tmp, "cert.kubeconfig"),
          kubeconfig(server, ca, {
              "client-certificate": os.path.join(tmp, "ksched.crt"),
              "client-key": os.path.join(tmp, "ksched.key")}))
    # exec plugin
    plug = os.path.join(tmp, "cred.sh")
    write(plug, "#!/bin/sh\n"
          "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
          "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}'\n"
          % tok, 0o700)
    write(os.path.join(tmp, "exec.kubeconfig"),
          kubeconfig(server, ca, {"exec": {
              "apiVersion": "client.authentication.k8s.io/v1",
              "command": plug, "interactiveMode": "Never"}}))
    for name in ("tf", "cert", "exec"):
        s = Serve(ksched, base + ["--kubeconfig",
                                  os.path.join(tmp, name + ".kubeconfig")])
        ok = s.ready(60)
        check(bool(ok), "%s kubeconfig connects (readyz 200)" % name)
        if not ok:
            print("\n".join(s.lines[-20:]))
        s.stop()
    # wrong CA: a fresh self-signed one
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-days", "1", "-subj", "/CN=other-ca",
                    "-keyout", os.path.join(tmp, "bad.key"), "-out",
                    os.path.join(tmp, "bad-ca.crt")], check=True,
                   stderr=subprocess.DEVNULL)
    write(os.path.join(tmp, "badca.kubeconfig"),
          kubeconfig(server, os.path.join(tmp, "bad-ca.crt"),
                     {"token": tok}))
    write(os.path.join(tmp, "badtok.kubeconfig"),
          kubeconfig(server, ca, {"token": "0000expired0000"}))
    write(os.path.join(tmp, "norbac.kubeconfig"),
          kubeconfig(server, ca, {
              "client-certificate": os.path.join(tmp, "norbac.crt"),
              "client-key": os.path.join(tmp, "norbac.key")}))
    cases = [("badca", r"certificate is not trusted"),
             ("badtok", r"401 Unauthorized: the API server rejected the "
                        r"credentials"),
             ("norbac", r"403 Forbidden: .*cannot list resource "
                        r"\\?\"(nodes|pods|namespaces|services|"
                        r"replicationcontrollers|replicasets|"
                        r"statefulsets)\\?\"")]
    for name, rx in cases:
        s = Serve(ksched, base + ["--kubeconfig",
                                  os.path.join(tmp, name + ".kubeconfig")])
        found = s.log_has(rx, 30)
        st, body = s.get("/readyz")
        check(bool(found), "%s: the log says why (/%s/)" % (name, rx))
        check(st == 503, "%s: /readyz is 503 (%s)" % (name, body.strip()))
        if not found:
            print("\n".join(s.lines[-10:]))
        s.stop()


def k8s_scripts(k8s):
    """`up` and `down` of the shared k8s folder (or KSCHED_K8S_UP); skips
    the test (exit 77) with the reason when they, etcd or openssl are
    missing."""
    up = os.environ.get("KSCHED_K8S_UP") or os.path.join(k8s, "up")
    down = os.path.join(os.path.dirname(up), "down")
    if not os.path.exists(up):
        skip("no kube-apiserver: %s does not exist (the shared k8s folder "
             "is not beside the checkout)" % up)
    if shutil.which("etcd") is None and not os.environ.get("ETCD"):
        skip("no etcd on PATH (apt-get install etcd-server)")
    if shutil.which("openssl") is None:
        skip("no openssl on PATH (apt-get install openssl)")
    return up, down


def cluster_up(up, tmp):
    """Start etcd and kube-apiserver in TMP/k8s; returns (dir, env)."""
    d = os.path.join(tmp, "k8s")
    r = subprocess.run([up, d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        fatal("up failed: " + r.stderr.decode(errors="replace"))
    env = {}
    for line in open(os.path.join(d, "env")):
        k, _, v = line.strip().partition("=")
        env[k] = v
    return d, env


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-cluster-")
    d, env = cluster_up(up, tmp)
    srv = None
    try:
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        srv = Serve(ksched, ["--plugin-dir", plugin_dir, "--config", cfg,
                             "--kubeconfig",
                             os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(60)), "serve --kubeconfig becomes ready"):
            fatal("\n".join(srv.lines[-30:]))
        pend = scenario_bind_and_fail(admin, srv)
        scenario_node_added(admin, srv, pend)
        scenario_preemption(admin, srv)
        st, text = srv.get("/metrics")
        check(st == 200 and re.search(r'rest_client_requests_total\{code="201"'
                                      r',verb="POST"\} \d+', text) is not None,
              "/metrics counts the client's requests by code and verb")
        check(re.search(r'ksched_informer_synced\{resource="pods"\} 1', text)
              is not None, "/metrics shows the pods informer synced")
        st, text = srv.get("/configz")
        cz = json.loads(text)["componentconfig"] if st == 200 else {}
        check(cz.get("clientConnection", {}).get("qps") == 500 and
              cz.get("profiles", [{}])[0].get("schedulerName") == "ksched" and
              any(p["name"] == "NodeResourcesFit" for p in
                  cz["profiles"][0]["plugins"]["multiPoint"]["enabled"]),
              "/configz serves the running configuration, defaults merged")
        rc = srv.stop()
        check(rc == 0, "serve exits 0 on SIGTERM (got %s)" % rc)
        srv = None
        scenario_connections(ksched, plugin_dir, cfg, env, tmp)
    finally:
        if srv is not None:
            srv.stop()
            print("\n".join(srv.lines[-40:]))
        subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
