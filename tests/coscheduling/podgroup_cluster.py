#!/usr/bin/env python3
"""The Coscheduling example in cluster mode, on a real kube-apiserver with
scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1) installed.

Usage: podgroup_cluster.py KSCHED PLUGIN_DIR COSCHEDULING_DIR K8S_DIR

  - the plugin declares podgroups.scheduling.x-k8s.io: serve lists and
    watches them (the user is granted get/list/watch podgroups and patch
    podgroups/status, as the example's README says);
  - without the patch permission the status write fails, and the log
    says so with the API server's message;
  - a PodGroup of minMember 3: two of its pods are held back (fewer than
    minMember), the third makes all three bound at once (the first to
    wait at Permit writes status.scheduleStartTime, and that update event
    retries the two), and the PodGroup's status says phase Scheduled,
    scheduled 3;
  - a PodGroup of minMember 3 with two pods, under a profile with
    Coscheduling at Reserve, Permit and PostBind only: both wait at
    Permit for the PodGroup's scheduleTimeoutSeconds (4 s, not the args'
    60 s), are rejected, and never bind; the status says Scheduling,
    scheduled 0, with the attempt's scheduleStartTime;
  - pods whose PodGroup comes later: rejected without it; the PodGroup's
    add event (QueueingHint) retries them, still too few for minMember 3;
    the update to minMember 2 retries them again and they bind.

Skipped (exit 77) when the shared k8s folder or etcd is absent.
Standard library only.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "cluster_mode"))
from ksched_test import check, fatal, keep_or_remove, summary, wait_for  # noqa
from cluster_test import (Api, Serve, apply_rbac, cluster_up,  # noqa: E402
                          k8s_scripts, node_obj, pod_obj)

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PG_API = "/apis/scheduling.x-k8s.io/v1alpha1"

# Two profiles: Coscheduling everywhere, and at Reserve, Permit and
# PostBind only (a group that is too small then waits at Permit).
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: ksched
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 60
- schedulerName: ksched-permit
  plugins:
    reserve:
      enabled:
      - name: Coscheduling
    permit:
      enabled:
      - name: Coscheduling
    postBind:
      enabled:
      - name: Coscheduling
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 60
"""

# A minimal CRD for scheduler-plugins' PodGroup: v1alpha1, the status
# subresource, the spec fields the plugin reads, anything else kept.
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.x-k8s.io"},
    "spec": {
        "group": "scheduling.x-k8s.io",
        "names": {"kind": "PodGroup", "listKind": "PodGroupList",
                  "plural": "podgroups", "singular": "podgroup",
                  "shortNames": ["pg", "pgs"]},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1alpha1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {
                            "minMember": {"type": "integer",
                                          "format": "int32",
                                          "minimum": 1},
                            "scheduleTimeoutSeconds": {"type": "integer",
                                                       "format": "int32"}}},
                    "status": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def grant(admin, name, rules):
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
                "subjects": [{"kind": "User", "name": "ksched",
                              "apiGroup": "rbac.authorization.k8s.io"}]})


def install_crd(admin):
    admin.must("POST", "/apis/apiextensions.k8s.io/v1/"
               "customresourcedefinitions", CRD)

    def established():
        doc = admin.must("GET", "/apis/apiextensions.k8s.io/v1/"
                         "customresourcedefinitions/" +
                         CRD["metadata"]["name"])
        conds = (doc.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and
                   c.get("status") == "True" for c in conds) and \
            admin.call("GET", PG_API + "/podgroups")[0] == 200
    check(bool(wait_for("the PodGroup CRD established", established, 60)),
          "the PodGroup CRD is established and served")


def podgroup(name, min_member, timeout=None):
    spec = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def create_pg(admin, name, min_member, timeout=None):
    admin.must("POST", PG_API + "/namespaces/default/podgroups",
               podgroup(name, min_member, timeout))


def pg_status(admin, name):
    doc = admin.must("GET", PG_API + "/namespaces/default/podgroups/" + name)
    return doc.get("status") or {}


def member(name, group, sched="ksched"):
    return pod_obj(name, sched=sched, cpu="500m",
                   labels={GROUP_LABEL: group, "app": group})


def node_of(admin, name):
    doc = admin.must("GET", "/api/v1/namespaces/default/pods/" + name)
    return doc["spec"].get("nodeName") or None


def sched_condition(admin, name):
    doc = admin.must("GET", "/api/v1/namespaces/default/pods/" + name)
    for c in doc.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message", "")
    return None


