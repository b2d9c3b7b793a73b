"""Ported from kube 1.37 framework/events_test.go: which cluster events a node or pod update amounts to."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource
from wasmsched.scheduler.events import node_scheduling_properties_change, pod_scheduling_properties_change
from wasmsched.testing.builders import make_node, make_pod

A = ActionType
R = EventResource


def node(edit: Callable[[Node], object] | None = None) -> Node:
    n = make_node("n").obj()
    if edit is not None:
        edit(n)
    return n


def with_condition(type_: str, status: str, heartbeat: int = 0) -> Callable[[Node], object]:
    def edit(n: Node) -> None:
        c = n.status.conditions.add()
        c.type, c.status = type_, status
        if heartbeat:
            c.lastHeartbeatTime.seconds = heartbeat
    return edit


def node_events(*actions: ActionType) -> list[ClusterEvent]:
    return [ClusterEvent(R.NODE, a) for a in actions]


NODE_CASES: list[tuple[str, Node, Node, list[ClusterEvent]]] = [
    ("no specific changed applied", make_node("n").unschedulable(False).obj(),
     make_node("n").unschedulable(False).obj(), []),
    ("only node spec unavailable changed", make_node("n").unschedulable(False).obj(),
     make_node("n").unschedulable(True).obj(), node_events(A.UPDATE_NODE_TAINT)),
    # kube only reports a node turning schedulable.
    ("node turned unschedulable", make_node("n").unschedulable(True).obj(),
     make_node("n").unschedulable(False).obj(), []),
    ("only node allocatable changed",
     make_node("n").res({"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}).obj(),
     make_node("n").res({"cpu": "1000m", "memory": "100m", "example.com/foo": "2"}).obj(),
     node_events(A.UPDATE_NODE_ALLOCATABLE)),
    ("new node has more allocatable resources", make_node("n").res({"memory": "1Ki", "storage": "1Ki"}).obj(),
     make_node("n").res({"memory": "1Ki"}).obj(), node_events(A.UPDATE_NODE_ALLOCATABLE)),
    # Semantic.DeepEqual compares quantities by value.
    ("allocatable written differently", make_node("n").res({"cpu": "1"}).obj(),
     make_node("n").res({"cpu": "1000m"}).obj(), []),
    ("only node label changed", make_node("n").label("foo", "bar").obj(), make_node("n").label("foo", "fuz").obj(),
     node_events(A.UPDATE_NODE_LABEL)),
    ("only node taint changed", make_node("n").taint("node.kubernetes.io/unschedulable").obj(),
     make_node("n").taint("node.kubernetes.io/unschedulable", "foo").obj(), node_events(A.UPDATE_NODE_TAINT)),
    ("only node annotation changed", node(lambda n: n.metadata.annotations.update(foo="bar")),
     node(lambda n: n.metadata.annotations.update(foo="fuz")), node_events(A.UPDATE_NODE_ANNOTATION)),
    ("only node condition changed", node(), node(with_condition("Ready", "True")),
     node_events(A.UPDATE_NODE_CONDITION)),
    ("only LastHeartbeatTime changed", node(with_condition("DiskPressure", "True", 2)),
     node(with_condition("DiskPressure", "True", 1)), []),
    ("condition status changed", node(with_condition("Ready", "True")), node(with_condition("Ready", "False")),
     node_events(A.UPDATE_NODE_CONDITION)),
    ("both node label and node taint changed",
     make_node("n").label("foo", "bar").taint("node.kubernetes.io/unschedulable").obj(),
     make_node("n").taint("node.kubernetes.io/unschedulable", "foo").obj(),
     node_events(A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT)),
    ("features added", node(lambda n: n.status.declaredFeatures.extend(["featA", "featB"])),
     node(lambda n: n.status.declaredFeatures.extend(["featA"])), node_events(A.UPDATE_NODE_DECLARED_FEATURE)),
    ("no features changed", node(lambda n: n.status.declaredFeatures.extend(["featA"])),
     node(lambda n: n.status.declaredFeatures.extend(["featA"])), []),
    ("preemption policy set", node(lambda n: n.spec.podPreemptionPolicy.SetInParent()), node(),
     node_events(A.UPDATE_NODE_PREEMPTION_POLICY)),
]


@pytest.mark.parametrize("name,new,old,want", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_node_scheduling_properties_change(name: str, new: Node, old: Node, want: list[ClusterEvent]) -> None:
    assert node_scheduling_properties_change(new, old) == want


def cpu_pod(milli: int, **labels: str) -> Pod:
    p = make_pod("p").labels(labels).req(cpu=f"{milli}m").obj()
    cs = p.status.containerStatuses.add()
    cs.name = p.spec.containers[0].name
    cs.allocatedResources["cpu"].string = f"{milli}m"
    return p


def claim_statuses(*claims: tuple[str, str]) -> Pod:
    p = make_pod("p").obj()
    for name, claim in claims:
        s = p.status.resourceClaimStatuses.add()
        s.name, s.resourceClaimName = name, claim
    return p


def extended_claim(claim: str) -> Pod:
    p = make_pod("p").obj()
    st = p.status.extendedResourceClaimStatus
    st.resourceClaimName = claim
    m = st.requestMappings.add()
    m.requestName, m.containerName, m.resourceName = "request", "c", "example.com/gpu"
    return p


def annotated(value: str) -> Pod:
    p = make_pod("p").obj()
    p.metadata.annotations["foo"] = value
    return p


POD_CASES: list[tuple[str, Pod, Pod, bool, list[tuple[str, ActionType]]]] = [
    ("assigned pod is updated", make_pod("p").label("foo", "bar").node("node").obj(),
     make_pod("p").label("foo", "bar2").node("node").obj(), False, [(R.ASSIGNED_POD, A.UPDATE_POD_LABEL)]),
    ("unscheduled pod label is updated", make_pod("p").label("foo", "bar").obj(),
     make_pod("p").label("foo", "bar2").obj(), False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL)]),
    ("pod's resource request is scaled down", cpu_pod(100), cpu_pod(101), False,
     [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    ("pod's resource request is scaled up", cpu_pod(101), cpu_pod(100), False,
     [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_UP)]),
    ("both pod's resource request and label are updated", cpu_pod(100, foo="bar"), cpu_pod(101), False,
     [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL), (R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    ("untracked properties of pod is updated", annotated("bar"), annotated("bar2"), False,
     [(R.UNSCHEDULED_POD, A.UPDATE)]),
    ("scheduling gate is eliminated", make_pod("p").obj(), make_pod("p").scheduling_gates("foo").obj(), True,
     [(R.TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
    ("scheduling gate is removed, but not completely eliminated", make_pod("p").scheduling_gates("foo").obj(),
     make_pod("p").scheduling_gates("foo", "bar").obj(), True, [(R.TARGET_POD, A.UPDATE)]),
    ("pod's tolerations are updated", make_pod("p").toleration("key").toleration("key2").obj(),
     make_pod("p").toleration("key").obj(), True, [(R.TARGET_POD, A.UPDATE_POD_TOLERATION)]),
    ("pod claim statuses change", claim_statuses(("my-claim", "claim")), make_pod("p").obj(), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("pod claim statuses swapped", claim_statuses(("my-claim", "claim"), ("my-claim-2", "claim-2")),
     claim_statuses(("my-claim-2", "claim-2"), ("my-claim", "claim")), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("pod extended resource claim status change", extended_claim("claim"), make_pod("p").obj(), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("pod extended resource claim status swapped", extended_claim("claim-2"), extended_claim("claim"), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    ("scheduling gate is eliminated for an assigned pod, it takes precedence over target pod resource type",
     make_pod("p").node("node").obj(), make_pod("p").scheduling_gates("foo").node("node").obj(), True,
     [(R.ASSIGNED_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
]


@pytest.mark.parametrize("name,new,old,is_target,want", POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_scheduling_properties_change(name: str, new: Pod, old: Pod, is_target: bool,
                                          want: list[tuple[str, ActionType]]) -> None:
    got = pod_scheduling_properties_change(new, old, is_target)
    assert [(e.resource, e.action_type) for e in got] == want
