"""deploy/'s manifests on a real API server, and a replica's surroundings,
for deploy_test.py (ksched from the build tree) and image_test.py (the
image built from deploy/Containerfile). Needs PyYAML (python3-yaml).

What a replica of deploy/deployment.yaml gets from Kubernetes, made by
hand here since no kubelet runs: the ConfigMap's files, the service
account's token (TokenRequest API), CA and namespace, the empty volumes,
KUBERNETES_SERVICE_HOST/_PORT, and the container's command line
(ENTRYPOINT + args) exactly as the manifest writes it; only the listen
port is mapped to a free one, as a container runtime maps a port.
"""
import http.client
import os
import re
import shutil
import socket
import ssl

import cluster_test as ct

try:
    import yaml
except ImportError:
    yaml = None

PLURAL = {"ServiceAccount": "serviceaccounts", "ConfigMap": "configmaps",
          "Deployment": "deployments", "ClusterRoleBinding":
          "clusterrolebindings", "ClusterRole": "clusterroles", "Role":
          "roles", "RoleBinding": "rolebindings", "Namespace": "namespaces"}

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def path_for(obj):
    kind = obj["kind"]
    group, _, version = obj["apiVersion"].rpartition("/")
    base = "/apis/%s/%s" % (group, version) if group else "/api/" + version
    ns = obj["metadata"].get("namespace")
    if ns:
        base += "/namespaces/" + ns
    return base + "/" + PLURAL[kind]


def apply(api, file):
    """Create every object of a manifest file; the objects."""
    objs = [o for o in yaml.safe_load_all(open(file)) if o]
    for o in objs:
        st, doc = api.call("POST", path_for(o), o)
        ct.check(st == 201, "created %s %s from %s (%d %s)"
                 % (o["kind"], o["metadata"]["name"],
                    os.path.basename(file), st, "" if st == 201 else doc))
    return objs


def container(dep):
    return dep["spec"]["template"]["spec"]["containers"][0]


def check_manifest(dep):
    """What the Deployment promises: replicas, probes over HTTPS on the
    health paths, a read-only root, non-root. Returns the container."""
    c = container(dep)
    pod = dep["spec"]["template"]["spec"]
    ct.check(dep["spec"]["replicas"] == 2, "the Deployment runs 2 replicas")
    ct.check(c["securityContext"].get("readOnlyRootFilesystem") is True,
             "with a read-only root filesystem")
    ct.check(pod["securityContext"].get("runAsNonRoot") is True and
             pod["securityContext"].get("runAsUser", 0) != 0,
             "as a non-root user (%s)" % pod["securityContext"])
    lp, rp = c["livenessProbe"]["httpGet"], c["readinessProbe"]["httpGet"]
    ct.check(lp["path"] == "/livez" and rp["path"] == "/readyz" and
             lp.get("scheme") == "HTTPS" and rp.get("scheme") == "HTTPS",
             "probes on /livez and /readyz over HTTPS (%s %s)" % (lp, rp))
    mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
    ct.check("/tmp" in mounts, "/tmp is a volume (plugin copies on a "
             "read-only root)")
    return c


def listen_port(args):
    for a in args:
        m = re.match(r"--listen=(.*):(\d+)$", a)
        if m:
            return int(m.group(2))
    return None


def map_port(args, port):
    """The container's arguments with the listen port mapped to `port`."""
    return [re.sub(r"^(--listen=.*):\d+$", r"\g<1>:%d" % port, a)
            for a in args]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def token(api, ns, sa, seconds=3600):
    tr = api.must("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token"
                  % (ns, sa), {"apiVersion": "authentication.k8s.io/v1",
                               "kind": "TokenRequest",
                               "spec": {"expirationSeconds": seconds}})
    return tr["status"]["token"]


def service_account(api, ns, name):
    """A namespace (if new) and a ServiceAccount in it (no admission
    controller creates them on this API server)."""
    api.call("POST", "/api/v1/namespaces",
             {"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": ns}})
    api.must("POST", "/api/v1/namespaces/%s/serviceaccounts" % ns,
             {"apiVersion": "v1", "kind": "ServiceAccount",
              "metadata": {"name": name, "namespace": ns}})


def replica_files(api, env, tmp, configmap, mode=0o644):
    """The mounted ConfigMap and service-account folders of a replica:
    (config dir, service-account dir, plugins dir, tmp dir)."""
    etc = os.path.join(tmp, "etc")
    sa = os.path.join(tmp, "sa")
    plugins = os.path.join(tmp, "plugins")
    scratch = os.path.join(tmp, "scratch")
    for d in (etc, sa, plugins, scratch):
        os.makedirs(d)
        os.chmod(d, 0o755)
    for name, text in configmap["data"].items():
        ct.write(os.path.join(etc, name), text, mode)
    ct.write(os.path.join(sa, "token"), token(api, "kube-system", "ksched"),
             mode)
    shutil.copy(env["K8S_CA"], os.path.join(sa, "ca.crt"))
    os.chmod(os.path.join(sa, "ca.crt"), mode)
    ct.write(os.path.join(sa, "namespace"), "kube-system", mode)
    return etc, sa, plugins, scratch


