"""Object builders of volumebinding/test_utils.go and binder_test.go, for the VolumeBinding tests."""

from __future__ import annotations

from wasmsched.api.storage import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER
from wasmsched.api.types import (
    CSIDriver,
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)

HOSTNAME = "kubernetes.io/hostname"
NODE_LABEL_KEY = "nodeKey"


def make_node(name: str, **labels: str) -> Node:
    n = Node()
    n.metadata.name = name
    n.metadata.labels[HOSTNAME] = name
    n.metadata.labels.update(labels)
    return n


def with_label(node: Node, key: str, value: str) -> Node:
    node.metadata.labels[key] = value
    return node


def make_sc(name: str, mode: str | None, provisioner: str = "",
            allowed: dict[str, list[str]] | None = None) -> StorageClass:
    sc = StorageClass(provisioner=provisioner)
    sc.metadata.name = name
    if mode is not None:
        sc.volumeBindingMode = mode
    if allowed:
        term = sc.allowedTopologies.add()
        for k, vs in allowed.items():
            e = term.matchLabelExpressions.add()
            e.key = k
            e.values.extend(vs)
    return sc


def make_pv(name: str, class_name: str, *, phase: str = "", capacity: str = "",
            node_affinity: dict[str, list[str]] | None = None, version: str = "") -> PersistentVolume:
    pv = PersistentVolume()
    pv.metadata.name = name
    pv.metadata.resourceVersion = version
    pv.spec.storageClassName = class_name
    if capacity:
        pv.spec.capacity["storage"].string = capacity
    if phase:
        pv.status.phase = phase
    if node_affinity is not None:
        term = pv.spec.nodeAffinity.required.nodeSelectorTerms.add()
        for k, vs in node_affinity.items():
            r = term.matchExpressions.add()
            r.key, r.operator = k, "In"
            r.values.extend(vs)
    return pv


def make_pvc(name: str, class_name: str | None, *, bound_pv: str = "", request: str = "", phase: str = "",
             namespace: str = "default") -> PersistentVolumeClaim:
    pvc = PersistentVolumeClaim()
    pvc.metadata.name = name
    pvc.metadata.namespace = namespace
    if class_name is not None:
        pvc.spec.storageClassName = class_name
    if bound_pv:
        pvc.spec.volumeName = bound_pv
        pvc.metadata.annotations[ANN_BIND_COMPLETED] = "true"
    if request:
        pvc.spec.resources.requests["storage"].string = request
    if phase:
        pvc.status.phase = phase
    return pvc


def bind_pv_to(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """makeTestPV's boundToPVC: claimRef to the claim, bound-by-controller."""
    ref = pv.spec.claimRef
    ref.kind, ref.apiVersion = "PersistentVolumeClaim", "v1"
    ref.name, ref.namespace, ref.uid = pvc.metadata.name, pvc.metadata.namespace, pvc.metadata.uid
    ref.resourceVersion = pvc.metadata.resourceVersion
    pv.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    return pv


def make_pod(name: str, *pvcs: str, namespace: str = "default", node: str = "", uid: str = "") -> Pod:
    pod = Pod()
    pod.metadata.name = name
    pod.metadata.namespace = namespace
    pod.metadata.uid = uid
    pod.spec.nodeName = node
    for claim in pvcs:
        v = pod.spec.volumes.add()
        v.volumeSource.persistentVolumeClaim.claimName = claim
    return pod


def make_csi_driver(name: str, storage_capacity: bool) -> CSIDriver:
    d = CSIDriver()
    d.metadata.name = name
    d.spec.storageCapacity = storage_capacity
    return d


def make_capacity(name: str, class_name: str, node: Node | None, capacity: str,
                  maximum_volume_size: str = "") -> CSIStorageCapacity:
    c = CSIStorageCapacity(storageClassName=class_name)
    c.metadata.name = name
    c.nodeTopology.SetInParent()
    if node is not None:
        c.nodeTopology.matchLabels[NODE_LABEL_KEY] = node.metadata.labels.get(NODE_LABEL_KEY, "")
    if capacity:
        c.capacity.string = capacity
    if maximum_volume_size:
        c.maximumVolumeSize.string = maximum_volume_size
    return c
