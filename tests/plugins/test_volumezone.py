"""Port of kube 1.37 volumezone/volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding,
TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
TestIsSchedulableAfterPersistentVolumeChange), plus EventsToRegister and the lookup failures kube's
tables do not cover.

kube's tests use fake listers whose NotFound errors name plural resources
(`storageclasses.storage.k8s.io "Class_0" not found`); the scheduler's informer listers, which this
plugin follows, name them singular (`storageclass.storage.k8s.io "Class_0" not found`).
TestVolumeZone_DeferredResizeSkipped is not ported: it needs the alpha
InPlacePodVerticalScalingSchedulerPreemption gate, which is off in 1.37 and not implemented here.
"""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import volumezone
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.plugins.volumezone import ERR_REASON_CONFLICT, PVTopology, VolumeZone, label_zones_to_set
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

from .util import labeled_node

Q, SKIP_HINT = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
SKIP = Status(Code.SKIP)
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_CONFLICT])

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def unresolvable(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg])


def pv(name: str, **labels: str) -> PersistentVolume:
    v = PersistentVolume()
    v.metadata.name = name
    v.metadata.labels.update(labels)
    return v


def pvc(name: str, volume_name: str = "", storage_class: str | None = None, namespace: str = "default",
        annotations: dict[str, str] | None = None) -> PersistentVolumeClaim:
    c = PersistentVolumeClaim()
    c.metadata.name = name
    c.metadata.namespace = namespace
    c.metadata.annotations.update(annotations or {})
    if volume_name:
        c.spec.volumeName = volume_name
    if storage_class is not None:
        c.spec.storageClassName = storage_class
    return c


def storage_class(name: str, mode: str | None = None) -> StorageClass:
    sc = StorageClass()
    sc.metadata.name = name
    if mode is not None:
        sc.volumeBindingMode = mode
    return sc


def create_pod_with_volume(pod: str, claim: str) -> Pod:
    return make_pod(pod).pvc(claim).obj()


def node(**labels: str) -> Node:
    return labeled_node("host1", **labels)


def new_plugin(*objects: Any) -> VolumeZone:
    pl = volumezone.new(None, FakeHandle(client=RecordingClient(objects=list(objects))))
    assert isinstance(pl, VolumeZone)
    return pl


def run(pl: VolumeZone, pod: Pod, n: Node, want_pre_filter: Status | None, want_filter: Status | None) -> None:
    # As kube's tests: Filter runs after PreFilter whatever it returned (without PreFilter's state, Filter
    # looks the volumes up itself).
    state = CycleState()
    result, status = pl.pre_filter(state, pod, [])
    assert result is None
    assert status == want_pre_filter
    ni = NodeInfo(n)
    assert pl.filter(state, pod, ni) == want_filter
    assert filter_statuses(pl, state, pod, [ni]) == [want_filter]


SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", **{ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]


