#!/usr/bin/env python3
"""Signals reach `ksched serve` even while a plugin blocks its loop.

Usage: serve_signals_test.py KSCHED PLUGIN_BUILD_DIR FIXTURE_PLUGIN_DIR

- The fixture plugin Hang never returns from Filter for a labelled pod, so
  the loop is blocked (/healthz no longer answers). A first SIGTERM starts
  the graceful stop, which cannot proceed; a second SIGTERM must exit at
  once with status 143 (128 + SIGTERM) and say so on stderr. Before the
  fix both signals were ignored until SIGKILL.
- The same with SIGINT (status 130).
- SIGHUP still reloads, and one SIGTERM still drains and exits 0, when the
  loop is free.
"""
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

from hardening_util import (Server, check, fatal, finish, node_obj, pod_obj,
                            request, wait_for)

HANG_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: Hang
"""


def pending_signals(pid):
    """The process's pending signal mask (shared and thread-private)."""
    mask = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("SigPnd:", "ShdPnd:")):
                    mask |= int(line.split()[1], 16)
    except OSError:
        return 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("SigPnd:"):
                        mask |= int(line.split()[1], 16)
        except OSError:
            pass
    return mask


def signal_taken(srv, signo):
    """Wait until the process has taken `signo` off its pending set (a
    second one sent before that would merge with the first)."""
    bit = 1 << (signo - 1)
    return wait_for(lambda: srv.proc.poll() is not None or
                    not pending_signals(srv.proc.pid) & bit, timeout=30)


def healthz_answers(srv, timeout):
    try:
        c = srv.conn(timeout=timeout)
        st, _, _ = request(c, "GET", "/healthz")
        c.close()
        return st == 200
    except (OSError, socket.timeout):
        return False


def hung_server(ksched, args, env, signo):
    name = signal.Signals(signo).name
    srv = Server(ksched, args, env)
    try:
        c = srv.conn()
        st, _, _ = request(c, "POST", "/api/v1/nodes", node_obj("n1"))
        check(st == 201, "%s: node created" % name)
        st, _, _ = request(c, "POST", "/api/v1/namespaces/default/pods",
                           pod_obj("stuck", labels={"ksched-test/hang":
                                                    "true"}))
        check(st == 201, "%s: the pod whose Filter hangs is created" % name)
        c.close()
        # The loop is blocked in Filter: /healthz no longer answers.
        blocked = wait_for(lambda: not healthz_answers(srv, 2), timeout=60)
        check(blocked, "%s: the hung plugin blocks the loop" % name)
        srv.proc.send_signal(signo)
        check(signal_taken(srv, signo), "%s: the first signal is taken"
              % name)
        check(srv.proc.poll() is None, "%s: the first signal only starts "
              "the graceful stop (still running)" % name)
        srv.proc.send_signal(signo)
        rc = srv.wait_exit(60)
        srv.thread.join(10)
        want = 128 + signo
        check(rc == want, "%s twice with the loop blocked: exit status %d, "
              "got %r" % (name, want, rc))
        msg = "ksched serve: %s again while stopping: exiting now " \
              "(status %d)" % (name, want)
        check(any(msg in l for l in srv.lines),
              "%s: the exit is logged: %r\n%s" % (name, msg, srv.log()))
    finally:
        srv.kill()


def free_server(ksched, args, env):
    srv = Server(ksched, args, env)
    try:
        srv.proc.send_signal(signal.SIGHUP)

        def reloaded():
            c = srv.conn()
            st, doc, _ = request(c, "GET", "/debug/plugins")
            c.close()
            return st == 200 and doc.get("generation", 0) >= 2
        check(wait_for(reloaded), "SIGHUP reloads (generation 2)")
        srv.proc.send_signal(signal.SIGTERM)
        rc = srv.wait_exit(60)
        check(rc == 0, "one SIGTERM with a free loop: drained, exit 0, got "
              "%r" % rc)
        srv.thread.join(10)
        check(any("drained; exiting" in l for l in srv.lines),
              "one SIGTERM: the drain is reported")
    finally:
        srv.kill()


def main():
    if len(sys.argv) != 4:
        fatal(__doc__)
    ksched, plugin_dir, fixture_dir = sys.argv[1:]
    if not os.path.isdir("/proc/self/task"):
        print("SKIP: needs /proc to see pending signals")
        return 77
    tmp = tempfile.mkdtemp(prefix="ksched-serve-signals-")
    cfg = os.path.join(tmp, "config.yaml")
    with open(cfg, "w") as f:
        f.write(HANG_CONFIG)
    env = dict(os.environ)
    env.pop("KSCHED_PLUGIN_PATH", None)
    env["TMPDIR"] = tmp
    base = ["--plugin-dir", plugin_dir, "--plugin-dir", fixture_dir,
            "--no-default-plugin-path", "--listen", "127.0.0.1:0",
            # The hung Filter must stay hung: no call deadline (the
            # supervisor would otherwise replace the worker).
            "--plugin-deadline", "0"]
    try:
        hung_server(ksched, ["--config", cfg] + base, env, signal.SIGTERM)
        hung_server(ksched, ["--config", cfg] + base, env, signal.SIGINT)
        free_server(ksched, base, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
