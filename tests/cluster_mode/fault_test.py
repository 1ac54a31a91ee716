#!/usr/bin/env python3
"""Faults in cluster mode, on a real kube-apiserver (see cluster_test.py).

Usage: fault_test.py KSCHED PLUGIN_DIR K8S_DIR

Each scenario streams pods and asserts that every pod ends bound exactly
once (one Scheduled event, its series count 1) and none is lost:
  - leader election with two replicas: the leader is killed with SIGKILL
    mid-stream; the standby takes over within leaseDuration + retryPeriod
    (plus the time to notice, one retry period);
  - the leader is paused (SIGSTOP) past its renew deadline while the
    standby takes over, then resumed: it exits with status 4 without
    binding anything;
  - the API server is killed (SIGKILL) in the middle of a stream and
    started again: ksched reconnects, re-lists and finishes;
  - ksched misses a window of events (paused while the API server
    restarts and objects change): its watches come back with 410 Gone, it
    re-lists, and nothing is bound twice.
Skips with exit 77 (and the reason) when the API server is not available.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402

LEASE, RENEW, RETRY = 6.0, 4.0, 1.0
LE_FLAGS = ["--leader-elect", "--leader-elect-lease-duration", "6s",
            "--leader-elect-renew-deadline", "4s",
            "--leader-elect-retry-period", "1s"]

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 1000
  burst: 2000
profiles:
- schedulerName: ksched
"""


def create_pods(api, prefix, n, ns="default", every=0.0):
    for i in range(n):
        api.must("POST", "/api/v1/namespaces/%s/pods" % ns,
                 ct.pod_obj("%s%d" % (prefix, i), cpu="10m", memory="16Mi"))
        if every:
            time.sleep(every)


def bound_count(api, prefix, ns="default"):
    ps = ct.pods_by_name(api, ns)
    return sum(1 for k, v in ps.items() if k.startswith(prefix) and
               v["spec"].get("nodeName"))


def check_once(api, prefix, n, what, ns="default", may_lose=(),
               servers=()):
    """Every pod PREFIXi bound, each with exactly one Scheduled event (only
    pods in `may_lose` may lack theirs: a replica killed with SIGKILL loses
    the events it had not written yet, as kube-scheduler would), and no
    replica had a binding refused (a second binding of a bound pod is a
    409 from the API server: ksched must never try one)."""
    ps = ct.pods_by_name(api, ns)
    names = ["%s%d" % (prefix, i) for i in range(n)]
    unbound = [k for k in names if not ps.get(k, {}).get("spec", {})
               .get("nodeName")]
    ct.check(not unbound, "%s: all %d pods bound (unbound: %s)"
             % (what, n, unbound[:5]))
    def scheduled_counts():
        counts = {}
        for e in ct.events_for(api, ns):
            if e.get("reason") == "Scheduled" and \
                    e["regarding"]["name"].startswith(prefix):
                k = e["regarding"]["name"]
                counts[k] = counts.get(k, 0) + \
                    (e.get("series") or {}).get("count", 1)
        return counts
    # Events are written after the binding, asynchronously and within the
    # client's rate limit (as client-go's broadcaster writes them): give
    # the last ones time to arrive (slow under the sanitizers).
    counts = {}

    def all_events():
        counts.clear()
        counts.update(scheduled_counts())
        return all(k in counts or k in may_lose for k in names)
    ct.wait_for("%s: the Scheduled events" % what, all_events, 30)
    twice = sorted(k for k, c in counts.items() if c > 1)
    missing = sorted(k for k in names if k not in counts)
    ct.check(not twice, "%s: no pod scheduled twice (%s)" % (what, twice[:5]))
    lost = [k for k in missing if k not in may_lose]
    ct.check(not lost, "%s: a Scheduled event for every pod (missing %s%s)"
             % (what, lost[:5], "; %d more were bound by the killed leader, "
                "whose unsent events died with it" % (len(missing) -
                                                      len(lost))
                if len(missing) > len(lost) else ""))
    refused = [l for s in servers for l in s.lines
               if "binding rejected" in l]
    ct.check(not refused, "%s: no binding was refused (%s)"
             % (what, refused[:2]))


def leader_of(servers):
    for s in servers:
        if s.proc.poll() is None:
            st, body = s.get("/readyz")
            if st == 200 and "leader" in body and "standby" not in body:
                return s
    return None


