"""Ported from kube 1.37 framework/types_test.go (TestClusterEventMatching, TestUnrollPodEvent) and
kube-scheduler/framework/types.go (ActionType values, Label)."""

from __future__ import annotations

import pytest

from wasmsched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_ASSIGNED_POD_UPDATE,
    EVENT_FORCE_ACTIVATE,
    EVENT_TARGET_POD_UPDATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_UPDATE,
    ActionType,
    ClusterEvent,
    EventResource,
    unroll_pod_event,
)
from wasmsched.framework.runtime import ALL_CLUSTER_EVENTS

A = ActionType
R = EventResource


def test_action_type_bits_are_kube_1_37() -> None:
    # Declaration order of kube-scheduler/framework/types.go, one bit each from Add.
    order = [A.ADD, A.DELETE, A.UPDATE_NODE_ALLOCATABLE, A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT,
             A.UPDATE_NODE_CONDITION, A.UPDATE_NODE_ANNOTATION, A.UPDATE_NODE_DECLARED_FEATURE,
             A.UPDATE_NODE_PREEMPTION_POLICY, A.UPDATE_POD_LABEL, A.UPDATE_POD_SCALE_DOWN, A.UPDATE_POD_SCALE_UP,
             A.UPDATE_POD_TOLERATION, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
             A.UPDATE_POD_GENERATED_RESOURCE_CLAIM]
    assert [int(a) for a in order] == [1 << i for i in range(len(order))]
    assert (1 << len(order)) - 1 == A.ALL
    assert A.UPDATE == A.ALL & ~(A.ADD | A.DELETE)
    assert A.NONE == 0


def test_event_resources_are_kube_1_37() -> None:
    assert (R.POD, R.ASSIGNED_POD, R.UNSCHEDULED_POD, R.TARGET_POD) == (
        "Pod", "AssignedPod", "UnscheduledPod", "TargetPod")


