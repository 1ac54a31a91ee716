#!/usr/bin/env python3
"""The image deploy/Containerfile builds, built and run as deploy/'s
Deployment runs it, against a real kube-apiserver.

Usage: image_test.py SOURCE_ROOT SHARED_DIR

SHARED_DIR (the shared folder beside the checkout) holds
containers/base-images (bookworm debootstrapped into buildah's storage
under the FROM names, since no registry is reachable) and k8s/ (etcd and
kube-apiserver, see cluster_test.py). Skipped (exit 77, with the reason)
only when buildah, that folder, PyYAML or root is missing, or buildah
cannot run here; otherwise the image is really built (once per run, with
buildah's layer cache) and run:

- `buildah bud` of deploy/Containerfile, the commit passed as a build
  argument; its size is printed;
- the image: non-root user, ENTRYPOINT + CMD equal to the Deployment's
  command line, `ksched --version` names the commit, no compiler and no
  -dev package, every library of ksched resolved;
- a replica: deploy/'s manifests created on the API server, the container
  started with `buildah run` exactly as the Deployment says (its args, its
  user, its env, its volumes: the ConfigMap, the service account's token,
  the plugin folder, /tmp) but the listen port mapped: it runs in-cluster
  as uid 65532, serves HTTPS (self-signed), answers the probes, leads,
  schedules, serves /metrics to the prometheus ServiceAccount only, writes
  nothing on its root filesystem (everything it writes goes to the
  volumes), and exits 0 on SIGTERM releasing its Lease.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402
import deploy_util as du  # noqa: E402

IMAGE = "localhost/ksched:test"
B = ["buildah", "--storage-driver", "vfs"]


def b(*args, check=True, timeout=3600):
    r = subprocess.run(B + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    if check and r.returncode != 0:
        ct.fatal("buildah %s: %s" % (" ".join(args), r.stderr.decode(
            errors="replace")[-2000:]))
    return r


def commit_of(src):
    r = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty",
                        "--abbrev=12", "--match", "no-tag-matches-this"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = r.stdout.decode().strip()
    return out if r.returncode == 0 and out else "unknown"


def build(src, shared, commit):
    base = os.path.join(shared, "containers", "base-images")
    r = subprocess.run([base], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        ct.fatal("base-images: " + r.stderr.decode(errors="replace"))
    t0 = time.time()
    log = os.path.join(tempfile.gettempdir(), "ksched-image-build.log")
    with open(log, "wb") as f:
        r = subprocess.run(B + ["bud", "--isolation", "chroot",
                                "--pull-never", "--layers", "-f",
                                os.path.join(src, "deploy", "Containerfile"),
                                "--build-arg", "KSCHED_COMMIT=" + commit,
                                "-t", IMAGE, src],
                           stdout=f, stderr=subprocess.STDOUT, timeout=3600)
    if not ct.check(r.returncode == 0, "deploy/Containerfile builds (%.0f s)"
                    % (time.time() - t0)):
        ct.fatal("build log (%s):\n%s" % (log, open(log, errors="replace")
                                          .read()[-3000:]))
    os.unlink(log)


def image_checks(dep, commit):
    doc = json.loads(b("inspect", "--type", "image", IMAGE).stdout)
    cfg = doc["OCIv1"]["config"]
    size = b("images", "--format", "{{.Size}}", IMAGE).stdout.decode().strip()
    print("image size: %s" % size)
    c = du.container(dep)
    psc = dep["spec"]["template"]["spec"]["securityContext"]
    ct.check(cfg.get("User") == "%d:%d" % (psc["runAsUser"],
                                           psc["runAsGroup"]),
             "the image's user is the Deployment's %s (%s)"
             % (psc["runAsUser"], cfg.get("User")))
    ct.check(cfg.get("Entrypoint") == ["/usr/bin/ksched"] and
             cfg.get("Cmd") == c["args"],
             "the image's ENTRYPOINT + CMD is the Deployment's command line "
             "(%s %s)" % (cfg.get("Entrypoint"), cfg.get("Cmd")))
    cont = b("from", IMAGE).stdout.decode().strip()
    try:
        out = b("run", "--isolation", "chroot", cont, "--",
                "/usr/bin/ksched", "--version").stdout.decode()
        ct.check(("commit %s " % commit) in out,
                 "ksched --version in the image names the commit %s (%s)"
                 % (commit, out.strip()))
        pk = b("run", "--isolation", "chroot", cont, "--", "dpkg-query",
               "-W", "-f", "${Package}\\n").stdout.decode().split()
        dev = [p for p in pk if p.endswith("-dev") or p in (
            "gcc", "gcc-12", "cpp", "make", "meson", "ninja-build",
            "pkg-config", "build-essential")]
        ct.check(pk and not dev, "runtime packages only: no compiler, no "
                 "-dev package (%s)" % dev)
        ldd = b("run", "--isolation", "chroot", cont, "--", "ldd",
                "/usr/bin/ksched").stdout.decode()
        ct.check("libssl.so.3" in ldd and "not found" not in ldd,
                 "every library of ksched is there, libssl3 included")
        pl = b("run", "--isolation", "chroot", cont, "--", "/usr/bin/ksched",
               "plugins").stdout.decode()
        ct.check("NodeResourcesFit" in pl, "the in-tree plugins are "
                 "installed where ksched looks by default")
    finally:
        b("rm", cont, check=False)


def descendants(pid):
    kids, todo = [], [pid]
    while todo:
        p = todo.pop()
        # Every thread's children (buildah is multi-threaded).
        ch = []
        try:
            tasks = os.listdir("/proc/%d/task" % p)
        except OSError:
            tasks = []
        for t in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    ch += [int(x) for x in f.read().split()]
            except OSError:
                pass
        kids += ch
        todo += ch
    return kids


def ksched_pids(pid):
    out = []
    for p in descendants(pid):
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0] == b"/usr/bin/ksched" and b"serve" in argv:
            out.append(p)
    return out


def uid_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return -1


class Replica:
    """`buildah run` of the container as the Deployment describes it."""

    def __init__(self, cont, run_opts, argv):
        self.proc = subprocess.Popen(
            B + ["run", "--isolation", "chroot"] + run_opts + [cont, "--"] +
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines = []
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        for raw in self.proc.stderr:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def has(self, text, timeout=30):
        return ct.wait_for(text, lambda: any(text in l for l in self.lines),
                           timeout)


def replica_checks(api, env, tmp, dep, cms):
    c = du.container(dep)
    psc = dep["spec"]["template"]["spec"]["securityContext"]
    etc, sa, plugins, scratch = du.replica_files(api, env, tmp, cms[0])
    for d in (plugins, scratch):
        os.chown(d, psc["runAsUser"], psc["runAsGroup"])
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    host_dirs = {"config": etc, "plugins": plugins, "tmp": scratch}
    port = du.free_port()
    k8s_host, k8s_port = env["K8S_URL"][len("https://"):].rsplit(":", 1)
    opts = ["--user", "%d:%d" % (psc["runAsUser"], psc["runAsGroup"]),
            "--env", "KUBERNETES_SERVICE_HOST=" + k8s_host,
            "--env", "KUBERNETES_SERVICE_PORT=" + k8s_port,
            # /var/run is a symlink to /run in Debian, which buildah does
            # not follow for a mount target: the same folder by its path.
            "-v", "%s:%s:ro" % (sa, du.SA_DIR.replace("/var/run/", "/run/"))]
    for e in c.get("env", []):
        opts += ["--env", "%s=%s" % (e["name"], e["value"])]
    for name, path in mounts.items():
        ct.check(name in host_dirs, "volume %s is one the test provides"
                 % name)
        opts += ["-v", "%s:%s%s" % (host_dirs.get(name, scratch), path,
                                    ":ro" if name == "config" else "")]
    argv = ["/usr/bin/ksched"] + du.map_port(c["args"], port)
    cont = b("from", IMAGE).stdout.decode().strip()
    rep = None
    try:
        # A first run makes buildah's own mount points; what the replica
        # writes after the marker is the replica's.
        b("run", "--isolation", "chroot", *opts, cont, "--",
          "/usr/bin/ksched", "--version")
        root = b("mount", cont).stdout.decode().strip()
        marker = os.path.join(tmp, "marker")
        ct.write(marker, "", 0o644)
        time.sleep(1.1)
        rep = Replica(cont, opts, argv)
        ct.check(bool(rep.has("listening on https://", 60)),
                 "the container serves HTTPS")
        ct.check(any("self-signed certificate" in l for l in rep.lines),
                 "with a self-signed certificate")
        ct.check(bool(rep.has("cluster mode: server https://", 30)) and
                 any("cluster mode:" in l and "in-cluster" in l
                     for l in rep.lines),
                 "in-cluster, with the mounted service account")
        pids = ksched_pids(rep.proc.pid)
        ct.check(pids and all(uid_of(p) == psc["runAsUser"] for p in pids),
                 "ksched runs as uid %d (%s)" % (psc["runAsUser"], pids))
        lead = ct.wait_for("leader", lambda: "ok: leader" in
                           du.https(port, "/readyz")[1], 60)
        ct.check(bool(lead), "the readiness probe (HTTPS /readyz) passes: "
                 "it leads")
        st, _ = du.https(port, "/livez")
        ct.check(st == 200, "the liveness probe (HTTPS /livez) passes")
        du.scrape_checks(api, port, "image")
        du.cert_checks(port, tmp)
        du.schedule_checks(api, "i")
        copies = [os.path.join(p, f) for p, _, fs in os.walk(scratch)
                  for f in fs if ".so" in f]
        ct.check(bool(copies), "the plugins' private copies are in the /tmp "
                 "volume (%d files)" % len(copies))
        if pids:
            os.kill(min(pids), signal.SIGTERM)
        try:
            rc = rep.proc.wait(60)
        except subprocess.TimeoutExpired:
            rep.proc.kill()
            rc = None
        ct.check(rc == 0, "SIGTERM: the container exits 0 (%s)" % rc)
        rep.thread.join(5)
        ct.check(du.lease_holder(api) == "", "and releases the Lease")
        # buildah run itself recreates /run/.containerenv (a mount point)
        # for every run: that one is not the replica's.
        written = [f for f in subprocess.run(
            ["find", root, "-xdev", "-newer", marker, "!", "-type", "d"],
            stdout=subprocess.PIPE).stdout.decode().split()
            if f != os.path.join(root, "run", ".containerenv")]
        ct.check(not written, "nothing was written on the root filesystem "
                 "(%s)" % written[:10])
    finally:
        if rep and rep.proc.poll() is None:
            rep.proc.kill()
            rep.proc.wait()
        if rep and ct.failures:
            print("--- container log ---\n" + "\n".join(rep.lines[-30:]))
        b("umount", cont, check=False)
        b("rm", cont, check=False)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, shared = (os.path.abspath(a) for a in sys.argv[1:])
    if shutil.which("buildah") is None:
        ct.skip("no buildah (apt-get install buildah debootstrap)")
    if not os.path.exists(os.path.join(shared, "containers", "base-images")):
        ct.skip("no %s/containers/base-images (the shared folder is not "
                "beside the checkout)" % shared)
    if du.yaml is None:
        ct.skip("no PyYAML for %s (apt-get install python3-yaml)"
                % sys.executable)
    if os.geteuid() != 0:
        ct.skip("buildah with the vfs driver and chroot isolation needs "
                "root here")
    r = b("images", check=False, timeout=120)
    if r.returncode != 0:
        ct.skip("buildah cannot run here: " + r.stderr.decode(
            errors="replace").strip()[-300:])
    up, down = ct.k8s_scripts(os.path.join(shared, "k8s"))
    commit = commit_of(src)
    build(src, shared, commit)
    deploy = os.path.join(src, "deploy")
    dep = [o for o in du.yaml.safe_load_all(open(os.path.join(
        deploy, "deployment.yaml"))) if o][0]
    image_checks(dep, commit)
    tmp = tempfile.mkdtemp(prefix="ksched-image-")
    os.chmod(tmp, 0o755)
    d, env = ct.cluster_up(up, tmp)
    try:
        api = ct.Api(env, env["ADMIN_TOKEN"])
        for f in ("serviceaccount.yaml", "rbac.yaml"):
            du.apply(api, os.path.join(deploy, f))
        cms = du.apply(api, os.path.join(deploy, "configmap.yaml"))
        dep = du.apply(api, os.path.join(deploy, "deployment.yaml"))[0]
        du.check_manifest(dep)
        du.service_account(api, "monitoring", "prometheus")
        du.service_account(api, "monitoring", "nobody")
        replica_checks(api, env, tmp, dep, cms)
    finally:
        subprocess.run([down, d])
        ct.keep_or_remove(tmp)
    return ct.summary()


if __name__ == "__main__":
    sys.exit(main())