def create_pods(admin, names, group, sched="ksched"):
    for n in names:
        admin.must("POST", "/api/v1/namespaces/default/pods",
                   member(n, group, sched))


def all_bound(admin, names):
    return all(node_of(admin, n) for n in names)


def scenario_forbidden(admin, srv):
    """Without patch on podgroups/status: bound, and the failed write is
    logged with the API server's answer."""
    create_pg(admin, "solo", 1)
    create_pods(admin, ["solo-0"], "solo")
    check(bool(wait_for("solo-0 bound", lambda: node_of(admin, "solo-0"),
                        60)), "solo-0 (PodGroup solo, minMember 1) is bound")
    line = srv.log_has(r"PodGroup default/solo: status .* not written: "
                       r".*forbidden", 30)
    check(bool(line), "without patch on podgroups/status the failed write "
                      "is logged with the server's message")
    for l in srv.lines:
        if "PodGroup default/solo" in l:
            print("  log: " + l.strip())
    check(not pg_status(admin, "solo"), "and the status stays empty")


def scenario_gang(admin):
    """minMember 3: two pods are turned away until the third comes, then
    all three bind (the first to wait at Permit writes the PodGroup's
    scheduleStartTime, whose update event retries the others) and the
    status says so."""
    create_pg(admin, "gang", 3, timeout=30)
    create_pods(admin, ["gang-0", "gang-1"], "gang")
    # gang-0 may have been tried alone (1 pod): nothing retries it for
    # gang-1, whose arrival is no cluster event.
    held = re.compile(r"pre-filter pod gang-%d cannot find enough sibling "
                      r"pods, current pods number: [12], minMember of "
                      r"group: 3")

    def both_held():
        return all(re.search(held.pattern % i,
                             sched_condition(admin, "gang-%d" % i) or "")
                   for i in (0, 1))
    check(bool(wait_for("gang-0 and gang-1 held back", both_held, 30)),
          "two of three members are turned away at PreFilter with "
          "upstream's message (%r)" % sched_condition(admin, "gang-1"))
    check(not node_of(admin, "gang-0") and not node_of(admin, "gang-1"),
          "neither is bound")
    t0 = time.time()
    create_pods(admin, ["gang-2"], "gang")
    names = ["gang-0", "gang-1", "gang-2"]
    ok = check(bool(wait_for("the gang bound", lambda: all_bound(admin, names),
                             60)),
               "the third member makes all three bound (%.1f s)"
               % (time.time() - t0))
    if not ok:
        for n in names:
            print("  %s: node %s, %s" % (n, node_of(admin, n),
                                         sched_condition(admin, n)))
    st = wait_for("the gang's status",
                  lambda: (lambda s: s if s.get("phase") == "Scheduled" and
                           s.get("scheduled") == 3 else None)(
                      pg_status(admin, "gang")), 30)
    check(st is not None, "PodGroup gang: status.phase Scheduled, "
                          "status.scheduled 3 (got %s)"
          % pg_status(admin, "gang"))
    check(bool(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$",
                        (st or {}).get("scheduleStartTime", ""))),
          "and status.scheduleStartTime, written when the first member "
          "waited at Permit")


def scenario_timeout(admin):
    """minMember 3 with two pods at Permit: the PodGroup's 4 s wait, not
    the args' 60 s, then rejected; never bound, no status."""
    create_pg(admin, "short", 3, timeout=4)
    create_pods(admin, ["short-0", "short-1"], "short", sched="ksched-permit")
    want = "rejected due to timeout after waiting 4s at plugin Coscheduling"

    def timed_out():
        return all(want in (sched_condition(admin, n) or "")
                   for n in ("short-0", "short-1"))
    # The message names the wait (4 s, the PodGroup's; the args say 60
    # s): no wall-clock assertion needed.
    got = wait_for("the Permit timeout", timed_out, 30)
    check(bool(got), "both members are rejected after the PodGroup's "
                     "scheduleTimeoutSeconds: %r (%s, %s)"
          % (want, sched_condition(admin, "short-0"),
             sched_condition(admin, "short-1")))
    time.sleep(3)
    check(not node_of(admin, "short-0") and not node_of(admin, "short-1"),
          "none of the group is bound")
    st = pg_status(admin, "short")
    check(st.get("phase") == "Scheduling" and st.get("scheduled") == 0 and
          st.get("scheduleStartTime"),
          "its PodGroup's status: the attempt started (Scheduling, "
          "scheduleStartTime), no member scheduled (%s)" % st)


