"""Port of kube 1.37 volumerestrictions/volume_restrictions_test.go (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts,
Test_isSchedulableAfterAssignedPodDeleted, Test_isSchedulableAfterPersistentVolumeClaimChange), plus
EventsToRegister, AddPod/RemovePod and the read-only cases kube's tables do not cover.

TestVolumeRestrictions_DeferredResizeSkipped is not ported: it needs the alpha
InPlacePodVerticalScalingSchedulerPreemption gate, which is off in 1.37 and not implemented here.
"""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import Node, PersistentVolumeClaim, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status, is_success
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins import volumerestrictions
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

Q, SKIP_HINT = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
SKIP = Status(Code.SKIP)
ERR_STATUS = Status(Code.UNSCHEDULABLE, [ERR_REASON_DISK_CONFLICT])

# A volume: (volume source field, its fields).
Vol = tuple[str, dict[str, Any]]

GCE_1: Vol = ("gcePersistentDisk", {"pdName": "foo"})
GCE_2: Vol = ("gcePersistentDisk", {"pdName": "bar"})
AWS_1: Vol = ("awsElasticBlockStore", {"volumeID": "foo"})
AWS_2: Vol = ("awsElasticBlockStore", {"volumeID": "bar"})
RBD_1: Vol = ("rbd", {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"})
RBD_2: Vol = ("rbd", {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"})
ISCSI_1: Vol = ("iscsi", {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                          "fsType": "ext4", "lun": 0})
ISCSI_2: Vol = ("iscsi", {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                          "fsType": "ext4", "lun": 0})
NO_RESTRICTION: Vol = ("", {})


def vol_pod(*vols: Vol, name: str = "p", **ro: bool) -> Pod:
    """st.MakePod().Volume(v)...: a pod with these volumes (readOnly=True marks each read-only)."""
    pod = make_pod(name).obj()
    for i, (kind, fields) in enumerate(vols):
        v = pod.spec.volumes.add()
        v.name = f"v{i}" if kind else "volume with no restriction"
        if not kind:
            continue
        src = getattr(v.volumeSource, kind)
        src.SetInParent()
        for k, val in fields.items():
            if isinstance(val, list):
                getattr(src, k).extend(val)
            else:
                setattr(src, k, val)
        if ro.get("readOnly"):
            src.readOnly = True
    return pod


def node_info(*pods: Pod) -> NodeInfo:
    """framework.NewNodeInfo(pods...): no node object."""
    return NodeInfo(None, [PodInfo(p) for p in pods])


def new_plugin(pods: list[Pod] | None = None, nodes: list[Node] | None = None,
               pvcs: list[PersistentVolumeClaim] | None = None) -> VolumeRestrictions:
    handle = FakeHandle(pods=pods, nodes=nodes, client=RecordingClient(objects=list(pvcs or [])))
    pl = volumerestrictions.new(None, handle)
    assert isinstance(pl, VolumeRestrictions)
    return pl


def run_pre_filter_and_filter(pl: VolumeRestrictions, pod: Pod, ni: NodeInfo, want_pre_filter: Status | None,
                              want_filter: Status | None) -> None:
    state = CycleState()
    result, status = pl.pre_filter(state, pod, [])
    assert result is None
    assert status == want_pre_filter
    # If PreFilter fails, Filter does not run.
    if is_success(want_pre_filter):
        assert pl.filter(state, pod, ni) == want_filter
        assert filter_statuses(pl, state, pod, [ni]) == [want_filter]


def disk_conflict_cases(v1: Vol, v2: Vol) -> list[tuple[str, Pod, NodeInfo, Status | None, Status | None]]:
    # (name, pod, nodeInfo, preFilterWantStatus, wantStatus)
    return [
        ("nothing", Pod(), node_info(), SKIP, None),
        ("one state", Pod(), node_info(vol_pod(v1)), SKIP, None),
        ("same state", vol_pod(v1), node_info(vol_pod(v1)), None, ERR_STATUS),
        ("different state", vol_pod(v2), node_info(vol_pod(v1)), None, None),
    ]


@pytest.mark.parametrize(
    ("name", "pod", "ni", "want_pre_filter", "want_filter"),
    [
        *disk_conflict_cases(GCE_1, GCE_2),
        ("pod with a volume that doesn't have restrictions", vol_pod(NO_RESTRICTION), node_info(), SKIP, None),
    ],
)
def test_gce_disk_conflicts(name: str, pod: Pod, ni: NodeInfo, want_pre_filter: Status | None,
                            want_filter: Status | None) -> None:
    run_pre_filter_and_filter(new_plugin(), pod, ni, want_pre_filter, want_filter)


@pytest.mark.parametrize(("name", "pod", "ni", "want_pre_filter", "want_filter"), disk_conflict_cases(AWS_1, AWS_2))
def test_aws_disk_conflicts(name: str, pod: Pod, ni: NodeInfo, want_pre_filter: Status | None,
                            want_filter: Status | None) -> None:
    run_pre_filter_and_filter(new_plugin(), pod, ni, want_pre_filter, want_filter)


@pytest.mark.parametrize(("name", "pod", "ni", "want_pre_filter", "want_filter"), disk_conflict_cases(RBD_1, RBD_2))
def test_rbd_disk_conflicts(name: str, pod: Pod, ni: NodeInfo, want_pre_filter: Status | None,
                            want_filter: Status | None) -> None:
    run_pre_filter_and_filter(new_plugin(), pod, ni, want_pre_filter, want_filter)


@pytest.mark.parametrize(("name", "pod", "ni", "want_pre_filter", "want_filter"),
                         disk_conflict_cases(ISCSI_1, ISCSI_2))
def test_iscsi_disk_conflicts(name: str, pod: Pod, ni: NodeInfo, want_pre_filter: Status | None,
                              want_filter: Status | None) -> None:
    run_pre_filter_and_filter(new_plugin(), pod, ni, want_pre_filter, want_filter)


RBD_OTHER_POOL: Vol = ("rbd", {"monitors": ["b", "x"], "pool": "other", "image": "bar"})
RBD_SHARED_MONITOR: Vol = ("rbd", {"monitors": ["b", "x"], "pool": "foo", "image": "bar"})


# Not in kube's tables: read-only mounts, and what each kind compares (isVolumeConflict).
@pytest.mark.parametrize(
    ("name", "pod", "existing", "conflict"),
    [
        ("gce both read-only", vol_pod(GCE_1, readOnly=True), vol_pod(GCE_1, readOnly=True), False),
        ("gce one read-only", vol_pod(GCE_1, readOnly=True), vol_pod(GCE_1), True),
        ("aws both read-only still conflict", vol_pod(AWS_1, readOnly=True), vol_pod(AWS_1, readOnly=True), True),
        ("iscsi both read-only", vol_pod(ISCSI_1, readOnly=True), vol_pod(ISCSI_1, readOnly=True), False),
        ("iscsi one read-only", vol_pod(ISCSI_1), vol_pod(ISCSI_1, readOnly=True), True),
        ("rbd both read-only", vol_pod(RBD_1, readOnly=True), vol_pod(RBD_1, readOnly=True), False),
        ("rbd one shared monitor", vol_pod(RBD_SHARED_MONITOR), vol_pod(RBD_1), True),
        ("rbd other pool", vol_pod(RBD_OTHER_POOL), vol_pod(RBD_1), False),
        ("different kinds", vol_pod(GCE_1), vol_pod(AWS_1), False),
        ("second volume conflicts", vol_pod(GCE_2, AWS_1), vol_pod(ISCSI_1, AWS_1), True),
    ],
)
def test_volume_conflict_kinds(name: str, pod: Pod, existing: Pod, conflict: bool) -> None:
    run_pre_filter_and_filter(new_plugin(), pod, node_info(existing), None, ERR_STATUS if conflict else None)


def pvc(name: str, *access_modes: str, namespace: str = "default") -> PersistentVolumeClaim:
    c = PersistentVolumeClaim()
    c.metadata.name = name
    c.metadata.namespace = namespace
    c.spec.accessModes.extend(access_modes)
    return c


def pvc_pod(name: str, *claims: str, namespace: str = "default", node: str = "node-1") -> Pod:
    w = make_pod(name, namespace)
    for c in claims:
        w.pvc(c)
    if node:
        w.node(node)
    return w.obj()


POD_WITH_ONE_PVC = pvc_pod("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = pvc_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_ONE_CONFLICT = pvc_pod("pod-with-one-conflict", "claim-with-rwop-1")
POD_WITH_TWO_CONFLICTS = pvc_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_READ_WRITE_MANY_PVC = pvc_pod("pod-with-rwx", "claim-with-rwx")
NODE = make_node("node-1").obj()
RWOP_PVC_1 = pvc("claim-with-rwop-1", "ReadWriteOncePod")
RWOP_PVC_2 = pvc("claim-with-rwop-2", "ReadWriteOncePod")
RWX_PVC = pvc("claim-with-rwx", "ReadWriteMany")
RWOP_CONFLICT = Status(Code.UNSCHEDULABLE, [ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT])


@pytest.mark.parametrize(
    ("name", "pod", "ni", "existing_pods", "existing_nodes", "existing_pvcs", "want_pre_filter", "want_filter"),
    [
        ("nothing", Pod(), node_info(), [], [], [], SKIP, None),
        ("failed to get PVC", POD_WITH_ONE_PVC, node_info(), [], [], [],
         Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ['persistentvolumeclaim "claim-with-rwop-1" not found']),
         None),
        ("no access mode conflict", POD_WITH_ONE_PVC, node_info(POD_WITH_READ_WRITE_MANY_PVC),
         [POD_WITH_READ_WRITE_MANY_PVC], [NODE], [RWOP_PVC_1, RWX_PVC], SKIP, None),
        ("access mode conflict, unschedulable", POD_WITH_ONE_CONFLICT,
         node_info(POD_WITH_ONE_PVC, POD_WITH_READ_WRITE_MANY_PVC), [POD_WITH_ONE_PVC, POD_WITH_READ_WRITE_MANY_PVC],
         [NODE], [RWOP_PVC_1, RWX_PVC], None, RWOP_CONFLICT),
        ("two conflicts, unschedulable", POD_WITH_TWO_CONFLICTS,
         node_info(POD_WITH_TWO_PVCS, POD_WITH_READ_WRITE_MANY_PVC), [POD_WITH_TWO_PVCS, POD_WITH_READ_WRITE_MANY_PVC],
         [NODE], [RWOP_PVC_1, RWOP_PVC_2, RWX_PVC], None, RWOP_CONFLICT),
        # Not in kube's table: the claim is used in another namespace only (claims are namespaced),
        # and a user that is not on any node of the snapshot.
        ("same claim name in another namespace", POD_WITH_ONE_CONFLICT,
         node_info(pvc_pod("other-ns", "claim-with-rwop-1", namespace="other")),
         [pvc_pod("other-ns", "claim-with-rwop-1", namespace="other")], [NODE], [RWOP_PVC_1], SKIP, None),
        ("user on an unknown node", POD_WITH_ONE_CONFLICT, node_info(),
         [pvc_pod("elsewhere", "claim-with-rwop-1", node="node-2")], [NODE], [RWOP_PVC_1], SKIP, None),
    ],
)
def test_access_mode_conflicts(name: str, pod: Pod, ni: NodeInfo, existing_pods: list[Pod],
                               existing_nodes: list[Node], existing_pvcs: list[PersistentVolumeClaim],
                               want_pre_filter: Status | None, want_filter: Status | None) -> None:
    pl = new_plugin(existing_pods, existing_nodes, existing_pvcs)
    run_pre_filter_and_filter(pl, pod, ni, want_pre_filter, want_filter)


def test_pre_filter_extensions_add_remove_pod() -> None:
    """AddPod/RemovePod move the count of references to the pod's ReadWriteOncePod claims."""
    pl = new_plugin([POD_WITH_ONE_PVC], [NODE], [RWOP_PVC_1, RWOP_PVC_2, RWX_PVC])
    assert pl.pre_filter_extensions() is pl
    state = CycleState()
    _, status = pl.pre_filter(state, POD_WITH_TWO_CONFLICTS, [])
    assert status is None
    ni = node_info(POD_WITH_ONE_PVC)
    assert pl.filter(state, POD_WITH_TWO_CONFLICTS, ni) == RWOP_CONFLICT

    # Preemption simulating the removal of the only user: the claims are free.
    removed = state.clone()
    assert pl.remove_pod(removed, POD_WITH_TWO_CONFLICTS, PodInfo(POD_WITH_ONE_PVC), node_info()) is None
    assert pl.filter(removed, POD_WITH_TWO_CONFLICTS, node_info()) is None
    # The original state is untouched by the clone's update.
    assert pl.filter(state, POD_WITH_TWO_CONFLICTS, ni) == RWOP_CONFLICT

    # A nominated pod using both claims adds two references; removing the first user leaves them.
    assert pl.add_pod(removed, POD_WITH_TWO_CONFLICTS, PodInfo(POD_WITH_TWO_PVCS), node_info()) is None
    assert pl.filter(removed, POD_WITH_TWO_CONFLICTS, node_info()) == RWOP_CONFLICT
    assert pl.add_pod(removed, POD_WITH_TWO_CONFLICTS, PodInfo(POD_WITH_READ_WRITE_MANY_PVC), node_info()) is None
    assert pl.remove_pod(removed, POD_WITH_TWO_CONFLICTS, PodInfo(POD_WITH_TWO_PVCS), node_info()) is None
    assert pl.filter(removed, POD_WITH_TWO_CONFLICTS, node_info()) is None


def test_filter_without_pre_filter() -> None:
    pl = new_plugin()
    pod = vol_pod(GCE_1)
    # The disk conflict is found before the missing state is noticed, as in kube.
    assert pl.filter(CycleState(), pod, node_info(vol_pod(GCE_1))) == ERR_STATUS
    st = pl.filter(CycleState(), pod, node_info())
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'
    st = pl.add_pod(CycleState(), pod, PodInfo(pod), node_info())
    assert st is not None and st.code == Code.ERROR


def test_events_to_register() -> None:
    pl = new_plugin()
    got = [(e.event, e.queueing_hint_fn) for e in pl.events_to_register()]
    assert got == [
        (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), pl.is_schedulable_after_assigned_pod_deleted),
        (ClusterEvent(EventResource.NODE, ActionType.ADD), None),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
         pl.is_schedulable_after_persistent_volume_claim_added),
    ]


def test_registered_in_tree() -> None:
    pl = in_tree_registry()["VolumeRestrictions"](None, FakeHandle())
    assert isinstance(pl, VolumeRestrictions) and pl.name == "VolumeRestrictions"


@pytest.mark.parametrize(
    ("name", "pod", "old_obj", "expected_hint"),
    [
        ("queue-new-object-gcedisk-conflict", vol_pod(GCE_1), vol_pod(GCE_1), Q),
        ("skip-new-object-gcedisk-no-conflict", vol_pod(GCE_1), vol_pod(GCE_2), SKIP_HINT),
        ("queue-new-object-awsdisk-conflict", vol_pod(AWS_1), vol_pod(AWS_1), Q),
        ("skip-new-object-awsdisk-no-conflict", vol_pod(AWS_1), vol_pod(AWS_2), SKIP_HINT),
        ("queue-new-object-rbddisk-conflict", vol_pod(RBD_1), vol_pod(RBD_1), Q),
        ("skip-new-object-rbddisk-no-conflict", vol_pod(RBD_1), vol_pod(RBD_2), SKIP_HINT),
        ("queue-new-object-iscsidisk-conflict", vol_pod(ISCSI_1), vol_pod(ISCSI_1), Q),
        ("skip-new-object-iscsidisk-no-conflict", vol_pod(ISCSI_1), vol_pod(ISCSI_2), SKIP_HINT),
        ("queue-has-same-claim", pvc_pod("pod1", "claim-rwop", node=""), pvc_pod("pod2", "claim-rwop"), Q),
        ("skip-no-same-claim", pvc_pod("pod1", "claim-1-rwop", node=""), pvc_pod("pod2", "claim-2-rwop"), SKIP_HINT),
        # Not in kube's table: a pod of another namespace, and a wrong object type.
        ("skip-other-namespace", pvc_pod("pod1", "claim-rwop", node=""),
         pvc_pod("pod2", "claim-rwop", namespace="other"), SKIP_HINT),
        ("queue-wrong-object", vol_pod(GCE_1), "not-a-pod", Q),
    ],
)
def test_is_schedulable_after_assigned_pod_deleted(name: str, pod: Pod, old_obj: Any,
                                                   expected_hint: QueueingHint) -> None:
    pl = new_plugin(pvcs=[PersistentVolumeClaim()])
    assert pl.is_schedulable_after_assigned_pod_deleted(pod, old_obj, None) == expected_hint


RWX_PVC_1 = pvc("claim-with-rwx-1", "ReadWriteMany")
RWX_PVC_2 = pvc("claim-with-rwx-2", "ReadWriteMany")
POD_WITH_ONE_RWX = pvc_pod("pod-with-one-pvc", "claim-with-rwx-1")
POD_WITH_TWO_RWX = pvc_pod("pod-with-two-pvcs", "claim-with-rwx-1", "claim-with-rwx-2")
POD_WITH_NOT_EQUAL_NAMESPACE = pvc_pod("pod-with-one-pvc", "claim-with-rwx-1", namespace="kube-system",
                                       node="claim-with-rwx-2")


@pytest.mark.parametrize(
    ("name", "pod", "old_obj", "new_obj", "expected_hint"),
    [
        ("queue-new-object-pvc-belong-pod", POD_WITH_TWO_RWX, None, RWX_PVC_1, Q),
        ("skip-new-object-unused", POD_WITH_ONE_RWX, None, RWX_PVC_2, SKIP_HINT),
        ("skip-nil-old-object", POD_WITH_ONE_RWX, None, RWX_PVC_2, SKIP_HINT),
        ("skip-new-object-not-belong-pod", POD_WITH_ONE_RWX, None, RWX_PVC_2, SKIP_HINT),
        ("skip-new-object-namespace-not-equal-pod", POD_WITH_NOT_EQUAL_NAMESPACE, None, RWX_PVC_1, SKIP_HINT),
        # Not in kube's table: a wrong object type is queued (kube: Queue with an error).
        ("queue-wrong-object", POD_WITH_ONE_RWX, None, "not-a-pvc", Q),
    ],
)
def test_is_schedulable_after_persistent_volume_claim_change(name: str, pod: Pod, old_obj: Any, new_obj: Any,
                                                             expected_hint: QueueingHint) -> None:
    pl = new_plugin(pvcs=[new_obj] if isinstance(new_obj, PersistentVolumeClaim) else [])
    assert pl.is_schedulable_after_persistent_volume_claim_added(pod, old_obj, new_obj) == expected_hint


def test_simulation_with_volume_plugins() -> None:
    """Both volume plugins in a profile of the embedded cluster: ReadWriteOncePod and disk conflicts,
    zones, and the requeueing by the AssignedPod/Delete and PersistentVolumeClaim/Add hints."""
    from wasmsched.api.types import PersistentVolume
    from wasmsched.config import config_from_dict
    from wasmsched.simulator.simulation import Simulation

    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [
            {"name": "VolumeRestrictions"}, {"name": "VolumeZone"}]}}}],
    })
    sim = Simulation(cfg, in_tree_registry())

    def zone_b_pv(name: str, *modes: str) -> PersistentVolume:
        pv = PersistentVolume()
        pv.metadata.name = name
        pv.metadata.labels["topology.kubernetes.io/zone"] = "b"
        pv.spec.accessModes.extend(modes)
        return pv

    def bound(name: str, *modes: str) -> PersistentVolumeClaim:
        # Each claim names its own volume: the (emulated) PV controller completes the binding, so the
        # default profile's VolumeBinding sees bound claims.
        c = pvc(name, *modes)
        c.spec.volumeName = f"pv-{name}"
        return c

    nodes = [make_node(f"n{z}").capacity(cpu="4", pods="10").label("topology.kubernetes.io/zone", z).obj()
             for z in "ab"]
    gce_running = vol_pod(GCE_1, name="gce-running")
    gce_running.spec.nodeName = "nb"
    sim.apply({
        "Node": nodes,
        "PersistentVolume": [zone_b_pv("pv-c-b", "ReadWriteOnce"), zone_b_pv("pv-rwop", "ReadWriteOncePod"),
                             zone_b_pv("pv-missing", "ReadWriteOnce")],
        "PersistentVolumeClaim": [bound("c-b", "ReadWriteOnce"), bound("rwop", "ReadWriteOncePod")],
        "Pod": [pvc_pod("zoned", "c-b", node=""), pvc_pod("rwop-user", "rwop", node="na"),
                pvc_pod("rwop-waiter", "rwop", node=""), pvc_pod("no-claim", "missing", node=""),
                gce_running, vol_pod(GCE_1, name="gce-pending")],
    })
    try:
        got = {p.name: (p.phase, p.node, p.message) for p in sim.run_until_quiet().pods}
        assert got["zoned"][:2] == ("Scheduled", "nb")
        assert got["gce-pending"][:2] == ("Scheduled", "na")
        assert got["rwop-waiter"][:2] == ("Unschedulable", None)
        assert ("0/2 nodes are available: 2 " + ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT) in got["rwop-waiter"][2]
        assert got["no-claim"][:2] == ("Unschedulable", None)
        assert 'persistentvolumeclaim "missing" not found' in got["no-claim"][2]

        sim.cluster.delete("Pod", "default/rwop-user")
        sim.cluster.create(bound("missing", "ReadWriteOnce"))
        got = {p.name: (p.phase, p.node, p.message) for p in sim.run_until_quiet().pods}
        assert got["rwop-waiter"][:2] == ("Scheduled", "nb")
        assert got["no-claim"][:2] == ("Scheduled", "nb")
    finally:
        sim.scheduler.close()
