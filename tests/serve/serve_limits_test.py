#!/usr/bin/env python3
"""`ksched serve` against one hostile or careless local client.

Usage: serve_limits_test.py KSCHED PLUGIN_BUILD_DIR

Each check is one defect that was found, asserted by behaviour:

- empty lists answer 200 (listing no pods passed NULL to qsort; under
  UBSan, which this script makes fatal, the server died);
- a path that is not UTF-8 is answered 404/405 with the bytes escaped (it
  was a 500: the message could not be encoded);
- pod, node, namespace and label names follow Kubernetes' rules (422
  naming the field and the rule; names with '/', '?', '#', spaces or over
  253 bytes were accepted and could never be read or deleted);
- a body nested 2,000 deep is refused with 400 before it is parsed, while
  64 levels are still read, and invalid fields are 422 naming the path;
- pipelined requests on a connection that never reads do not pile up
  answers (one 64 KiB read used to queue hundreds of MB), and are all
  answered once the client reads;
- 1,100 idle connections, then 1,100 half-sent request heads, do not lock
  out /healthz, /readyz, /livez and /metrics; an API request then gets
  429 with Retry-After, and a half-sent head gets 408;
- a bindings watcher that stops reading is disconnected once it falls
  more than 4 MiB behind.

Standard library only.
"""
import http.client
import json
import os
import re
import resource
import select
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test  # noqa: E402
from ksched_test import check, failures, fatal  # noqa: E402


# The limit checks load the machine: give serve longer to start.
START_TIMEOUT = 60


def request(conn, method, path, body=None):
    hdrs = {"Content-Type": "application/json"}
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    conn.request(method, path, body=body, headers=hdrs)
    resp = conn.getresponse()
    data = resp.read()
    try:
        doc = json.loads(data) if data else None
    except ValueError:
        doc = None
    return resp.status, doc, dict(resp.getheaders()), data


def raw_exchange(srv, payload, timeout=30):
    """Send raw bytes, read until the server closes."""
    s = srv.raw(timeout)
    s.sendall(payload)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    s.close()
    return data


def split_response(data):
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d+)", head)
    return (int(m.group(1)) if m else 0), head, body


def pod_obj(name, **extra):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    for k, v in extra.items():
        if k == "labels":
            pod["metadata"]["labels"] = v
        else:
            pod["spec"][k] = v
    return pod


def node_obj(name, labels=None):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "1000", "memory": "4000Gi",
                                       "pods": "100000"}}}
    if labels is not None:
        node["metadata"]["labels"] = labels
    return node


def runtime_errors(srv, where=""):
    """Sanitizer reports (UBSan's located in a file under `where`)."""
    return [l for l in srv.lines if ("runtime error" in l and where in l) or
            "AddressSanitizer" in l]


# --- 6. empty lists -------------------------------------------------------


def empty_lists(srv):
    c = srv.conn()
    for path in ("/api/v1/pods", "/api/v1/namespaces/default/pods",
                 "/api/v1/nodes"):
        try:
            st, doc, _, _ = request(c, "GET", path)
        except (OSError, http.client.HTTPException) as e:
            st, doc = 0, None
            print("GET %s: %r" % (path, e))
            c = srv.conn()
        check(st == 200 and doc is not None and doc.get("items") == [],
              "GET %s on an empty server: 200 with no items, got %d" % (path,
                                                                      st))
    c.close()
    time.sleep(0.2)
    check(srv.alive() and not runtime_errors(srv),
          "the server survives listing nothing (no sanitizer report): %r"
          % runtime_errors(srv)[:2])
    rc = srv.stop()
    check(rc == 0, "empty server: exit 0, got %r" % rc)


# --- 5. request paths that are not UTF-8 ----------------------------------


