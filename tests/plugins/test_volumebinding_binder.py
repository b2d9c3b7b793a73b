"""The volume binder's core cases (volumebinding/binder_test.go: FindPodVolumes, AssumePodVolumes,
RevertAssumedPodVolumes, BindPodVolumes) and the plugin's Reserve/Unreserve/PreBind on an embedded
cluster with the emulated PV controller and provisioner (embedded/pv_provisioner.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.plugins.volumebinding_util import (
    NODE_LABEL_KEY,
    bind_pv_to,
    make_capacity,
    make_csi_driver,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
)
from wasmsched.api.storage import ANN_SELECTED_NODE
from wasmsched.api.types import CSINode, Pod
from wasmsched.config.args import VolumeBindingArgs
from wasmsched.embedded.memory import MemoryCluster
from wasmsched.embedded.pv_provisioner import attach_volume_controllers
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, is_success
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.volumebinding import VolumeBinding
from wasmsched.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    PodVolumes,
    VolumeBinder,
)
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

WAIT = "WaitForFirstConsumer"
WAIT_CLASS = make_sc("waitClass", WAIT)
IMMEDIATE_CLASS = make_sc("immediateClass", "Immediate")
PROV_CLASS = make_sc("waitClassWithProvisioner", WAIT, provisioner="test-provisioner")
TOPO_MISMATCH_CLASS = make_sc("topoMismatchClass", WAIT, provisioner="test-provisioner",
                              allowed={NODE_LABEL_KEY: ["node-x"]})
NODE1 = make_node("node1", **{NODE_LABEL_KEY: "node1"})
NODE2 = make_node("node2", **{NODE_LABEL_KEY: "node2"})
CLASSES = [WAIT_CLASS, IMMEDIATE_CLASS, PROV_CLASS, TOPO_MISMATCH_CLASS]


def _pvc(name: str, size: str, cls: str | None, *, bound_pv: str = "", uid: str = "pvc-uid",
         rv: str = "1") -> Any:
    pvc = make_pvc(name, cls, bound_pv=bound_pv, request=size, namespace="testns")
    pvc.metadata.uid = uid
    pvc.metadata.resourceVersion = rv
    pvc.spec.volumeMode = "Filesystem"
    return pvc


def _pv(name: str, node: str, capacity: str, cls: str, bound_to: Any = None, rv: str = "1") -> Any:
    pv = make_pv(name, cls, phase="Available", capacity=capacity,
                 node_affinity={NODE_LABEL_KEY: [node]} if node else None, version=rv)
    pv.spec.volumeMode = "Filesystem"
    if bound_to is not None:
        bind_pv_to(pv, bound_to)
    return pv


def _binder(*objects: Any) -> VolumeBinder:
    return VolumeBinder(RecordingClient(objects=[*CLASSES, NODE1, NODE2, *objects]), 300.0)


def _find(binder: VolumeBinder, pod: Pod, node: Any) -> tuple[PodVolumes, list[str]]:
    claims = binder.get_pod_volume_claims(pod)
    assert claims.unbound_claims_immediate == []
    return binder.find_pod_volumes(pod, claims, node)


UNBOUND = _pvc("unbound-pvc", "1G", "waitClass")
UNBOUND2 = _pvc("unbound-pvc2", "5G", "waitClass", uid="pvc-uid2")
BOUND = _pvc("bound-pvc", "1G", "waitClass", bound_pv="pv-bound")
PROVISIONED = _pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner")


@pytest.mark.parametrize(("name", "pvcs", "pvs", "want_bindings", "want_reasons"), [
    ("no-volumes", [], [], None, []),
    ("unbound-pvc,pv-same-node", [UNBOUND], [_pv("pv-node2a", "node2", "5G", "waitClass"),
                                             _pv("pv-node1a", "node1", "5G", "waitClass"),
                                             _pv("pv-node1b", "node1", "10G", "waitClass")],
     [("unbound-pvc", "pv-node1a")], []),
    ("unbound-pvc,pv-different-node", [UNBOUND], [_pv("pv-node2a", "node2", "5G", "waitClass")], None,
     [ERR_REASON_BIND_CONFLICT]),
    ("two-unbound-pvcs", [UNBOUND, UNBOUND2], [_pv("pv-node1a", "node1", "5G", "waitClass"),
                                               _pv("pv-node1b", "node1", "10G", "waitClass")],
     [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], []),
    ("unbound-pvc,pv-bound-to-other", [UNBOUND],
     [_pv("pv-node1a", "node1", "5G", "waitClass", bound_to=_pvc("other", "1G", "waitClass", uid="other"))],
     None, [ERR_REASON_BIND_CONFLICT]),
    ("one-bound,one-unbound", [UNBOUND, BOUND], [_pv("pv-bound", "node1", "1G", "waitClass", bound_to=BOUND),
                                                 _pv("pv-node1a", "node1", "5G", "waitClass")],
     [("unbound-pvc", "pv-node1a")], []),
    ("one-bound,one-unbound,no-match", [UNBOUND, BOUND],
     [_pv("pv-bound", "node1", "1G", "waitClass", bound_to=BOUND), _pv("pv-node2a", "node2", "5G", "waitClass")],
     None, [ERR_REASON_BIND_CONFLICT]),
    ("one-prebound,one-unbound", [UNBOUND, BOUND],
     [_pv("pv-bound", "node2", "1G", "waitClass", bound_to=BOUND), _pv("pv-node1a", "node1", "5G", "waitClass")],
     [("unbound-pvc", "pv-node1a")], [ERR_REASON_NODE_CONFLICT]),
])
def test_find_pod_volumes_without_provisioning(name: str, pvcs: list[Any], pvs: list[Any],
                                               want_bindings: list[tuple[str, str]] | None,
                                               want_reasons: list[str]) -> None:
    binder = _binder(*pvcs, *pvs)
    pod = make_pod("test-pod", *(p.metadata.name for p in pvcs), namespace="testns")
    volumes, reasons = _find(binder, pod, NODE1)
    assert reasons == want_reasons
    got = None if volumes.static_bindings is None else [
        (b.pvc.metadata.name, b.pv.metadata.name) for b in volumes.static_bindings]
    if want_reasons and want_bindings is None:
        return
    assert got == want_bindings


@pytest.mark.parametrize(("name", "pvcs", "objects", "want_provisions", "want_reasons"), [
    ("one-provisioned", [PROVISIONED], [], ["provisioned-pvc"], []),
    ("provisioning-pvc-with-topology-mismatch", [_pvc("pvc-topomismatch", "1Gi", "topoMismatchClass")], [],
     None, [ERR_REASON_BIND_CONFLICT]),
    ("network-attached-capacity", [PROVISIONED],
     [make_csi_driver("test-provisioner", True), make_capacity("net", "waitClassWithProvisioner", None, "1Gi")],
     ["provisioned-pvc"], []),
    ("local-storage-capacity-node1", [PROVISIONED],
     [make_csi_driver("test-provisioner", True), make_capacity("net", "waitClassWithProvisioner", NODE1, "1Gi")],
     ["provisioned-pvc"], []),
    ("local-storage-capacity-node2", [PROVISIONED],
     [make_csi_driver("test-provisioner", True), make_capacity("net", "waitClassWithProvisioner", NODE2, "1Gi")],
     None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("insufficient-storage", [PROVISIONED],
     [make_csi_driver("test-provisioner", True), make_capacity("net", "waitClassWithProvisioner", None, "1Mi")],
     None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("maximum-volume-size-wins", [PROVISIONED],
     [make_csi_driver("test-provisioner", True),
      make_capacity("net", "waitClassWithProvisioner", None, "2Gi", "1Mi")], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("driver-without-capacity-tracking", [PROVISIONED],
     [make_csi_driver("test-provisioner", False), make_capacity("net", "waitClassWithProvisioner", None, "1Mi")],
     ["provisioned-pvc"], []),
])
def test_find_pod_volumes_with_provisioning(name: str, pvcs: list[Any], objects: list[Any],
                                            want_provisions: list[str] | None, want_reasons: list[str]) -> None:
    binder = _binder(*pvcs, *objects)
    pod = make_pod("test-pod", *(p.metadata.name for p in pvcs), namespace="testns")
    volumes, reasons = _find(binder, pod, NODE1)
    assert reasons == want_reasons
    if not reasons:
        got = None if volumes.dynamic_provisions is None else [
            p.pvc.metadata.name for p in volumes.dynamic_provisions]
        assert got == want_provisions


def test_selected_node_fast_path() -> None:
    pvc = _pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner")
    pvc.metadata.annotations[ANN_SELECTED_NODE] = "node2"
    binder = _binder(pvc)
    pod = make_pod("test-pod", "provisioned-pvc", namespace="testns")
    assert _find(binder, pod, NODE1)[1] == [ERR_REASON_BIND_CONFLICT]
    volumes, reasons = _find(binder, pod, NODE2)
    assert reasons == [] and volumes.dynamic_provisions is not None


@pytest.mark.parametrize(("cls", "want"), [
    ("", 'no class for claim "testns/no-class"'),
    ("missing-class", 'failed to find storage class "missing-class"'),
])
def test_provisioning_errors(cls: str, want: str) -> None:
    pvc = _pvc("no-class", "1Gi", cls)
    binder = _binder(pvc)
    pod = make_pod("test-pod", "no-class", namespace="testns")
    claims = binder.get_pod_volume_claims(pod)
    # A claim without a (known) class is not delay-binding: it is an unbound immediate claim.
    assert [c.metadata.name for c in claims.unbound_claims_immediate] == ["no-class"]
    claims.unbound_claims_delay_binding, claims.unbound_claims_immediate = claims.unbound_claims_immediate, []
    with pytest.raises(RuntimeError, match=want):
        binder.find_pod_volumes(pod, claims, NODE1)


def test_volume_binding_mode_not_set() -> None:
    cls = make_sc("no-mode", None)
    pvc = _pvc("pvc", "1Gi", "no-mode")
    binder = _binder(cls, pvc)
    with pytest.raises(RuntimeError, match='VolumeBindingMode not set for StorageClass "no-mode"'):
        binder.get_pod_volume_claims(make_pod("test-pod", "pvc", namespace="testns"))


def test_assume_and_revert_pod_volumes() -> None:
    pv = _pv("pv-node1a", "node1", "5G", "waitClass")
    binder = _binder(UNBOUND, PROVISIONED, pv)
    pod = make_pod("test-pod", "unbound-pvc", "provisioned-pvc", namespace="testns", node="node1")
    volumes, reasons = _find(binder, pod, NODE1)
    assert reasons == []
    assert binder.assume_pod_volumes(pod, "node1", volumes) is False
    assumed_pv = binder.pv_cache.get("pv-node1a")
    assert assumed_pv.spec.claimRef.name == "unbound-pvc" and assumed_pv.spec.claimRef.uid == "pvc-uid"
    assert assumed_pv.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert binder.pvc_cache.get("testns/provisioned-pvc").metadata.annotations[ANN_SELECTED_NODE] == "node1"
    # The API objects are untouched.
    assert not binder.pv_cache.get_api_obj("pv-node1a").spec.HasField("claimRef")
    # The assumed PV is not offered to another claim in the next cycle.
    other = _pvc("other", "1G", "waitClass", uid="other-uid")
    binder.client.objects.append(other)  # type: ignore[attr-defined]
    _, reasons = _find(binder, make_pod("other-pod", "other", namespace="testns"), NODE1)
    assert reasons == [ERR_REASON_BIND_CONFLICT]
    binder.revert_assumed_pod_volumes(volumes)
    assert not binder.pv_cache.get("pv-node1a").spec.HasField("claimRef")
    assert ANN_SELECTED_NODE not in binder.pvc_cache.get("testns/provisioned-pvc").metadata.annotations


def test_assume_all_bound() -> None:
    pv = _pv("pv-bound", "node1", "1G", "waitClass", bound_to=BOUND)
    binder = _binder(BOUND, pv)
    pod = make_pod("test-pod", "bound-pvc", namespace="testns")
    volumes, _ = _find(binder, pod, NODE1)
    assert binder.assume_pod_volumes(pod, "node1", volumes) is True


def test_assume_out_of_sync() -> None:
    pv = _pv("pv-node1a", "node1", "5G", "waitClass", rv="1")
    binder = _binder(UNBOUND, pv)
    pod = make_pod("test-pod", "unbound-pvc", namespace="testns")
    volumes, _ = _find(binder, pod, NODE1)
    newer = _pv("pv-node1a", "node1", "5G", "waitClass", rv="2")
    binder.client.update_object(newer)
    with pytest.raises(RuntimeError, match=r'"pv-node1a" is out of sync \(stored: 2, assume: 1\)'):
        binder.assume_pod_volumes(pod, "node1", volumes)


def test_bind_without_assume_fails() -> None:
    binder = _binder()
    with pytest.raises(RuntimeError, match='failed to get cached bindings for pod "testns/test-pod"'):
        binder.bind_pod_volumes(make_pod("test-pod", namespace="testns"), PodVolumes())


# ----- the whole plugin on an embedded cluster ----------------------------------------------------------


def _get(cluster: MemoryCluster, kind: str, key: str) -> Any:
    obj = cluster.get(kind, key)
    assert obj is not None, (kind, key)
    return obj


def _cluster(*objects: Any, controllers: bool = True, provision: bool = True) -> MemoryCluster:
    c = MemoryCluster()
    for o in [*CLASSES, NODE1, NODE2, *objects]:
        c.create(o)
    if controllers:
        attach_volume_controllers(c, provision)
    return c


def _schedule(cluster: MemoryCluster, pod: Pod, node: str, bind_timeout: int = 600,
              node_obj: Any = None) -> tuple[VolumeBinding, Any]:
    """PreFilter, Filter on every node, Reserve and PreBind on `node`; returns the PreBind status."""
    cluster.create(pod)
    handle = FakeHandle(nodes=[NODE1, NODE2], client=cluster)  # type: ignore[arg-type]
    pl = VolumeBinding(VolumeBindingArgs(bind_timeout, []), handle, enable_storage_capacity_scoring=False)
    clock = [0.0]
    pl.binder._monotonic = lambda: clock[0]
    pl.binder._sleep = lambda s: clock.__setitem__(0, clock[0] + s)
    state = CycleState()
    _, st = pl.pre_filter(state, pod, [])
    assert is_success(st), st
    ni = NodeInfo(node_obj or (NODE1 if node == "node1" else NODE2))
    assert pl.filter(state, pod, ni) is None
    assumed = Pod()
    assumed.CopyFrom(pod)
    assumed.spec.nodeName = node
    assert pl.reserve(state, assumed, node) is None
    return pl, pl.pre_bind(state, assumed, node)


def test_pre_bind_static_binding_with_pv_controller() -> None:
    pvc = _pvc("unbound-pvc", "1G", "waitClass")
    cluster = _cluster(pvc, _pv("pv-node1a", "node1", "5G", "waitClass"))
    _, st = _schedule(cluster, make_pod("test-pod", "unbound-pvc", namespace="testns"), "node1")
    assert st is None
    pv = _get(cluster, "PersistentVolume", "pv-node1a")
    got = _get(cluster, "PersistentVolumeClaim", "testns/unbound-pvc")
    assert pv.spec.claimRef.name == "unbound-pvc" and pv.status.phase == "Bound"
    assert got.spec.volumeName == "pv-node1a" and got.status.phase == "Bound"
    assert got.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert got.status.capacity["storage"].string == "5G"


def test_pre_bind_dynamic_provisioning_with_provisioner() -> None:
    zonal = make_sc("zonal", WAIT, provisioner="csi.example.com", allowed={"zone": ["a", "b"]})
    node = make_node("node1", **{NODE_LABEL_KEY: "node1", "zone": "a", "rack": "r1"})
    csinode = CSINode()
    csinode.metadata.name = "node1"
    d = csinode.spec.drivers.add()
    d.name, d.nodeID = "csi.example.com", "node1"
    d.topologyKeys.append("rack")
    pvc = _pvc("dyn", "2Gi", "zonal")
    pvc.spec.accessModes.append("ReadWriteOnce")
    cluster = MemoryCluster()
    for o in [zonal, node, NODE2, csinode, pvc]:
        cluster.create(o)
    attach_volume_controllers(cluster, True)
    _, st = _schedule(cluster, make_pod("test-pod", "dyn", namespace="testns"), "node1", node_obj=node)
    assert st is None
    got = _get(cluster, "PersistentVolumeClaim", "testns/dyn")
    assert got.metadata.annotations[ANN_SELECTED_NODE] == "node1"
    assert got.spec.volumeName == "pvc-pvc-uid" and got.status.phase == "Bound"
    pv = _get(cluster, "PersistentVolume", "pvc-pvc-uid")
    assert pv.status.phase == "Bound" and pv.spec.claimRef.uid == "pvc-uid"
    assert pv.metadata.annotations["pv.kubernetes.io/provisioned-by"] == "csi.example.com"
    assert pv.spec.capacity["storage"].string == "2Gi" and list(pv.spec.accessModes) == ["ReadWriteOnce"]
    term = pv.spec.nodeAffinity.required.nodeSelectorTerms[0]
    assert [(r.key, r.operator, list(r.values)) for r in term.matchExpressions] == [
        ("zone", "In", ["a"]), ("rack", "In", ["r1"])]


def test_provisioner_ignores_unserved_and_unselected_claims() -> None:
    pvc = _pvc("dyn", "2Gi", "waitClassWithProvisioner")
    cluster = _cluster(pvc)
    assert cluster.list("PersistentVolume") == []  # no selected node yet
    other = MemoryCluster()
    for o in [*CLASSES, NODE1, pvc]:
        other.create(o)
    attach_volume_controllers(other, True, provisioners=["someone-else"])
    cur = _get(other, "PersistentVolumeClaim", "testns/dyn")
    cur.metadata.annotations[ANN_SELECTED_NODE] = "node1"
    other.update(cur)
    assert other.list("PersistentVolume") == []


def test_pv_controller_binds_immediate_claims_and_prebound_claims() -> None:
    imm = _pvc("imm", "1G", "immediateClass")
    pv = _pv("pv-imm", "", "2G", "immediateClass")
    pre = _pvc("pre", "1G", "waitClass", uid="pre-uid")
    pre.spec.volumeName = "pv-pre"
    pv_pre = _pv("pv-pre", "", "1G", "waitClass")
    cluster = _cluster(imm, pv, pre, pv_pre, provision=False)
    assert _get(cluster, "PersistentVolumeClaim", "testns/imm").spec.volumeName == "pv-imm"
    assert _get(cluster, "PersistentVolume", "pv-imm").status.phase == "Bound"
    got = _get(cluster, "PersistentVolumeClaim", "testns/pre")
    assert got.status.phase == "Bound" and "pv.kubernetes.io/bind-completed" in got.metadata.annotations
    assert _get(cluster, "PersistentVolume", "pv-pre").spec.claimRef.uid == "pre-uid"


def test_watchers_see_changes_in_order() -> None:
    cluster = MemoryCluster()
    attach_volume_controllers(cluster, True)
    seen: list[tuple[str, str]] = []
    cluster.watch("PersistentVolumeClaim", on_add=lambda o: seen.append(("add", o.metadata.resourceVersion)),
                  on_update=lambda old, new: seen.append((old.metadata.resourceVersion, new.metadata.resourceVersion)))
    for o in [*CLASSES, NODE1]:
        cluster.create(o)
    pvc = _pvc("dyn", "2Gi", "waitClassWithProvisioner")
    pvc.metadata.annotations[ANN_SELECTED_NODE] = "node1"
    cluster.create(pvc)
    assert _get(cluster, "PersistentVolumeClaim", "testns/dyn").status.phase == "Bound"
    # Each update's old version is the previous event's new one.
    for prev, cur in itertools.pairwise(seen):
        assert cur[0] == prev[1]


def test_pre_bind_times_out_without_controllers() -> None:
    cluster = _cluster(_pvc("unbound-pvc", "1G", "waitClass"), _pv("pv-node1a", "node1", "5G", "waitClass"),
                       controllers=False)
    _, st = _schedule(cluster, make_pod("test-pod", "unbound-pvc", namespace="testns"), "node1", bind_timeout=3)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ["binding volumes: context deadline exceeded"]
    # The pre-binding was written nonetheless (there is no API rollback).
    assert _get(cluster, "PersistentVolume", "pv-node1a").spec.claimRef.name == "unbound-pvc"


def test_pre_bind_provisioning_failed() -> None:
    """The provisioner signals failure by removing the selected-node annotation."""
    cluster = _cluster(_pvc("dyn", "1Gi", "waitClassWithProvisioner"), controllers=False)

    def fail(old: Any, new: Any) -> None:
        if ANN_SELECTED_NODE in new.metadata.annotations:
            pending.append(new)

    pending: list[Any] = []
    cluster.watch("PersistentVolumeClaim", on_update=fail)

    def drain() -> None:
        while pending:
            cur = _get(cluster, "PersistentVolumeClaim", object_key_of(pending.pop()))
            del cur.metadata.annotations[ANN_SELECTED_NODE]
            cur.metadata.annotations["other"] = "x"
            cluster.update(cur)

    cluster.add_after_write_hook(drain)
    _, st = _schedule(cluster, make_pod("test-pod", "dyn", namespace="testns"), "node1")
    assert st is not None and st.reasons == ['binding volumes: provisioning failed for PVC "dyn"']


def object_key_of(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def test_unreserve_reverts_assumed_volumes() -> None:
    cluster = _cluster(_pvc("unbound-pvc", "1G", "waitClass"), _pv("pv-node1a", "node1", "5G", "waitClass"),
                       controllers=False)
    pod = make_pod("test-pod", "unbound-pvc", namespace="testns")
    cluster.create(pod)
    handle = FakeHandle(nodes=[NODE1, NODE2], client=cluster)  # type: ignore[arg-type]
    pl = VolumeBinding(VolumeBindingArgs(), handle)
    state = CycleState()
    pl.pre_filter(state, pod, [])
    assert pl.filter(state, pod, NodeInfo(NODE1)) is None
    assert pl.reserve(state, pod, "node1") is None
    assert pl.binder.pv_cache.get("pv-node1a").spec.claimRef.name == "unbound-pvc"
    pl.unreserve(state, pod, "node1")
    assert not pl.binder.pv_cache.get("pv-node1a").spec.HasField("claimRef")
    pl.unreserve(state, pod, "node1")  # idempotent
