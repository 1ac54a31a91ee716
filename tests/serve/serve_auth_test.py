#!/usr/bin/env python3
"""Authentication of `ksched serve`: bearer tokens and TLS.

Usage: serve_auth_test.py KSCHED PLUGIN_BUILD_DIR

- --token-file: every path but /healthz, /readyz and /livez needs
  "Authorization: Bearer TOKEN" with a token of the file (one per line, or
  the API server's token,user,uid[,groups] rows); without one, or with a
  wrong one, 401 Unauthorized with "WWW-Authenticate: Bearer".
- --allow-remote needs a token file or TLS (exit 2 otherwise); the TLS
  flags go together; a token file without tokens, or a certificate that
  cannot be read, is exit 1 naming the file.
- --tls-cert-file/--tls-private-key-file: HTTPS with a self-signed
  certificate made here by `openssl req` (the TLS part is skipped, exit 77,
  only if the openssl command is absent); plain HTTP to the TLS port gets
  a plain-text 400 and is closed; the limits still apply under TLS (a body
  over --max-request-body is 413, a handshake that never finishes is
  closed at the request-head deadline), pipelined requests and the
  bindings watch work over TLS.
"""
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile

from hardening_util import (Server, check, fatal, finish, node_obj, pod_obj,
                            recv_until_closed, request, wait_for)

TOKEN1 = "s3cr3t-token-one-0123456789abcdef"
TOKEN2 = "second.token_VALUE-42"
TOKEN_FILE = """# tokens for the test
%s

  %s,admin,1001,"system:masters"
""" % (TOKEN1, TOKEN2)


def bearer(tok):
    return {"Authorization": "Bearer " + tok}


def get(srv, path, headers=None, ctx=None):
    c = srv.conn(context=ctx)
    st, doc, r = request(c, "GET", path, headers=headers)
    hdrs = dict((k.lower(), v) for k, v in r.getheaders())
    c.close()
    return st, doc, hdrs