def bad_utf8(srv):
    cases = [
        (b"GET /api/v1/\xff\xfe HTTP/1.1", 404, "/api/v1/\\xff\\xfe"),
        (b"GET /nothing/\xc3( HTTP/1.1", 404, "/nothing/\\xc3("),
        (b"DELETE /api/v1/namespaces/\xe2\x82/pods HTTP/1.1", 405,
         "/api/v1/namespaces/\\xe2\\x82/pods"),
        (b"GET /api/v1/nodes/n\xff HTTP/1.1", 404, "n\\xff"),
        (b"GET /api/v1/namespaces/d/pods/\xed\xa0\x80 HTTP/1.1", 404,
         "\\xed\\xa0\\x80"),
    ]
    for line, want, shown in cases:
        data = raw_exchange(srv, line + b"\r\nHost: x\r\n"
                            b"Connection: close\r\n\r\n")
        st, head, body = split_response(data)
        try:
            doc = json.loads(body)
        except ValueError:
            doc = {}
        check(st == want and doc.get("code") == want
              and shown in doc.get("message", ""),
              "%r: %d with the path escaped, got %d %r" % (line, want, st,
                                                          body[:200]))
    # A valid UTF-8 path stays as it is.
    data = raw_exchange(srv, "GET /caf\u00e9 HTTP/1.1\r\nHost: x\r\n"
                        "Connection: close\r\n\r\n".encode())
    st, _, body = split_response(data)
    check(st == 404 and "/caf\u00e9" in json.loads(body)["message"],
          "a UTF-8 path is quoted unchanged")


# --- 4. names -------------------------------------------------------------

SUBDOMAIN_RULE = "a lowercase RFC 1123 subdomain must consist of"
LABEL_RULE = "a lowercase RFC 1123 label must consist of"

BAD_NAMES = [("a/b", SUBDOMAIN_RULE), ("a?b", SUBDOMAIN_RULE),
             ("a#b", SUBDOMAIN_RULE), ("a b", SUBDOMAIN_RULE),
             ("Web-0", SUBDOMAIN_RULE), ("-web", SUBDOMAIN_RULE),
             ("web.", SUBDOMAIN_RULE), ("a..b", SUBDOMAIN_RULE),
             ("caf\u00e9", SUBDOMAIN_RULE),
             ("a" * 254, "must be no more than 253 characters")]


def expect_invalid(st, doc, field, rule, what):
    msg = (doc or {}).get("message", "")
    return check(st == 422 and (doc or {}).get("reason") == "Invalid"
                 and (field + ": Invalid value: ") in msg and rule in msg,
                 "%s: 422 naming %s and the rule, got %d %s"
                 % (what, field, st, msg[:300]))


