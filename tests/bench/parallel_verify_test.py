#!/usr/bin/env python3
"""A second worker decides as one: ksched-bench --seed at
percentageOfNodesToScore 100 with parallelism 1 and 2 binds every pod to
the same node (equal digests of the bindings in order), batching on and
off.
Every run also clocks the jobs the pool could split (--splittable): their
share of the run must be a fraction, the bound printed beside it must be
Amdahl's for that share, and the clocking must not change a decision.

3,000 nodes and 300 pods: past the length from which the feasible nodes
are collected, NormalizeScore's lists filled and weighed, and the host
selected on the pool's threads (2,048), so those paths run with 2 threads
and the plain loops with 1. At the adaptive percentage the two may
differ, as upstream's do: workers that stop once enough nodes passed can
leave a different set of them.

usage: parallel_verify_test.py KSCHED_BENCH PLUGIN_DIR
"""
import re
import subprocess
import sys

WORKERS = re.compile(r"^ksched-bench: (\S+) pct (\d+) par (\d+): workers "
                     r"shared (\d+) of (\d+) jobs \((\d+) of (\d+) items\)$",
                     re.M)
SPLIT = re.compile(r"^ksched-bench: (\S+) pct (\d+) par (\d+): jobs a second "
                   r"thread could split took ([0-9.]+)% of the run \(([0-9.]+) "
                   r"us a pod\): two threads, each as fast as one alone, "
                   r"could make it at most ([0-9.]+)x as fast$", re.M)
DIGEST = re.compile(r"^ksched-bench: (\S+) pct (\d+) par (\d+): bindings "
                    r"digest ([0-9a-f]{16})$", re.M)

SHAPES = ["SchedulingBasic/5000Nodes", "SchedulingNodeAffinity/5000Nodes",
          "TopologySpreading/5000Nodes", "SchedulingDeployment/5000Nodes",
          "SchedulingPodAntiAffinity/5000Nodes"]


def main():
    bench, plugins = sys.argv[1], sys.argv[2]
    failures = []
    for name in SHAPES:
        for batching in ("on", "off"):
            digests = {}
            for par in (1, 2):
                what = "%s --batching %s --parallelism %d" % (name, batching,
                                                              par)
                p = subprocess.run([bench, "--plugin-dir", plugins,
                                    "--workload", name, "--nodes", "3000",
                                    "--pods", "300", "--percentage", "100",
                                    "--parallelism", str(par), "--seed", "7",
                                    "--batching", batching, "--splittable"],
                                   capture_output=True, text=True,
                                   timeout=600)
                sys.stdout.write(p.stdout)
                if p.returncode != 0:
                    failures.append("%s: exit %d: %s" % (what, p.returncode,
                                                         p.stderr[-500:]))
                m = DIGEST.search(p.stderr)
                if m is None:
                    failures.append("%s: no digest line" % what)
                    continue
                digests[par] = m.group(4)
                s = SPLIT.search(p.stderr)
                if s is None:
                    failures.append("%s: no splittable line" % what)
                else:
                    share, bound = float(s.group(4)), float(s.group(6))
                    print("%s: splittable %.1f%%, at most %.2fx"
                          % (what, share, bound))
                    # Filter and Score over 3,000 nodes are jobs of many
                    # chunks: some of the run, never all of it
                    if not 0 < share < 100 or float(s.group(5)) <= 0 or \
                            abs(bound - 1 / (1 - share / 200)) > 0.011:
                        failures.append("%s: splittable figures make no "
                                        "sense: %s" % (what, s.group(0)))
                print("%s: digest %s" % (what, m.group(4)))
                # the workers' counts: at parallelism 2, Filter and Score
                # jobs over 3,000 nodes (every cycle has some), no more
                # shared than given; none at parallelism 1
                w = WORKERS.search(p.stderr)
                if par == 1 and w is not None:
                    failures.append("%s: workers line at parallelism 1"
                                    % what)
                elif par == 2:
                    if w is None:
                        failures.append("%s: no workers line" % what)
                    else:
                        shared, jobs = int(w.group(4)), int(w.group(5))
                        sitems, items = int(w.group(6)), int(w.group(7))
                        print("%s: workers shared %d of %d jobs"
                              % (what, shared, jobs))
                        if jobs < 300 or shared > jobs or sitems > items \
                                or (shared > 0) != (sitems > 0):
                            failures.append("%s: workers counts make no "
                                            "sense: %s" % (what, w.group(0)))
            if len(digests) == 2 and digests[1] != digests[2]:
                failures.append("%s --batching %s: parallelism 2 decides "
                                "otherwise than 1 (%s, %s)"
                                % (name, batching, digests[1], digests[2]))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