def run(ksched, args, env):
    r = subprocess.run([ksched, "serve"] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def metrics_text(srv, ctx):
    """/metrics with a good token: (status, text)."""
    c = srv.conn(context=ctx)
    c.request("GET", "/metrics", headers=bearer(TOKEN1))
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    c.close()
    return r.status, text


def token_checks(srv, ctx=None, what="http"):
    for p in ("/healthz", "/readyz", "/livez"):
        st, _, _ = get(srv, p, ctx=ctx)
        check(st == 200, "%s: %s needs no token (got %d)" % (what, p, st))
    for p in ("/metrics", "/api/v1/pods", "/debug/plugins", "/configz",
              "/no/such/path"):
        st, doc, h = get(srv, p, ctx=ctx)
        check(st == 401 and h.get("www-authenticate", "").startswith(
            "Bearer") and doc and doc.get("reason") == "Unauthorized" and
            doc.get("code") == 401,
            "%s: %s without a token: 401 Unauthorized with WWW-Authenticate:"
            " Bearer (got %d %r %r)" % (what, p, st, h.get(
                "www-authenticate"), doc))
    bad = [("wrong", bearer("not-a-token")),
           ("a prefix of a token", bearer(TOKEN1[:-1])),
           ("a token with more after it", bearer(TOKEN1 + "x")),
           ("the CSV row's user", bearer("admin")),
           ("another scheme", {"Authorization": "Basic " + TOKEN1}),
           ("an empty bearer", {"Authorization": "Bearer "})]
    for name, h in bad:
        st, _, _ = get(srv, "/api/v1/pods", headers=h, ctx=ctx)
        check(st == 401, "%s: %s: 401 (got %d)" % (what, name, st))
    for name, tok in (("a token line", TOKEN1), ("a CSV row's token",
                                                 TOKEN2)):
        st, doc, _ = get(srv, "/api/v1/pods", headers=bearer(tok), ctx=ctx)
        check(st == 200 and doc.get("kind") == "PodList",
              "%s: %s is accepted (got %d)" % (what, name, st))
    st, _, _ = get(srv, "/metrics", headers={"authorization":
                                             "bearer " + TOKEN1}, ctx=ctx)
    check(st == 200, "%s: header name and scheme are case-insensitive "
          "(got %d)" % (what, st))
    # The authentication filter's series, as kube-scheduler's: every
    # refusal above a failure, every accepted token a success; the health
    # checks are not authenticated at all.
    st, text = metrics_text(srv, ctx)
    fails = re.search(r'^authentication_attempts\{result="failure"\} '
                      r'(\d+)', text, re.M)
    oks = re.search(r'^authentication_attempts\{result="success"\} (\d+)',
                    text, re.M)
    check(fails is not None and int(fails.group(1)) >= 5 + len(bad) and
          oks is not None and int(oks.group(1)) >= 3 and
          'authenticated_user_requests{username="other"}' in text and
          'authentication_duration_seconds_bucket{result="failure",' in text,
          "%s: authentication_attempts and the other authentication series "
          "count the requests (%r %r)" % (what, fails and fails.group(0),
                                          oks and oks.group(0)))


def usage_checks(ksched, plugin_dir, env, tmp, tokens):
    base = ["--plugin-dir", plugin_dir, "--no-default-plugin-path"]
    rc, err = run(ksched, base + ["--listen", "0.0.0.0:0",
                                  "--allow-remote"], env)
    check(rc == 2 and "--allow-remote needs authentication" in err,
          "--allow-remote without a token file or TLS: exit 2 (%d %r)"
          % (rc, err))
    rc, err = run(ksched, base + ["--listen", "0.0.0.0:0"], env)
    check(rc == 2 and "--allow-remote" in err,
          "a non-loopback --listen without --allow-remote: exit 2 (%d)" % rc)
    rc, err = run(ksched, base + ["--tls-cert-file", tokens], env)
    check(rc == 2 and "--tls-private-key-file go together" in err,
          "--tls-cert-file alone: exit 2 (%d %r)" % (rc, err))
    empty = os.path.join(tmp, "empty-tokens")
    with open(empty, "w") as f:
        f.write("# nothing\n\n")
    rc, err = run(ksched, base + ["--token-file", empty], env)
    check(rc == 1 and "no token in the file" in err and empty in err,
          "a token file without tokens: exit 1 naming it (%d %r)"
          % (rc, err))
    spaced = os.path.join(tmp, "spaced-tokens")
    with open(spaced, "w") as f:
        f.write("good\nbad token\n")
    rc, err = run(ksched, base + ["--token-file", spaced], env)
    check(rc == 1 and spaced + ":2:" in err,
          "a token with a space: exit 1 naming file:line (%d %r)"
          % (rc, err))
    rc, err = run(ksched, base + ["--token-file",
                                  os.path.join(tmp, "missing")], env)
    check(rc == 1 and "missing" in err, "a missing token file: exit 1")
    rc, err = run(ksched, base + ["--tls-cert-file", tokens,
                                  "--tls-private-key-file", tokens], env)
    check(rc == 1 and "--tls-cert-file" in err,
          "a certificate file that is not one: exit 1 naming the flag "
          "(%d %r)" % (rc, err))


def tls_checks(ksched, plugin_dir, env, tmp, tokens):
    cert = os.path.join(tmp, "cert.pem")
    key = os.path.join(tmp, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                        "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not check(r.returncode == 0, "openssl req made a self-signed "
                 "certificate: %s" % r.stderr.decode()[-300:]):
        return
    srv = Server(ksched, ["--plugin-dir", plugin_dir,
                          "--no-default-plugin-path", "--listen",
                          "127.0.0.1:0", "--allow-remote", "--token-file",
                          tokens, "--tls-cert-file", cert,
                          "--tls-private-key-file", key,
                          "--request-header-timeout", "2",
                          "--max-request-body", "2048"], env)
    try:
        check(srv.scheme == "https", "serve says it listens on https://")
        ctx = ssl.create_default_context(cafile=cert)
        token_checks(srv, ctx, "https")
        # An unverified client (the certificate is self-signed) still gets
        # TLS; one that checks against the system's roots refuses it.
        try:
            get(srv, "/healthz", ctx=ssl.create_default_context())
            check(False, "the self-signed certificate fails the system's "
                  "roots")
        except ssl.SSLError:
            check(True, "the self-signed certificate fails the system's "
                  "roots (the server speaks real TLS)")
        c = srv.conn(context=ctx)
        st, _, _ = request(c, "POST", "/api/v1/nodes", node_obj("n1", "4"),
                           bearer(TOKEN1))
        check(st == 201, "https: node created (got %d)" % st)
        # The limits apply under TLS: a body over --max-request-body.
        big = pod_obj("big")
        big["metadata"]["annotations"] = {"a": "x" * 4000}
        st, doc, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                             big, bearer(TOKEN1))
        check(st == 413, "https: a body over --max-request-body is 413 (got "
              "%d)" % st)
        c.close()
        # The bindings watch streams over TLS.
        w = srv.conn(context=ctx)
        w.request("GET", "/api/v1/bindings?watch=true", headers=bearer(
            TOKEN1))
        wr = w.getresponse()
        check(wr.status == 200, "https: the bindings watch opens")
        c = srv.conn(context=ctx)
        st, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                           pod_obj("p1"), bearer(TOKEN1))
        c.close()
        check(st == 201, "https: pod created")
        line = wr.readline()
        ev = json.loads(line) if line.strip() else {}
        check(ev.get("type") == "Binding" and ev.get("pod") == "default/p1",
              "https: the watch streams the binding (%r)" % line)
        w.close()
        # Pipelined requests over one TLS connection.
        raw = ctx.wrap_socket(socket.create_connection(
            (srv.host, srv.port), timeout=30), server_hostname="127.0.0.1")
        req = ("GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nAuthorization: "
               "Bearer %s\r\n\r\n" % TOKEN1).encode()
        raw.sendall(req * 3)
        got = b""
        while got.count(b"HTTP/1.1 200 OK") < 3:
            chunk = raw.recv(65536)
            if not chunk:
                break
            got += chunk
        check(got.count(b"HTTP/1.1 200 OK") == 3,
              "https: three pipelined requests, three answers")
        raw.close()
        # Plain HTTP to the TLS port: told so, then closed.
        s = socket.create_connection((srv.host, srv.port), timeout=30)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        data = recv_until_closed(s)
        check(data.startswith(b"HTTP/1.0 400 Bad Request\r\n") and
              b"Client sent an HTTP request to an HTTPS server." in data,
              "plain HTTP to the TLS port: a plain 400, then closed (%r)"
              % data[:120])
        # A handshake that never finishes is closed at the request-head
        # deadline (2 s here; the client waits up to 30 s).
        s = socket.create_connection((srv.host, srv.port), timeout=30)
        s.sendall(b"\x16\x03\x01\x02\x00\x01")  # half a ClientHello
        try:
            closed = s.recv(4096) == b""
        except ConnectionResetError:
            closed = True
        except socket.timeout:
            closed = False
        s.close()
        check(closed, "a TLS handshake that stalls is closed at the "
              "request-head deadline")
        st, _, _ = get(srv, "/healthz", ctx=ctx)
        check(st == 200, "https: the server still answers afterwards")
        srv.proc.terminate()
        check(srv.wait_exit() == 0, "https server: SIGTERM, exit 0")
    finally:
        srv.kill()
        if failures_seen():
            print(srv.log())


def failures_seen():
    from hardening_util import failures
    return bool(failures)


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugin_dir = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-serve-auth-")
    env = dict(os.environ)
    env.pop("KSCHED_PLUGIN_PATH", None)
    env["TMPDIR"] = tmp
    tokens = os.path.join(tmp, "tokens.csv")
    with open(tokens, "w") as f:
        f.write(TOKEN_FILE)
    try:
        usage_checks(ksched, plugin_dir, env, tmp, tokens)
        srv = Server(ksched, ["--plugin-dir", plugin_dir,
                              "--no-default-plugin-path", "--listen",
                              "127.0.0.1:0", "--allow-remote",
                              "--token-file", tokens], env)
        try:
            check(srv.scheme == "http", "a token file alone: plain http")
            token_checks(srv)
        finally:
            srv.kill()
        if shutil.which("openssl") is None:
            print("SKIP: the TLS checks need the openssl command")
            return 77 if not failures_seen() else finish()
        tls_checks(ksched, plugin_dir, env, tmp, tokens)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