def scenario_podgroup_events(admin):
    """Pods before their PodGroup: rejected; the PodGroup added (3 > 2
    pods) retries them in vain; updated to minMember 2 they bind, long
    before the 5-minute flush of unschedulable pods."""
    create_pods(admin, ["late-0", "late-1"], "late")
    msg = wait_for("late-0 rejected",
                   lambda: sched_condition(admin, "late-0"), 30)
    check(msg is not None and 'no PodGroup default/late and the pod has no '
          'annotation scheduling.x-k8s.io/min-available' in msg,
          "without a PodGroup or annotation the pods are rejected (%r)" % msg)
    create_pg(admin, "late", 3)
    msg = wait_for("late-0 retried", lambda: (lambda m: m if m and
                   "cannot find enough sibling pods" in m else None)(
                       sched_condition(admin, "late-0")), 30)
    check(msg is not None, "the PodGroup's add event retries them: too few "
          "for minMember 3 (%r)" % sched_condition(admin, "late-0"))
    t0 = time.time()
    st, doc = admin.call("PATCH", PG_API + "/namespaces/default/podgroups/late",
                         {"spec": {"minMember": 2}},
                         ctype="application/merge-patch+json")
    check(st == 200, "PodGroup late patched to minMember 2 (%d)" % st)
    names = ["late-0", "late-1"]
    check(bool(wait_for("late bound", lambda: all_bound(admin, names), 60)),
          "its update event retries them and both bind (%.1f s)"
          % (time.time() - t0))
    st = wait_for("late's status", lambda: (lambda s: s if s.get("phase") ==
                  "Scheduled" and s.get("scheduled") == 2 else None)(
                      pg_status(admin, "late")), 30)
    check(st is not None, "PodGroup late: Scheduled, 2 (got %s)"
          % pg_status(admin, "late"))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, cosched_dir, k8s = sys.argv[1:]
    if not os.path.exists(os.path.join(cosched_dir, "coscheduling.so")):
        fatal("no coscheduling.so in " + cosched_dir)
    up, down = k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-podgroup-")
    d, env = cluster_up(up, tmp)
    srv = None
    try:
        admin = Api(env, env["ADMIN_TOKEN"])
        apply_rbac(admin)
        # The default plugins' reads beyond v1.24's system:kube-scheduler
        # role (NodeVolumeLimits' VolumeAttachments), so that readiness
        # here depends on the PodGroups only.
        grant(admin, "ksched-volumeattachments",
              [{"apiGroups": ["storage.k8s.io"],
                "resources": ["volumeattachments"],
                "verbs": ["get", "list", "watch"]}])
        install_crd(admin)
        # Read first; the status write is granted after the first scenario.
        grant(admin, "ksched-podgroups",
              [{"apiGroups": ["scheduling.x-k8s.io"],
                "resources": ["podgroups"],
                "verbs": ["get", "list", "watch"]}])
        for n in ("n1", "n2"):
            admin.must("POST", "/api/v1/nodes", node_obj(n))
        cfg = os.path.join(tmp, "config.yaml")
        write(cfg, CONFIG)
        srv = Serve(ksched, ["--plugin-dir", plugin_dir,
                             "--plugin-dir", cosched_dir,
                             "--config", cfg, "--kubeconfig",
                             os.path.join(d, "ksched.kubeconfig")])
        if not check(bool(srv.ready(60)), "serve --kubeconfig becomes ready "
                                          "with the PodGroup informer"):
            fatal("\n".join(srv.lines[-30:]))
        scenario_forbidden(admin, srv)
        grant(admin, "ksched-podgroups-status",
              [{"apiGroups": ["scheduling.x-k8s.io"],
                "resources": ["podgroups/status"], "verbs": ["patch"]}])
        scenario_gang(admin)
        scenario_timeout(admin)
        scenario_podgroup_events(admin)
        bad = [l for l in srv.lines if "Sanitizer" in l or
               "runtime error" in l]
        rc = srv.stop()
        check(rc == 0, "serve exits 0 on SIGTERM (got %s)" % rc)
        check(not bad, "no sanitizer report from serve (%s)" % bad[:3])
        srv = None
    finally:
        if srv is not None:
            srv.stop()
            print("\n".join(srv.lines[-40:]))
        subprocess.run([down, d])
        keep_or_remove(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
