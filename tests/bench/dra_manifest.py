#!/usr/bin/env python3
"""A DynamicResources workload for `ksched schedule`: NODES nodes with
DEVICES GPUs each (one ResourceSlice per node), a DeviceClass with a CEL
selector, and PODS pods with one claim each made from a
ResourceClaimTemplate (as the resourceclaim controller makes them: the
pod as controller owner, the pod's status.resourceClaimStatuses).

Usage: dra_manifest.py NODES DEVICES PODS > cluster.json
then:  ksched schedule -f cluster.json -c config.yaml -o json
with DynamicResources in the profile (it is in the default one).
"""
import json
import sys

DRV = "gpu.example.com"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    nodes, devices, pods = (int(a) for a in sys.argv[1:])
    items = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": DRV, "uid": "class-gpu",
                           "resourceVersion": "1"},
              "spec": {"selectors": [{"cel": {
                  "expression": 'device.driver == "%s"' % DRV}}]}},
             {"apiVersion": "resource.k8s.io/v1",
              "kind": "ResourceClaimTemplate",
              "metadata": {"name": "one-gpu", "namespace": "default",
                           "uid": "tmpl-one-gpu"},
              "spec": {"spec": {"devices": {"requests": [
                  {"name": "gpu", "exactly": {"deviceClassName": DRV}}]}}}}]
    for n in range(nodes):
        name = "node-%04d" % n
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {
                          "kubernetes.io/hostname": name}},
                      "status": {"allocatable": {"cpu": "64",
                                                 "memory": "512Gi",
                                                 "pods": "110"}}})
        items.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name + "-" + DRV, "uid": "slice-" + name,
                         "resourceVersion": "1"},
            "spec": {"driver": DRV, "nodeName": name,
                     "pool": {"name": name, "generation": 1,
                              "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-%d" % d, "attributes": {
                         "model": {"string": "a100"},
                         "index": {"int": d}},
                         "capacity": {"memory": {"value": "80Gi"}}}
                         for d in range(devices)]}})
    for p in range(pods):
        name = "pod-%05d" % p
        uid = "uid-" + name
        claim = name + "-gpu"
        items.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim, "namespace": "default",
                         "uid": "claim-" + name, "resourceVersion": "1",
                         "ownerReferences": [{
                             "apiVersion": "v1", "kind": "Pod", "name": name,
                             "uid": uid, "controller": True}]},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": DRV}}]}}})
        items.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"containers": [{"name": "c", "image": "cuda",
                                     "resources": {"requests": {
                                         "cpu": "100m"}}}],
                     "resourceClaims": [{"name": "gpu",
                                         "resourceClaimTemplateName":
                                         "one-gpu"}]},
            "status": {"resourceClaimStatuses": [
                {"name": "gpu", "resourceClaimName": claim}]}})
    json.dump({"apiVersion": "v1", "kind": "List", "items": items},
              sys.stdout)


if __name__ == "__main__":
    main()
