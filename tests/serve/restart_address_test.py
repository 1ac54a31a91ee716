#!/usr/bin/env python3
"""A worker that replaces a crashed one listens exactly where the first one
did: the same address and port, never a wider one.

Usage: restart_address_test.py KSCHED PLUGIN_BUILD_DIR

For plain HTTP, TLS and a Unix socket, each with --allow-remote on and
off (on needs --token-file), and for a non-loopback --listen 0.0.0.0:0,
and [::1]:0 when this machine has IPv6 loopback: `ksched serve` starts,
its worker is killed with SIGSEGV (a crash outside plugin code), and the
supervisor starts a new one. The sockets each worker really listens on
are read from /proc (its file descriptors against /proc/net/tcp, tcp6 and
unix): the replacement's must be the first one's, which must be the
address asked for (the port it picked for port 0). While no worker runs,
the supervisor's own listener (the 503 stand-in, plain HTTP only) must be
at that address too, and with TLS or a Unix socket it has none. The
replacement answers /healthz over the same protocol.
"""
import http.client
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402


# --- what a process listens on, from /proc --------------------------------

def socket_inodes(pid):
    out = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return out
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[len("socket:["):-1])
    return out


def hex_ip(h):
    """/proc/net/tcp{,6}'s address: 32-bit words in host (little-endian)
    order."""
    raw = b"".join(bytes.fromhex(h[i:i + 8])[::-1]
                   for i in range(0, len(h), 8))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4
                            else socket.AF_INET6, raw)


def listening(pid):
    """The sockets `pid` listens on: ("tcp", ip, port) and ("unix",
    path)."""
    inodes = socket_inodes(pid)
    found = set()
    for name in ("tcp", "tcp6"):
        try:
            with open("/proc/net/" + name) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            col = row.split()
            if col[3] != "0A" or col[9] not in inodes:  # 0A: LISTEN
                continue
            ip, port = col[1].rsplit(":", 1)
            found.add(("tcp", hex_ip(ip), int(port, 16)))
    with open("/proc/net/unix") as f:
        for row in f.read().splitlines()[1:]:
            col = row.split()
            # St 01 with __SO_ACCEPTCON (0x10000) in Flags: listening.
            if (len(col) >= 8 and col[6] in inodes and col[5] == "01" and
                    int(col[3], 16) & 0x10000):
                found.add(("unix", col[7]))
    return found


def child_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None


def have_ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


# --- one case ------------------------------------------------------------------

def healthz(mode, where, cafile):
    """(status) of GET /healthz over the mode's protocol; 0 when
    unreachable."""
    try:
        if mode == "unix":
            c = kt.UnixConnection(where, timeout=5)
        else:
            host, port = where
            if mode == "tls":
                ctx = ssl.create_default_context(cafile=cafile)
                ctx.check_hostname = False
                c = http.client.HTTPSConnection(host, port, timeout=5,
                                                context=ctx)
            else:
                c = http.client.HTTPConnection(host, port, timeout=5)
        c.request("GET", "/healthz")
        st = c.getresponse().status
        c.close()
        return st
    except (OSError, http.client.HTTPException, ssl.SSLError):
        return 0


