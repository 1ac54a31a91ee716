#!/usr/bin/env python3
"""`ksched schedule --replay` on snapshots with known answers.

replay_differences.yaml: under the default profile p1 and p2 stay where
they are, p3 sits on a node too small for it (ksched rejects it there:
NodeResourcesFit, Insufficient cpu) and p4 on a node its nodeSelector
does not match (no node fits: unschedulable, NodeAffinity); p5 belongs to
another scheduler and p6 is pending, neither replayed. Under
profiles/examples/most-allocated.yaml p1 and p2 move by score and
NodeResourcesFit is named; --replay-as replays p5 too. replay_ties.yaml: two identical nodes, so the
pod is same or tied, never different, and the exit status is 0.

Last, `serve --shadow`'s usage errors (it needs cluster mode and takes
no lease).

Usage: replay_test.py KSCHED PLUGIN_DIR SOURCE_ROOT
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402

KSCHED, PLUGINS, ROOT = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
DIFF = os.path.join(HERE, "replay_differences.yaml")
TIES = os.path.join(HERE, "replay_ties.yaml")
MOST = os.path.join(ROOT, "profiles", "examples", "most-allocated.yaml")


def replay(*args):
    p = subprocess.run([KSCHED, "schedule", "--replay", "-p", PLUGINS,
                        "--no-default-plugin-path"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def by_pod(doc):
    return {d["name"]: d for d in doc["differences"]}


# --- the default profile --------------------------------------------------
rc, out, err = replay("--deterministic", "-f", DIFF, "-o", "json")
kt.check(rc == 3, "default profile: exit 3 when a pod would go elsewhere "
         "(got %d: %s)" % (rc, err))
doc = json.loads(out)
s = doc["summary"]
kt.check((s["same"], s["tied"], s["different"], s["unschedulable"],
          s["placed"], s["error"]) == (2, 0, 1, 1, 0, 0),
         "default profile: 2 same, 1 different, 1 unschedulable: %s" % s)
kt.check(s["otherSchedulers"] == 1 and s["pending"] == 1,
         "another scheduler's pod and the pending pod are not replayed")
d = by_pod(doc)
kt.check(set(d) == {"p3-reject", "p4-nowhere"},
         "only the differences are listed: %s" % sorted(d))
p3 = d.get("p3-reject", {})
kt.check(p3.get("result") == "different" and p3.get("realNode") == "tiny2"
         and p3.get("kschedNode") == "big",
         "p3: different, tiny2 for real, big under ksched: %s" % p3)
kt.check(p3.get("reason") == "ksched would reject tiny2: Insufficient cpu",
         "p3: the real node's verdict is the reason: %r" % p3.get("reason"))
kt.check([x["plugin"] for x in p3.get("decidedBy", [])] ==
         ["NodeResourcesFit"], "p3: NodeResourcesFit made the difference")
kt.check("rejected by NodeResourcesFit: Insufficient cpu" in
         p3.get("explainReal", "") and
         "passes filters; score" in p3.get("explainKsched", ""),
         "p3: both nodes' --explain lines")
p4 = d.get("p4-nowhere", {})
kt.check(p4.get("result") == "unschedulable" and p4.get("kschedNode") == ""
         and [x["plugin"] for x in p4.get("decidedBy", [])] ==
         ["NodeAffinity"],
         "p4: unschedulable under ksched, NodeAffinity named: %s" % p4)
kt.check(p4.get("message", "").startswith("0/4 nodes are available"),
         "p4: ksched's FitError: %r" % p4.get("message"))
kt.check({x["plugin"]: x["count"] for x in doc["decidingPlugins"]} ==
         {"NodeResourcesFit": 1, "NodeAffinity": 1},
         "summary: the plugins that made the difference")

# the same run as a table and as YAML
rc, out, err = replay("--deterministic", "-f", DIFF)
kt.check(rc == 3, "table: exit 3")
kt.check("ksched would reject tiny2: Insufficient cpu (NodeResourcesFit)"
         in out, "table: p3's reason and plugin")
kt.check("4 replayed: 2 same, 0 tied, 1 different, 1 unschedulable, "
         "0 placed, 0 error; 1 left to other schedulers; 1 pending, not "
         "replayed" in out, "table: the summary line\n" + out)
kt.check("made the difference: NodeAffinity 1, NodeResourcesFit 1" in out,
         "table: the deciding plugins")
rc, out, err = replay("--deterministic", "-f", DIFF, "-o", "yaml")
kt.check(rc == 3 and "  different: 1\n" in out and
         "  result: unschedulable\n" in out and
         "- plugin: NodeAffinity\n" in out, "yaml: summary and differences")

# --explain NS/POD: that pod's whole evaluation
rc, out, err = replay("--deterministic", "-f", DIFF,
                      "--explain", "default/p2-score")
kt.check('explain default/p2-score (replay, profile "default-scheduler", '
         'really on tiny)' in out and "  selected: tiny\n" in out and
         "  tiny2                    rejected by NodeResourcesFit" in out,
         "--explain: every node of the pod's replay\n" + out)

# --- a profile that differs on purpose --------------------------------------
rc, out, err = replay("--deterministic", "-f", DIFF, "-c", MOST, "-o",
                      "json")
doc = json.loads(out)
d = by_pod(doc)
kt.check(rc == 3 and doc["summary"]["different"] == 3,
         "MostAllocated: p1, p2, p3 different: %s" % doc["summary"])
for name in ("p1-same", "p2-score"):
    x = d.get(name, {})
    kt.check(x.get("result") == "different" and
             x.get("decidedBy", [{}])[0].get("plugin") == "NodeResourcesFit"
             and x.get("scoreGap") == x.get("kschedScore", 0) -
             x.get("realScore", 0) > 0 and
             x.get("reason") == "%s scores %d, %s scores %d" % (
                 x.get("realNode"), x.get("realScore", 0),
                 x.get("kschedNode"), x.get("kschedScore", 0)),
             "MostAllocated: %s moves by score, NodeResourcesFit first: %s"
             % (name, x))
kt.check(doc["decidingPlugins"][0] == {"plugin": "NodeResourcesFit",
                                       "count": 3},
         "MostAllocated: NodeResourcesFit made the most differences")

# --- ties -------------------------------------------------------------------
rc, out, err = replay("--deterministic", "-f", TIES, "-o", "json")
doc = json.loads(out)
kt.check(rc == 0 and doc["summary"]["tied"] == 1 and
         doc["differences"][0]["reason"] == "twin-b and twin-a both score %d"
         % doc["differences"][0]["kschedScore"],
         "ties: twin-a wins the deterministic tie, tied, exit 0: %s" % out)
for _ in range(4):
    rc, out, err = replay("-f", TIES, "-o", "json")
    s = json.loads(out)["summary"]
    kt.check(rc == 0 and s["same"] + s["tied"] == 1,
             "ties at random: same or tied, exit 0: %s" % s)

# --- --replay-as: another scheduler's pods with a chosen profile ------------
rc, out, err = replay("--deterministic", "-f", DIFF, "-o", "json",
                      "--replay-as", "my-scheduler=default-scheduler")
s = json.loads(out)["summary"] if out else {}
kt.check(rc == 3 and s.get("otherSchedulers") == 0 and
         sum(s.get(k, 0) for k in ("same", "tied", "different",
                                   "unschedulable", "placed", "error")) == 5,
         "--replay-as: my-scheduler's pod replayed with default-scheduler: "
         "%s" % s)
rc, out, err = replay("-f", DIFF, "--replay-as", "my-scheduler=nope")
kt.check(rc == 1 and 'no profile "nope"' in err,
         "--replay-as with an unknown profile: invalid input: " + err)
rc, out, err = replay("-f", DIFF, "--replay-as", "=x")
kt.check(rc == 2, "--replay-as =x: usage error")

# --- usage ------------------------------------------------------------------
rc, out, err = replay("-f", DIFF, "-o", "xml")
kt.check(rc == 2, "--output xml: usage error")

# --- serve --shadow: what it refuses before starting --------------------------
for args, why in ((["--shadow", "default-scheduler", "--embedded"],
                   "--embedded"),
                  (["--shadow", "default-scheduler", "--leader-elect"],
                   "--leader-elect"),
                  (["--shadow", "a=b,=c"], "is not NAME or NAME=PROFILE"),
                  (["--shadow", "default-scheduler", "-p", PLUGINS,
                    "--no-default-plugin-path"], "needs cluster mode")):
    env = dict(os.environ)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    p = subprocess.run([KSCHED, "serve", "--no-supervise"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30, env=env)
    kt.check(p.returncode == 2 and why in p.stderr,
             "serve %s: usage error naming %s (%d: %s)" % (
                 " ".join(args), why, p.returncode, p.stderr.strip()))

raise SystemExit(kt.summary())
