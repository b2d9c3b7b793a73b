"""Ports of kube 1.37 podtopologyspread/plugin_test.go: Test_isSchedulableAfterAssignedPodChange and
Test_isSchedulableAfterTargetPodChange."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.config.args import PodTopologySpreadArgs
from wasmsched.framework.events import QueueingHint
from wasmsched.plugins import podtopologyspread
from wasmsched.plugins.podtopologyspread.plugin import PodTopologySpread
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle

from .util import add_spread_constraints

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
DNS = "DoNotSchedule"
FOO, BAR = ("foo",), ("bar",)


def plugin() -> PodTopologySpread:
    pl: Any = podtopologyspread.new(PodTopologySpreadArgs(defaulting_type="List"), FakeHandle(pods=[], nodes=[]))
    assert isinstance(pl, PodTopologySpread)
    return pl


def target(*constraints: tuple[Any, ...]) -> Pod:
    return add_spread_constraints(make_pod("p").uid("p").label("foo", "").obj(), *constraints)


ONE = (1, "zone", DNS, FOO)
TWO = ((1, "zone", DNS, FOO), (1, "node", DNS, BAR))


def other(node: str = "", nominated: str = "", ns: str = "default", **labels: str) -> Pod:
    w = make_pod("p2", ns).uid("p2").labels(labels)
    if node:
        w.node(node)
    if nominated:
        w.nominated_node(nominated)
    return w.obj()


ASSIGNED: list[tuple[str, Pod, Pod | None, Pod | None, QueueingHint]] = [
    ("add pod with labels match topologySpreadConstraints selector", target(ONE), None,
     other("fake-node", foo=""), Q),
    ("add un-scheduled pod", target(ONE), None, other(foo=""), SKIP),
    ("update un-scheduled pod", target(ONE), other(bar=""), other(foo=""), SKIP),
    ("delete un-scheduled pod", target(ONE), other(foo=""), None, SKIP),
    ("add pod with different namespace", target(ONE), None, other("fake-node", ns="fake-namespace", foo=""), SKIP),
    ("add pod with labels don't match topologySpreadConstraints selector", target(ONE), None,
     other("fake-node", bar=""), SKIP),
    ("delete pod with labels that match topologySpreadConstraints selector", target(ONE),
     other("fake-node", foo=""), None, Q),
    ("delete nominated pod with labels that don't match topologySpreadConstraints selector", target(ONE),
     other(nominated="fake-node", bar=""), None, SKIP),
    ("delete nominated pod with labels that match topologySpreadConstraints selector", target(ONE),
     other(nominated="fake-node", foo=""), None, Q),
    ("delete pod with labels that don't match topologySpreadConstraints selector", target(ONE),
     other("fake-node", bar=""), None, SKIP),
    ("update pod's non-related label", target(ONE), other("fake-node", foo="", bar="bar1"),
     other("fake-node", foo="", bar="bar2"), SKIP),
    ("add pod's label that matches topologySpreadConstraints selector", target(ONE), other("fake-node"),
     other("fake-node", foo=""), Q),
    ("delete pod label that matches topologySpreadConstraints selector", target(ONE), other("fake-node", foo=""),
     other("fake-node"), Q),
    ("change pod's label that matches topologySpreadConstraints selector", target(ONE),
     other("fake-node", foo="foo1"), other("fake-node", foo="foo2"), SKIP),
    ("change pod's label that doesn't match topologySpreadConstraints selector", target(ONE),
     other("fake-node", foo="", bar="bar1"), other("fake-node", foo="", bar="bar2"), SKIP),
    ("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
     target(*TWO), other("fake-node", foo=""), other("fake-node", foo="", bar="bar2"), Q),
    ("change pod's label that doesn't match topologySpreadConstraints selector with multi "
     "topologySpreadConstraints", target(*TWO), other("fake-node", foo=""), other("fake-node", foo="", baz=""), SKIP),
    ("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
     target(*TWO), other("fake-node", foo="", bar=""), other("fake-node", foo="", bar="bar2"), SKIP),
]


@pytest.mark.parametrize("name,pod,old,new,want", ASSIGNED, ids=[c[0] for c in ASSIGNED])
def test_is_schedulable_after_assigned_pod_change(name: str, pod: Pod, old: Pod | None, new: Pod | None,
                                                  want: QueueingHint) -> None:
    assert plugin().is_schedulable_after_assigned_pod_change(pod, old, new) == want


def self_pod(tolerate: bool = False, **labels: str) -> Pod:
    w = make_pod("p").uid("p").labels(labels)
    if tolerate:
        w.toleration("node.kubernetes.io/unschedulable", operator="Exists")
    return w.obj()


HONOR = (1, "zone", DNS, FOO, {"nodeTaintsPolicy": "Honor"})
IGNORE = (1, "zone", DNS, FOO, {"nodeTaintsPolicy": "Ignore"})
NODE_BAR = (1, "node", DNS, BAR)

TARGET: list[tuple[str, Pod, Pod, Pod, QueueingHint]] = [
    ("the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
     target(HONOR, NODE_BAR), self_pod(foo=""), self_pod(True, foo=""), Q),
    ("the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new "
     "toleration", target(IGNORE, NODE_BAR), self_pod(foo=""), self_pod(True, foo=""), SKIP),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the "
     "constraint", target(IGNORE, NODE_BAR), self_pod(), self_pod(foo=""), Q),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
     target(IGNORE, NODE_BAR), self_pod(), self_pod(unrelated=""), SKIP),
]


@pytest.mark.parametrize("name,pod,old,new,want", TARGET, ids=[c[0] for c in TARGET])
def test_is_schedulable_after_target_pod_change(name: str, pod: Pod, old: Pod, new: Pod, want: QueueingHint) -> None:
    assert plugin().is_schedulable_after_target_pod_change(pod, old, new) == want
