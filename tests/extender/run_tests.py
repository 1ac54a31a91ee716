#!/usr/bin/env python3
"""Scheduler extenders end to end: `ksched schedule -o json` and `ksched
validate` against test_extender.py, one table row per case.

Usage: run_tests.py KSCHED PLUGIN_DIR
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

KSCHED, PLUGINS = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="ksched-ext-")
CTL = os.path.join(TMP, "ctl.json")

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110", example.com/gpu: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default, uid: u1, labels: {app: x},
           annotations: {a: b}}
spec:
  nodeSelector: {}
  tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
"""
NOMINATED = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: nom, namespace: default}
spec:
  containers: [{name: c, image: i}]
status: {nominatedNodeName: n1}
"""
FPGA_POD = """
---
apiVersion: v1
kind: Pod
metadata: {name: fpga, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {limits: {example.com/fpga: "1"}}}]
"""
GPU_POD = """
---
apiVersion: v1
kind: Pod
metadata: {name: gpu, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {limits: {example.com/gpu: "1"}}}]
"""

PREEMPT_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: lo1, namespace: default, uid: lo1}
spec: {nodeName: n1, containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lo2a, namespace: default, uid: lo2a}
spec: {nodeName: n2, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lo2b, namespace: default, uid: lo2b}
spec: {nodeName: n2, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: hi, namespace: default, uid: hi}
spec: {priority: 100, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
"""

# A node as kubelets report it: fields ksched does not model must reach
# an extender that is sent node objects exactly as written (YAML typed as
# the API server reads it: quoted strings stay strings, numbers, booleans
# and null keep their type).
RICH_NODE = r"""
apiVersion: v1
kind: Node
metadata:
  name: rich
  uid: 0b8f6a1e-1111-4222-8333-444455556666
  labels: {kubernetes.io/hostname: rich}
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    example.com/note: "line one\nline \"two\""
spec:
  podCIDR: 10.0.0.0/24
  unschedulable: false
  taints: [{key: k, value: v, effect: PreferNoSchedule}]
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  addresses: [{type: InternalIP, address: 10.1.2.3}]
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady,
     lastHeartbeatTime: "2024-05-02T10:00:00Z"}
  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}
  nodeInfo: {kubeletVersion: v1.30.1, architecture: amd64}
  config: null
"""
RICH_OBJECT = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "rich",
                 "uid": "0b8f6a1e-1111-4222-8333-444455556666",
                 "labels": {"kubernetes.io/hostname": "rich"},
                 "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                 "example.com/note": 'line one\nline "two"'}},
    "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": False,
             "taints": [{"key": "k", "value": "v",
                         "effect": "PreferNoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "addresses": [{"type": "InternalIP", "address": "10.1.2.3"}],
               "conditions": [{"type": "Ready", "status": "True",
                               "reason": "KubeletReady",
                               "lastHeartbeatTime": "2024-05-02T10:00:00Z"}],
               "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
               "nodeInfo": {"kubeletVersion": "v1.30.1",
                            "architecture": "amd64"},
               "config": None},
}

def sent_nodes(log, verb="filter"):
    """The node objects of every `verb` request, by name."""
    out = {}
    for e in log:
        if e["verb"] == verb and e["body"].get("Nodes"):
            for n in e["body"]["Nodes"]["items"]:
                out[n["metadata"]["name"]] = n
    return out

PREEMPT_TAIL = (" no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not "
                "helpful for scheduling, 2 No preemption victims found for "
                "incoming pod.")

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p

def start_extender():
    with open(CTL, "w") as f:
        f.write("{}")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "test_extender.py"), CTL],
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())

def config(port, extra, url=None):
    url = url or "http://127.0.0.1:%d/" % port
    return ("apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            "podInitialBackoffSeconds: 300\n"
            "podMaxBackoffSeconds: 300\n"
            "extenders:\n- urlPrefix: %s\n%s" % (url, extra))

def run(args, cfg_text, cluster):
    cfg = os.path.join(TMP, "cfg.yaml")
    cl = os.path.join(TMP, "cluster.yaml")
    open(cfg, "w").write(cfg_text)
    open(cl, "w").write(cluster)
    t0 = time.time()
    r = subprocess.run([KSCHED] + args + ["-c", cfg, "-p", PLUGINS,
                                          "--no-default-plugin-path"] +
                       (["-f", cl, "-o", "json", "--deterministic"]
                        if args[0] == "schedule" else []),
                       capture_output=True, text=True, timeout=60)
    return r, time.time() - t0

def requests_log():
    try:
        return [json.loads(l) for l in open(CTL + ".log")]
    except OSError:
        return []