def names(srv):
    c = srv.conn()
    for name, rule in BAD_NAMES:
        st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                                pod_obj(name))
        expect_invalid(st, doc, "metadata.name", rule,
                       "pod name %r" % name[:40])
        st, doc, _, _ = request(c, "POST", "/api/v1/nodes", node_obj(name))
        expect_invalid(st, doc, "metadata.name", rule,
                       "node name %r" % name[:40])
    st, doc, _, _ = request(c, "GET", "/api/v1/pods")
    check(st == 200 and doc["items"] == [], "no invalid pod was kept")
    st, doc, _, _ = request(c, "GET", "/api/v1/nodes")
    check(st == 200 and doc["items"] == [], "no invalid node was kept")

    for ns, rule in [("Bad_NS", LABEL_RULE), ("a.b", LABEL_RULE),
                     ("n" * 64, "must be no more than 63 characters")]:
        st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/%s/pods" % ns,
                                pod_obj("x"))
        expect_invalid(st, doc, "metadata.namespace", rule,
                       "namespace %r" % ns[:40])

    bad_labels = [
        ({"bad key": "v"}, "name part must consist of"),
        ({"-k": "v"}, "name part must consist of"),
        ({"k" * 64: "v"}, "name part must be no more than 63 characters"),
        ({"Bad_Prefix.io/k": "v"}, "prefix part " + SUBDOMAIN_RULE),
        ({"/k": "v"}, "prefix part must be non-empty"),
        ({"a/b/c": "v"}, "a qualified name must consist of"),
        ({"k": "v" * 64}, "must be no more than 63 characters"),
        ({"k": "v w"}, "a valid label must be an empty string or consist"),
        ({"k": "_v"}, "a valid label must be an empty string or consist"),
    ]
    for labels, rule in bad_labels:
        st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                                pod_obj("l", labels=labels))
        expect_invalid(st, doc, "metadata.labels", rule,
                       "pod labels %r" % str(labels)[:50])
        st, doc, _, _ = request(c, "POST", "/api/v1/nodes",
                                node_obj("l", labels))
        expect_invalid(st, doc, "metadata.labels", rule,
                       "node labels %r" % str(labels)[:50])
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                            pod_obj("ns-sel", nodeSelector={"a b": "x"}))
    expect_invalid(st, doc, "spec.nodeSelector", "name part must consist of",
                   "pod nodeSelector key 'a b'")
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                            pod_obj("nn", nodeName="No_Such/Node"))
    expect_invalid(st, doc, "spec.nodeName", SUBDOMAIN_RULE,
                   "pod spec.nodeName 'No_Such/Node'")

    # The longest valid names, and valid labels, are created, read and
    # deleted.
    long_name = ("a" * 62 + ".") * 3 + "b" * 64  # 253 bytes
    check(len(long_name) == 253, "a 253-byte name")
    labels = {"example.com/My_Name.x": "", "k": "V_a-1.b",
              "a" * 63: "b" * 63}
    st, doc, _, _ = request(c, "POST", "/api/v1/nodes",
                            node_obj(long_name, labels))
    check(st == 201, "node with a 253-byte name and valid labels: 201, got "
          "%d %r" % (st, doc))
    st, doc, _, _ = request(c, "GET", "/api/v1/nodes/" + long_name)
    check(st == 200 and doc["metadata"]["labels"] == labels,
          "the node is read back by name, labels intact")
    ns = "n" * 63
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/%s/pods" % ns,
                            pod_obj(long_name, labels=labels,
                                    schedulerName="someone-else"))
    check(st == 201, "pod with a 253-byte name in a 63-byte namespace: 201, "
          "got %d %r" % (st, doc))
    path = "/api/v1/namespaces/%s/pods/%s" % (ns, long_name)
    st, doc, _, _ = request(c, "GET", path)
    check(st == 200 and doc["metadata"]["name"] == long_name,
          "the pod is read back by name")
    st, doc, _, _ = request(c, "DELETE", path)
    check(st == 200, "and deleted: 200, got %d" % st)
    st, doc, _, _ = request(c, "DELETE", "/api/v1/nodes/" + long_name)
    check(st == 200, "the node is deleted: 200, got %d" % st)
    c.close()


# --- 3. nesting and the one-parse decoder ---------------------------------


def nested(depth):
    return "[" * depth + "]" * depth


