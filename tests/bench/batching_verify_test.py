#!/usr/bin/env python3
"""ksched-bench --batching verify on the bench shapes at a small size.

Every bench shape (SchedulingBasic, SchedulingNodeAffinity,
TopologySpreading, SchedulingDeployment, SchedulingPodAntiAffinity,
PreemptionBasic, SchedulingWithMixedChurn) with 300 nodes and 600 pods,
Volumes with 50 nodes and 100 pods, adaptive and
percentageOfNodesToScore 100: every run binds the pods that fit, verify finds no difference between what batching
would reuse and a fresh evaluation, and reuse happens where upstream's rule
allows it (identical plain or node-affinity pods) and not for pods with
topology spread constraints (PodTopologySpread does not sign them).

usage: batching_verify_test.py KSCHED_BENCH PLUGIN_DIR
"""
import re
import subprocess
import sys

LINE = re.compile(r"^ksched-bench: (\S+) pct (\d+) par (\d+): batching verify "
                  r"reused (\d+) node results, (\d+) differences$")

# (shape, nodes, pods, pods that fit, reuse expected: True, False, or None
# when either is right: the pods of 100 ReplicaSets interleaved change
# signature every cycle, and a pod that preempts or churned objects between
# cycles drop what was kept)
SHAPES = [("SchedulingBasic/500Nodes", 300, 600, 600, True),
          ("SchedulingNodeAffinity/5000Nodes", 300, 600, 600, True),
          ("TopologySpreading/5000Nodes", 300, 600, 600, False),
          ("SchedulingDeployment/5000Nodes", 300, 600, 600, None),
          ("SchedulingPodAntiAffinity/5000Nodes", 300, 600, 600, None),
          ("PreemptionBasic/500Nodes", 300, 600, 300, None),
          ("SchedulingWithMixedChurn/1000Nodes", 300, 600, 600, None),
          # VolumeBinding's Filter costs nodes x PVs: a smaller cluster
          ("Volumes/100Nodes", 50, 100, 100, None)]


def main():
    bench, plugins = sys.argv[1], sys.argv[2]
    failures = []
    for name, nodes, pods, fit, reuses in SHAPES:
        p = subprocess.run([bench, "--plugin-dir", plugins, "--workload", name,
                            "--nodes", str(nodes), "--pods", str(pods),
                            "--parallelism", "2", "--batching", "verify"],
                           capture_output=True, text=True, timeout=600)
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        if p.returncode != 0:
            failures.append("%s: exit %d" % (name, p.returncode))
        rows = [LINE.match(l) for l in p.stderr.splitlines()]
        rows = [m for m in rows if m]
        pcts = sorted(int(m.group(2)) for m in rows)
        if pcts != [0, 100]:
            failures.append("%s: verify lines for pct %s, want 0 and 100"
                            % (name, pcts))
        for m in rows:
            what = "%s pct %s" % (name, m.group(2))
            reused, diffs = int(m.group(4)), int(m.group(5))
            if diffs != 0:
                failures.append("%s: %d differences" % (what, diffs))
            if reuses is True and reused == 0:
                failures.append("%s: nothing reused" % what)
            if reuses is False and reused != 0:
                failures.append("%s: reused %d node results, want 0 (the "
                                "pods have spread constraints)" % (what, reused))
        # every row bound what fits (the bench marks others MISMATCH)
        for l in p.stdout.splitlines()[1:]:
            if "MISMATCH" in l or "FAILED" in l:
                failures.append("%s: %s" % (name, l))
            b = re.search(r" (\d+)/(\d+)\s", l)
            want = "%d/%d" % (fit, fit)
            if b is None or b.group(1) != b.group(2) or b.group(1) != str(fit):
                failures.append("%s: row does not bind %s: %s"
                                % (name, want, l))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
