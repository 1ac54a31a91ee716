#!/usr/bin/env python3
"""The manifests in deploy/ on a real kube-apiserver (see cluster_test.py),
with ksched from the build tree (image_test.py runs the image itself).

Usage: deploy_test.py KSCHED PLUGIN_DIR K8S_DIR DEPLOY_DIR

Creates deploy/'s ServiceAccount, ConfigMap and Deployment on the API
server. No kubelet runs there, so the Deployment's pods never start: the
test runs ksched as one of its replicas would (deploy_util.py): in-cluster
with a token of the ServiceAccount from the TokenRequest API, the
ConfigMap's configuration file, and the container's own arguments, only
the mounted folders and the listen port mapped. So --allow-remote is
there: the replica serves HTTPS with a self-signed certificate and
delegates authentication and authorization to the API server.

Without deploy/'s RBAC the API server refuses it and the log names the
verb and resource (and no review can be made: /metrics is 401 to any
token); with the RBAC applied it leads (its Lease), schedules, answers
the probes over HTTPS, serves /metrics to the prometheus ServiceAccount
that rbac.yaml binds and 403 to others.
Needs PyYAML (Debian: python3-yaml) to read the manifests.
"""
import os
import signal
import ssl
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402
import deploy_util as du  # noqa: E402


def flags_checks(ksched, env, d, tmp, servers):
    """--authentication-kubeconfig and --authorization-kubeconfig in the
    embedded mode on loopback: HTTPS, each review where its flag says."""
    admin_kc = os.path.join(d, "admin.kubeconfig")
    ksched_kc = os.path.join(d, "ksched.kubeconfig")
    port = du.free_port()
    penv = dict(os.environ, TMPDIR=os.path.join(tmp, "scratch"))
    for k in ("KUBERNETES_SERVICE_HOST", "KUBECONFIG"):
        penv.pop(k, None)
    s = ct.ksched_test.ServeProcess(ksched, [
        "--embedded", "--listen", "127.0.0.1:%d" % port,
        "--authentication-kubeconfig", admin_kc], env=penv)
    servers.append(s)
    s.started.wait(30)
    ct.check((s.addr or "").startswith("https://"), "--authentication-"
             "kubeconfig: HTTPS on loopback too (%s)" % s.addr)
    st, _ = du.https(port, "/debug/plugins", env["ADMIN_TOKEN"])
    ct.check(st == 200, "an admin's token: /debug/plugins 200 (%d)" % st)
    # (Not /api/...: the built-in system:discovery role lets every
    # authenticated user get /api/*, as a non-resource URL.)
    st, body = du.https(port, "/debug/plugins", env["KSCHED_TOKEN"])
    ct.check(st == 403 and 'User \\"ksched\\" cannot get path '
             '\\"/debug/plugins\\"' in body, "a user without the right: 403 "
             "in upstream's words (%d %s)" % (st, body[:160]))
    # ksched's views of API objects are reviewed as the same request to
    # the API server would be (resource attributes), not as a path that
    # every authenticated user may get.
    st, body = du.https(port, "/api/v1/pods", env["KSCHED_TOKEN"])
    ct.check(st == 403 and 'pods is forbidden: User \\"ksched\\" cannot '
             'list resource \\"pods\\" in API group \\"\\" at the cluster '
             'scope' in body, "/api/v1/pods for a user who may not list pods: "
             "403 in the API server's words (%d %s)" % (st, body[:200]))
    st, body = du.https(port, "/api/v1/namespaces/default/pods/p1",
                        env["KSCHED_TOKEN"])
    ct.check(st == 403 and 'pods \\"p1\\" is forbidden' in body and
             'cannot get resource' in body and
             'in the namespace \\"default\\"' in body,
             "one pod: get in its namespace, 403 (%d %s)" % (st, body[:200]))
    st, body = du.https(port, "/api/v1/pods", env["ADMIN_TOKEN"])
    ct.check(st == 200 and "PodList" in body, "an admin lists them (%d)" % st)
    # A worker that replaces a crashed one serves the same self-signed
    # certificate (kept on the supervisor's board), so a client that
    # trusts or pins it keeps working.
    first_cert = ssl.get_server_certificate(("127.0.0.1", port))
    worker = ct.ksched_test.worker_pid(s.proc.pid)
    ct.check(worker != s.proc.pid, "the supervisor runs a worker")
    if worker != s.proc.pid:
        os.kill(worker, signal.SIGSEGV)
        again = ct.wait_for("a replacement worker serves HTTPS", lambda:
                            ct.ksched_test.worker_pid(s.proc.pid) not in
                            (s.proc.pid, worker) and
                            du.https(port, "/healthz", None)[0] == 200, 60)
        ct.check(bool(again), "a replacement worker serves HTTPS again")
        ct.check(ssl.get_server_certificate(("127.0.0.1", port)) ==
                 first_cert, "the replacement serves the first worker's "
                 "self-signed certificate")
        ct.check(any("the earlier worker's self-signed certificate" in l
                     for l in s.lines), "and says so")
    s.proc.terminate()
    s.proc.wait(30)
    # Reviews of access by a user who may not create them: 500, said so.
    s = ct.ksched_test.ServeProcess(ksched, [
        "--embedded", "--listen", "127.0.0.1:%d" % port,
        "--authentication-kubeconfig", admin_kc,
        "--authorization-kubeconfig", ksched_kc], env=penv)
    servers.append(s)
    s.started.wait(30)
    st, body = du.https(port, "/metrics", env["ADMIN_TOKEN"])
    ct.check(st == 500 and "subjectaccessreviews" in body,
             "--authorization-kubeconfig of a user who may not review: 500 "
             "naming the refusal (%d %s)" % (st, body[:200]))
    s.proc.terminate()
    s.proc.wait(30)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s, deploy = sys.argv[1:]
    if du.yaml is None:
        ct.skip("no PyYAML for %s (apt-get install python3-yaml)"
                % sys.executable)
    up, down = ct.k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-deploy-")
    d, env = ct.cluster_up(up, tmp)
    servers = []
    try:
        api = ct.Api(env, env["ADMIN_TOKEN"])
        du.apply(api, os.path.join(deploy, "serviceaccount.yaml"))
        cms = du.apply(api, os.path.join(deploy, "configmap.yaml"))
        dep = du.apply(api, os.path.join(deploy, "deployment.yaml"))[0]
        c = du.check_manifest(dep)
        du.service_account(api, "monitoring", "prometheus")
        du.service_account(api, "monitoring", "nobody")
        etc, sa, plugins, scratch = du.replica_files(api, env, tmp, cms[0])
        cport = c["ports"][0]["containerPort"]
        ct.check(du.listen_port(c["args"]) == cport,
                 "the container listens on its containerPort %d" % cport)
        port = du.free_port()
        # The container's arguments; the volumes are folders here.
        args = []
        for a in du.map_port(c["args"], port)[1:]:
            a = a.replace("/etc/ksched", etc)
            a = a.replace("/var/lib/ksched/plugins", plugins)
            args.append(a)
        ct.check("--allow-remote" in args and "--token-file" not in
                 " ".join(args), "the container runs with --allow-remote "
                 "and no token file: %s" % " ".join(c["args"]))
        host, kport = env["K8S_URL"][len("https://"):].rsplit(":", 1)
        penv = dict(os.environ, KUBERNETES_SERVICE_HOST=host,
                    KUBERNETES_SERVICE_PORT=kport,
                    KSCHED_SERVICE_ACCOUNT_DIR=sa, TMPDIR=scratch,
                    KSCHED_PLUGIN_PATH=plugin_dir)
        penv.pop("KUBECONFIG", None)
        s = ct.ksched_test.ServeProcess(ksched, args, env=penv)
        servers.append(s)
        s.started.wait(30)
        ct.check((s.addr or "").startswith("https://"),
                 "it serves HTTPS (%s)" % s.addr)
        ct.check(any("self-signed certificate" in l for l in s.lines),
                 "with a self-signed certificate")
        ct.check(any(("cluster mode:" in l and "in-cluster" in l)
                     for l in s.lines) or bool(ct.wait_for(
                         "in-cluster", lambda: any(
                             "in-cluster" in l for l in s.lines), 20)),
                 "it runs in-cluster with the service account")
        ct.check(bool(ct.wait_for("the refusal", lambda: any(
            "403 Forbidden" in l and
            "system:serviceaccount:kube-system:ksched" in l and
            "cannot" in l for l in s.lines), 30)),
            "without deploy/rbac.yaml the log names the forbidden verb and "
            "resource")
        st, body = du.https(port, "/readyz")
        ct.check(st == 503, "and /readyz is 503 (%s)" % body[:120].strip())
        st, body = du.https(port, "/metrics",
                            du.token(api, "monitoring", "prometheus"))
        ct.check(st == 401, "no TokenReview allowed yet: /metrics is 401 "
                 "(%d)" % st)
        s.proc.terminate()
        s.proc.wait(30)
        du.apply(api, os.path.join(deploy, "rbac.yaml"))
        s = ct.ksched_test.ServeProcess(ksched, args, env=penv)
        servers.append(s)
        s.started.wait(30)
        lead = ct.wait_for("leader", lambda: "ok: leader" in
                           du.https(port, "/readyz")[1], 60)
        ct.check(bool(lead), "with the RBAC applied it becomes leader and "
                 "/readyz (HTTPS, as the probe) is 200")
        st, _ = du.https(port, "/livez")
        ct.check(st == 200, "/livez is 200 (%d)" % st)
        holder = du.lease_holder(api)
        ct.check(holder.startswith(os.uname().nodename + "_"),
                 "the Lease kube-system/ksched is held by HOSTNAME_suffix "
                 "(%s)" % holder)
        du.scrape_checks(api, port, "host binary")
        du.cert_checks(port, tmp)
        du.schedule_checks(api, "d")
        s.proc.terminate()
        rc = s.proc.wait(30)
        ct.check(rc == 0, "SIGTERM: exit 0 (%s)" % rc)
        ct.check(du.lease_holder(api) == "",
                 "and the Lease is released on the way out")
        flags_checks(ksched, env, d, tmp, servers)
    finally:
        for s in servers:
            if s.proc.poll() is None:
                s.proc.kill()
        subprocess.run([down, d])
        ct.keep_or_remove(tmp, servers, 20)
    return ct.summary()


if __name__ == "__main__":
    sys.exit(main())
