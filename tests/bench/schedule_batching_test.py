#!/usr/bin/env python3
"""`ksched schedule --batching off|on|verify` decide alike (or, with the
last argument `bulk`, `--bulk off|on|verify`, with TopologySpreading too,
and each input again with `--batching off`, where bulk on takes the host's
fast way).

Two inputs: a small hand-made cluster (identical pods in a row, which
reuse; a different pod bound elsewhere between them, after which the next
identical pod starts afresh) and the bench's SchedulingBasic and
SchedulingNodeAffinity manifests at 300 nodes / 600 pods (written by
ksched-bench --write-manifests). For each, the output of
`ksched schedule --deterministic` is the same in all three modes (diffed),
verify compares some results and finds no difference (exit 0, and exit 8
is documented for a difference).

With KSCHED_POOL_CHAOS set (pool.h), the Filter and Score worker pool
shares or inlines each job at random and holds threads up at random: the
hand-made and mixed clusters run on the default configuration's threads,
so a decision that depends on how they ran differs between the runs.
That needs two CPUs: on one, the test is skipped (exit 77).

usage: schedule_batching_test.py KSCHED KSCHED_BENCH PLUGIN_DIR [bulk]
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile


def node(name, cpu):
    return ("---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: "
            "{kubernetes.io/hostname: %s}}\nstatus: {allocatable: {cpu: '%s', "
            "memory: 16Gi, pods: '110'}}\n" % (name, name, cpu))


def pod(name, cpu, extra=""):
    return ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: "
            "default}\nspec: {%scontainers: [{name: c, image: busybox, "
            "resources: {requests: {cpu: '%s', memory: 256Mi}}}]}\n"
            % (name, extra, cpu))


HAND = (node("n1", "4") + node("n2", "8") + node("n3", "6") + node("n4", "2")
        + pod("a1", "500m") + pod("a2", "500m")
        + pod("b", "1", "nodeSelector: {kubernetes.io/hostname: n4}, ")
        + pod("a3", "500m") + pod("a4", "500m") + pod("a5", "500m"))



def mixed():
    """200 nodes that differ where the bulk loops look (cpu, memory, pod
    slots, cordoned, tainted NoSchedule or PreferNoSchedule) and 400 pods
    of several sizes, some tolerating the taint: the Filter rejects
    different nodes in every run of 64, and nodes fill up unevenly."""
    out = []
    for i in range(200):
        spec = []
        if i % 7 == 3:
            spec.append("unschedulable: true")
        if i % 5 == 1:
            spec.append("taints: [{key: dedicated, value: x, effect: "
                        "NoSchedule}]")
        elif i % 5 == 2:
            spec.append("taints: [{key: spot, effect: PreferNoSchedule}]")
        out.append("---\napiVersion: v1\nkind: Node\nmetadata: {name: "
                   "n%03d, labels: {kubernetes.io/hostname: n%03d}}\n"
                   "spec: {%s}\nstatus: {allocatable: {cpu: '%d', memory: "
                   "%dGi, pods: '%d'}}\n"
                   % (i, i, ", ".join(spec), 1 + i % 8, 2 + (i * 3) % 13,
                      3 + i % 4))
    for k in range(400):
        tol = ("tolerations: [{key: dedicated, operator: Exists}], "
               if k % 3 == 0 else "")
        out.append(pod("m%03d" % k, "%dm" % (100 + (k * 37) % 900), tol))
    return "".join(out)


FLAG = "batching"


def summary(text):
    return re.search(r"^ksched schedule: " + FLAG + r" verify: (\d+) node "
                     r"results compared, (\d+) differences$", text, re.M)


def schedule(ksched, plugins, args, mode):
    return subprocess.run([ksched, "schedule", "--plugin-dir", plugins,
                           "--no-default-plugin-path", "--deterministic",
                           "--" + FLAG, mode] + args,
                          capture_output=True, text=True, timeout=600)


def check_all(label, ksched, plugins, args, failures):
    """check(); for --bulk also with batching off, where bulk on takes the
    host's fast way (whole runs, the plugins reading its columns), which
    batching and verify do not."""
    out = check(label, ksched, plugins, args, failures)
    if FLAG == "bulk":
        check(label + " --batching off", ksched, plugins,
              args + ["--batching", "off"], failures)
    return out


def check(label, ksched, plugins, args, failures):
    runs = {m: schedule(ksched, plugins, args, m)
            for m in ("off", "on", "verify")}
    off = runs["off"]
    if off.returncode != 0:
        failures.append("%s: off exits %d: %s" % (label, off.returncode,
                                                   off.stderr[-500:]))
    for m in ("on", "verify"):
        r = runs[m]
        if r.returncode != off.returncode:
            failures.append("%s: %s exits %d, off %d" % (
                label, m, r.returncode, off.returncode))
        if r.stdout != off.stdout:
            failures.append("%s: %s decides otherwise than off:\n%s" % (
                label, m, "".join(difflib.unified_diff(
                    off.stdout.splitlines(True), r.stdout.splitlines(True),
                    "off", m))[:3000]))
    s = summary(runs["verify"].stderr)
    if s is None:
        failures.append("%s: verify printed no summary: %s" % (
            label, runs["verify"].stderr[-500:]))
    else:
        print("%s: %s node results compared, %s differences" % (
            label, s.group(1), s.group(2)))
        if int(s.group(1)) == 0:
            failures.append("%s: verify compared nothing" % label)
        if int(s.group(2)) != 0:
            failures.append("%s: verify found differences" % label)
    return off.stdout


def main():
    global FLAG
    ksched, bench, plugins = sys.argv[1:4]
    if len(sys.argv) > 4:
        FLAG = sys.argv[4]
    if os.environ.get("KSCHED_POOL_CHAOS", "0") not in ("", "0") and \
            (os.cpu_count() or 1) < 2:
        print("SKIP: KSCHED_POOL_CHAOS needs two CPUs (one: no worker "
              "threads)")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        hand = os.path.join(tmp, "hand.yaml")
        with open(hand, "w") as f:
            f.write(HAND)
        out = check_all("hand", ksched, plugins, ["--cluster", hand],
                        failures)
        # b went to n4 (its selector), the others elsewhere: all bound
        for p in ("a1", "a2", "a3", "a4", "a5"):
            if not re.search(r"default/%s\s+n[123]\b" % p, out):
                failures.append("hand: %s not bound to n1-n3:\n%s" % (p, out))
        if not re.search(r"default/b\s+n4\b", out):
            failures.append("hand: b not bound to n4:\n%s" % out)
        if FLAG == "bulk":
            mix = os.path.join(tmp, "mixed.yaml")
            with open(mix, "w") as f:
                f.write(mixed())
            out = check_all("mixed", ksched, plugins, ["--cluster", mix],
                            failures)
            if "default/m" not in out:
                failures.append("mixed: no pod bound:\n%s" % out[:2000])
        man = os.path.join(tmp, "m")
        subprocess.run([bench, "--write-manifests", man, "--no-run",
                        "--nodes", "300", "--pods", "600", "--percentage",
                        "0", "--parallelism", "1",
                        "--workload", "SchedulingBasic/500Nodes",
                        "--workload", "SchedulingNodeAffinity"] +
                       (["--workload", "TopologySpreading"]
                        if FLAG == "bulk" else []),
                       check=True, capture_output=True, timeout=120)
        cfg = os.path.join(man, "config-pct0-par1.yaml")
        for y in sorted(os.listdir(man)):
            if y.startswith("config"):
                continue
            check_all(y, ksched, plugins, ["--cluster", os.path.join(man, y),
                                           "--config", cfg], failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
