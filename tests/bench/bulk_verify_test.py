#!/usr/bin/env python3
"""ksched-bench --bulk verify on every bench shape at a small size.

Every bench shape (SchedulingBasic, SchedulingNodeAffinity,
TopologySpreading, SchedulingPodAntiAffinity, SchedulingDeployment,
Preemption, PreemptionBasic, SchedulingWithMixedChurn) with 300 nodes and
600 pods, Volumes with 50 nodes and 100 pods,
adaptive and percentageOfNodesToScore 100, with batching on and off: every
run binds what fits, and verify finds no difference between the bulk Filter
and Score (filter_nodes, score_nodes) and the node-by-node ones over the
node results it compared (with batching off, at least 100,000 where bulk
runs; with it on, identical pods reuse and little is left to compare; the
preemption shape runs node by node while pods are nominated).

usage: bulk_verify_test.py KSCHED_BENCH PLUGIN_DIR
"""
import re
import subprocess
import sys

LINE = re.compile(r"^ksched-bench: (\S+) pct (\d+) par (\d+): bulk verify "
                  r"compared (\d+) node results, (\d+) differences$")

# (shape, nodes, pods, node results compared at least with batching off)
SHAPES = [("SchedulingBasic/500Nodes", 300, 600, 100000),
          ("SchedulingNodeAffinity/5000Nodes", 300, 600, 100000),
          ("TopologySpreading/5000Nodes", 300, 600, 100000),
          ("SchedulingPodAntiAffinity/5000Nodes", 300, 600, 100000),
          ("SchedulingDeployment/5000Nodes", 300, 600, 100000),
          ("Preemption/5000Nodes", 300, 600, 1),
          ("PreemptionBasic/500Nodes", 300, 600, 1),
          ("SchedulingWithMixedChurn/1000Nodes", 300, 600, 100000),
          # VolumeBinding's Filter costs nodes x PVs: a smaller cluster
          ("Volumes/100Nodes", 50, 100, 1000)]


def main():
    bench, plugins = sys.argv[1], sys.argv[2]
    failures = []
    for name, nodes, pods, least in SHAPES:
        for batching in ("off", "on"):
            what = "%s --batching %s" % (name, batching)
            p = subprocess.run([bench, "--plugin-dir", plugins, "--workload",
                                name, "--nodes", str(nodes),
                                "--pods", str(pods),
                                "--parallelism", "2", "--bulk", "verify",
                                "--batching", batching],
                               capture_output=True, text=True, timeout=600)
            sys.stdout.write(p.stdout)
            sys.stdout.write(p.stderr)
            if p.returncode != 0:
                failures.append("%s: exit %d" % (what, p.returncode))
            rows = [m for m in map(LINE.match, p.stderr.splitlines()) if m]
            if sorted(int(m.group(2)) for m in rows) != [0, 100]:
                failures.append("%s: no bulk verify line for each pct" % what)
            for m in rows:
                compared, diffs = int(m.group(4)), int(m.group(5))
                if diffs != 0:
                    failures.append("%s pct %s: %d differences"
                                    % (what, m.group(2), diffs))
                if compared < (least if batching == "off" else min(least, 100)):
                    failures.append("%s pct %s: compared only %d node results"
                                    % (what, m.group(2), compared))
            for l in p.stdout.splitlines()[1:]:
                if "MISMATCH" in l or "FAILED" in l:
                    failures.append("%s: %s" % (what, l))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
