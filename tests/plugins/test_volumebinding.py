"""VolumeBinding's table tests (volumebinding/volume_binding_test.go): PreFilter, Filter, PreScore and
Score against the objects the client serves, and the queueing hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.plugins.volumebinding_util import (
    HOSTNAME,
    NODE_LABEL_KEY,
    make_capacity,
    make_csi_driver,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_sc,
)
from wasmsched.api.storage import MIGRATED_PLUGINS_ANNOTATION_KEY
from wasmsched.api.types import CSIDriver, CSINode, CSIStorageCapacity, Node, StorageClass
from wasmsched.config.args import UtilizationShapePoint, VolumeBindingArgs, default_volume_binding_shape
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status, is_success
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.volumebinding import STATE_KEY, StateData, VolumeBinding
from wasmsched.plugins.volumebinding.binder import PodVolumes
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

WAIT = "WaitForFirstConsumer"
IMMEDIATE_SC = make_sc("immediate-sc", "Immediate")
WAIT_SC = make_sc("wait-sc", WAIT)
WAIT_HDD_SC = make_sc("wait-hdd-sc", WAIT)
WAIT_SC_CAP = make_sc("wait-sc-with-storage-capacity", WAIT, provisioner="driver-with-storage-capacity")
DRIVER_WITH_CAPACITY = make_csi_driver("driver-with-storage-capacity", True)

BIND = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REGION, ZONE = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons))


@dataclass
class Case:
    name: str
    pod: Any
    nodes: list[Node]
    pvcs: list[Any] = field(default_factory=list)
    pvs: list[Any] = field(default_factory=list)
    capacities: list[Any] = field(default_factory=list)
    scoring: bool = False
    args: VolumeBindingArgs | None = None
    want_pre_filter_status: Status | None = None
    # (bound claim names, unbound delay-binding claim names, {class: PV names})
    want_state: tuple[list[str], list[str], dict[str, list[str]]] | None = None
    want_filter: list[Status | None] = field(default_factory=list)
    want_pre_score_status: Status | None = None
    want_scores: list[int] = field(default_factory=list)


def _local_pvs(sc: str, sizes: dict[str, str]) -> list[Any]:
    return [make_pv(name, sc, phase="Available", capacity=size,
                    node_affinity={HOSTNAME: [f"node-{name.split('-')[1]}"]}) for name, size in sizes.items()]


def _zonal_pvs() -> list[Any]:
    return [make_pv(name, WAIT_SC.metadata.name, phase="Available", capacity=size,
                    node_affinity={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]})
            for name, size, z in (("pv-a-0", "200Gi", "a"), ("pv-a-1", "200Gi", "a"),
                                  ("pv-b-0", "100Gi", "b"), ("pv-b-1", "100Gi", "b"))]


def _zonal_nodes() -> list[Node]:
    return [make_node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"})
            for z in "abc" for n in "ab"]


def _cap_nodes() -> list[Node]:
    return [make_node(f"node-{x}", **{NODE_LABEL_KEY: f"node-{x}"}) for x in "abc"]


def _caps(*sizes: str) -> list[Any]:
    return [make_capacity(n.metadata.name, WAIT_SC_CAP.metadata.name, n, size)
            for n, size in zip(_cap_nodes(), sizes, strict=False)]


LOCAL_PVS = {"pv-a-0": "200Gi", "pv-a-1": "200Gi", "pv-b-0": "100Gi", "pv-b-1": "100Gi"}
ZONAL_FILTER = [None, None, None, None, unresolvable(BIND), unresolvable(BIND)]
WantState = tuple[list[str], list[str], dict[str, list[str]]]
ZONAL_STATE: WantState = ([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]})

CASES = [
    Case("pod has not pvcs", make_pod("pod-a"), [make_node("node-a")],
         want_pre_filter_status=Status.skip(), want_filter=[None], want_pre_score_status=Status.skip()),
    Case("all bound", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], pvs=[make_pv("pv-a", "wait-sc", phase="Available")],
         want_state=(["pvc-a"], [], {}), want_filter=[None], want_pre_score_status=Status.skip()),
    Case("PVC does not exist", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         want_pre_filter_status=unresolvable('persistentvolumeclaim "pvc-a" not found')),
    Case("Part of PVCs do not exist", make_pod("pod-a", "pvc-a", "pvc-b"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
         want_pre_filter_status=unresolvable('persistentvolumeclaim "pvc-b" not found')),
    Case("immediate claims not bound", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "immediate-sc")],
         want_pre_filter_status=unresolvable("pod has unbound immediate PersistentVolumeClaims")),
    Case("unbound claims no matches", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc")], want_state=([], ["pvc-a"], {"wait-sc": []}),
         want_filter=[unresolvable(BIND)], want_pre_score_status=Status.skip()),
    Case("bound and unbound unsatisfied", make_pod("pod-a", "pvc-a", "pvc-b"), [make_node("node-a", foo="barbar")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
         pvs=[make_pv("pv-a", "wait-sc", phase="Available", node_affinity={"foo": ["bar"]})],
         want_state=(["pvc-a"], ["pvc-b"], {"wait-sc": ["pv-a"]}),
         want_filter=[unresolvable(NODE_CONFLICT, BIND)], want_pre_score_status=Status.skip()),
    Case("pv not found", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], want_state=(["pvc-a"], [], {}),
         want_filter=[unresolvable("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")],
         want_pre_score_status=Status.skip()),
    Case("pv not found claim lost", make_pod("pod-a", "pvc-a"), [make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")],
         want_pre_filter_status=unresolvable(
             'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"')),
    Case("local volumes with close capacity are preferred", make_pod("pod-a", "pvc-a"),
         [make_node("node-a"), make_node("node-b"), make_node("node-c")],
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=_local_pvs("wait-sc", LOCAL_PVS), scoring=True,
         want_state=([], ["pvc-a"], {"wait-sc": list(LOCAL_PVS)}),
         want_filter=[None, None, unresolvable(BIND)], want_scores=[75, 50, 0]),
    Case("local volumes with close capacity are preferred (StorageCapacityScoring disabled)",
         make_pod("pod-a", "pvc-a"), [make_node("node-a"), make_node("node-b"), make_node("node-c")],
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=_local_pvs("wait-sc", LOCAL_PVS), scoring=False,
         want_state=([], ["pvc-a"], {"wait-sc": list(LOCAL_PVS)}),
         want_filter=[None, None, unresolvable(BIND)], want_pre_score_status=Status.skip()),
    Case("local volumes with close capacity are preferred (multiple pvcs)", make_pod("pod-a", "pvc-0", "pvc-1"),
         [make_node("node-a"), make_node("node-b"), make_node("node-c")],
         pvcs=[make_pvc("pvc-0", "wait-sc", request="50Gi"), make_pvc("pvc-1", "wait-hdd-sc", request="100Gi")],
         pvs=_local_pvs("wait-sc", LOCAL_PVS) + _local_pvs(
             "wait-hdd-sc", {"pv-a-2": "200Gi", "pv-a-3": "200Gi", "pv-b-2": "100Gi", "pv-b-3": "100Gi"}),
         scoring=True,
         want_state=([], ["pvc-0", "pvc-1"], {"wait-sc": list(LOCAL_PVS),
                                              "wait-hdd-sc": ["pv-a-2", "pv-a-3", "pv-b-2", "pv-b-3"]}),
         want_filter=[None, None, unresolvable(BIND)], want_scores=[63, 25, 0]),
    Case("zonal volumes with close capacity are preferred", make_pod("pod-a", "pvc-a"), _zonal_nodes(),
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=_zonal_pvs(), scoring=True,
         want_state=ZONAL_STATE, want_filter=ZONAL_FILTER, want_scores=[75, 75, 50, 50, 0, 0]),
    Case("zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)",
         make_pod("pod-a", "pvc-a"), _zonal_nodes(),
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=_zonal_pvs(), scoring=False,
         want_state=ZONAL_STATE, want_filter=ZONAL_FILTER, want_pre_score_status=Status.skip()),
    Case("zonal volumes with close capacity are preferred (custom shape)", make_pod("pod-a", "pvc-a"),
         _zonal_nodes(), pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=_zonal_pvs(), scoring=True,
         args=VolumeBindingArgs(300, [UtilizationShapePoint(0, 0), UtilizationShapePoint(50, 3),
                                      UtilizationShapePoint(100, 5)]),
         want_state=ZONAL_STATE, want_filter=ZONAL_FILTER, want_scores=[15, 15, 30, 30, 0, 0]),
    Case("storage capacity score", make_pod("pod-a", "pvc-dynamic"), _cap_nodes(),
         pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name, request="10Gi")],
         capacities=_caps("100Gi", "50Gi", "10Gi"), scoring=True,
         want_state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
         want_filter=[None, None, None], want_scores=[90, 80, 0]),
    Case("storage capacity score with static binds", make_pod("pod-a", "pvc-dynamic", "pvc-static"), _cap_nodes(),
         pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name, request="10Gi"),
               make_pvc("pvc-static", "wait-sc", request="50Gi")],
         pvs=[make_pv(f"pv-static-{x}", "wait-sc", phase="Available", capacity="100Gi",
                      node_affinity={HOSTNAME: [f"node-{x}"]}) for x in "abc"],
         capacities=_caps("100Gi", "50Gi", "10Gi"), scoring=True,
         want_state=([], ["pvc-dynamic", "pvc-static"],
                     {"wait-sc": ["pv-static-a", "pv-static-b", "pv-static-c"], WAIT_SC_CAP.metadata.name: []}),
         want_filter=[None, None, None], want_scores=[50, 50, 50]),
    Case("dynamic provisioning with multiple PVCs of the same StorageClass",
         make_pod("pod-a", "pvc-dynamic-0", "pvc-dynamic-1"), _cap_nodes()[:1],
         pvcs=[make_pvc("pvc-dynamic-0", WAIT_SC_CAP.metadata.name, request="50Gi"),
               make_pvc("pvc-dynamic-1", WAIT_SC_CAP.metadata.name, request="50Gi")],
         capacities=_caps("100Gi"), scoring=True,
         want_state=([], ["pvc-dynamic-0", "pvc-dynamic-1"], {WAIT_SC_CAP.metadata.name: []}),
         want_filter=[None], want_scores=[0]),
    Case("prefer node with least allocatable", make_pod("pod-a", "pvc-dynamic"), _cap_nodes(),
         pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name, request="10Gi")],
         capacities=_caps("100Gi", "20Gi", "10Gi"), scoring=True,
         args=VolumeBindingArgs(300, [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]),
         want_state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
         want_filter=[None, None, None], want_scores=[10, 50, 100]),
    Case("prefer node with maximum allocatable", make_pod("pod-a", "pvc-dynamic"), _cap_nodes(),
         pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name, request="10Gi")],
         capacities=_caps("100Gi", "20Gi", "10Gi"), scoring=True,
         args=VolumeBindingArgs(300, default_volume_binding_shape()),
         want_state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
         want_filter=[None, None, None], want_scores=[90, 50, 0]),
]


def _same(got: Status | None, want: Status | None) -> bool:
    if want is None:
        return is_success(got)
    return got is not None and (got.code, got.reasons) == (want.code, want.reasons)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_volume_binding(case: Case) -> None:
    objects: list[Any] = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, WAIT_SC_CAP, DRIVER_WITH_CAPACITY,
                          *case.nodes, *case.pvcs, *case.pvs, *case.capacities]
    handle = FakeHandle(nodes=case.nodes, client=RecordingClient(objects=objects))
    args = case.args or VolumeBindingArgs(300, default_volume_binding_shape() if case.scoring else [])
    assert args.validate(storage_capacity_scoring=case.scoring) == []
    pl = VolumeBinding(args, handle, enable_storage_capacity_scoring=case.scoring)
    node_infos = [NodeInfo(n) for n in case.nodes]
    state = CycleState()

    result, st = pl.pre_filter(state, case.pod, node_infos)
    assert result is None
    assert _same(st, case.want_pre_filter_status), st
    if not is_success(st):
        return

    data = state.read(STATE_KEY)
    assert isinstance(data, StateData) and data.pod_volume_claims is not None
    assert case.want_state is not None
    bound, unbound, volumes = case.want_state
    claims = data.pod_volume_claims
    assert [c.metadata.name for c in claims.bound_claims] == bound
    assert [c.metadata.name for c in claims.unbound_claims_delay_binding] == unbound
    assert claims.unbound_claims_immediate == []
    assert {k: sorted(pv.metadata.name for pv in v) for k, v in claims.unbound_volumes_delay_binding.items()} == {
        k: sorted(v) for k, v in volumes.items()}
    assert data.pod_volumes_by_node == {}

    for ni, want in zip(node_infos, case.want_filter, strict=True):
        assert _same(pl.filter(state, case.pod, ni), want), ni.name

    st = pl.pre_score(state, case.pod, node_infos)
    assert _same(st, case.want_pre_score_status), st
    if not is_success(st):
        return
    scores = []
    for ni in node_infos:
        score, sst = pl.score(state, case.pod, ni)
        assert is_success(sst)
        scores.append(score)
    assert scores == case.want_scores


def test_state_missing_is_an_error() -> None:
    pl = VolumeBinding(VolumeBindingArgs(), FakeHandle())
    st = pl.filter(CycleState(), make_pod("p"), NodeInfo(make_node("n")))
    assert st is not None and st.code == Code.ERROR and st.reasons == ["not found"]


def test_pre_bind_without_volumes_for_the_node() -> None:
    """Test_PreBindPreFlight's cases, as PreBind answers them (kube's PreBindPreFlight is not modelled)."""
    pl = VolumeBinding(VolumeBindingArgs(), FakeHandle())
    state = CycleState()
    st = pl.pre_bind(state, make_pod("p"), "node-a")
    assert st is not None and st.code == Code.ERROR and st.reasons == ["not found"]
    state.write(STATE_KEY, StateData(all_bound=True))
    assert pl.pre_bind(state, make_pod("p"), "node-a") is None
    state.write(STATE_KEY, StateData(pod_volumes_by_node={"node-b": PodVolumes()}))
    st = pl.pre_bind(state, make_pod("p"), "node-a")
    assert st is not None and st.code == Code.ERROR and st.reasons == ['no pod volume found for node "node-a"']


def test_events_to_register() -> None:
    pl = VolumeBinding(VolumeBindingArgs(), FakeHandle())
    got = [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None)
           for e in pl.events_to_register()]
    add_update = ActionType.ADD | ActionType.UPDATE
    assert got == [
        (EventResource.STORAGE_CLASS, add_update, True),
        (EventResource.PERSISTENT_VOLUME_CLAIM, add_update, True),
        (EventResource.PERSISTENT_VOLUME, add_update, False),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        (EventResource.CSI_NODE, add_update, True),
        (EventResource.CSI_DRIVER, ActionType.UPDATE, True),
        (EventResource.CSI_STORAGE_CAPACITY, add_update, True),
    ]


# ----- queueing hints ---------------------------------------------------------------------------

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _plugin() -> VolumeBinding:
    return VolumeBinding(VolumeBindingArgs(), FakeHandle())


def _csinode(ann: str | None) -> CSINode:
    c = CSINode()
    c.metadata.name = "csinode-a"
    if ann is not None:
        c.metadata.annotations[MIGRATED_PLUGINS_ANNOTATION_KEY] = ann
    return c


@pytest.mark.parametrize(("name", "old", "new", "want"), [
    ("unexpected objects are passed", object(), object(), Q),
    ("CSINode is newly created", None, _csinode(None), Q),
    ("CSINode's migrated-plugins annotations is added", _csinode(None), _csinode("test1"), Q),
    ("CSINode's migrated-plugins annotation is updated", _csinode("test1"), _csinode("test2"), Q),
    ("CSINode is updated but migrated-plugins annotation gets unchanged", _csinode("test1"), _csinode("test1"), SKIP),
])
def test_is_schedulable_after_csi_node_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_csi_node_change(make_pod("pod-a"), old, new) == want


def _ephemeral_pod() -> Any:
    pod = make_pod("pod-a")
    v = pod.spec.volumes.add()
    v.name = "ephemeral"
    v.volumeSource.ephemeral.SetInParent()
    return pod


@pytest.mark.parametrize(("name", "pod", "new", "want"), [
    ("pod has no pvc or ephemeral volumes", make_pod("pod-a"), make_pvc("pvc-b", ""), SKIP),
    ("pvc with the same name as the one used by the pod in a different namespace is modified",
     make_pod("pod-a", "pvc-a"), make_pvc("pvc-a", "", namespace="ns-b"), SKIP),
    ("pod has no pvc that is being modified", make_pod("pod-a", "pvc-a"), make_pvc("pvc-b", ""), SKIP),
    ("pod has no generic ephemeral volume that is being modified", _ephemeral_pod(),
     make_pvc("pod-a-ephemeral-b", ""), SKIP),
    ("pod has the pvc that is being modified", make_pod("pod-a", "pvc-a"), make_pvc("pvc-a", ""), Q),
    ("pod has the generic ephemeral volume that is being modified", _ephemeral_pod(),
     make_pvc("pod-a-ephemeral", ""), Q),
    ("type conversion error", make_pod("pod-a"), make_node("node-a"), Q),
])
def test_is_schedulable_after_pvc_change(name: str, pod: Any, new: Any, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_persistent_volume_claim_change(pod, None, new) == want


def _topo_sc(values: list[str] | None) -> StorageClass:
    return make_sc("sc-a", WAIT, allowed={"kubernetes.io/hostname": values} if values else None)


@pytest.mark.parametrize(("name", "old", "new", "want"), [
    ("When a new StorageClass is created, it returns Queue", None, _topo_sc(None), Q),
    ("When the AllowedTopologies are changed, it returns Queue", _topo_sc(None), _topo_sc(["node-a"]), Q),
    ("When there are no changes to the StorageClass, it returns QueueSkip", _topo_sc(None), _topo_sc(None), SKIP),
    ("type conversion error", object(), object(), Q),
])
def test_is_schedulable_after_storage_class_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_storage_class_change(make_pod("pod-a"), old, new) == want


def _cap(capacity: str = "", maximum: str = "") -> CSIStorageCapacity:
    return make_capacity("cap-a", "sc-a", None, capacity, maximum)


@pytest.mark.parametrize(("name", "old", "new", "want"), [
    ("When a new CSIStorageCapacity is created, it returns Queue", None, _cap("10"), Q),
    ("When the volume limit is increase(Capacity set), it returns Queue", _cap(), _cap("100"), Q),
    ("When the volume limit is increase(MaximumVolumeSize set), it returns Queue", _cap(), _cap("", "100"), Q),
    ("When the volume limit is increase(Capacity increase), it returns Queue", _cap("10"), _cap("100"), Q),
    ("When the volume limit is increase(MaximumVolumeSize unset), it returns Queue", _cap("100", "10"),
     _cap("100"), Q),
    ("When the volume limit is increase(MaximumVolumeSize increase), it returns Queue", _cap("100", "10"),
     _cap("100", "50"), Q),
    ("When there are no changes to the CSIStorageCapacity, it returns QueueSkip", _cap("100", "50"),
     _cap("100", "50"), SKIP),
    ("When the volume limit is equal(Capacity), it returns QueueSkip", _cap("100"), _cap("100"), SKIP),
    ("When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip", _cap("100", "50"),
     _cap("50"), SKIP),
    ("When the volume limit is decrease(Capacity), it returns QueueSkip", _cap("100"), _cap("90"), SKIP),
    ("When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip", _cap("100", "90"),
     _cap("100", "80"), SKIP),
    ("type conversion error", object(), object(), Q),
])
def test_is_schedulable_after_csi_storage_capacity_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_csi_storage_capacity_change(make_pod("pod-a"), old, new) == want


def _csi_pod(driver: str) -> Any:
    pod = make_pod("pod-a")
    pod.spec.volumes.add().volumeSource.csi.driver = driver
    return pod


def _driver(cap: bool | None, name: str = "test1") -> CSIDriver:
    d = CSIDriver()
    d.metadata.name = name
    if cap is not None:
        d.spec.storageCapacity = cap
    return d


@pytest.mark.parametrize(("name", "pod", "old", "new", "want"), [
    ("pod has no CSIDriver", make_pod("pod-a"), _driver(True), _driver(False), SKIP),
    ("unexpected objects are passed", _csi_pod("test1"), object(), object(), Q),
    ("driver name in pod and csidriver name are different", _csi_pod("test1"), _driver(True, "test2"),
     _driver(False, "test2"), SKIP),
    ("original StorageCapacity is nil", _csi_pod("test1"), _driver(None), _driver(None), SKIP),
    ("original StorageCapacity is false", _csi_pod("test1"), _driver(False), _driver(False), SKIP),
    ("modified StorageCapacity is nil", _csi_pod("test1"), _driver(True), _driver(None), Q),
    ("modified StorageCapacity is true", _csi_pod("test1"), _driver(True), _driver(True), SKIP),
    ("modified StorageCapacity is false", _csi_pod("test1"), _driver(True), _driver(False), Q),
])
def test_is_schedulable_after_csi_driver_change(name: str, pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_csi_driver_change(pod, old, new) == want
