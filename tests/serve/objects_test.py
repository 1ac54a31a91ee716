#!/usr/bin/env python3
"""The embedded API serves the declared resources' objects, and plugins
write to them.

Usage: objects_test.py KSCHED PLUGIN_BUILD_DIR

`ksched serve --embedded` with the default plugins (VolumeBinding,
VolumeRestrictions, NodeVolumeLimits and VolumeZone declare claims,
volumes, classes and the CSI objects; DefaultPreemption
PodDisruptionBudgets):

1. The API: create (201, uid, creationTimestamp, resourceVersion),
   409 AlreadyExists, GET and LIST (namespaced and across namespaces),
   merge and strategic merge PATCH (a null deletes), the /status
   subresource, PUT with a stale resourceVersion (409 Conflict), DELETE
   (404 NotFound after), the error bodies in the API server's words, a
   resource no plugin declares (404), a cluster-scoped resource under a
   namespace (404), an unsupported patch type (415).
2. Scheduling with volumes: a pod whose claim is bound to a PV (created
   through the API) is scheduled and bound.
3. A WaitForFirstConsumer claim: VolumeBinding's PreBind PATCHes the
   claim with volume.kubernetes.io/selected-node through api_request,
   applied to the store (GET shows it); nothing provisions in the embedded
   API, so the test acts as the PV controller (a PV, the claim bound
   through the API) and the pod is then bound.
4. --state-file: after a restart the objects come back with their uids
   and resourceVersions; a deleted one stays deleted; resourceVersions
   go on from the restored ones.
5. Under the supervisor: a worker killed with SIGKILL is replaced by one
   that restores the objects from the supervisor's journal.
"""
import json
import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test  # noqa: E402
from ksched_test import check, fatal, wait_for  # noqa: E402

PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
PVS = "/api/v1/persistentvolumes"
SCS = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = "application/merge-patch+json"


def call(srv, method, path, body=None, ctype="application/json"):
    c = srv.conn(10)
    try:
        c.request(method, path,
                  body if isinstance(body, str) or body is None
                  else json.dumps(body), {"Content-Type": ctype})
        r = c.getresponse()
        text = r.read().decode()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text
    except OSError:
        return 0, None
    finally:
        c.close()


def status_is(doc, code, reason, message):
    return (isinstance(doc, dict) and doc.get("kind") == "Status" and
            doc.get("status") == "Failure" and doc.get("code") == code and
            doc.get("reason") == reason and doc.get("message") == message)


def node(name):
    return {"metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110"}}}


def pod(name, claim):
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x"}],
                     "volumes": [{"name": "v", "persistentVolumeClaim":
                                  {"claimName": claim}}]}}


def claim(name, cls):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name},
            "spec": {"storageClassName": cls,
                     "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def volume(name, cls, claim_name=None, claim_uid=None):
    spec = {"storageClassName": cls, "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "disk.example.com", "volumeHandle": name}}
    if claim_name:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim",
                            "namespace": "default", "name": claim_name,
                            "uid": claim_uid}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name}, "spec": spec,
            "status": {"phase": "Bound" if claim_name else "Available"}}


def bound_node(srv, name):
    st, doc = call(srv, "GET", "/api/v1/namespaces/default/pods/" + name)
    return doc.get("spec", {}).get("nodeName") if st == 200 else None


def bind_claim(srv, name, pv):
    """The PV controller's part: the claim bound to pv."""
    st, doc = call(srv, "PATCH", PVCS + "/" + name,
                   {"metadata": {"annotations":
                                 {"pv.kubernetes.io/bind-completed": "yes"}},
                    "spec": {"volumeName": pv}}, MERGE)
    st2, _ = call(srv, "PATCH", PVCS + "/" + name + "/status",
                  {"status": {"phase": "Bound"}}, MERGE)
    return st == 200 and st2 == 200