def nesting(srv):
    c = srv.conn()
    # 2,000 levels in a field nobody reads: refused before parsing.
    body = ('{"metadata":{"name":"deep"},"spec":{"containers":[{"name":"c"}]'
            ',"x":%s}}' % nested(2000))
    pad = " " * (234 * 1024 - len(body))
    rss0 = srv.rss()
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                            body + pad)
    msg = (doc or {}).get("message", "")
    check(st == 400 and doc.get("reason") == "BadRequest"
          and "nested more than 64 levels deep" in msg,
          "a body nested 2,000 deep: 400 naming the limit, got %d %s"
          % (st, msg[:200]))
    check(srv.rss() - rss0 < 64 << 20,
          "refusing it takes no great memory (%d MB more)"
          % ((srv.rss() - rss0) >> 20))
    # The limit: 64 levels in all are read, 65 are not.
    for depth, want in ((64, 201), (65, 400)):
        body = ('{"metadata":{"name":"d%d"},"spec":{"containers":'
                '[{"name":"c"}],"x":%s}}' % (depth, nested(depth - 2)))
        st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                                body)
        check(st == want, "a pod nested %d levels in all: %d, got %d %s"
              % (depth, want, st, (doc or {}).get("message", "")[:200]))
    # Strings do not count: brackets inside them are text.
    body = ('{"metadata":{"name":"s","annotations":{"a":"%s \\"[[["}},'
            '"spec":{"containers":[{"name":"c"}]}}' % ("[" * 100))
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods", body)
    check(st == 201, "brackets inside strings are not nesting: 201, got %d %s"
          % (st, (doc or {}).get("message", "")[:200]))
    # JSON escapes the YAML reader never saw as such are read as JSON.
    body = ('{"metadata":{"name":"esc","annotations":{"u":"caf\\u00e9 \\/ '
            '\\ud83d\\ude00"}},"spec":{"schedulerName":"someone-else",'
            '"containers":[{"name":"c"}]}}')
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods", body)
    check(st == 201, "JSON escapes in a pod: 201, got %d %s"
          % (st, (doc or {}).get("message", "")[:200]))
    # Errors keep their answers: a bad field is 422 naming its path, with
    # no line or column; malformed JSON is 400 with the parser's position.
    bad = pod_obj("badcpu")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods", bad)
    msg = (doc or {}).get("message", "")
    check(st == 422 and doc.get("reason") == "Invalid"
          and "spec.containers[0].resources.requests" in msg
          and not re.search(r"body:\d+:\d+", msg),
          "an invalid field: 422 naming the field path, got %d %s"
          % (st, msg[:300]))
    bad = node_obj("badnode")
    bad["spec"] = {"taints": "none"}
    st, doc, _, _ = request(c, "POST", "/api/v1/nodes", bad)
    msg = (doc or {}).get("message", "")
    check(st == 422 and "spec.taints" in msg,
          "an invalid node field: 422 naming spec.taints, got %d %s"
          % (st, msg[:300]))
    st, doc, _, _ = request(c, "POST", "/api/v1/nodes",
                            '{\n  "metadata": {"name": nope}\n}')
    check(st == 400 and "at line 2, column 27 (position 29)"
          in (doc or {}).get("message", ""),
          "malformed JSON still names line, column and position: %r" % doc)
    for name in ("d64", "s"):
        st, _, _, _ = request(c, "DELETE",
                              "/api/v1/namespaces/default/pods/" + name)
    request(c, "DELETE", "/api/v1/namespaces/default/pods/esc")
    c.close()


# --- 2. pipelined requests that are never read ----------------------------


def pipelining(srv):
    # Groups of ten pod listings (62 KB each) and one delete, pipelined on
    # a connection that never reads: 64 KiB of requests for about 70 MB
    # of answers. The deletes show how far the server went.
    npods = 120
    c = srv.conn()
    for i in range(npods):
        st, doc, _, _ = request(c, "POST", "/api/v1/namespaces/pl/pods",
                                pod_obj("p%03d" % i,
                                        schedulerName="someone-else"))
        if st != 201:
            fatal("create pod p%03d: %d %r" % (i, st, doc))
    st, _, _, data = request(c, "GET", "/api/v1/namespaces/pl/pods")
    one = len(data)
    get = b"GET /api/v1/namespaces/pl/pods HTTP/1.1\r\nHost: x\r\n\r\n"
    payload, groups = b"", 0
    while groups < npods:
        group = get * 10 + (b"DELETE /api/v1/namespaces/pl/pods/p%03d "
                            b"HTTP/1.1\r\nHost: x\r\n\r\n" % groups)
        if len(payload) + len(group) > 64 * 1024:
            break
        payload += group
        groups += 1
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(60)
    s.connect((srv.host, srv.port))
    rss0 = srv.rss()
    s.sendall(payload)

    def left():
        st, doc, _, _ = request(c, "GET", "/api/v1/namespaces/pl/pods")
        return len(doc["items"]) if st == 200 else -1

    # Let the server do whatever it will with them: until the deletes stop.
    last, same = -1, 0
    for _ in range(100):
        time.sleep(0.1)
        n = left()
        same = same + 1 if n == last else 0
        last = n
        if same >= 5:
            break
    done = npods - last
    print("%d groups pipelined, %d deletes done while the client did not "
          "read; RSS grew %.1f MB" % (groups, done, (srv.rss() - rss0) / 1e6),
          flush=True)
    check(done < groups // 2,
          "a client that does not read its answers gets no more pipelined "
          "requests handled once its queue is full (%d of %d deletes done; "
          "all answers: %.0f MB)" % (done, groups, groups * 10 * one / 1e6))
    st, _, _, _ = request(c, "GET", "/healthz")
    check(st == 200, "others are served meanwhile")
    # Reading, the client gets every answer, in order.
    got, tail = 0, b""
    s.settimeout(30)
    want = groups * 11
    while got < want:
        try:
            chunk = s.recv(1 << 20)
        except OSError:
            break
        if not chunk:
            break
        data = tail + chunk
        got += len(re.findall(rb"HTTP/1\.1 200 OK\r\n", data))
        tail = data[-16:]  # a status line may span two reads
        got -= len(re.findall(rb"HTTP/1\.1 200 OK\r\n", tail))
    got += len(re.findall(rb"HTTP/1\.1 200 OK\r\n", tail))
    s.close()
    check(got == want, "every pipelined request is answered once the client "
          "reads (%d of %d)" % (got, want))
    check(left() == npods - groups, "and every delete was done")
    c.close()