def https(port, path, tok=None, host="127.0.0.1", timeout=10):
    """(status, body text) of GET https://HOST:PORT/PATH without
    verifying the certificate (as kubelet's probes and a scraper with
    insecure_skip_verify); (0, reason) when unreachable."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = http.client.HTTPSConnection(host, port, context=ctx,
                                    timeout=timeout)
    try:
        c.request("GET", path, headers={"Authorization": "Bearer " + tok}
                  if tok else {})
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace")
    except (OSError, ssl.SSLError) as e:
        return 0, str(e)
    finally:
        c.close()


def cert_checks(port, tmp):
    """The self-signed certificate names the addresses a client uses, and
    verifies when pinned."""
    try:
        pem = ssl.get_server_certificate(("127.0.0.1", port))
    except (OSError, ssl.SSLError) as e:
        ct.check(False, "the server presents its certificate (%s)" % e)
        return
    path = os.path.join(tmp, "served.pem")
    ct.write(path, pem, 0o644)
    ctx = ssl.create_default_context(cafile=path)
    for host in ("localhost", "127.0.0.1"):
        # Connect to the loopback address, verify the name `host`.
        ok = True
        try:
            sock = socket.create_connection(("127.0.0.1", port), 10)
            ctx.wrap_socket(sock, server_hostname=host).close()
        except (OSError, ssl.SSLError) as e:
            ok = False
            print("TLS with the pinned certificate as %s: %s" % (host, e))
        ct.check(ok, "the self-signed certificate verifies for %s when "
                 "pinned" % host)


def scrape_checks(api, port, what):
    """/metrics over HTTPS: 401 without a token, 200 for the ServiceAccount
    monitoring/prometheus (rbac.yaml's ksched-metrics-reader), 403 for one
    without the role; health paths open. The Prometheus account must exist
    (service_account) before rbac.yaml is applied or after."""
    for p in ("/healthz", "/livez"):
        st, _ = https(port, p)
        ct.check(st == 200, "%s: %s needs no token (%d)" % (what, p, st))
    st, body = https(port, "/metrics")
    ct.check(st == 401, "%s: /metrics without a token: 401 (%d)"
             % (what, st))
    prom = token(api, "monitoring", "prometheus")
    st, body = https(port, "/metrics", prom)
    ct.check(st == 200 and "scheduler_schedule_attempts_total" in body,
             "%s: /metrics with the prometheus ServiceAccount's token: 200 "
             "with the scheduler's metrics (%d %s)" % (what, st, body[:200]))
    st, body = https(port, "/debug/plugins", prom)
    ct.check(st == 403 and 'cannot get path \\"/debug/plugins\\"' in body,
             "%s: the same token on /debug/plugins: 403 (%d %s)"
             % (what, st, body[:200]))
    st, body = https(port, "/api/v1/pods", prom)
    ct.check(st == 403 and "cannot list resource" in body,
             "%s: and on ksched's pod list (a review of listing pods): 403 "
             "(%d %s)" % (what, st, body[:200]))
    other = token(api, "monitoring", "nobody")
    st, body = https(port, "/metrics", other)
    ct.check(st == 403 and "system:serviceaccount:monitoring:nobody" in body,
             "%s: /metrics with a token of an account without the role: "
             "403 naming it (%d %s)" % (what, st, body[:200]))
    st, body = https(port, "/metrics", "not-a-token")
    ct.check(st == 401, "%s: /metrics with an invalid token: 401 (%d)"
             % (what, st))


def schedule_checks(api, prefix, n=20):
    """Nodes and pods of schedulerName ksched: every pod is bound."""
    for i in range(2):
        api.must("POST", "/api/v1/nodes", ct.node_obj("%sn%d" % (prefix, i)))
    for i in range(n):
        api.must("POST", "/api/v1/namespaces/default/pods",
                 ct.pod_obj("%sp%d" % (prefix, i)))
    ok = ct.wait_for("pods bound", lambda: all(
        p["spec"].get("nodeName") for k, p in
        ct.pods_by_name(api).items() if k.startswith(prefix + "p")), 60)
    ct.check(bool(ok), "the %d pods with schedulerName ksched are bound" % n)


def lease_holder(api):
    lease = api.must("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                     "kube-system/leases/ksched")
    return lease["spec"].get("holderIdentity", "")