def api(srv):
    st, sc = call(srv, "POST", SCS, {"metadata": {"name": "fast"},
                                     "provisioner": "disk.example.com",
                                     "volumeBindingMode": "Immediate"})
    check(st == 201 and sc["kind"] == "StorageClass" and
          sc["apiVersion"] == "storage.k8s.io/v1" and
          sc["metadata"].get("uid") and
          sc["metadata"].get("creationTimestamp") and
          sc["metadata"].get("resourceVersion") and
          "namespace" not in sc["metadata"],
          "StorageClass created: 201 with kind, uid, creationTimestamp, "
          "resourceVersion (%s %s)" % (st, sc))
    st, doc = call(srv, "POST", SCS, {"metadata": {"name": "fast"},
                                      "provisioner": "other"})
    check(st == 409 and status_is(
        doc, 409, "AlreadyExists",
        'storageclasses.storage.k8s.io "fast" already exists') and
        doc["details"] == {"name": "fast", "group": "storage.k8s.io",
                           "kind": "storageclasses"},
        "a second create is 409 AlreadyExists (%s %s)" % (st, doc))

    st, c1 = call(srv, "POST", PVCS, claim("c1", "fast"))
    check(st == 201 and c1["metadata"]["namespace"] == "default" and
          int(c1["metadata"]["resourceVersion"]) >
          int(sc["metadata"]["resourceVersion"]),
          "claim created in its URL's namespace, resourceVersion counted "
          "up (%s %s)" % (st, c1))
    st, doc = call(srv, "POST", "/api/v1/namespaces/other/"
                   "persistentvolumeclaims", claim("c1", "fast"))
    check(st == 201, "the same name in another namespace (%s)" % st)
    st, doc = call(srv, "POST", PVCS, dict(claim("c9", "fast"),
                   metadata={"name": "c9", "namespace": "elsewhere"}))
    check(st == 400 and doc["reason"] == "BadRequest",
          "a body naming another namespace is 400 (%s %s)" % (st, doc))

    st, doc = call(srv, "GET", PVCS + "/c1")
    check(st == 200 and doc == c1, "GET answers the object as created")
    st, doc = call(srv, "GET", PVCS)
    check(st == 200 and doc["kind"] == "PersistentVolumeClaimList" and
          [i["metadata"]["name"] for i in doc["items"]] == ["c1"],
          "LIST in a namespace (%s)" % doc)
    st, doc = call(srv, "GET", "/api/v1/persistentvolumeclaims")
    check(st == 200 and [(i["metadata"]["namespace"], i["metadata"]["name"])
                         for i in doc["items"]] ==
          [("default", "c1"), ("other", "c1")],
          "LIST across namespaces, sorted (%s)" % doc)
    st, doc = call(srv, "GET", "/api/v1/persistentvolumeclaims"
                   "?labelSelector=team%3Dred")
    check(st == 200 and doc["items"] == [],
          "LIST with a labelSelector nothing matches (%s)" % doc)
    st, doc = call(srv, "GET", PVCS + "?labelSelector=a+in+(")
    check(st == 400 and doc["reason"] == "BadRequest",
          "a malformed labelSelector: 400 (%s)" % doc)
    st, doc = call(srv, "GET", PVCS + "/nope")
    check(st == 404 and status_is(doc, 404, "NotFound",
                                  'persistentvolumeclaims "nope" not found')
          and doc["details"] == {"name": "nope",
                                 "kind": "persistentvolumeclaims"},
          "GET of a missing claim: 404 NotFound (%s)" % doc)

    # merge patch: a label added, a null deletes, a list replaced
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   {"metadata": {"labels": {"app": "db", "tier": "x"}},
                    "spec": {"accessModes": ["ReadWriteOncePod"]}}, MERGE)
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   {"metadata": {"labels": {"tier": None}},
                    "spec": {"storageClassName": None}}, MERGE)
    check(st == 200 and doc["metadata"]["labels"] == {"app": "db"} and
          "storageClassName" not in doc["spec"] and
          doc["spec"]["accessModes"] == ["ReadWriteOncePod"] and
          doc["metadata"]["uid"] == c1["metadata"]["uid"] and
          doc["metadata"]["creationTimestamp"] ==
          c1["metadata"]["creationTimestamp"],
          "merge patch: label added then removed by null, list replaced, "
          "uid and creationTimestamp kept (%s)" % doc)
    st, doc = call(srv, "GET", "/api/v1/persistentvolumeclaims"
                   "?labelSelector=app%3Ddb")
    check(st == 200 and [(i["metadata"]["namespace"], i["metadata"]["name"])
                         for i in doc["items"]] == [("default", "c1")],
          "LIST with labelSelector=app=db (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   {"metadata": {"annotations": {"a": "1"}}},
                   "application/strategic-merge-patch+json")
    check(st == 200 and doc["metadata"]["annotations"] == {"a": "1"},
          "strategic merge patch of a map (%s)" % doc)
    rv = doc["metadata"]["resourceVersion"]
    st, doc = call(srv, "PATCH", PVCS + "/c1/status",
                   {"status": {"phase": "Pending"}}, MERGE)
    check(st == 200 and doc["status"] == {"phase": "Pending"} and
          int(doc["metadata"]["resourceVersion"]) > int(rv),
          "PATCH of /status (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   {"metadata": {"resourceVersion": rv, "labels": {"b": "2"}}},
                   MERGE)
    check(st == 409 and status_is(
        doc, 409, "Conflict",
        'Operation cannot be fulfilled on persistentvolumeclaims "c1": the '
        'object has been modified; please apply your changes to the latest '
        'version and try again'),
        "a patch with a stale resourceVersion is 409 Conflict (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/c1", "{}",
                   "application/apply-patch+yaml")
    check(st == 415 and doc["reason"] == "UnsupportedMediaType",
          "an apply patch is 415 (%s)" % doc)
    jp = "application/json-patch+json"
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   [{"op": "test", "path": "/metadata/labels/app",
                     "value": "db"},
                    {"op": "add", "path": "/metadata/labels/x~1y",
                     "value": "1"},
                    {"op": "add", "path": "/spec/accessModes/-",
                     "value": "ReadOnlyMany"},
                    {"op": "remove", "path": "/metadata/labels/x~1y"}], jp)
    check(st == 200 and doc["spec"]["accessModes"] ==
          ["ReadWriteOncePod", "ReadOnlyMany"] and
          doc["metadata"]["labels"] == {"app": "db"},
          "a JSON patch (RFC 6902: test, add, append, remove) (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   [{"op": "test", "path": "/metadata/labels/app",
                     "value": "web"}], jp)
    check(st == 422 and doc["reason"] == "Invalid",
          "a JSON patch whose test fails: 422 (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/c1",
                   [{"op": "remove", "path": "/spec/nope"}], jp)
    check(st == 422, "removing a missing path: 422 (%s)" % doc)
    st, doc = call(srv, "PATCH", PVCS + "/nope", {"a": 1}, MERGE)
    check(st == 404, "PATCH of a missing claim: 404 (%s)" % st)

    # PUT: replace, stale resourceVersion, name mismatch
    st, cur = call(srv, "GET", PVCS + "/c1")
    new = dict(cur)
    new["spec"] = dict(cur["spec"], volumeMode="Block")
    st, doc = call(srv, "PUT", PVCS + "/c1", new)
    check(st == 200 and doc["spec"]["volumeMode"] == "Block" and
          int(doc["metadata"]["resourceVersion"]) >
          int(cur["metadata"]["resourceVersion"]),
          "PUT replaces (%s)" % doc)
    st, doc = call(srv, "PUT", PVCS + "/c1", new)
    check(st == 409 and doc["reason"] == "Conflict",
          "PUT with the old resourceVersion: 409 (%s)" % doc)
    st, doc = call(srv, "PUT", PVCS + "/c2", claim("c2", "fast"))
    check(st == 404 and doc["message"] ==
          'persistentvolumeclaims "c2" not found',
          "PUT of a missing claim: 404 (%s)" % doc)
    st, doc = call(srv, "PUT", PVCS + "/c1", claim("zz", "fast"))
    check(st == 400 and doc["reason"] == "BadRequest",
          "PUT with another name in the body: 400 (%s)" % doc)

    # DELETE
    st, doc = call(srv, "DELETE", "/api/v1/namespaces/other/"
                   "persistentvolumeclaims/c1")
    check(st == 200 and doc["status"] == "Success" and
          doc["details"]["name"] == "c1",
          "DELETE: 200 with a Success Status (%s)" % doc)
    st, doc = call(srv, "DELETE", "/api/v1/namespaces/other/"
                   "persistentvolumeclaims/c1")
    check(st == 404 and doc["message"] ==
          'persistentvolumeclaims "c1" not found',
          "DELETE again: 404 NotFound (%s)" % doc)
    st, doc = call(srv, "DELETE", PVCS + "/c1",
                   {"preconditions": {"uid": "not-it"}})
    check(st == 409 and doc["reason"] == "Conflict",
          "DELETE with a wrong uid precondition: 409 (%s)" % doc)

    # paths that are no declared resource's
    st, doc = call(srv, "GET", "/apis/example.com/v1/widgets")
    check(st == 404 and doc["reason"] == "NotFound",
          "a resource no plugin declares: 404 (%s)" % doc)
    st, doc = call(srv, "GET", "/api/v1/namespaces/default/"
                   "persistentvolumes")
    check(st == 404, "a cluster-scoped resource under a namespace: 404")
    st, doc = call(srv, "POST", "/api/v1/persistentvolumeclaims",
                   claim("c3", "fast"))
    check(st == 405, "creating a namespaced object without a namespace: "
          "405 (%s)" % st)
    st, doc = call(srv, "GET", "/apis/policy/v1/poddisruptionbudgets")
    check(st == 200 and doc["kind"] == "PodDisruptionBudgetList" and
          doc["items"] == [], "DefaultPreemption's PDBs are served (%s)" % doc)
    st, doc = call(srv, "POST", PVCS, "{")
    check(st == 400 and doc["message"].startswith("json parse error"),
          "malformed JSON: 400 (%s)" % doc)
    st, doc = call(srv, "POST", PVCS, {"kind": "Pod",
                                       "metadata": {"name": "x"}})
    check(st == 400, "another kind in the body: 400 (%s)" % doc)


