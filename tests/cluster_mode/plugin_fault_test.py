#!/usr/bin/env python3
"""A crashing or hanging plugin hot-swapped into `ksched serve --kubeconfig`
on a real kube-apiserver (the setup of cluster_test.py).

Usage: plugin_fault_test.py KSCHED PLUGIN_DIR K8S_DIR FAULTY_DIR

The fixture plugin Faulty (tests/fixtures/faulty) runs at Filter, Score and
Permit; faulty_ok.so (1.0.0) is copied into a plugin folder of the test's
own as faulty.so. While pods stream in, a bad variant is renamed over it
(first a NULL write in Filter, then an endless Score) and the folder's
watcher reloads: the supervisor names the culprit, the new worker lists
again from the API server and runs Faulty 1.0.0 (rolled back), and every
pod ends bound exactly once (one Scheduled event each, no binding refused).
The time from each fault to the first binding after it is printed, not
asserted. Skips with exit 77 (and the reason) when the API server is not
available.
"""
import calendar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402
import fault_test as ft  # noqa: E402

DEADLINE_MS = 300

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 1000
  burst: 2000
profiles:
- schedulerName: ksched
  plugins:
    filter:
      enabled:
      - name: Faulty
    score:
      enabled:
      - name: Faulty
        weight: 1
    permit:
      enabled:
      - name: Faulty
"""

VARIANTS = [
    # variant, version, how the supervisor words it
    ("filter_segv", "2.0.0-filter-segv",
     r"ksched serve: supervisor: worker \d+ died from SIGSEGV: %s crashed "
     r"with SIGSEGV in Filter while scheduling pod default/(pf\d+); "
     r"quarantined; starting a new worker"),
    ("score_loop", "2.0.0-score-loop",
     r"ksched serve: supervisor: %s overran its 300 ms deadline in Score "
     r"while scheduling pod default/(pf\d+); quarantined; replacing "
     r"worker \d+"),
]


def install(faulty_dir, variant, pd):
    tmp = os.path.join(pd, ".faulty.so.new")
    shutil.copyfile(os.path.join(faulty_dir, "faulty_%s.so" % variant), tmp)
    os.rename(tmp, os.path.join(pd, "faulty.so"))


def debug_faults(s):
    st, text = s.get("/debug/plugins")
    if st != 200:
        return {}
    return json.loads(text)


def faulty_version(doc):
    for p in doc.get("plugins", []):
        if p["name"] == "Faulty":
            return p["version"]
    return None


def event_time(e):
    """An event's eventTime (RFC 3339 with microseconds) as Unix time."""
    t = e.get("eventTime") or ""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", t)
    if not m:
        return None
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) \
        + float(m.group(2) or 0)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s, faulty_dir = sys.argv[1:]
    up, down = ct.k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-plugin-fault-")
    d, env = ct.cluster_up(up, tmp)
    s = None
    try:
        api = ct.Api(env, env["ADMIN_TOKEN"])
        ct.apply_rbac(api)
        cfg = os.path.join(tmp, "config.yaml")
        ct.write(cfg, CONFIG)
        pd = os.path.join(tmp, "plugins")
        os.mkdir(pd)
        so = os.path.join(pd, "faulty.so")
        install(faulty_dir, "ok", pd)
        for i in range(3):
            api.must("POST", "/api/v1/nodes",
                     ct.node_obj("n%d" % i, cpu="64", pods="1000"))
        s = ct.Serve(ksched, ["--plugin-dir", pd, "--plugin-dir", plugin_dir,
                              "--config", cfg, "--kubeconfig",
                              os.path.join(d, "ksched.kubeconfig"),
                              "--probation", "1s", "--plugin-deadline",
                              "Faulty=%dms" % DEADLINE_MS])
        if not ct.check(bool(s.ready(60)), "serve --kubeconfig is ready"):
            ct.fatal("\n".join(s.lines[-30:]))
        n_per = 150
        total = 0
        may_lose = set()
        for k, (variant, version, words) in enumerate(VARIANTS):
            what = "hot swap of %s" % variant
            good = ct.wait_for("probation", lambda: debug_faults(s).get(
                "faults", {}).get("generationPassedProbation"), 30)
            ct.check(bool(good), "%s: the running generation passed its "
                     "probation" % what)
            start = total
            total += n_per
            # Pods pf<start>..pf<total-1>, one every 20 ms.

            def stream(a=start, b=total):
                for i in range(a, b):
                    api.must("POST", "/api/v1/namespaces/default/pods",
                             ct.pod_obj("pf%d" % i, cpu="10m",
                                        memory="16Mi"))
                    time.sleep(0.02)
            t = threading.Thread(target=stream)
            t.start()
            ct.wait_for("30 bound", lambda: ft.bound_count(api, "pf") >=
                        start + 30, 60)
            install(faulty_dir, variant, pd)
            rx = re.compile(words % re.escape('plugin "Faulty" version %s '
                                              '(%s)' % (version, so)))
            line = ct.wait_for("the fault line", lambda: next(
                (l for l in s.lines if rx.search(l)), None), 60)
            ct.check(line is not None, "%s: the supervisor names the "
                     "culprit (/%s/)\n%s" % (what, rx.pattern,
                                             "\n".join(s.lines[-10:])))
            # Pods bound by the dead worker may lack their Scheduled
            # event (it was not written yet), as after any SIGKILL.
            may_lose |= {k2 for k2, v in ct.pods_by_name(api).items()
                         if k2.startswith("pf") and v["spec"].get("nodeName")}
            ready = ct.wait_for("the new worker", lambda: s.get(
                "/readyz")[0] == 200 and faulty_version(debug_faults(s)), 60)
            doc = debug_faults(s)
            ct.check(bool(ready) and faulty_version(doc) == "1.0.0",
                     "%s: the new worker lists again and runs Faulty 1.0.0 "
                     "(%s)" % (what, faulty_version(doc)))
            faults = doc.get("faults", {}).get("faults", [])
            f = faults[-1] if faults else {}
            ct.check(len(faults) == k + 1 and f.get("version") == version
                     and line is not None and
                     f.get("pod") == "default/" + rx.search(line).group(1),
                     "%s: /debug/plugins faults[] names it (%s)"
                     % (what, f.get("message")))
            st, text = s.get("/metrics")
            ct.check(re.search(r'ksched_plugin_faults_total\{plugin="Faulty"'
                               r',version="%s",kind="%s"\} 1\b'
                               % (re.escape(version), f.get("kind")), text)
                     is not None, "%s: ksched_plugin_faults_total counts it"
                     % what)
            t.join()
            ct.wait_for("all bound", lambda: ft.bound_count(api, "pf") >=
                        total, 120)
            t_fault = f.get("time") or 0
            after = [event_time(e) for e in ct.events_for(api)
                     if e.get("reason") == "Scheduled" and
                     e["regarding"]["name"].startswith("pf")]
            after = sorted(x for x in after if x and x > t_fault)
            if after:
                print("RECOVERY %s: %.3f s from the fault to the first "
                      "Scheduled event after it" % (variant,
                                                    after[0] - t_fault),
                      flush=True)
            ft.check_once(api, "pf", total, what, may_lose=may_lose,
                          servers=[s])
        rc = s.stop()
        ct.check(rc == 0, "serve exits 0 on SIGTERM (got %s)" % rc)
    finally:
        if s is not None and s.proc.poll() is None:
            s.proc.kill()
        subprocess.run([down, d])
        ct.keep_or_remove(tmp, [s] if s is not None else [], 40)
    return ct.summary()


if __name__ == "__main__":
    sys.exit(main())