def scenario_leader_kill(ksched, base, api):
    a = ct.Serve(ksched, base + LE_FLAGS)
    b = ct.Serve(ksched, base + LE_FLAGS)
    lead = ct.wait_for("a leader", lambda: leader_of([a, b]), 30)
    if not ct.check(lead is not None, "one of two replicas becomes leader"):
        print("\n".join(a.lines[-20:] + b.lines[-20:]))
        return a, b
    other = b if lead is a else a
    ct.wait_for("standby synced", lambda: other.get("/readyz")[0] == 200, 30)
    st, body = other.get("/readyz")
    ct.check(st == 200 and "standby" in body,
             "the other replica is ready as a standby (%r)" % body.strip())
    n = 400
    t = threading.Thread(target=create_pods, args=(api, "lk", n, "default",
                                                   0.01))
    t.start()
    ct.wait_for("100 bound", lambda: bound_count(api, "lk") >= 100, 60)
    lead.proc.kill()
    t_kill = time.time()
    lead.proc.wait()
    took = ct.wait_for("the standby leads", lambda: leader_of([other]) and
                       time.time(), 60)
    # Every pod bound by now was bound by the killed leader (the standby
    # binds only once it leads): those may have lost their events.
    by_old = {k for k, v in ct.pods_by_name(api).items()
              if k.startswith("lk") and v["spec"].get("nodeName")}
    if ct.check(bool(took), "the standby takes over after the leader's "
                "SIGKILL"):
        # It must first see the old record unchanged for a lease duration,
        # noticed at one of its retries.
        ct.check(took - t_kill <= LEASE + 2 * RETRY + 1.5,
                 "takeover within leaseDuration + retryPeriod (+ one retry "
                 "to notice): %.1f s" % (took - t_kill))
    t.join()
    ct.wait_for("all bound", lambda: bound_count(api, "lk") >= n, 90)
    check_once(api, "lk", n, "leader killed mid-stream", may_lose=by_old,
               servers=[a, b])
    return lead, other


def scenario_leader_pause(ksched, base, api, leader):
    standby = ct.Serve(ksched, base + LE_FLAGS)
    ct.wait_for("standby ready", lambda: standby.get("/readyz")[0] == 200,
                30)
    # The worker is what schedules (the supervisor only watches it).
    worker = leader.worker_pid()
    os.kill(worker, signal.SIGSTOP)
    t0 = time.time()
    took = ct.wait_for("the standby leads", lambda: leader_of([standby]), 60)
    ct.check(took is not None, "the standby takes over while the leader "
             "is paused (%.1f s)" % (time.time() - t0))
    n = 100
    create_pods(api, "ps", n)
    ct.wait_for("all bound", lambda: bound_count(api, "ps") >= n, 60)
    os.kill(worker, signal.SIGCONT)
    try:
        rc = leader.proc.wait(20)
    except subprocess.TimeoutExpired:
        rc = None
    ct.check(rc == 4, "the resumed old leader exits with status 4 (lost "
             "the lease), got %s" % rc)
    ct.check(any("lost the leader lease" in l for l in leader.lines),
             "it says it lost the lease")
    ct.check(not any("Successfully assigned" in l for l in leader.lines[-5:]),
             "it binds nothing after resuming")
    check_once(api, "ps", n, "leader paused past its renew deadline",
               servers=[leader, standby])
    return standby


def restart_apiserver(env, pid_holder):
    pid = int(pid_holder["APISERVER_PID"])
    cmd = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")[:-1]
    cwd = os.readlink("/proc/%d/cwd" % pid)
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
            time.sleep(0.05)
        except OSError:
            break
    return cmd, cwd


def start_apiserver(cmd, cwd, env, pid_holder):
    log = open(os.path.join(cwd, "kube-apiserver.log"), "ab")
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                         stderr=log, start_new_session=True)
    pid_holder["APISERVER_PID"] = str(p.pid)
    api = ct.Api(env, env["ADMIN_TOKEN"])

    def up():
        try:
            st, _ = api.call("GET", "/readyz")
            return st == 200
        except OSError:
            return False
    ct.wait_for("API server ready", up, 60)
    return p