@pytest.mark.parametrize(
    ("name", "pod", "n", "want_pre_filter", "want_filter"),
    [
        ("pod without volume", make_pod("pod_1").obj(), node(**{BETA_ZONE: "us-west1-a"}), SKIP, None),
        ("node without labels", create_pod_with_volume("pod_1", "PVC_1"), node(), None, None),
        ("beta zone label matched", create_pod_with_volume("pod_1", "PVC_1"),
         node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
        ("beta region label matched", create_pod_with_volume("pod_1", "PVC_2"),
         node(**{BETA_REGION: "us-west1", "uselessLabel": "none"}), None, None),
        ("beta region label doesn't match", create_pod_with_volume("pod_1", "PVC_2"),
         node(**{BETA_REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
        ("beta zone label doesn't match", create_pod_with_volume("pod_1", "PVC_1"),
         node(**{BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
        ("zone label matched", create_pod_with_volume("pod_1", "PVC_Stable_1"),
         node(**{ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
        ("region label matched", create_pod_with_volume("pod_1", "PVC_Stable_2"),
         node(**{REGION: "us-west1", "uselessLabel": "none"}), None, None),
        ("region label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_2"),
         node(**{REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
        ("zone label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_1"),
         node(**{ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
        ("pv with zone and region, node with only zone", create_pod_with_volume("pod_1", "PVC_Stable_3"),
         node(**{ZONE: "us-west1-a"}), None, CONFLICT),
        ("pv with zone,node with beta zone", create_pod_with_volume("pod_1", "PVC_Stable_1"),
         node(**{BETA_ZONE: "us-west1-a"}), None, CONFLICT),
        ("pv with beta label,node with ga label, matched", create_pod_with_volume("pod_1", "PVC_1"),
         node(**{ZONE: "us-west1-a"}), None, None),
        ("pv with beta label,node with ga label, don't match", create_pod_with_volume("pod_1", "PVC_1"),
         node(**{ZONE: "us-west1-b"}), None, CONFLICT),
        # Not in kube's table: a claim bound to a missing volume, a missing claim, a volume without
        # topology labels (PreFilter skips, Filter falls back to the lookup and accepts).
        ("bound volume not found", create_pod_with_volume("pod_1", "PVC_4"), node(**{ZONE: "us-west1-a"}),
         unresolvable('persistentvolume "Vol_not_exist" not found'),
         unresolvable('persistentvolume "Vol_not_exist" not found')),
        ("claim not found", create_pod_with_volume("pod_1", "PVC_missing"), node(**{ZONE: "us-west1-a"}),
         unresolvable('persistentvolumeclaim "PVC_missing" not found'),
         unresolvable('persistentvolumeclaim "PVC_missing" not found')),
        ("claim in another namespace", make_pod("pod_1", "other").pvc("PVC_1").obj(),
         node(**{ZONE: "us-west1-a"}), unresolvable('persistentvolumeclaim "PVC_1" not found'),
         unresolvable('persistentvolumeclaim "PVC_1" not found')),
        ("claim without name", create_pod_with_volume("pod_1", ""), node(**{ZONE: "us-west1-a"}),
         unresolvable("PersistentVolumeClaim had no name"), unresolvable("PersistentVolumeClaim had no name")),
    ],
)
def test_single_zone(name: str, pod: Pod, n: Node, want_pre_filter: Status | None,
                     want_filter: Status | None) -> None:
    run(new_plugin(*SINGLE_ZONE_OBJECTS), pod, n, want_pre_filter, want_filter)


MULTI_ZONE_OBJECTS = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{ZONE: "us-west1-c__us-west1-a"}),
    # Not in kube's lister: a zone list with an empty entry does not parse and is ignored.
    pv("Vol_Bad", **{ZONE: "us-west1-c____us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Bad", "Vol_Bad"),
]


@pytest.mark.parametrize(
    ("name", "pod", "n", "want_pre_filter", "want_filter"),
    [
        ("node without labels", create_pod_with_volume("pod_1", "PVC_3"), node(), None, None),
        ("beta zone label matched", create_pod_with_volume("pod_1", "PVC_3"),
         node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
        ("beta zone label doesn't match", create_pod_with_volume("pod_1", "PVC_1"),
         node(**{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
        ("zone label matched", create_pod_with_volume("pod_1", "PVC_Stable_2"),
         node(**{ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
        ("zone label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_1"),
         node(**{ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
        ("unparsable zone label ignored", create_pod_with_volume("pod_1", "PVC_Bad"),
         node(**{ZONE: "us-west1-b"}), SKIP, None),
        ("two volumes, second doesn't match", make_pod("pod_1").pvc("PVC_3").pvc("PVC_2").obj(),
         node(**{BETA_ZONE: "us-west1-a"}), None, CONFLICT),
    ],
)
def test_multi_zone(name: str, pod: Pod, n: Node, want_pre_filter: Status | None,
                    want_filter: Status | None) -> None:
    run(new_plugin(*MULTI_ZONE_OBJECTS), pod, n, want_pre_filter, want_filter)


WITH_BINDING_OBJECTS = [
    storage_class("Class_Immediate"),
    storage_class("Class_Wait", "WaitForFirstConsumer"),
    # Not in kube's lister: an explicit Immediate mode.
    storage_class("Class_Immediate_Set", "Immediate"),
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
    pvc("PVC_ImmediateSetSC", storage_class="Class_Immediate_Set"),
    # The beta annotation takes precedence over spec.storageClassName.
    pvc("PVC_AnnotatedWaitSC", storage_class="Class_0",
        annotations={"volume.beta.kubernetes.io/storage-class": "Class_Wait"}),
]
TEST_NODE = node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"})


@pytest.mark.parametrize(
    ("name", "pod", "n", "want_pre_filter", "want_filter"),
    [
        ("label zone failure domain matched", create_pod_with_volume("pod_1", "PVC_1"), TEST_NODE, None, None),
        ("unbound volume empty storage class", create_pod_with_volume("pod_1", "PVC_EmptySC"), TEST_NODE,
         unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
         unresolvable("PersistentVolumeClaim had no pv name and storageClass name")),
        ("unbound volume no storage class", create_pod_with_volume("pod_1", "PVC_NoSC"), TEST_NODE,
         unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
         unresolvable('storageclass.storage.k8s.io "Class_0" not found')),
        ("unbound volume immediate binding mode", create_pod_with_volume("pod_1", "PVC_ImmediateSC"), TEST_NODE,
         unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
         unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')),
        ("unbound volume wait binding mode", create_pod_with_volume("pod_1", "PVC_WaitSC"), TEST_NODE, SKIP, None),
        # Not in kube's table.
        ("unbound volume immediate binding mode set", create_pod_with_volume("pod_1", "PVC_ImmediateSetSC"),
         TEST_NODE, unresolvable("PersistentVolume had no name"), unresolvable("PersistentVolume had no name")),
        ("unbound volume beta annotation wins", create_pod_with_volume("pod_1", "PVC_AnnotatedWaitSC"), TEST_NODE,
         SKIP, None),
        ("bound and unbound wait volumes", make_pod("pod_1").pvc("PVC_WaitSC").pvc("PVC_1").obj(),
         node(**{ZONE: "us-west1-b"}), None, CONFLICT),
    ],
)
def test_with_binding(name: str, pod: Pod, n: Node, want_pre_filter: Status | None,
                      want_filter: Status | None) -> None:
    run(new_plugin(*WITH_BINDING_OBJECTS), pod, n, want_pre_filter, want_filter)


def test_pre_filter_state_is_used() -> None:
    """Filter reads the topologies PreFilter stored instead of looking the objects up again."""
    client = RecordingClient(objects=list(SINGLE_ZONE_OBJECTS))
    pl = volumezone.new(None, FakeHandle(client=client))
    assert isinstance(pl, VolumeZone)
    pod = create_pod_with_volume("pod_1", "PVC_1")
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    client.objects = []
    assert pl.filter(state, pod, NodeInfo(node(**{BETA_ZONE: "us-west1-a"}))) is None
    assert pl.filter(state, pod, NodeInfo(node(**{BETA_ZONE: "us-west1-b"}))) == CONFLICT


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("us-west1-a", {"us-west1-a"}),
        ("us-west1-c__us-west1-a", {"us-west1-a", "us-west1-c"}),
        (" a __ b ", {"a", "b"}),
        ("a____b", None),
        ("", None),
        ("a__", None),
    ],
)
def test_label_zones_to_set(value: str, want: set[str] | None) -> None:
    assert label_zones_to_set(value) == (None if want is None else frozenset(want))


def test_events_to_register() -> None:
    pl = new_plugin()
    got = [(e.event, e.queueing_hint_fn) for e in pl.events_to_register()]
    assert got == [
        (ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), pl.is_schedulable_after_storage_class_added),
        (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), None),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
         pl.is_schedulable_after_persistent_volume_claim_change),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
         pl.is_schedulable_after_persistent_volume_change),
    ]


def test_registered_in_tree() -> None:
    pl = in_tree_registry()["VolumeZone"](None, FakeHandle())
    assert isinstance(pl, VolumeZone) and pl.name == "VolumeZone"


# The hints of kube's "error-wrong-*-object" cases return Queue (kube: Queue with an error).
@pytest.mark.parametrize(
    ("name", "pod", "old_obj", "new_obj", "expected_hint"),
    [
        ("error-wrong-new-object", create_pod_with_volume("pod_1", "PVC_1"), None, "not-a-pvc", Q),
        ("pvc-was-added-but-pod-refers-no-pvc", make_pod("pod_1").obj(), None, pvc("PVC_1", "Vol_1"), SKIP_HINT),
        ("pvc-was-added-and-pod-was-bound-to-different-pvc", create_pod_with_volume("pod_1", "PVC_2"), None,
         pvc("PVC_1", "Vol_1"), SKIP_HINT),
        ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", create_pod_with_volume("pod_1", "PVC_1"), None,
         pvc("PVC_1", "Vol_1", namespace="ns1"), SKIP_HINT),
        ("pvc-was-added-and-pod-was-bound-to-the-pvc", create_pod_with_volume("pod_1", "PVC_1"), None,
         pvc("PVC_1", "Vol_1"), Q),
        ("pvc-was-updated-and-pod-was-bound-to-the-pvc", create_pod_with_volume("pod_1", "PVC_1"), pvc("PVC_1"),
         pvc("PVC_1", "Vol_1"), Q),
        ("pvc-was-updated-but-pod-refers-no-pvc", make_pod("pod_1").obj(), pvc("PVC_1"), pvc("PVC_1", "Vol_1"),
         SKIP_HINT),
    ],
)
def test_is_schedulable_after_persistent_volume_claim_added(name: str, pod: Pod, old_obj: Any, new_obj: Any,
                                                            expected_hint: QueueingHint) -> None:
    assert new_plugin().is_schedulable_after_persistent_volume_claim_change(pod, old_obj, new_obj) == expected_hint


@pytest.mark.parametrize(
    ("name", "new_obj", "expected_hint"),
    [
        ("error-wrong-new-object", "not-a-storageclass", Q),
        ("sc-doesn't-have-volume-binding-mode", storage_class("SC_1"), SKIP_HINT),
        ("new-sc-is-wait-for-first-consumer-mode", storage_class("SC_1", "WaitForFirstConsumer"), Q),
        # Not in kube's table.
        ("new-sc-is-immediate-mode", storage_class("SC_1", "Immediate"), SKIP_HINT),
    ],
)
def test_is_schedulable_after_storage_class_added(name: str, new_obj: Any, expected_hint: QueueingHint) -> None:
    pod = create_pod_with_volume("pod_1", "PVC_1")
    assert new_plugin().is_schedulable_after_storage_class_added(pod, None, new_obj) == expected_hint


@pytest.mark.parametrize(
    ("name", "old_obj", "new_obj", "expected_hint"),
    [
        ("error-wrong-new-object", None, "not-a-pv", Q),
        ("error-wrong-old-object", "not-a-pv", pv("Vol_1"), Q),
        ("new-pv-was-added", None, pv("Vol_1", **{BETA_ZONE: "us-west1-b"}), Q),
        ("pv-was-updated-and-changed-topology", pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
         pv("Vol_1", **{BETA_ZONE: "us-west1-b"}), Q),
        ("pv-was-updated-and-added-topology-label", pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
         pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}), Q),
        ("pv-was-updated-but-no-topology-is-changed", pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
         pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}), SKIP_HINT),
        # Not in kube's table: zone lists compare as sets; other labels do not matter.
        ("pv-was-updated-zone-list-reordered", pv("Vol_1", **{ZONE: "a__b"}), pv("Vol_1", **{ZONE: "b__a"}),
         SKIP_HINT),
        ("pv-was-updated-other-label", pv("Vol_1", **{ZONE: "a"}), pv("Vol_1", **{ZONE: "a", "x": "y"}), SKIP_HINT),
    ],
)
def test_is_schedulable_after_persistent_volume_change(name: str, old_obj: Any, new_obj: Any,
                                                       expected_hint: QueueingHint) -> None:
    pod = create_pod_with_volume("pod_1", "PVC_1")
    assert new_plugin().is_schedulable_after_persistent_volume_change(pod, old_obj, new_obj) == expected_hint


def test_pv_topologies() -> None:
    got = volumezone.get_pv_topologies(pv("Vol", **{ZONE: "a__b", BETA_REGION: "r", "other": "x"}))
    # In kube's label order: beta zone, beta region, zone, region.
    assert got == [PVTopology("Vol", BETA_REGION, frozenset({"r"})), PVTopology("Vol", ZONE, frozenset({"a", "b"}))]
