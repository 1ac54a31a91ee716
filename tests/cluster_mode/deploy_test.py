#!/usr/bin/env python3
"""The manifests in deploy/ on a real kube-apiserver (see cluster_test.py).

Usage: deploy_test.py KSCHED PLUGIN_DIR K8S_DIR DEPLOY_DIR

Creates deploy/'s ServiceAccount, ConfigMap and Deployment on the API
server (no kubelet runs there, so the Deployment's pods never start: the
test runs ksched itself as one of its replicas would: in-cluster, with a
token of the ServiceAccount from the TokenRequest API, the ConfigMap's
configuration file and the container's arguments). Without deploy/'s RBAC
the API server refuses it and the log names the verb and resource; with
the RBAC applied it leads (its Lease) and schedules.
Needs PyYAML (Debian: python3-yaml) to read the manifests.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402

try:
    import yaml
except ImportError:
    yaml = None

PLURAL = {"ServiceAccount": "serviceaccounts", "ConfigMap": "configmaps",
          "Deployment": "deployments", "ClusterRoleBinding":
          "clusterrolebindings", "Role": "roles", "RoleBinding":
          "rolebindings"}


def path_for(obj):
    kind = obj["kind"]
    group, _, version = obj["apiVersion"].rpartition("/")
    base = "/apis/%s/%s" % (group, version) if group else "/api/" + version
    ns = obj["metadata"].get("namespace")
    if ns:
        base += "/namespaces/" + ns
    return base + "/" + PLURAL[kind]


def apply(api, file):
    objs = [o for o in yaml.safe_load_all(open(file)) if o]
    for o in objs:
        st, doc = api.call("POST", path_for(o), o)
        ct.check(st == 201, "created %s %s from %s (%d)"
                 % (o["kind"], o["metadata"]["name"],
                    os.path.basename(file), st))
    return objs


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ksched, plugin_dir, k8s, deploy = sys.argv[1:]
    if yaml is None:
        ct.skip("no PyYAML for %s (apt-get install python3-yaml)"
                % sys.executable)
    up, down = ct.k8s_scripts(k8s)
    tmp = tempfile.mkdtemp(prefix="ksched-deploy-")
    d, env = ct.cluster_up(up, tmp)
    servers = []
    try:
        api = ct.Api(env, env["ADMIN_TOKEN"])
        apply(api, os.path.join(deploy, "serviceaccount.yaml"))
        cms = apply(api, os.path.join(deploy, "configmap.yaml"))
        deps = apply(api, os.path.join(deploy, "deployment.yaml"))
        dep = deps[0]
        ct.check(dep["spec"]["replicas"] == 2, "the Deployment runs 2 "
                 "replicas")
        c = dep["spec"]["template"]["spec"]["containers"][0]
        ct.check(c["securityContext"].get("readOnlyRootFilesystem") is True,
                 "with a read-only root filesystem")
        ct.check(c["livenessProbe"]["httpGet"]["path"] == "/livez" and
                 c["readinessProbe"]["httpGet"]["path"] == "/readyz",
                 "probes on /livez and /readyz")
        # What a replica would have: the mounted config, a service-account
        # token, the CA and the namespace.
        etc = os.path.join(tmp, "etc")
        os.makedirs(etc)
        for name, text in cms[0]["data"].items():
            ct.write(os.path.join(etc, name), text, 0o644)
        sa = os.path.join(tmp, "sa")
        os.makedirs(sa)
        tr = api.must("POST", "/api/v1/namespaces/kube-system/"
                      "serviceaccounts/ksched/token",
                      {"apiVersion": "authentication.k8s.io/v1",
                       "kind": "TokenRequest",
                       "spec": {"expirationSeconds": 3600}})
        ct.write(os.path.join(sa, "token"), tr["status"]["token"])
        shutil.copy(env["K8S_CA"], os.path.join(sa, "ca.crt"))
        ct.write(os.path.join(sa, "namespace"), "kube-system")
        plugins = os.path.join(tmp, "plugins")
        os.makedirs(plugins)
        args = []
        for a in c["args"][1:]:
            a = a.replace("/etc/ksched", etc)
            a = a.replace("/var/lib/ksched/plugins", plugins)
            if a.startswith("--listen") or a == "--allow-remote":
                continue
            args.append(a)
        args += ["--plugin-dir", plugin_dir]
        host, port = env["K8S_URL"][len("https://"):].rsplit(":", 1)
        penv = dict(os.environ, KUBERNETES_SERVICE_HOST=host,
                    KUBERNETES_SERVICE_PORT=port,
                    KSCHED_SERVICE_ACCOUNT_DIR=sa)
        penv.pop("KUBECONFIG", None)
        s = ct.Serve(ksched, args, env=penv)
        servers.append(s)
        ct.check(bool(s.log_has(r"cluster mode: .*in-cluster", 20)),
                 "it runs in-cluster with the service account")
        ct.check(bool(s.log_has(
            r'403 Forbidden: .*User \\?"system:serviceaccount:kube-system:'
            r'ksched\\?" cannot (list|get|create) resource', 30)),
            "without deploy/rbac.yaml the log names the forbidden verb and "
            "resource")
        st, body = s.get("/readyz")
        ct.check(st == 503, "and /readyz is 503 (%s)" % body[:120].strip())
        s.stop()
        apply(api, os.path.join(deploy, "rbac.yaml"))
        s = ct.Serve(ksched, args, env=penv)
        servers.append(s)
        lead = ct.wait_for("leader", lambda: "leader" in s.get("/readyz")[1]
                           and "standby" not in s.get("/readyz")[1], 60)
        ct.check(bool(lead), "with the RBAC applied it becomes leader")
        lease = api.must("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                         "kube-system/leases/ksched")
        ct.check(lease["spec"].get("holderIdentity", "").startswith(
                 os.uname().nodename + "_"),
                 "the Lease kube-system/ksched is held by HOSTNAME_suffix "
                 "(%s)" % lease["spec"].get("holderIdentity"))
        for i in range(2):
            api.must("POST", "/api/v1/nodes", ct.node_obj("d%d" % i))
        for i in range(20):
            api.must("POST", "/api/v1/namespaces/default/pods",
                     ct.pod_obj("dp%d" % i))
        ok = ct.wait_for("pods bound", lambda: all(
            p["spec"].get("nodeName") for k, p in
            ct.pods_by_name(api).items() if k.startswith("dp")), 60)
        ct.check(bool(ok), "the pods with schedulerName ksched are bound")
        rc = s.stop()
        ct.check(rc == 0, "SIGTERM: exit 0 (%s)" % rc)
        lease = api.must("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                         "kube-system/leases/ksched")
        ct.check(lease["spec"].get("holderIdentity", "") == "",
                 "and the Lease is released on the way out (%r)"
                 % lease["spec"].get("holderIdentity"))
    finally:
        for s in servers:
            if s.proc.poll() is None:
                s.proc.kill()
        subprocess.run([down, d])
        ct.keep_or_remove(tmp, servers, 20)
    return ct.summary()


if __name__ == "__main__":
    sys.exit(main())