def scheduling(srv):
    check(call(srv, "POST", "/api/v1/nodes", node("n1"))[0] == 201, "node")
    # a claim bound to a volume from the start
    st, c = call(srv, "POST", PVCS, claim("bound", "fast"))
    uid = c["metadata"]["uid"]
    check(call(srv, "POST", PVS, volume("pv-bound", "fast", "bound",
                                        uid))[0] == 201, "PV created")
    check(bind_claim(srv, "bound", "pv-bound"), "claim bound")
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p-bound", "bound"))[0] == 201, "pod created")
    check(wait_for("p-bound bound", lambda: bound_node(srv, "p-bound"), 30)
          == "n1", "a pod with a bound claim is scheduled to n1")

    # WaitForFirstConsumer: VolumeBinding writes the selected node
    st, _ = call(srv, "POST", SCS, {"metadata": {"name": "wffc"},
                                    "provisioner": "disk.example.com",
                                    "volumeBindingMode":
                                    "WaitForFirstConsumer"})
    check(st == 201, "WaitForFirstConsumer class")
    st, c = call(srv, "POST", PVCS, claim("late", "wffc"))
    uid = c["metadata"]["uid"]
    check(call(srv, "POST", "/api/v1/namespaces/default/pods",
               pod("p-late", "late"))[0] == 201, "pod created")

    def selected():
        st, doc = call(srv, "GET", PVCS + "/late")
        return (doc["metadata"].get("annotations", {})
                .get("volume.kubernetes.io/selected-node"))
    check(wait_for("selected-node", selected, 30) == "n1",
          "VolumeBinding's PreBind wrote volume.kubernetes.io/selected-node"
          "=n1 into the claim's store (GET shows it)")
    check(bound_node(srv, "p-late") is None,
          "the pod waits for the claim to be bound (nothing provisions in "
          "the embedded API)")
    # the PV controller's and provisioner's part
    check(call(srv, "POST", PVS, volume("pv-late", "wffc", "late",
                                        uid))[0] == 201, "PV provisioned")
    check(bind_claim(srv, "late", "pv-late"), "claim bound")
    check(wait_for("p-late bound", lambda: bound_node(srv, "p-late"), 30)
          == "n1", "once the claim is bound, the pod is bound to n1")