def run_case(ksched, plugin_dir, tmp, mode, listen, allow_remote, files):
    what = "%s %s%s" % (mode, listen if mode != "unix" else "socket",
                        " --allow-remote" if allow_remote else "")
    args = ["--embedded", "--no-default-plugin-path", "--plugin-dir",
            plugin_dir]
    sock_path = None
    if mode == "unix":
        sock_path = os.path.join(tmp, "s-%d.sock" % allow_remote)
        args += ["--socket", sock_path]
    else:
        args += ["--listen", listen]
    if mode == "tls":
        args += ["--tls-cert-file", files["cert"], "--tls-private-key-file",
                 files["key"]]
    if allow_remote:
        args += ["--allow-remote", "--token-file", files["tokens"]]
    srv = kt.ServeProcess(ksched, args)
    sup = srv.proc.pid
    try:
        srv.started.wait(30)
        if not check(srv.addr is not None, "%s: serve starts (%s)"
                     % (what, srv.lines[-3:])):
            return
        first = child_of(sup)
        before = kt.wait_for("the first worker's listener", lambda:
                             listening(first), 10) or set()
        if mode == "unix":
            want = {("unix", sock_path)}
            where = sock_path
        else:
            host = listen.rsplit(":", 1)[0].strip("[]")
            tcp = [s for s in before if s[0] == "tcp"]
            port = tcp[0][2] if tcp else 0
            want = {("tcp", host, port)}
            where = ("127.0.0.1" if host == "0.0.0.0" else host, port)
        check(before == want, "%s: the first worker listens on %s only "
              "(%s)" % (what, sorted(want), sorted(before)))
        # A crash outside plugin code: the supervisor backs off, standing
        # in meanwhile, then starts a new worker.
        os.kill(first, signal.SIGSEGV)
        stand_in = set()
        deadline = time.time() + 30
        second = None
        while time.time() < deadline:
            stand_in |= listening(sup)
            kid = child_of(sup)
            if kid and kid != first:
                second = kid
                break
            time.sleep(0.005)
        if not check(second is not None, "%s: a new worker starts" % what):
            return
        after = kt.wait_for("the new worker's listener", lambda:
                            listening(second), 30) or set()
        check(after == before, "%s: the new worker listens where the first "
              "did: %s (got %s)" % (what, sorted(before), sorted(after)))
        if mode == "plain":
            check(stand_in <= want, "%s: the supervisor's stand-in listened "
                  "only there (%s)" % (what, sorted(stand_in)))
        else:
            check(not any(s[0] == "tcp" for s in stand_in),
                  "%s: the supervisor opens no TCP listener of its own (%s)"
                  % (what, sorted(stand_in)))
        lines = [l for l in srv.lines if "listening on" in l]
        ok = kt.wait_for("the second 'listening on'", lambda: len(
            [l for l in srv.lines if "listening on" in l]) >= 2, 30)
        lines = [l for l in srv.lines if "listening on" in l]
        check(bool(ok) and len(set(l.split(" (")[0] for l in lines)) == 1,
              "%s: both workers print the same address (%s)"
              % (what, lines))
        st = kt.wait_for("/healthz", lambda: healthz(mode, where,
                                                     files["cert"]) == 200,
                         30)
        check(bool(st), "%s: the new worker answers /healthz" % what)
    finally:
        srv.proc.send_signal(signal.SIGTERM)
        try:
            rc = srv.proc.wait(30)
        except subprocess.TimeoutExpired:
            srv.proc.kill()
            rc = srv.proc.wait()
        check(rc == 0, "%s: serve exits 0 on SIGTERM (got %s)" % (what, rc))
        if kt.failures:
            print("--- serve log (%s) ---\n%s"
                  % (what, "\n".join(srv.lines[-12:])))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ksched, plugin_dir = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-restart-addr-")
    files = {"cert": os.path.join(tmp, "cert.pem"),
             "key": os.path.join(tmp, "key.pem"),
             "tokens": os.path.join(tmp, "tokens")}
    with open(files["tokens"], "w") as f:
        f.write("restart-address-test-token\n")
    tls = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
         "-keyout", files["key"], "-out", files["cert"], "-days", "2",
         "-subj", "/CN=localhost", "-addext",
         "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"],
        capture_output=True) if shutil.which("openssl") else None
    modes = ["plain", "unix"]
    if tls is not None and tls.returncode == 0:
        modes.append("tls")
    else:
        print("no openssl: the TLS cases are left out")
    listens = ["127.0.0.1:0", "0.0.0.0:0"]
    if have_ipv6_loopback():
        listens.append("[::1]:0")
    try:
        for mode in modes:
            for allow_remote in (False, True):
                for listen in (listens if mode != "unix" else [None]):
                    if listen == "0.0.0.0:0" and not allow_remote:
                        continue  # refused without --allow-remote
                    run_case(ksched, plugin_dir, tmp, mode, listen,
                             allow_remote, files)
    finally:
        kt.keep_or_remove(tmp)
    if "tls" not in modes:
        check(False, "openssl is needed for the TLS cases")
    return kt.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
