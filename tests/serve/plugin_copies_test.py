#!/usr/bin/env python3
"""Plugin copies of a crashed process are swept by the next start.

Usage: plugin_copies_test.py KSCHED PLUGIN_BUILD_DIR

Every process copies the plugins it loads into its own directory,
$TMPDIR/ksched-UID/PID-XXXXXX. Two servers run; one is killed with
SIGKILL (nothing cleaned up); a third start must remove the dead one's
directory and copies, keep the live one's, leave alone a symlink that
looks like a stale directory (and what it points to), and a directory
whose lock is held. The survivors' directories go at a normal exit.
Before the fix every crashed run left its copies behind for good.
"""
import fcntl
import glob
import os
import shutil
import signal
import sys
import tempfile

from hardening_util import Server, check, fatal, finish


def dirs_of(parent, pid):
    return glob.glob(os.path.join(parent, "%d-*" % pid))


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugin_dir = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="ksched-copies-")
    env = dict(os.environ)
    env.pop("KSCHED_PLUGIN_PATH", None)
    env.pop("XDG_RUNTIME_DIR", None)
    env["TMPDIR"] = tmp
    parent = os.path.join(tmp, "ksched-%d" % os.getuid())
    # One process each (no supervisor): the copies are this process's.
    args = ["--plugin-dir", plugin_dir, "--no-default-plugin-path",
            "--listen", "127.0.0.1:0", "--no-supervise"]
    servers = []
    try:
        a = Server(ksched, args, env)
        servers.append(a)
        b = Server(ksched, args, env)
        servers.append(b)
        da, db = dirs_of(parent, a.proc.pid), dirs_of(parent, b.proc.pid)
        check(len(da) == 1 and len(db) == 1,
              "each process has one copy directory: %r %r" % (da, db))
        copies = [f for f in os.listdir(da[0]) if f.endswith(".so")]
        check(len(copies) > 0, "the copies are in it (%d)" % len(copies))
        check(os.stat(parent).st_mode & 0o777 == 0o700,
              "ksched-UID is mode 0700")
        # A decoy: a symlink named like a dead process's directory,
        # pointing at a directory with a file in it.
        target = os.path.join(tmp, "elsewhere")
        os.mkdir(target)
        open(os.path.join(target, "keep.so"), "w").close()
        os.symlink(target, os.path.join(parent, "999999999-aaaaaa"))
        # A directory named after a dead pid whose lock someone holds (a
        # live process in another PID namespace).
        held = os.path.join(parent, "999999998-bbbbbb")
        os.mkdir(held, 0o700)
        lock = open(os.path.join(held, ".lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        # A dead process's directory without a lock file (crashed before
        # making it).
        bare = os.path.join(parent, "999999997-cccccc")
        os.mkdir(bare, 0o700)
        open(os.path.join(bare, "1-x.so"), "w").close()

        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        check(os.path.isdir(da[0]), "SIGKILL leaves the copies behind")
        c = Server(ksched, args, env)
        servers.append(c)
        check(not os.path.exists(da[0]),
              "the next start removes the dead process's copies")
        check(not os.path.exists(bare),
              "and a dead process's directory without a lock file")
        check(os.path.isdir(db[0]) and
              any(f.endswith(".so") for f in os.listdir(db[0])),
              "a live process's copies are kept")
        check(os.path.islink(os.path.join(parent, "999999999-aaaaaa")) and
              os.path.exists(os.path.join(target, "keep.so")),
              "a symlink is neither followed nor removed")
        check(os.path.isdir(held), "a directory whose lock is held is kept")
        check(len(dirs_of(parent, c.proc.pid)) == 1,
              "the new process has its own directory")
        lock.close()
        for s in (b, c):
            s.proc.send_signal(signal.SIGTERM)
            check(s.wait_exit(60) == 0, "SIGTERM: exit 0")
        check(not dirs_of(parent, b.proc.pid) and
              not dirs_of(parent, c.proc.pid),
              "a normal exit removes the process's own directory")
    finally:
        for s in servers:
            s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