# --- 1. connection slots --------------------------------------------------


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return True
    if hard != resource.RLIM_INFINITY and hard < want:
        return False
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return True


def open_many(srv, n, payload):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect((srv.host, srv.port))
        if payload:
            s.sendall(payload)
        socks.append(s)
    return socks


def get_status(srv, path):
    try:
        c = srv.conn(timeout=20)
        st, doc, hdrs, data = request(c, "GET", path)
        c.close()
        return st, hdrs, data
    except (OSError, http.client.HTTPException) as e:
        return str(e) or type(e).__name__, {}, b""


def slots(srv):
    # 1,100 connections that send nothing: a newcomer takes the slot of
    # the one idle the longest.
    idle = open_many(srv, 1100, b"")
    time.sleep(0.5)
    for path in ("/healthz", "/api/v1/nodes"):
        st, _, _ = get_status(srv, path)
        check(st == 200, "GET %s with 1,100 idle connections open: 200, got "
              "%r" % (path, st))
    for s in idle:
        s.close()
    time.sleep(0.5)
    # 1,100 connections each holding half a request head (a slowloris):
    # health and metrics still answer, from the reserved slots.
    slow = open_many(srv, 1100, b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n"
                     b"X-Slow: ")
    time.sleep(0.5)
    for path in ("/healthz", "/readyz", "/livez", "/metrics"):
        st, _, data = get_status(srv, path)
        check(st == 200, "GET %s with 1,100 half-sent heads open: 200, got "
              "%r" % (path, st))
    st, hdrs, data = get_status(srv, "/api/v1/nodes")
    check(st == 429 and hdrs.get("Retry-After") == "1",
          "an API request without a free slot: 429 with Retry-After, got %r"
          % (st,))
    # The half-sent heads time out with 408 (the deadline is 10 s). The
    # first ones hold ordinary slots (of the last ones, some were refused
    # or made room for the requests above).
    s = slow[0]
    data = b""
    try:
        s.settimeout(40)
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    st, _, body = split_response(data)
    check(st == 408 and b"request head not received in time" in body,
          "a half-sent request head is answered 408: %r" % data[:80])
    for s in slow:
        s.close()
    time.sleep(0.5)
    st, _, _ = get_status(srv, "/api/v1/nodes")
    check(st == 200, "the API answers again once they are gone, got %r"
          % (st,))


# --- 7. slow watchers -----------------------------------------------------