def restart(ksched, plugins):
    tmp = tempfile.mkdtemp(prefix="ksched-objects-")
    path = os.path.join(tmp, "state.journal")
    args = ["--embedded", "--listen", "127.0.0.1:0", "--plugin-dir", plugins,
            "--no-default-plugin-path", "--state-file", path]
    srv = ksched_test.Serve(ksched, args)
    try:
        api(srv)
        scheduling(srv)
        check(call(srv, "DELETE", SCS + "/fast")[0] == 200, "class deleted")
        before = {p: call(srv, "GET", p)[1]
                  for p in (PVCS + "/c1", PVCS + "/late", PVS + "/pv-late",
                            SCS + "/wffc")}
        st, lst = call(srv, "GET", PVCS)
        last_rv = int(lst["metadata"]["resourceVersion"])
    finally:
        check(srv.stop() == 0, "first serve stops cleanly")
    srv = ksched_test.Serve(ksched, args)
    try:
        check(srv.log_has(r"journal: restored \d+ object\(s\) of declared "
                          r"resources"), "the journal restores the objects")
        after = {p: call(srv, "GET", p)[1] for p in before}
        check(after == before, "after a restart the objects are the same "
              "(uids, resourceVersions, annotations)")
        st, doc = call(srv, "GET", SCS + "/fast")
        check(st == 404, "a deleted object stays deleted (%s)" % st)
        check(bound_node(srv, "p-late") == "n1", "the pod is still bound")
        st, doc = call(srv, "POST", SCS, {"metadata": {"name": "fast"},
                                          "provisioner": "p"})
        check(st == 201 and int(doc["metadata"]["resourceVersion"]) >
              last_rv, "resourceVersions go on after the last one, a "
              "deletion's included (%s > %d)"
              % (doc["metadata"]["resourceVersion"], last_rv))
    finally:
        check(srv.stop() == 0, "second serve stops cleanly")
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)


