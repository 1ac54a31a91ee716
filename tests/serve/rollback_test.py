#!/usr/bin/env python3
"""A bad hot swap rolls back to the version that was serving before it,
whatever that version's probation (`ksched serve` with the default
--probation 60s and --probation-cycles 1000).

Usage: rollback_test.py KSCHED PLUGIN_BUILD_DIR FAULTY_DIR PROFILE

FAULTY_DIR holds the fixture plugin "Faulty" built once per fault
(tests/fixtures/faulty); PROFILE enables it at Filter, Score and Permit.

- Swap within probation: Faulty 1.0.0 schedules a few dozen pods (far
  fewer than 1,000 cycles, so generation 1 has not passed its probation),
  then 2.0.0-filter-segv is renamed over it and reloaded. The supervisor
  names the crash in Filter; the new worker starts at once and runs 1.0.0
  again ("the version serving when the faulty one was swapped in"); no
  worker refuses to start; every pod, those posted after the swap too, is
  bound.
- Probation still chooses among older versions: 1.0.0, then
  2.0.0-filter-segv-after-30 (which crashes at its 31st Filter call in a
  process) swapped in while it has made fewer calls, then
  2.0.0-filter-segv. The last one rolls back to the one serving before it
  (filter-segv-after); when that one faults in turn, 1.0.0 (serving
  before it, but never through probation) is not chosen: the worker
  refuses to start and says why, until the file is replaced.
"""
import os
import re
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402
from faults_test import (debug_plugins, faulty_version,  # noqa: E402
                         install, node_obj, pod_obj, request)

NODES = ["n0", "n1", "n2"]


def request_retry(srv, method, path, body=None, timeout=30):
    """Retried while no worker answers (a restart)."""
    got = kt.wait_for("%s %s" % (method, path), lambda: (lambda r: r if
                      r[0] not in (0, 503) else None)(request(srv, method,
                                                              path, body)),
                      timeout, 0.05)
    return got or (0, None)


def post_pods(srv, prefix, n):
    names = []
    for i in range(n):
        name = "%s-%d" % (prefix, i)
        st, _ = request_retry(srv, "POST", "/api/v1/namespaces/default/pods",
                              pod_obj(name))
        check(st in (201, 409), "pod %s accepted (%s)" % (name, st))
        names.append("default/" + name)
    return names


def unbound(srv, names):
    st, doc = request_retry(srv, "GET", "/api/v1/pods")
    if st != 200 or not isinstance(doc, dict):
        return names
    nodes = {"default/" + p["metadata"]["name"]: p["spec"].get("nodeName")
             for p in doc.get("items", [])}
    return [k for k in names if not nodes.get(k)]


def all_bound(srv, names, what, timeout=60):
    left = kt.wait_for(what, lambda: not unbound(srv, names), timeout)
    rest = unbound(srv, names)
    check(bool(left) and not rest, "%s: all %d pods bound (%d not: %s)"
          % (what, len(names), len(rest), rest[:5]))


def start(ksched, plugin_build_dir, profile, pd):
    # The defaults: --probation 60s, --probation-cycles 1000.
    srv = kt.Serve(ksched, ["--embedded", "--listen", "127.0.0.1:0",
                            "--config", profile, "--plugin-dir", pd,
                            "--plugin-dir", plugin_build_dir])
    for n in NODES:
        st, _ = request(srv, "POST", "/api/v1/nodes", node_obj(n))
        check(st == 201, "node %s created" % n)
    return srv


def swap(srv, faulty_dir, variant, pd):
    install(faulty_dir, variant, pd)
    st, doc = request(srv, "POST", "/-/reload")
    return st, doc


def fault_rx(version, so=None):
    """The supervisor's line for a crash of `version` in Filter; its file
    is `so`, or (None) any: a rolled-back version runs from its kept
    copy."""
    return re.compile(r"ksched serve: supervisor: worker \d+ died from "
                      r'SIGSEGV: plugin "Faulty" version %s \(%s\) crashed '
                      r"with SIGSEGV in Filter"
                      % (re.escape(version), re.escape(so) if so else "[^)]+"))


def fault_line(srv, version, so=None, timeout=60):
    rx = fault_rx(version, so)
    return kt.wait_for("the fault line of %s" % version, lambda: next(
        (l for l in srv.lines if rx.search(l)), None), timeout)