F = "  filterVerb: filter\n"
P = "  prioritizeVerb: prioritize\n  weight: %d\n"
B = "  bindVerb: bind\n"

def cases(port, dead):
    url = "http://127.0.0.1:%d/filter" % port
    return [
        # name, control, config extra, cluster, expected {node|message}, check
        ("filter narrows, FitError names every reason",
         {"filter": {"reject": {"n1": "n1 is busy", "n3": "n3 is busy"},
                     "unresolvable": {"n2": "n2 lacks disk"}}},
         F, CLUSTER,
         {"p1": "0/3 nodes are available: 1 n1 is busy, 1 n2 lacks disk, "
                "1 n3 is busy." + PREEMPT_TAIL}, None),
        ("filter keeps one node", {"filter": {"reject": {"n1": "x", "n3": "y"}}},
         F, CLUSTER, {"p1": "@n2"}, None),
        ("FailedAndUnresolvable wins over FailedNodes",
         {"filter": {"reject": {"n1": "soft", "n2": "soft", "n3": "soft"},
                     "unresolvable": {"n1": "hard"}}},
         F, CLUSTER,
         {"p1": "0/3 nodes are available: 1 hard, 2 soft. no new claims to deallocate, preemption: 0/3 "
                "nodes are available: 1 Preemption is not helpful for "
                "scheduling, 2 No preemption victims found for incoming pod."},
         None),
        ("the Pod and a NodeList are sent", {}, F, CLUSTER, {"p1": "@n1"},
         lambda log: log[0]["body"]["Pod"]["metadata"] == {
             "name": "p1", "namespace": "default", "uid": "u1",
             "labels": {"app": "x"}, "annotations": {"a": "b"}}
         and log[0]["body"]["Pod"]["spec"]["tolerations"] == [
             {"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
         and [n["metadata"]["name"] for n in log[0]["body"]["Nodes"]["items"]]
         == ["n1", "n2", "n3"] and log[0]["body"]["NodeNames"] is None
         and log[0]["body"]["Nodes"]["items"][0]["status"]["allocatable"]
         ["example.com/gpu"] == "2"),
        ("a nominated node the extender rejects: every node is evaluated",
         {"filter": {"reject": {"n1": "no"}}}, F, NOMINATED, {"nom": "@n2"},
         lambda log: [[n["metadata"]["name"] for n in e["body"]["Nodes"]["items"]]
                      for e in log] == [["n1"], ["n1", "n2"]]),
        ("nodeCacheCapable sends NodeNames", {"filter": {"reject": {"n1": "x"}}},
         F + "  nodeCacheCapable: true\n", CLUSTER, {"p1": "@n2"},
         lambda log: log[0]["body"]["Nodes"] is None and
         sorted(log[0]["body"]["NodeNames"]) == ["n1", "n2", "n3"]),
        ("node objects are sent as read: fields ksched does not model "
         "arrive intact", {}, F, CLUSTER + "---" + RICH_NODE,
         {"p1": "@n1"},
         lambda log: sent_nodes(log).get("rich") == RICH_OBJECT),
        ("nodeCacheCapable, the answer a NodeList of objects: accepted",
         {"filter": {"reject": {"n1": "x"}, "answer": "nodes"}},
         F + "  nodeCacheCapable: true\n", CLUSTER, {"p1": "@n2"},
         lambda log: log[0]["body"]["Nodes"] is None),
        ("Error in the answer fails the cycle",
         {"filter": {"mode": "error", "message": "boom"}}, F, CLUSTER,
         {"p1": "boom"}, None),
        ("HTTP 500 fails the cycle", {"filter": {"mode": "http500"}}, F, CLUSTER,
         {"p1": "failed filter with extender at URL %s, code 500" % url}, None),
        ("garbage JSON fails the cycle with Go's decoder error",
         {"filter": {"mode": "garbage"}}, F, CLUSTER,
         {"p1": "invalid character 'n' looking for beginning of object key "
                "string"}, None),
        # Answers read as Go's encoding/json reads them: field names in any
        # case (hand-written extenders often answer in lower case).
        ("lower-case answer, NodeNames",
         {"case": "lower", "filter": {"reject": {"n1": "x", "n3": "y"}}},
         F + "  nodeCacheCapable: true\n", CLUSTER, {"p1": "@n2"}, None),
        ("lower-case answer, a NodeList",
         {"case": "lower", "filter": {"reject": {"n1": "x", "n2": "y"}}},
         F, CLUSTER, {"p1": "@n3"}, None),
        ("upper-case answer: FailedNodes and FailedAndUnresolvableNodes read",
         {"case": "upper", "filter": {"reject": {"n1": "n1 is busy",
                                                 "n3": "n3 is busy"},
                                      "unresolvable": {"n2": "n2 lacks disk"}}},
         F, CLUSTER,
         {"p1": "0/3 nodes are available: 1 n1 is busy, 1 n2 lacks disk, "
                "1 n3 is busy." + PREEMPT_TAIL}, None),
        ("camel-case answer: its Error fails the cycle",
         {"case": "camel", "filter": {"mode": "error", "message": "nope"}},
         F, CLUSTER, {"p1": "nope"}, None),
        # A node left out of the answer without a reason: counted in the
        # total, no reason, and not tried by preemption (upstream v1.36's
        # absent-node status, UnschedulableAndUnresolvable).
        ("a node dropped without a reason",
         {"filter": {"drop": ["n1"], "reject": {"n2": "busy", "n3": "busy"}}},
         F, CLUSTER,
         {"p1": "0/3 nodes are available: 2 busy." + PREEMPT_TAIL}, None),
        ("every node dropped without a reason",
         {"filter": {"drop": ["n1", "n2", "n3"]}}, F, CLUSTER,
         {"p1": "0/3 nodes are available: no new claims to deallocate, preemption: 0/3 nodes are "
                "available: 3 Preemption is not helpful for scheduling."},
         None),
        ("ignorable: an error skips the extender",
         {"filter": {"mode": "http500"}}, F + "  ignorable: true\n", CLUSTER,
         {"p1": "@n1"}, None),
        ("timeout fails the cycle",
         {"filter": {"delay": 1.5}}, F + "  httpTimeout: 300ms\n", CLUSTER,
         {"p1": "failed filter with extender at URL %s: no answer within the "
                "httpTimeout of 300 ms" % url}, None),
        ("connection refused, ignorable", {}, F + "  ignorable: true\n",
         CLUSTER, {"p1": "@n1"}, None, "http://127.0.0.1:%d/" % dead),
        ("connection refused fails the cycle", {}, F, CLUSTER,
         {"p1": "~Connection refused"}, None, "http://127.0.0.1:%d/" % dead),
        ("managedResources: only pods requesting them are sent",
         {"filter": {"reject": {"n1": "no", "n2": "no", "n3": "no"}}},
         F + "  managedResources:\n  - name: example.com/gpu\n", CLUSTER + GPU_POD,
         {"p1": "@n1", "gpu": "0/3 nodes are available: 1 no, 2 Insufficient "
                             "example.com/gpu. no new claims to deallocate, preemption: 0/3 nodes are "
                             "available: 3 No preemption victims found for "
                             "incoming pod."},
         lambda log: [e["body"]["Pod"]["metadata"]["name"] for e in log] == ["gpu"]),
        ("ignoredByScheduler: NodeResourcesFit leaves the resource to the extender",
         {"filter": {"reject": {"n1": "taken", "n2": "taken"}}},
         F + "  managedResources:\n  - name: example.com/fpga\n"
         "    ignoredByScheduler: true\n", CLUSTER + FPGA_POD,
         {"p1": "@n1", "fpga": "@n3"}, None),
        ("ignoredByScheduler: false keeps NodeResourcesFit's check", {},
         F + "  managedResources:\n  - name: example.com/fpga\n", CLUSTER + FPGA_POD,
         {"p1": "@n1", "fpga": "0/3 nodes are available: 3 Insufficient "
                               "example.com/fpga. no new claims to deallocate, preemption: 0/3 nodes are "
                               "available: 3 No preemption victims found for "
                               "incoming pod."}, None),
        ("prioritize x weight x 10 is added to the plugins' total",
         {"prioritize": {"scores": {"n3": 10, "n2": 5}}}, P % 1, CLUSTER,
         {"p1": "@n3"}, None),
        ("camel-case prioritize answer: host and score read",
         {"case": "camel", "prioritize": {"scores": {"n3": 10, "n2": 5}}},
         P % 1, CLUSTER, {"p1": "@n3"}, None),
        ("lower-case prioritize answer: host and score read",
         {"case": "lower", "prioritize": {"scores": {"n2": 10}}},
         P % 1, CLUSTER, {"p1": "@n2"}, None),
        ("prioritize errors are ignored", {"prioritize": {"mode": "http500"}},
         P % 3, CLUSTER, {"p1": "@n1"}, None),
        ("bind: the extender binds", {}, B, CLUSTER, {"p1": "@n1"},
         lambda log: log[0]["verb"] == "bind" and log[0]["body"] == {
             "PodName": "p1", "PodNamespace": "default", "PodUID": "u1",
             "Node": "n1"}),
        ("bind: an error is a binding failure",
         {"bind": {"mode": "error", "message": "cannot bind"}}, B, CLUSTER,
         {"p1": "cannot bind"}, None),
        ("bind: ignorable error falls back to the Bind plugins",
         {"bind": {"mode": "http500"}}, B + "  ignorable: true\n", CLUSTER,
         {"p1": "@n1"}, None),
    ]

X = "  preemptVerb: preempt\n"
NO_ROOM = "0/2 nodes are available: 2 Insufficient cpu."

def preempt_cases(port):
    """preemptVerb: (name, control, config extra, want {pod: node or
    message}, victims preempted (from the Preempted events), text that
    must be in stderr, check on the requests)."""
    def victims_sent(log):
        b = log[0]["body"]
        return b["NodeNameToMetaVictims"] is None and {
            n: [p["metadata"]["uid"] for p in v["Pods"]]
            for n, v in b["NodeNameToVictims"].items()} == {
                "n1": ["lo1"], "n2": ["lo2b"]} and \
            b["Pod"]["metadata"]["name"] == "hi"
    return [
        ("preempt: the extender keeps every candidate", {}, X,
         {"hi": "@n1"}, ["lo1"], None, victims_sent),
        ("preempt: a node the extender drops is not chosen",
         {"preempt": {"drop": ["n1"]}}, X, {"hi": "@n2"}, ["lo2b"], None,
         None),
        ("preempt: the victims are the extender's",
         {"preempt": {"drop": ["n1"], "victims": {"n2": ["lo2a"]}}}, X,
         {"hi": "@n2"}, ["lo2a"], None, None),
        ("preempt: no candidate left",
         {"preempt": {"drop": ["n1", "n2"]}}, X,
         {"hi": NO_ROOM + " no new claims to deallocate, preemption: no "
                          "candidate node for preemption"},
         [], None, None),
        ("preempt: an error fails preemption",
         {"preempt": {"mode": "error", "message": "no eviction today"}}, X,
         {"hi": NO_ROOM}, [],
         "PostFilter plugin \"DefaultPreemption\": preemption: no eviction today", None),
        ("preempt: a node that is no candidate is an error",
         {"preempt": {"victims": {"n9": ["lo1"]}}}, X, {"hi": NO_ROOM}, [],
         'preemption: nodeinfo not found for node name "n9"', None),
        ("preempt: a victim not on its node is an error",
         {"preempt": {"victims": {"n1": ["lo2a"]}}}, X, {"hi": NO_ROOM}, [],
         "preemption: extender: http://127.0.0.1:%d/ claims to preempt pod "
         "(UID: lo2a) on node: n1, but the pod is not found on that node"
         % port, None),
        ("preempt: a node without victims is an error",
         {"preempt": {"victims": {"n1": []}}}, X, {"hi": NO_ROOM}, [],
         'preemption: expected at least one victim pod on node "n1"', None),
        ("preempt: ignorable, a node without victims is dropped",
         {"preempt": {"victims": {"n1": []}}}, X + "  ignorable: true\n",
         {"hi": "@n2"}, ["lo2b"], None, None),
        ("preempt: ignorable, an error skips the extender",
         {"preempt": {"mode": "http500"}}, X + "  ignorable: true\n",
         {"hi": "@n1"}, ["lo1"], "skipping extender", None),
        ("preempt: nodeCacheCapable sends MetaVictims by UID",
         {"preempt": {"drop": ["n1"]}}, X + "  nodeCacheCapable: true\n",
         {"hi": "@n2"}, ["lo2b"], None,
         lambda log: log[0]["body"]["NodeNameToVictims"] is None and
         log[0]["body"]["NodeNameToMetaVictims"] == {
             "n1": {"Pods": [{"UID": "lo1"}], "NumPDBViolations": 0},
             "n2": {"Pods": [{"UID": "lo2b"}], "NumPDBViolations": 0}}),
        ("preempt: managedResources the pod does not request: not asked",
         {"preempt": {"drop": ["n1"]}},
         X + "  managedResources:\n  - name: example.com/gpu\n",
         {"hi": "@n1"}, ["lo1"], None, lambda log: log == []),
    ]

def preempt_table(port):
    fails = 0
    for name, ctl, extra, want, victims, err_text, check in preempt_cases(port):
        open(CTL, "w").write(json.dumps(ctl))
        if os.path.exists(CTL + ".log"):
            os.unlink(CTL + ".log")
        cfg = os.path.join(TMP, "cfg.yaml")
        cl = os.path.join(TMP, "cluster.yaml")
        open(cfg, "w").write(config(port, extra))
        open(cl, "w").write(PREEMPT_CLUSTER)
        r = subprocess.run([KSCHED, "schedule", "-c", cfg, "-p", PLUGINS,
                            "--no-default-plugin-path", "-f", cl, "-o", "json",
                            "--deterministic", "-v"],
                           capture_output=True, text=True, timeout=60)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            print("FAIL %s: no JSON output: %s %s" % (name, r.stdout, r.stderr))
            fails += 1
            continue
        got = {b["name"]: "@" + b["node"] for b in out["bindings"]}
        got.update({u["name"]: u["message"] for u in out["unschedulable"]})
        pre = sorted(l.split("Preempted default/")[1].split(":")[0]
                     for l in r.stderr.splitlines()
                     if "event Normal Preempted default/" in l)
        ok = got == want and pre == sorted(victims) and \
            r.returncode in (0, 3) and "Sanitizer" not in r.stderr and \
            "runtime error" not in r.stderr and \
            (err_text is None or err_text in r.stderr)
        if ok and check is not None:
            ok = bool(check(requests_log()))
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            fails += 1
            print("   got: %r victims %r\n  want: %r victims %r\n   err: %s"
                  "\n   log: %s" % (got, pre, want, victims, r.stderr[-2000:],
                                   json.dumps(requests_log())[:1500]))
    return fails

def node_line(node, text):
    return "  %-24s %s" % (node, text)

def explain_cases(port):
    """--explain: (name, control, config extra, cluster, the lines of the
    first attempt's explanation). "..." in a line matches anything."""
    u = "http://127.0.0.1:%d/" % port
    ext = "    extender %s: " % u
    e500 = "failed %%s with extender at URL %s%%s, code 500" % u
    return [
        ("explain: a filter rejection and an unresolvable node name the "
         "extender",
         {"filter": {"reject": {"n1": "n1 is busy"},
                     "unresolvable": {"n2": "n2 lacks disk"}}}, F, CLUSTER,
         [node_line("n1", "rejected by extender %s: n1 is busy" % u),
          ext + "filter failed: n1 is busy",
          node_line("n2", "rejected by extender %s: n2 lacks disk" % u),
          ext + "filter unresolvable: n2 lacks disk",
          node_line("n3", "passes filters; score ..."),
          ext + "filter passed",
          "  selected: n3"]),
        ("explain: a node dropped without a reason",
         {"case": "lower", "filter": {"drop": ["n1"],
                                      "reject": {"n2": "busy"}}},
         F, CLUSTER,
         [node_line("n1", "rejected by extender %s: not in its answer, no "
                          "reason given (counted in the FitError's total "
                          "without a reason; not tried by preemption)" % u),
          ext + "filter dropped the node without a reason",
          node_line("n2", "rejected by extender %s: busy" % u),
          ext + "filter failed: busy",
          node_line("n3", "passes filters; score ..."),
          ext + "filter passed",
          "  selected: n3"]),
        ("explain: an ignorable extender's error",
         {"filter": {"mode": "http500"}}, F + "  ignorable: true\n", CLUSTER,
         [l for n in ("n1", "n2", "n3") for l in (
             node_line(n, "passes filters; score ..."),
             ext + "filter error (ignorable, skipped): " +
             e500 % ("filter", "filter"))] + ["  selected: n1"]),
        ("explain: an extender's error ends the cycle",
         {"filter": {"mode": "http500"}}, F, CLUSTER,
         [l for n in ("n1", "n2", "n3") for l in (
             node_line(n, "passes the Filter plugins"),
             ext + "filter error: " + e500 % ("filter", "filter"))] +
         ["  " + e500 % ("filter", "filter")]),
        ("explain: prioritize scores times the weight",
         {"prioritize": {"scores": {"n3": 10, "n2": 5}}}, P % 2, CLUSTER,
         [node_line("n1", "passes filters; score ... + extender %s 0" % u),
          ext + "prioritize score 0 x weight 2 x 10 = 0",
          node_line("n2", "passes filters; score ... + extender %s 100" % u),
          ext + "prioritize score 5 x weight 2 x 10 = 100",
          node_line("n3", "passes filters; score ... + extender %s 200" % u),
          ext + "prioritize score 10 x weight 2 x 10 = 200",
          "  selected: n3"]),
        ("explain: two extenders' scores, each with its weight",
         {"prioritize": {"scores": {"n3": 10, "n2": 5}}},
         P % 2 + "- urlPrefix: %sb/\n" % u + P % 1, CLUSTER,
         [l for n, sc in (("n1", 0), ("n2", 5), ("n3", 10)) for l in (
             node_line(n, "passes filters; score ... + extender %s %d + "
                          "extender %sb/ %d" % (u, sc * 20, u, sc * 10)),
             ext + "prioritize score %d x weight 2 x 10 = %d" % (sc, sc * 20),
             "    extender %sb/: prioritize score %d x weight 1 x 10 = %d"
             % (u, sc, sc * 10))] + ["  selected: n3"]),
        ("explain: filter verdicts and a prioritize error",
         {"filter": {"reject": {"n1": "no"}}, "prioritize": {"mode": "http500"}},
         F + P % 1, CLUSTER,
         [node_line("n1", "rejected by extender %s: no" % u),
          ext + "filter failed: no"] +
         [l for n in ("n2", "n3") for l in (
             node_line(n, "passes filters; score ..."),
             ext + "filter passed; prioritize error (ignored): " +
             e500 % ("prioritize", "prioritize"))] + ["  selected: n2"]),
    ]

def line_matches(want, got):
    if "..." not in want:
        return want == got
    pre, post = want.split("...", 1)
    return got.startswith(pre) and got.endswith(post) and \
        len(got) >= len(pre) + len(post)

def score_sums_add_up(lines):
    """Every "score T = A a + B b ..." line: T is the sum of the terms."""
    for l in lines:
        if "; score " not in l:
            continue
        total, terms = l.split("; score ", 1)[1].split(" = ", 1)
        # "Plugin skipped": its PreScore answered Skip, it adds nothing
        if int(total) != sum(int(t.rsplit(" ", 1)[1])
                             for t in terms.split(" + ")
                             if not t.endswith(" skipped")):
            return False
    return True

def explain_table(port):
    fails = 0
    for name, ctl, extra, cluster, want in explain_cases(port):
        open(CTL, "w").write(json.dumps(ctl))
        cfg = os.path.join(TMP, "cfg.yaml")
        cl = os.path.join(TMP, "cluster.yaml")
        open(cfg, "w").write(config(port, extra))
        open(cl, "w").write(cluster)
        r = subprocess.run([KSCHED, "schedule", "-c", cfg, "-p", PLUGINS,
                            "--no-default-plugin-path", "-f", cl,
                            "--deterministic", "--explain", "default/p1"],
                           capture_output=True, text=True, timeout=60)
        out = r.stdout.splitlines()
        head = 'explain default/p1 (attempt 1, profile "default-scheduler")'
        got = []
        if head in out:
            for l in out[out.index(head) + 1:]:
                if not l.startswith("  "):
                    break
                got.append(l)
        ok = len(got) == len(want) and all(
            line_matches(w, g) for w, g in zip(want, got)) and \
            score_sums_add_up(got) and r.returncode in (0, 3) and \
            "Sanitizer" not in r.stderr and "runtime error" not in r.stderr
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            fails += 1
            print("   got:\n%s\n  want:\n%s\n   err: %s" % (
                "\n".join(got), "\n".join(want), r.stderr[-2000:]))
    return fails

def http(method, url, body=None):
    import urllib.request
    req = urllib.request.Request(url, method=method,
                                 data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read()

def serve_case(port):
    """serve: a slow extender never stalls the loop; a pod deleted while
    its cycle waits for the extender is dropped."""
    open(CTL, "w").write(json.dumps(
        {"filter": {"delay": 1.5, "reject": {"n1": "no"}}}))
    cfg = os.path.join(TMP, "serve.yaml")
    open(cfg, "w").write(config(port, F + B))
    lp = free_port()
    a = "http://127.0.0.1:%d" % lp
    p = subprocess.Popen([KSCHED, "serve", "--config", cfg, "--plugin-dir",
                          PLUGINS, "--no-default-plugin-path", "--listen",
                          "127.0.0.1:%d" % lp], stderr=subprocess.PIPE, text=True)
    ok = True
    try:
        for _ in range(100):
            try:
                http("GET", a + "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        for n in ("n1", "n2"):
            http("POST", a + "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": n}, "status": {"allocatable":
                 {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
        pod = lambda n: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        http("POST", a + "/api/v1/namespaces/default/pods", pod("web-0"))
        time.sleep(0.3)
        # The loop is not blocked while the extender takes its time: the
        # API answers before the pod (whose cycle waits for the extender)
        # is bound.
        http("GET", a + "/metrics")
        _, body = http("GET", a + "/api/v1/pods")
        ok = ok and not any(it["metadata"]["name"] == "web-0" and
                            it["spec"].get("nodeName")
                            for it in json.loads(body)["items"])
        deadline = time.time() + 10
        node = None
        while time.time() < deadline and node is None:
            _, body = http("GET", a + "/api/v1/pods")
            for it in json.loads(body)["items"]:
                if it["metadata"]["name"] == "web-0":
                    node = it["spec"].get("nodeName")
            time.sleep(0.1)
        ok = ok and node == "n2"
        http("POST", a + "/api/v1/namespaces/default/pods", pod("web-1"))
        time.sleep(0.3)
        try:
            http("DELETE", a + "/api/v1/namespaces/default/pods/web-1")
        except OSError:
            pass
        time.sleep(2)
        _, metrics = http("GET", a + "/metrics")
        # Per-extender metrics: web-0's filter call answered 200, web-1's
        # was cancelled when the pod was deleted, one binding; the latency
        # histogram counts the same calls.
        ext = "http://127.0.0.1:%d/" % port
        want = [
            'ksched_extender_requests_total{extender="%s",verb="filter",'
            'result="200"} 1' % ext,
            'ksched_extender_requests_total{extender="%s",verb="filter",'
            'result="cancelled"} 1' % ext,
            'ksched_extender_requests_total{extender="%s",verb="bind",'
            'result="200"} 1' % ext,
            'ksched_extender_request_duration_seconds_count{extender="%s",'
            'verb="filter"} 2' % ext,
        ]
        lines = metrics.decode().splitlines()
        for w in want:
            if w not in lines:
                ok = False
                print("FAIL serve metrics: no line %r in:\n%s" % (w, "\n".join(
                    l for l in lines if "extender" in l)))
        print("%s serve: the API answered while a 1.5s extender call was "
              "in flight, web-0 on %s, a pod deleted mid-call dropped" %
              ("ok  " if ok else "FAIL", node))
    finally:
        p.terminate()
        _, err = p.communicate(timeout=20)
    if p.returncode != 0 or "ERROR" in err or "runtime error" in err:
        print("FAIL serve exit %d: %s" % (p.returncode, err))
        ok = False
    return 0 if ok else 1

def serve_nodes_case(port):
    """serve (embedded API): the extender gets each node object as it was
    posted, and as it was last replaced."""
    open(CTL, "w").write("{}")
    if os.path.exists(CTL + ".log"):
        os.unlink(CTL + ".log")
    cfg = os.path.join(TMP, "serve-nodes.yaml")
    open(cfg, "w").write(config(port, F))
    lp = free_port()
    a = "http://127.0.0.1:%d" % lp
    p = subprocess.Popen([KSCHED, "serve", "--config", cfg, "--plugin-dir",
                          PLUGINS, "--no-default-plugin-path", "--listen",
                          "127.0.0.1:%d" % lp], stderr=subprocess.PIPE, text=True)
    ok = True
    try:
        for _ in range(100):
            try:
                http("GET", a + "/healthz")
                break
            except OSError:
                time.sleep(0.05)
        http("POST", a + "/api/v1/nodes", RICH_OBJECT)
        pod = lambda n: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}

        def bound(name):
            deadline = time.time() + 10
            while time.time() < deadline:
                _, body = http("GET", a + "/api/v1/pods")
                for it in json.loads(body)["items"]:
                    if it["metadata"]["name"] == name and it["spec"].get("nodeName"):
                        return it["spec"]["nodeName"]
                time.sleep(0.1)
            return None
        http("POST", a + "/api/v1/namespaces/default/pods", pod("a"))
        first = bound("a") == "rich" and \
            sent_nodes(requests_log()).get("rich") == RICH_OBJECT
        # A change ksched does not model (an annotation, the kubelet's
        # version) still reaches the extender.
        newer = json.loads(json.dumps(RICH_OBJECT))
        newer["metadata"]["annotations"]["example.com/note"] = "updated"
        newer["status"]["nodeInfo"]["kubeletVersion"] = "v1.31.0"
        http("PUT", a + "/api/v1/nodes/rich", newer)
        http("POST", a + "/api/v1/namespaces/default/pods", pod("b"))
        second = bound("b") == "rich" and \
            sent_nodes(requests_log()).get("rich") == newer
        ok = first and second
        print("%s serve: the extender gets node objects as posted (%s) and "
              "as replaced (%s)" % ("ok  " if ok else "FAIL", first, second))
        if not ok:
            print("   sent: %s" % json.dumps(sent_nodes(requests_log()))[:2000])
    finally:
        p.terminate()
        _, err = p.communicate(timeout=20)
    if p.returncode != 0 or "ERROR" in err or "runtime error" in err:
        print("FAIL serve exit %d: %s" % (p.returncode, err))
        ok = False
    return 0 if ok else 1

def main():
    ext, port = start_extender()
    dead = free_port()
    fails = 0
    try:
        for row in cases(port, dead):
            name, ctl, extra, cluster, want, check = row[:6]
            url = row[6] if len(row) > 6 else None
            open(CTL, "w").write(json.dumps(ctl))
            if os.path.exists(CTL + ".log"):
                os.unlink(CTL + ".log")
            r, secs = run(["schedule"], config(port, extra, url), cluster)
            try:
                out = json.loads(r.stdout)
            except ValueError:
                print("FAIL %s: no JSON output: %s %s" % (name, r.stdout, r.stderr))
                fails += 1
                continue
            got = {b["name"]: "@" + b["node"] for b in out["bindings"]}
            got.update({u["name"]: u["message"] for u in out["unschedulable"]})
            ok = True
            for pod, w in want.items():
                g = got.get(pod)
                if w.startswith("~"):
                    ok = ok and g is not None and w[1:] in g
                else:
                    ok = ok and g == w
            if r.returncode not in (0, 3) or "Sanitizer" in r.stderr or \
                    "runtime error" in r.stderr:
                ok = False
                print("   exit %d: %s" % (r.returncode, r.stderr[-3000:]))
            if ok and check is not None:
                ok = bool(check(requests_log()))
            print("%s %s (%.1fs)" % ("ok  " if ok else "FAIL", name, secs))
            if not ok:
                fails += 1
                print("   got: %r\n  want: %r\n   log: %s" %
                      (got, want, json.dumps(requests_log())[:2000]))
        fails += preempt_table(port)
        fails += explain_table(port)
        # validation and listing
        for name, extra, code, text in [
            ("validate lists the extender",
             F + P % 2 + "  httpTimeout: 2s\n  nodeCacheCapable: true\n", 0,
             "  weight 2, httpTimeout 2000ms, nodeCacheCapable true"),
            ("two binders", B + "- urlPrefix: http://x/\n" + B, 1,
             "cfg.yaml:6:1: extenders: Invalid value: \"found 2 extenders\": "
             "only one extender can implement bind (the first at line 6)"),
            ("managed resource names", "  managedResources:\n  - name: cpu\n"
             "  - name: example.com/a\n  - name: example.com/a\n", 1,
             "cfg.yaml:8:11: extenders[0].managedResources[0].name: Invalid "
             "value: \"cpu\": is an invalid extended resource name\n"
             "cfg.yaml:10:11: extenders[0].managedResources[2].name: Invalid "
             "value: \"example.com/a\": duplicate extender managed resource "
             "name (first at line 9)"),
            ("bad httpTimeout and base64", "  httpTimeout: soon\n  tlsConfig:\n"
             "    caData: '***'\n", 1,
             "cfg.yaml:7:16: extenders[0].httpTimeout: \"soon\" is not a "
             "duration of at least 0; write it as Go does, e.g. 5s or 1m30s"),
        ]:
            r, _ = run(["validate"], config(port, extra), "")
            outp = r.stdout + r.stderr
            ok = r.returncode == code and all(
                l in outp for l in text.split("\n"))
            print("%s %s" % ("ok  " if ok else "FAIL", name))
            if not ok:
                fails += 1
                print("   got (%d): %s" % (r.returncode, outp))
        fails += serve_case(port)
        fails += serve_nodes_case(port)
        # configurations from real extenders' documentation, with only the
        # urlPrefix pointed at the test extender
        for f in sorted(os.listdir(os.path.join(HERE, "configs"))):
            text = open(os.path.join(HERE, "configs", f)).read()
            text = re.sub(r'urlPrefix: "[^"]*"',
                          'urlPrefix: "http://127.0.0.1:%d"' % port, text)
            path = os.path.join(TMP, f)
            open(path, "w").write(text)
            r = subprocess.run([KSCHED, "validate", "-c", path, "-p", PLUGINS,
                                "--no-default-plugin-path"],
                               capture_output=True, text=True)
            ok = r.returncode == 0 and ("extender http://127.0.0.1:%d" % port) in r.stdout
            print("%s shipped configuration %s loads" % ("ok  " if ok else "FAIL", f))
            if not ok:
                fails += 1
                print(r.stdout + r.stderr)
    finally:
        ext.kill()
        ext.wait()
    print("%d failure(s)" % fails)
    return 1 if fails else 0

sys.exit(main())
