#!/usr/bin/env python3
"""Conformance scenarios with opportunistic batching (or the bulk Filter
and Score) verified.

`ksched conformance --batching verify` keeps one scheduler while pods are
simply bound, so a pod identical to the previous one reuses its results
only after comparing each with a fresh evaluation; `--bulk verify` compares
every bulk Filter verdict and Score with the node-by-node one. Checked:
every scenario passes (as many as there are expected files), some results
were compared, no difference was found, and the decisions printed with -v
are the same as with the flag off and on.

usage: batching_test.py KSCHED PLUGIN_DIR SCENARIO_DIR [batching|bulk]
"""
import glob
import os
import re
import subprocess
import sys


FLAG = "batching"


def run(ksched, plugins, d, mode):
    p = subprocess.run([ksched, "conformance", "--plugin-dir", plugins,
                        "--no-default-plugin-path", "-v", "--" + FLAG, mode,
                        d], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    global FLAG
    ksched, plugins, d = sys.argv[1:4]
    if len(sys.argv) > 4:
        FLAG = sys.argv[4]
    if not os.path.isdir(d):
        print("scenario directory %s not found; skipped" % d)
        return 77
    want = len(glob.glob(os.path.join(d, "*.expected.yaml")))
    failures = []
    rc, out, err = run(ksched, plugins, d, "verify")
    sys.stdout.write(out[-2000:])
    sys.stdout.write(err)
    if rc != 0:
        failures.append("verify: exit %d" % rc)
    if "%d passed, 0 failed" % want not in out:
        failures.append("verify: want %d passed, 0 failed" % want)
    m = re.search(r"^" + FLAG + r" verify: (\d+) node results compared, "
                  r"(\d+) differences$", out, re.M)
    if m is None:
        failures.append("verify: no summary line")
    else:
        if int(m.group(1)) == 0:
            failures.append("verify: nothing compared")
        if int(m.group(2)) != 0:
            failures.append("verify: %s differences" % m.group(2))
    if FLAG + " verify: pod" in err:
        failures.append("verify logged a difference")
    decisions = out[:m.start()] if m else out
    for mode in ("off", "on"):
        rc2, out2, _ = run(ksched, plugins, d, mode)
        if rc2 != 0:
            failures.append("%s: exit %d" % (mode, rc2))
        if out2 != decisions:
            failures.append("%s: decisions differ from verify's" % mode)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