def scenario_apiserver_kill(ksched, base, api, env, holder):
    s = ct.Serve(ksched, base)
    ct.check(bool(s.ready(60)), "ksched ready")
    n = 600
    create_pods(api, "ak", 200)
    ct.wait_for("200 bound", lambda: bound_count(api, "ak") >= 200, 60)
    cmd, cwd = restart_apiserver(env, holder)
    time.sleep(1)
    p = start_apiserver(cmd, cwd, env, holder)
    for i in range(200, n):
        api.must("POST", "/api/v1/namespaces/default/pods",
                 ct.pod_obj("ak%d" % i, cpu="10m", memory="16Mi"))
    ct.wait_for("all bound", lambda: bound_count(api, "ak") >= n, 90)
    ct.check(s.proc.poll() is None, "ksched kept running through the API "
             "server's SIGKILL and restart")
    check_once(api, "ak", n, "API server killed mid-stream", servers=[s])
    st, text = s.get("/metrics")
    m = re.search(r'ksched_informer_failures_total\{resource="pods"\} (\d+)',
                  text)
    ct.check(m is not None and int(m.group(1)) >= 1,
             "the pods informer saw the failure and retried (%s)"
             % (m and m.group(1)))
    return s, p


def scenario_watch_gone(ksched, base, api, env, holder, s):
    """Pause ksched, restart the API server and change objects meanwhile:
    its watches resume from a resourceVersion the new watch cache does not
    have (410 Gone), and it re-lists."""
    worker = s.worker_pid()
    os.kill(worker, signal.SIGSTOP)
    cmd, cwd = restart_apiserver(env, holder)
    p = start_apiserver(cmd, cwd, env, holder)
    n = 100
    create_pods(api, "wg", n)
    for i in range(3):
        api.must("POST", "/api/v1/nodes", ct.node_obj("g%d" % i))
    os.kill(worker, signal.SIGCONT)
    ct.wait_for("all bound", lambda: bound_count(api, "wg") >= n, 90)
    check_once(api, "wg", n, "watch expired", servers=[s])
    check_once(api, "ak", 600, "earlier pods after the re-list", servers=[s])
    st, text = s.get("/metrics")
    gone = sum(int(x) for x in re.findall(
        r'ksched_informer_gone_total\{resource="[a-z]+"\} (\d+)', text))
    lists = re.search(r'ksched_informer_lists_total\{resource="pods"\} (\d+)',
                      text)
    ct.check(gone >= 1, "the informers were told 410 Gone (%d)" % gone)
    ct.check(lists is not None and int(lists.group(1)) >= 2,
             "the pods informer re-listed (%s lists)"
             % (lists and lists.group(1)))
    return p