def supervised(ksched, plugins):
    srv = ksched_test.Serve(ksched, ["--embedded", "--listen", "127.0.0.1:0",
                                     "--plugin-dir", plugins,
                                     "--no-default-plugin-path"])
    try:
        st, c = call(srv, "POST", PVCS, claim("kept", "fast"))
        check(st == 201, "claim created")
        check(call(srv, "PATCH", PVCS + "/kept", {"metadata": {"labels":
                                                              {"a": "1"}}},
                   MERGE)[0] == 200, "claim patched")
        st, c = call(srv, "GET", PVCS + "/kept")
        old = srv.worker_pid()
        check(old != srv.proc.pid, "serve runs a worker under a supervisor")
        os.kill(old, signal.SIGKILL)
        check(srv.log_has(r"journal: restored 1 object\(s\) of declared "
                          r"resources"), "the new worker restores the claim")
        wait_for("the new worker answers",
                 lambda: srv.worker_pid() != old and
                 call(srv, "GET", "/readyz")[0] == 200, 30)
        st, after = call(srv, "GET", PVCS + "/kept")
        check(st == 200 and after == c,
              "the claim is the same after the worker's death (%s)" % after)
    finally:
        check(srv.stop() == 0, "serve stops cleanly")


def main():
    if len(sys.argv) != 3:
        fatal(__doc__)
    ksched, plugins = sys.argv[1:]
    restart(ksched, plugins)
    supervised(ksched, plugins)
    print("%d check(s) failed" % len(ksched_test.failures)
          if ksched_test.failures else "all checks passed")
    return 1 if ksched_test.failures else 0


if __name__ == "__main__":
    sys.exit(main())