def within_probation(ksched, plugin_build_dir, faulty_dir, profile, tmp):
    what = "swap within probation"
    pd = os.path.join(tmp, "plugins-within")
    os.mkdir(pd)
    so = os.path.join(pd, "faulty.so")
    install(faulty_dir, "ok", pd)
    srv = start(ksched, plugin_build_dir, profile, pd)
    try:
        before = post_pods(srv, "before", 36)
        all_bound(srv, before, what + ": with 1.0.0")
        doc = debug_plugins(srv)
        f = doc.get("faults", {})
        # The case at hand: generation 1 is not a known-good version yet.
        check(f.get("generationPassedProbation") is False and
              not [g for g in f.get("knownGood", [])
                   if g["name"] == "Faulty"],
              "%s: generation 1 has not passed its probation before the "
              "swap (%s)" % (what, f))
        old_worker = srv.worker_pid()
        st, body = swap(srv, faulty_dir, "filter_segv", pd)
        check(st == 200 and isinstance(body, dict) and
              body.get("generation") == 2,
              "%s: the reload to 2.0.0-filter-segv succeeds (%s %s)"
              % (what, st, body))
        after = post_pods(srv, "after", 12)
        check(fault_line(srv, "2.0.0-filter-segv", so) is not None,
              "%s: the supervisor names the crash in Filter" % what)
        ready = kt.wait_for("a new worker", lambda: srv.worker_pid() !=
                            old_worker and request(srv, "GET", "/readyz")[0]
                            == 200, 60)
        check(bool(ready), "%s: a new worker serves" % what)
        doc = debug_plugins(srv)
        check(faulty_version(doc) == "1.0.0", "%s: the new worker runs "
              "Faulty 1.0.0, the version serving before the swap (got %s)"
              % (what, faulty_version(doc)))
        rollback = ("%s: quarantined (plugin \"Faulty\" version "
                    "2.0.0-filter-segv (%s) crashed with SIGSEGV in Filter"
                    % (so, so))
        why = ("rolling back to version 1.0.0 of generation 1 (the version "
               "serving when the faulty one was swapped in)")
        check(any(rollback in l and why in l for l in srv.lines),
              "%s: the new worker logs the rollback (%r)" % (what, why))
        swapped = doc.get("faults", {}).get("swappedOut", [])
        faulty = [(g["version"], g["quarantined"]) for g in swapped
                  if g["name"] == "Faulty"]
        # A second reload while 2.0.0 served (the file watcher can see the
        # swap as two changes on a slow machine) lists it too: quarantined.
        check(("1.0.0", False) in faulty and
              all(q for v, q in faulty if v != "1.0.0"),
              "%s: /debug/plugins lists Faulty 1.0.0 as swapped out, not "
              "quarantined, and any other version quarantined (%s)"
              % (what, swapped))
        all_bound(srv, before + after + post_pods(srv, "later", 12),
                  what + ": after the rollback")
        refused = [l for l in srv.lines if "refused to start" in l]
        check(not refused, "%s: no worker refused to start (%s)"
              % (what, refused[:2]))
        check(doc.get("faults", {}).get("workerStarts") == 2,
              "%s: two workers in all (%s)"
              % (what, doc.get("faults", {}).get("workerStarts")))
    finally:
        rc = srv.stop()
    check(rc == 0, "%s: serve exits 0 on SIGTERM (got %s)" % (what, rc))
    if kt.failures:
        print("--- serve log ---\n" + "\n".join(srv.lines[-30:]))


def older_versions(ksched, plugin_build_dir, faulty_dir, profile, tmp):
    what = "probation among older versions"
    pd = os.path.join(tmp, "plugins-older")
    os.mkdir(pd)
    so = os.path.join(pd, "faulty.so")
    install(faulty_dir, "ok", pd)
    srv = start(ksched, plugin_build_dir, profile, pd)
    try:
        first = post_pods(srv, "v1", 6)
        all_bound(srv, first, what + ": with 1.0.0")
        # 4 pods on 3 nodes: 12 Filter calls, under the variant's 30.
        st, _ = swap(srv, faulty_dir, "filter_segv_after", pd)
        check(st == 200, "%s: reload to 2.0.0-filter-segv-after-30 (%s)"
              % (what, st))
        mid = post_pods(srv, "va", 4)
        all_bound(srv, mid, what + ": with filter-segv-after")
        st, _ = swap(srv, faulty_dir, "filter_segv", pd)
        check(st == 200, "%s: reload to 2.0.0-filter-segv (%s)" % (what, st))
        post_pods(srv, "vb", 2)
        check(fault_line(srv, "2.0.0-filter-segv", so) is not None,
              "%s: 2.0.0-filter-segv crashes" % what)
        back = ("rolling back to version 2.0.0-filter-segv-after-30 of "
                "generation 2 (the version serving when the faulty one was "
                "swapped in)")
        check(bool(srv.log_has(re.escape(back), 60)),
              "%s: it rolls back to the version serving before it (%r)"
              % (what, back))
        # Now the rolled-back version crashes too (its 31st Filter call
        # in the new worker): 1.0.0 never passed its probation. Pods are
        # posted until then (the requests that meet no worker are not
        # retried).
        i, rx = 0, fault_rx("2.0.0-filter-segv-after-30")
        while i < 40 and not any(rx.search(l) for l in srv.lines):
            request(srv, "POST", "/api/v1/namespaces/default/pods",
                    pod_obj("more-%d" % i))
            i += 1
        check(fault_line(srv, "2.0.0-filter-segv-after-30") is not None,
              "%s: 2.0.0-filter-segv-after-30 crashes in turn" % what)
        refusal = ('quarantined: plugin "Faulty" version 2.0.0-filter-segv '
                   '(%s) crashed with SIGSEGV in Filter while scheduling pod '
                   'default/vb-' % so)
        fix = ('; version 2.0.0-filter-segv-after-30 of "Faulty", serving '
               'when this one was swapped in, faulted too, and no earlier '
               'one ran through its probation, so there is nothing to roll '
               'back to; replace the file')
        check(bool(srv.log_has(re.escape(refusal) + r"\d+" + re.escape(fix),
                               60)),
              "%s: the next worker refuses rather than take 1.0.0, which "
              "did not pass its probation" % what)
        check(bool(srv.log_has(r"supervisor: worker \d+ refused to start",
                               30)), "%s: the supervisor backs off" % what)
        install(faulty_dir, "ok", pd)
        ok = kt.wait_for("a worker with 1.0.0", lambda: request(
            srv, "GET", "/readyz")[0] == 200 and faulty_version(debug_plugins(srv))
            == "1.0.0", 60)
        check(bool(ok), "%s: with the file replaced a worker starts" % what)
    finally:
        rc = srv.stop()
    check(rc == 0, "%s: serve exits 0 on SIGTERM (got %s)" % (what, rc))
    if kt.failures:
        print("--- serve log ---\n" + "\n".join(srv.lines[-30:]))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_build_dir, faulty_dir, profile = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-rollback-")
    try:
        within_probation(ksched, plugin_build_dir, faulty_dir, profile, tmp)
        older_versions(ksched, plugin_build_dir, faulty_dir, profile, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return kt.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