def scenario_binding_refused(ksched, plugin_dir, cfg, api, env, tmp):
    """A binding the API server refuses (here: RBAC takes pods/binding away
    mid-stream): the pod is forgotten, reported with SchedulerError, and
    requeued with backoff; once bindings are allowed again it binds, once."""
    d = env["K8S_DIR"]
    key, crt = os.path.join(tmp, "b.key"), os.path.join(tmp, "b.crt")
    csr = os.path.join(tmp, "b.csr")
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes",
                    "-subj", "/CN=binder", "-keyout", key, "-out", csr],
                   check=True, stderr=subprocess.DEVNULL)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA",
                    os.path.join(d, "ca.crt"), "-CAkey",
                    os.path.join(d, "ca.key"), "-CAcreateserial", "-CAserial",
                    os.path.join(tmp, "b.srl"), "-days", "1", "-out", crt],
                   check=True, stderr=subprocess.DEVNULL)
    kc = os.path.join(tmp, "binder.kubeconfig")
    ct.write(kc, ct.kubeconfig(env["K8S_URL"], env["K8S_CA"],
                               {"client-certificate": crt,
                                "client-key": key}))
    # Everything system:kube-scheduler grants but bindings, and bindings
    # in a role of their own that the test takes away and gives back.
    role = api.must("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/"
                    "system:kube-scheduler")
    rules = [r for r in role["rules"]
             if not set(r.get("resources", [])) & {"bindings",
                                                    "pods/binding"}]
    # The volume plugins read what system:volume-scheduler grants, and
    # NodeVolumeLimits VolumeAttachments (v1.24's roles lack them;
    # deploy/rbac.yaml grants them the same way).
    rules += api.must("GET", "/apis/rbac.authorization.k8s.io/v1/"
                      "clusterroles/system:volume-scheduler")["rules"]
    rules.append({"apiGroups": ["storage.k8s.io"],
                  "resources": ["volumeattachments"],
                  "verbs": ["get", "list", "watch"]})
    # DynamicResources reads resource.k8s.io (system:kube-scheduler since
    # v1.34; this server does not serve it, but RBAC answers first).
    rules.append({"apiGroups": ["resource.k8s.io"],
                  "resources": ["resourceclaims", "resourceslices",
                                "deviceclasses", "resourceclaimtemplates"],
                  "verbs": ["get", "list", "watch"]})
    rbac = "/apis/rbac.authorization.k8s.io/v1/"
    api.must("POST", rbac + "clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "binder-no-bind"}, "rules": rules})
    api.must("POST", rbac + "clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "binder-bind"},
        "rules": [{"apiGroups": [""], "resources": ["pods/binding",
                                                   "bindings"],
                   "verbs": ["create"]}]})

    def bind_role(name):
        return {"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding", "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "User", "name": "binder",
                              "apiGroup": "rbac.authorization.k8s.io"}]}
    api.must("POST", rbac + "clusterrolebindings",
             bind_role("binder-no-bind"))
    s = ct.Serve(ksched, ["--plugin-dir", plugin_dir, "--config", cfg,
                          "--kubeconfig", kc])
    ct.check(bool(s.ready(60)), "ksched ready as a user without bindings")
    n = 20
    create_pods(api, "br", n)

    def reported():
        ps = ct.pods_by_name(api)
        cs = [ct.cond(ps.get("br%d" % i, {}), "PodScheduled")
              for i in range(n)]
        return all(c is not None and c.get("reason") == "SchedulerError"
                   for c in cs) and cs
    cs = ct.wait_for("binding failures reported", reported, 60)
    ct.check(bool(cs), "every refused binding is reported: PodScheduled="
             "False, reason SchedulerError")
    if cs:
        ct.check("binding rejected" in cs[0].get("message", "") and
                 "forbidden" in cs[0].get("message", ""),
                 "with the API server's answer (%r)" % cs[0].get("message"))
    ct.check(bound_count(api, "br") == 0, "and no pod is bound meanwhile")
    api.must("POST", rbac + "clusterrolebindings", bind_role("binder-bind"))
    # Backoff grows to podMaxBackoffSeconds (10 s): the retry comes within.
    ct.wait_for("all bound", lambda: bound_count(api, "br") >= n, 60)
    check_once(api, "br", n, "bindings refused, then allowed")
    s.stop()
    return s


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s = sys.argv[1:]
    up, down = ct.k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-fault-")
    d, env = ct.cluster_up(up, tmp)
    holder = {"APISERVER_PID": env["APISERVER_PID"]}
    servers, procs = [], []
    try:
        api = ct.Api(env, env["ADMIN_TOKEN"])
        ct.apply_rbac(api)
        cfg = os.path.join(tmp, "config.yaml")
        ct.write(cfg, CONFIG)
        base = ["--plugin-dir", plugin_dir, "--config", cfg, "--kubeconfig",
                os.path.join(d, "ksched.kubeconfig")]
        for i in range(3):
            api.must("POST", "/api/v1/nodes",
                     ct.node_obj("n%d" % i, cpu="64", pods="1000"))
        old, new = scenario_leader_kill(ksched, base, api)
        servers += [old, new]
        if new.proc.poll() is None and leader_of([new]):
            servers.append(scenario_leader_pause(ksched, base, api, new))
        for s in servers:
            s.stop()
        s, p = scenario_apiserver_kill(ksched, base, api, env, holder)
        servers.append(s)
        procs.append(p)
        procs.append(scenario_watch_gone(ksched, base, api, env, holder, s))
        rc = s.stop()
        ct.check(rc == 0, "ksched exits 0 on SIGTERM after the faults")
        servers.append(scenario_binding_refused(ksched, plugin_dir, cfg, api,
                                                env, tmp))
    finally:
        for s in servers:
            if s.proc.poll() is None:
                s.proc.kill()
        with open(os.path.join(d, "env"), "a") as f:
            f.write("APISERVER_PID=%s\n" % holder["APISERVER_PID"])
        subprocess.run([down, d])
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        ct.keep_or_remove(tmp, servers, 30)
    return ct.summary()


if __name__ == "__main__":
    sys.exit(main())