def slow_watcher(ksched, plugin_dir, env, tmp):
    path = os.path.join(tmp, "w.sock")
    srv = ksched_test.Serve(ksched, ["--socket", path, "--plugin-dir", plugin_dir,
                                     "--no-default-plugin-path"], env)
    try:
        node = "n" * 253
        c = srv.conn()
        st, doc, _, _ = request(c, "POST", "/api/v1/nodes", node_obj(node))
        check(st == 201, "slow watcher: node created, got %d" % st)
        w = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        w.settimeout(30)
        w.connect(path)
        w.sendall(b"GET /api/v1/bindings?watch=true HTTP/1.1\r\nHost: x\r\n"
                  b"\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = w.recv(1)
            if not chunk:
                break
            head += chunk
        check(head.startswith(b"HTTP/1.1 200"), "the watch begins")
        # Binding events of ~640 bytes each: 9,000 of them are 5.8 MB,
        # more than the 4 MiB a watcher may fall behind.
        ns = "s" * 63
        total = 9000
        for i in range(total):
            name = ("p%05d-" % i) + "x" * 246
            st, doc, _, _ = request(c, "POST",
                                    "/api/v1/namespaces/%s/pods" % ns,
                                    pod_obj(name))
            if st != 201:
                fatal("create pod %d: %d %r" % (i, st, doc))
        deadline = time.time() + 120
        scheduled = 0
        while time.time() < deadline and scheduled < total:
            st, _, _, data = request(c, "GET", "/metrics")
            m = re.search(rb'scheduler_schedule_attempts_total\{result='
                          rb'"scheduled",profile="default-scheduler"\} (\S+)',
                          data)
            scheduled = float(m.group(1)) if m else 0
            time.sleep(0.2)
        check(scheduled >= total, "every pod was scheduled (%d)" % scheduled)
        c.close()
        # Now read what the watcher was sent.
        data = b""
        ended = False
        while True:
            r, _, _ = select.select([w], [], [], 10)
            if not r:
                break
            try:
                chunk = w.recv(1 << 20)
            except OSError:
                ended = True
                break
            if not chunk:
                ended = True
                break
            data += chunk
        w.close()
        events = data.count(b'"type":"Binding"')
        check(ended and not data.endswith(b"0\r\n\r\n") and events < total,
              "a watcher that stopped reading was disconnected (%s, %d of "
              "%d events, %.1f MB)" % ("closed" if ended else "still open",
                                       events, total, len(data) / 1e6))
        check(any("dropping a stream client" in l for l in srv.lines),
              "the server says why it dropped the watcher")
        check(srv.alive(), "the server runs on")
    finally:
        rc = srv.stop()
        check(rc == 0, "slow watcher server: exit 0, got %r" % rc)
        errs = runtime_errors(srv, "host/server/")
        check(not errs, "no sanitizer report from the server's code: %r"
              % errs[:3])


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugin_dir = sys.argv[1:]
    have_fds = raise_fd_limit(4096)
    tmp = tempfile.mkdtemp(prefix="ksched-serve-limits-")
    env = dict(os.environ)
    env.pop("KSCHED_PLUGIN_PATH", None)
    env["TMPDIR"] = tmp
    args = ["--plugin-dir", plugin_dir, "--no-default-plugin-path",
            "--listen", "127.0.0.1:0"]
    # Listing an empty server: undefined behaviour there kills a sanitized
    # build instead of printing a warning.
    halt = dict(env)
    halt["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:" + \
        env.get("UBSAN_OPTIONS", "")
    srv = ksched_test.Serve(ksched, args, halt, start_timeout=START_TIMEOUT)
    try:
        empty_lists(srv)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
    # The rest: reports from elsewhere (the scheduler scheduling pods with
    # no node) are not this test's business.
    srv = ksched_test.Serve(ksched, args, env, start_timeout=START_TIMEOUT)
    try:
        bad_utf8(srv)
        names(srv)
        nesting(srv)
        pipelining(srv)
        if have_fds:
            slots(srv)
        else:
            print("SKIP: connection slots: the open-file limit is below "
                  "4096 and cannot be raised")
        check(srv.alive(), "the server survived every client")
        rc = srv.stop()
        check(rc == 0, "SIGTERM: exit 0, got %r" % rc)
        errs = runtime_errors(srv, "host/server/")
        check(not errs, "no sanitizer report from the server's code: %r"
              % errs[:3])
        slow_watcher(ksched, plugin_dir, env, tmp)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()
        print("--- serve stderr (last 20 lines) ---")
        print("\n".join(srv.lines[-20:]))
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