@pytest.mark.parametrize("event,label", [
    (EVENT_ASSIGNED_POD_ADD, "AssignedPodAdd"),
    (EVENT_ASSIGNED_POD_UPDATE, "AssignedPodUpdate"),
    (EVENT_ASSIGNED_POD_DELETE, "AssignedPodDelete"),
    (EVENT_UNSCHEDULED_POD_ADD, "UnscheduledPodAdd"),
    (EVENT_UNSCHEDULED_POD_UPDATE, "UnscheduledPodUpdate"),
    (EVENT_UNSCHEDULED_POD_DELETE, "UnscheduledPodDelete"),
    (EVENT_TARGET_POD_UPDATE, "TargetPodUpdate"),
    (EVENT_UNSCHEDULABLE_TIMEOUT, "UnschedulableTimeout"),
    (EVENT_FORCE_ACTIVATE, "ForceActivate"),
    (ClusterEvent(R.NODE, A.UPDATE_NODE_TAINT), "NodeUpdateNodeTaint"),
    (ClusterEvent(R.TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
     "TargetPodUpdatePodSchedulingGatesEliminated"),
    (ClusterEvent(R.NODE, A.ALL), "NodeAll"),
    # ActionType.String() has no name for other combinations.
    (ClusterEvent(R.NODE, A.ADD | A.DELETE), "Node"),
])
def test_label(event: ClusterEvent, label: str) -> None:
    assert str(event) == label


CASES = [
    ("wildcard event matches with all kinds of coming events",
     ClusterEvent(R.WILDCARD, A.ALL), ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' matching with coming events carries matching actionType",
     ClusterEvent(R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with 'UnscheduledPod' resource and matching actionType",
     ClusterEvent(R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
     ClusterEvent(R.UNSCHEDULED_POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = '*' matching with coming events carries same actionType",
     ClusterEvent(R.WILDCARD, A.UPDATE_NODE_LABEL), ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = '*' matching with coming events carries different actionType",
     ClusterEvent(R.WILDCARD, A.UPDATE_NODE_LABEL), ClusterEvent(R.POD, A.UPDATE_NODE_ALLOCATABLE), False),
    ("event matching with coming events carries '*' resources",
     ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), ClusterEvent(R.WILDCARD, A.UPDATE_NODE_LABEL), False),
    ("event with resource = '*' matching with coming events carrying a too broad actionType",
     ClusterEvent(R.WILDCARD, A.UPDATE_NODE_LABEL), ClusterEvent(R.POD, A.UPDATE), False),
    ("event with resource = '*' matching with coming events carrying a more specific actionType",
     ClusterEvent(R.WILDCARD, A.UPDATE), ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with AssignedPod resource and same actionType",
     ClusterEvent(R.POD, A.UPDATE_NODE_LABEL), ClusterEvent(R.ASSIGNED_POD, A.UPDATE_NODE_LABEL), True),
    ("event with resource = 'Pod' also matches event with 'TargetPod' resource and same actionType",
     ClusterEvent(R.POD, A.UPDATE_NODE_TAINT), ClusterEvent(R.TARGET_POD, A.UPDATE_NODE_TAINT), True),
    ("event with resource 'AssignedPod' does not match event with 'UnscheduledPod' resource and same actionType",
     ClusterEvent(R.ASSIGNED_POD, A.ADD), ClusterEvent(R.UNSCHEDULED_POD, A.ADD), False),
    ("event with resource 'AssignedPod' does not match event with 'TargetPod' resource and same actionType",
     ClusterEvent(R.ASSIGNED_POD, A.UPDATE), ClusterEvent(R.TARGET_POD, A.UPDATE), False),
    ("event with resource 'TargetPod' does not match event with 'AssignedPod' resource and same actionType",
     ClusterEvent(R.TARGET_POD, A.UPDATE), ClusterEvent(R.ASSIGNED_POD, A.UPDATE), False),
    ("event with resource 'AssignedPod' does not match with broad 'Pod' resource and same actionType",
     ClusterEvent(R.ASSIGNED_POD, A.ADD), ClusterEvent(R.POD, A.ADD), False),
    ("event with resource 'AssignedPod' does not match with 'WildCard' resource and same actionType",
     ClusterEvent(R.ASSIGNED_POD, A.ADD), ClusterEvent(R.WILDCARD, A.ADD), False),
    ("event with resource 'UnscheduledPod' does not match with broad 'Pod' resource and same actionType",
     ClusterEvent(R.UNSCHEDULED_POD, A.ADD), ClusterEvent(R.POD, A.ADD), False),
    ("event with resource 'UnscheduledPod' does not match with 'WildCard' resource and same actionType",
     ClusterEvent(R.UNSCHEDULED_POD, A.ADD), ClusterEvent(R.WILDCARD, A.ADD), False),
    ("WildCard matches with a pod sub-type resource 'TargetPod' and any actionType",
     ClusterEvent(R.WILDCARD, A.ALL), ClusterEvent(R.TARGET_POD, A.UPDATE), True),
    # wasmsched's own: a general update only reaches registrations of the general Update.
    ("a specific registration does not match a general update of the same resource",
     ClusterEvent(R.NODE, A.ADD | A.UPDATE_NODE_TAINT), ClusterEvent(R.NODE, A.UPDATE), False),
]


@pytest.mark.parametrize("name,registered,incoming,want", CASES, ids=[c[0] for c in CASES])
def test_cluster_event_matching(name: str, registered: ClusterEvent, incoming: ClusterEvent, want: bool) -> None:
    assert registered.match(incoming) is want


@pytest.mark.parametrize("action", [A.ADD, A.DELETE, A.UPDATE])
def test_unroll_pod_event(action: ActionType) -> None:
    got = unroll_pod_event(ClusterEvent(R.POD, action))
    assert [(e.resource, e.action_type) for e in got] == [
        (R.ASSIGNED_POD, action), (R.UNSCHEDULED_POD, action), (R.TARGET_POD, action)]


def test_default_events_are_unroll_wildcard_resource() -> None:
    # framework.UnrollWildCardResource, GenericWorkload off (no PodGroup).
    assert [e.resource for e in ALL_CLUSTER_EVENTS] == [
        R.ASSIGNED_POD, R.UNSCHEDULED_POD, R.TARGET_POD, R.NODE, R.PERSISTENT_VOLUME, R.PERSISTENT_VOLUME_CLAIM,
        R.CSI_NODE, R.CSI_DRIVER, R.CSI_STORAGE_CAPACITY, R.STORAGE_CLASS, R.RESOURCE_CLAIM, R.DEVICE_CLASS]
    assert all(e.action_type == A.ALL for e in ALL_CLUSTER_EVENTS)
