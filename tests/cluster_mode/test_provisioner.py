#!/usr/bin/env python3
"""A small volume provisioner for tests, as an external CSI provisioner
behaves for a WaitForFirstConsumer StorageClass: it provisions a claim
only once the scheduler has written the `volume.kubernetes.io/selected-node`
annotation on it, and pins the volume to that node.

For every PersistentVolumeClaim whose StorageClass names one of its
provisioners, that carries the selected-node annotation, has no
`spec.volumeName` yet and no volume of ours: it creates a
PersistentVolume "pvc-<claim uid>" with the claim's size, access modes and
class, a CSI source (the class's provisioner as the driver, the claim's
uid as the handle: node volume limits count it), `claimRef` to the claim,
node affinity `kubernetes.io/hostname In [selected node]` and the
annotation `pv.kubernetes.io/provisioned-by`.
The PV controller (kube-controller-manager's persistentvolume-binder) then
binds the claim, as in a real cluster. It also records which claims it
provisioned and for which node.

Standard library only; polls the API every 0.3 s (a test's scale).

Usage inside a test:
    p = Provisioner(api, ["test.example.com"]); p.start(); ...; p.stop()
"""
import threading

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


class Provisioner:
    def __init__(self, api, names, every=0.3):
        self.api = api
        self.names = set(names)
        self.every = every
        self.made = {}  # "ns/claim" -> node
        self.errors = []
        self._stop = threading.Event()
        self._t = None

    def start(self):
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def stop(self):
        self._stop.set()
        if self._t:
            self._t.join(5)

    def _classes(self):
        st, doc = self.api.call(
            "GET", "/apis/storage.k8s.io/v1/storageclasses")
        if st != 200:
            return {}
        return {c["metadata"]["name"]: c for c in doc.get("items", [])
                if c.get("provisioner") in self.names}

    def _run(self):
        while not self._stop.is_set():
            try:
                self._once()
            except Exception as e:  # a test's helper: report, go on
                self.errors.append(repr(e))
            self._stop.wait(self.every)

    def _once(self):
        classes = self._classes()
        if not classes:
            return
        st, doc = self.api.call("GET", "/api/v1/persistentvolumeclaims")
        if st != 200:
            return
        for c in doc.get("items", []):
            md, spec = c["metadata"], c.get("spec", {})
            cls = classes.get(spec.get("storageClassName") or "")
            node = (md.get("annotations") or {}).get(ANN_SELECTED_NODE)
            key = "%s/%s" % (md["namespace"], md["name"])
            if (cls is None or not node or spec.get("volumeName") or
                    key in self.made or md.get("deletionTimestamp")):
                continue
            self._provision(c, cls, node, key)

    def _provision(self, claim, cls, node, key):
        md, spec = claim["metadata"], claim["spec"]
        size = spec.get("resources", {}).get("requests", {}).get(
            "storage", "1Gi")
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": "pvc-" + md["uid"],
                           "annotations": {
                               ANN_PROVISIONED_BY: cls["provisioner"]}},
              "spec": {"capacity": {"storage": size},
                       "accessModes": spec.get("accessModes",
                                               ["ReadWriteOnce"]),
                       "persistentVolumeReclaimPolicy": "Delete",
                       "storageClassName": cls["metadata"]["name"],
                       "claimRef": {"kind": "PersistentVolumeClaim",
                                    "apiVersion": "v1",
                                    "namespace": md["namespace"],
                                    "name": md["name"], "uid": md["uid"]},
                       "csi": {"driver": cls["provisioner"],
                               "volumeHandle": md["uid"]},
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [
                           {"matchExpressions": [
                               {"key": "kubernetes.io/hostname",
                                "operator": "In", "values": [node]}]}]}}}}
        st, doc = self.api.call("POST", "/api/v1/persistentvolumes", pv)
        if st in (200, 201, 409):
            self.made[key] = node
        else:
            self.errors.append("POST pv for %s: %d %s" % (key, st, doc))

