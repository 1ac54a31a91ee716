"""Shared pieces of the Python integration tests: checks that collect
failures, and a `ksched serve` process to talk to.

Import it from a test script beside ../lib:

    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "lib"))
    import ksched_test as kt

    srv = kt.Serve(ksched, ["--listen", "127.0.0.1:0", ...])
    kt.check(srv.get("/readyz")[0] == 200, "ready")
    ...
    rc = srv.stop()
    raise SystemExit(1 if kt.failures else 0)

Standard library only.
"""
import http.client
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

# Every failed check's text, in order.
failures = []
# When set, passing checks print nothing (for scripts with many checks).
QUIET_OK = False


# v1.34+'s default DynamicResources (ksched's default too) answers
# PostFilter for a pod without claims before DefaultPreemption, which puts
# this in front of "preemption: ..." in every FitError.
DRA_POSTFILTER = "no new claims to deallocate, "


def fit_error(msg):
    """The Filter part of a FitError: without the PostFilter texts
    (DynamicResources' "no new claims to deallocate, " and "preemption:
    ...")."""
    return msg.split(" " + DRA_POSTFILTER.rstrip(" "))[0].split(
        " preemption:")[0]


def check(cond, what):
    """Record `what` as failed unless `cond`; print the verdict; return
    `cond`."""
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    elif not QUIET_OK:
        print("ok: " + what.split("\n")[0][:120], flush=True)
    return cond


def fatal(what):
    print("FATAL: " + what, flush=True)
    raise SystemExit(1)


def skip(why):
    """Exit 77 (meson's skip) saying why."""
    print("SKIP: " + why, flush=True)
    raise SystemExit(77)


def summary():
    """Print how the checks went; the exit code (1 when any failed)."""
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


def keep_or_remove(tmp, servers=(), log_lines=30):
    """At the end of a run: remove `tmp` when every check passed, else
    print the last `log_lines` of each server's log and keep it."""
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    for s in servers:
        print("--- ksched log ---\n" + "\n".join(s.lines[-log_lines:]))
    print("kept " + tmp)


def recv_until_closed(sock, size=65536):
    """Read `sock` until the peer closes it, close it; the bytes read."""
    data = b""
    while True:
        chunk = sock.recv(size)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data


def worker_pid(pid):
    """The scheduling process of a `ksched serve` started as `pid`: its
    only child (the supervisor's worker), or `pid` itself when it has no
    child (--no-supervise)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        kids = []
    return int(kids[0]) if kids else pid


def wait_for(what, fn, timeout=60, every=0.2):
    """Call fn until it returns something true or `timeout` seconds pass;
    return its last answer (printing what timed out)."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    print("timed out waiting for " + what, flush=True)
    return last


class UnixConnection(http.client.HTTPConnection):
    """An HTTP connection over a Unix socket (`serve --socket PATH`)."""

    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class ServeProcess:
    """`ksched serve ARGS...` started, stdout discarded, its stderr
    collected line by line in `lines` by a daemon thread (`thread`).
    `addr` is what it printed after "listening on" (None until then);
    `started` is set at that line, or when stderr ends."""

    def __init__(self, ksched, args, env=None):
        self.proc = subprocess.Popen([ksched, "serve"] + args,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        self.lines = []
        self.addr = None
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            m = re.search(r"listening on (\S+)", line)
            if m and self.addr is None:
                self.addr = m.group(1)
                self.started.set()
        self.started.set()


class Serve(ServeProcess):
    """`ksched serve ARGS...` with its stderr collected line by line in
    `lines`. The address it prints ("listening on http://HOST:PORT" or
    "listening on unix:PATH") is kept in `addr`, `host` and `port` or
    `socket_path`.

    must_start: when the server prints no address within `start_timeout`
    seconds, kill it and end the test (fatal); otherwise (for runs that are
    expected to fail) `addr` stays None and get() answers (0, "").
    """

    def __init__(self, ksched, args, env=None, must_start=True,
                 start_timeout=30):
        self.host = self.port = self.socket_path = None
        super().__init__(ksched, args, env)
        self.started.wait(start_timeout)
        if self.addr is None:
            if must_start:
                self.proc.kill()
                self.proc.wait()
                fatal("serve did not start: " + "\n".join(self.lines))
            return
        if self.addr.startswith("http://"):
            host, port = self.addr[len("http://"):].rsplit(":", 1)
            self.host, self.port = host, int(port)
        elif self.addr.startswith("unix:"):
            self.socket_path = self.addr[len("unix:"):]

    def conn(self, timeout=60):
        """A new HTTP connection to the server."""
        if self.socket_path:
            return UnixConnection(self.socket_path, timeout)
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=timeout)

    def raw(self, timeout=30):
        """A new connected socket to the server."""
        if self.socket_path:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            s.connect(self.socket_path)
            return s
        return socket.create_connection((self.host, self.port),
                                        timeout=timeout)

    def get(self, path):
        """(status, body text) of GET path; (0, "") when the server is
        unreachable."""
        if self.addr is None:
            return 0, ""
        c = self.conn(10)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read().decode(errors="replace")
        except OSError:
            return 0, ""
        finally:
            c.close()

    def alive(self):
        return self.proc.poll() is None

    def ready(self, timeout=60):
        """Wait until /readyz answers 200; false if the process exits."""
        return wait_for("/readyz", lambda: self.proc.poll() is not None or
                        self.get("/readyz")[0] == 200,
                        timeout) and self.proc.poll() is None

    def log_has(self, pattern, timeout=30):
        """Wait for a stderr line matching the regular expression."""
        rx = re.compile(pattern)
        return wait_for("log line /%s/" % pattern,
                        lambda: any(rx.search(l) for l in self.lines),
                        timeout)

    def worker_pid(self):
        """The process that runs the scheduler: the supervisor's worker
        (its child), or the process itself under --no-supervise."""
        return worker_pid(self.proc.pid)

    def rss(self):
        """The worker's resident set size in bytes (0 when unknown)."""
        with open("/proc/%d/status" % self.worker_pid()) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Send `sig` (if still running) and wait up to `timeout` seconds.
        Returns the exit status, or None when it had to be killed."""
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(sig)
            try:
                rc = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = None
        self.thread.join(5)
        return rc
