"""cpu-ceiling prints one line per kernel asked for, with as many pair
ratios as pairs asked for, each a positive number, and refuses bad
arguments with exit status 2 and a message naming the argument."""
import re
import subprocess
import sys

exe = sys.argv[1]
failures = []


def run(*args):
    return subprocess.run([exe, *args], capture_output=True, text=True,
                          timeout=100)


r = run("--pairs", "3", "--ms", "2")
lines = r.stdout.splitlines()
if r.returncode != 0:
    failures.append(f"exit {r.returncode}: {r.stderr.strip()}")
if [ln.split()[0] for ln in lines] != ["chain", "ilp", "memory"]:
    failures.append(f"kernels: {lines}")
pat = re.compile(r"^\w+ +median (\S+)x  lowest (\S+)x  highest (\S+)x"
                 r"  pairs:((?: \S+)+)$")
for ln in lines:
    m = pat.match(ln)
    if not m:
        failures.append(f"line not understood: {ln!r}")
        continue
    med, lo, hi = (float(m.group(i)) for i in (1, 2, 3))
    ratios = [float(v) for v in m.group(4).split()]
    if len(ratios) != 3 or min(ratios) <= 0:
        failures.append(f"pairs: {ln!r}")
    elif not (lo == min(ratios) and hi == max(ratios) and lo <= med <= hi
              and med == sorted(ratios)[1]):
        failures.append(f"median/lowest/highest disagree with pairs: {ln!r}")

r = run("--kernel", "ilp", "--pairs", "2", "--ms", "1")
if r.returncode != 0 or len(r.stdout.splitlines()) != 1 \
        or not r.stdout.startswith("ilp "):
    failures.append(f"--kernel ilp: exit {r.returncode}, {r.stdout!r}")

for args, word in ((["--pairs", "0"], "--pairs"),
                   (["--pairs", "3x"], "--pairs"),
                   (["--ms"], "--ms"),
                   (["--kernel", "gpu"], "--kernel"),
                   (["--frobnicate"], "--frobnicate")):
    r = run(*args)
    if r.returncode != 2 or word not in r.stderr or r.stdout:
        failures.append(f"{args}: exit {r.returncode}, stderr {r.stderr!r}")

for f in failures:
    print("FAIL:", f)
print("cpu-ceiling:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
