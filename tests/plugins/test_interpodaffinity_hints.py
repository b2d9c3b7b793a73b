"""Ports of kube 1.37 interpodaffinity/plugin_test.go: EventsToRegister and the queueing hints
(Test_isSchedulableAfterAssignedPodChange, Test_isSchedulableAfterTargetPodUpdateLabel,
Test_isSchedulableAfterNodeChange)."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from wasmsched.plugins import interpodaffinity
from wasmsched.plugins.interpodaffinity.plugin import InterPodAffinity
from wasmsched.testing.fake_handle import FakeHandle

from .test_interpodaffinity_filtering import Exists, Expr, In, P
from .util import labeled_node

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def plugin() -> InterPodAffinity:
    pl = interpodaffinity.new(None, FakeHandle())
    assert isinstance(pl, InterPodAffinity)
    return pl


def nominated(p: Pod, node: str) -> Pod:
    p.status.nominatedNodeName = node
    return p


SCAN: list[Expr] = [In("service", "securityscan", "value2")]
AFF = [(SCAN, "region")]
ANTI = [(SCAN, "region")]
TWO_ANTI = [([In("service", "securityscan")], "region"), ([In("app", "web")], "region")]

ASSIGNED_POD_CASES: list[tuple[str, Pod, Pod | None, Pod | None, QueueingHint]] = [
    ("add a pod which matches the pod affinity", P(aff=AFF, name="p"), None,
     P({"service": "securityscan"}, "fake-node", name="other"), Q),
    ("add an un-scheduled pod", P(aff=AFF, name="p"), None, P({"service": "securityscan"}, name="other"), SKIP),
    ("add a pod which doesn't match the pod affinity", P(aff=AFF, name="p"), None,
     P({"aaa": "a"}, "fake-node", name="other"), SKIP),
    ("update a pod from non-match to match pod affinity", P(aff=AFF, name="p"),
     P({"aaa": "a"}, "fake-node", name="other"), P({"service": "securityscan"}, "fake-node", name="other"), Q),
    ("the updating pod matches target pod's affinity both before and after label changes", P(aff=AFF, name="p"),
     P({"service": "value2"}, "fake-node", name="other"), P({"service": "securityscan"}, "fake-node", name="other"),
     SKIP),
    ("update an un-scheduled pod", P(aff=AFF, name="p"), P({"aaa": "a"}, name="other"),
     P({"service": "securityscan"}, name="other"), SKIP),
    ("update a pod from match to non-match the pod affinity", P(aff=AFF, name="p"),
     P({"service": "securityscan"}, "fake-node", name="other"), P({"aaa": "a"}, "fake-node", name="other"), SKIP),
    ("update a pod from match to non-match pod's affinity - multiple terms case",
     P(aff=[([Exists("aaa")], "hostname"), ([Exists("bbb")], "hostname")], name="p"),
     P({"aaa": "a"}, "fake-node", name="other"), P({"service": "securityscan"}, "fake-node", name="other"), SKIP),
    ("update a pod from non-match to match pod's affinity - multiple terms case",
     P(aff=[([Exists("aaa")], "hostname"), ([Exists("bbb")], "hostname")], name="p"),
     P({"aaa": "a"}, "fake-node", name="other"), P({"aaa": "", "bbb": ""}, "fake-node", name="other"), Q),
    ("modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
     P(anti=ANTI, name="p"), P({"service": "securityscan"}, "fake-node", name="other"),
     P({"service": "aaaa"}, "fake-node", name="other"), Q),
    ("modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
     P(anti=ANTI, name="p"), P({"service": "bbb"}, "fake-node", name="other"),
     P({"service": "securityscan"}, "fake-node", name="other"), SKIP),
    ("delete a pod which doesn't match pod's anti-affinity", P(anti=ANTI, name="p"),
     P({"aaa": "a"}, "fake-node", name="other"), None, SKIP),
    ("delete a pod which matches pod's anti-affinity", P(anti=ANTI, name="p"),
     P({"service": "securityscan"}, "fake-node", name="other"), None, Q),
    ("delete a pod with anti-affinity that matches pending pod", P({"service": "securityscan"}, name="p"),
     P(node="fake-node", anti=ANTI, name="other"), None, Q),
    ("delete a pod with anti-affinity that doesn't match pending pod", P({"service": "foo"}, name="p"),
     P(node="fake-node", anti=ANTI, name="other"), None, SKIP),
    ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
     "pending pod", P({"service": "foo"}, anti=ANTI, name="p"),
     P({"service": "foo"}, "fake-node", anti=ANTI, name="other"), None, SKIP),
    ("delete a nominated pod which doesn't match pod's anti-affinity", P(anti=ANTI, name="p"),
     nominated(P({"aaa": "a"}, name="other"), "fake-node"), None, SKIP),
    ("delete a nominated pod which matches pod's anti-affinity", P(anti=ANTI, name="p"),
     nominated(P({"service": "securityscan"}, name="other"), "fake-node"), None, Q),
    ("modify pod label to change it from matching only one of target pod's anti-affinity terms to matching none",
     P(anti=TWO_ANTI, name="p"), P({"service": "securityscan", "app": "bar"}, "fake-node", name="other"),
     P({"service": "foo", "app": "bar"}, "fake-node", name="other"), Q),
    ("modify pod label but it still matches one of target pod's anti-affinity terms",
     P(anti=TWO_ANTI, name="p"), P({"service": "securityscan", "app": "bar"}, "fake-node", name="other"),
     P({"service": "foo", "app": "web"}, "fake-node", name="other"), SKIP),
    ("delete a pod which matches only one of target pod's anti-affinity terms", P(anti=TWO_ANTI, name="p"),
     P({"service": "securityscan"}, "fake-node", name="other"), None, Q),
    ("delete a pod with anti-affinity that matches pending pod on only one term",
     P({"service": "securityscan"}, name="p"), P(node="fake-node", anti=TWO_ANTI, name="other"), None, Q),
]


@pytest.mark.parametrize("name,pod,old,new,want", ASSIGNED_POD_CASES, ids=[c[0] for c in ASSIGNED_POD_CASES])
def test_is_schedulable_after_assigned_pod_change(name: str, pod: Pod, old: Pod | None, new: Pod | None,
                                                  want: QueueingHint) -> None:
    assert plugin().is_schedulable_after_assigned_pod_change(pod, old, new) == want


def test_is_schedulable_after_target_pod_update_label() -> None:
    p = P({"service": "securityscan"}, name="p")
    assert plugin().is_schedulable_after_target_pod_update_label(p, p, P({"service": "x"}, name="p")) == Q


def node(**labels: str) -> Node:
    return labeled_node("node-a", **labels)


ANOTHER: list[Expr] = [In("another", "label")]
ZONE_AFF = [(SCAN, "zone")]
ZONE_ANTI = [(ANOTHER, "zone")]

NODE_CASES: list[tuple[str, Pod, Node | None, Node, QueueingHint]] = [
    ("add a new node with matched pod affinity topologyKey", P(aff=ZONE_AFF), None, node(zone="zone1"), Q),
    ("add a new node without matched topologyKey", P(aff=AFF), None, node(zone="zone1"), SKIP),
    ("update node label but not topologyKey", P(aff=ZONE_AFF), node(aaa="a"), node(aaa="b"), SKIP),
    ("update node label that isn't related to the pod affinity", P(aff=ZONE_AFF), node(zone="zone1"),
     node(zone="zone1", **{"unrelated-label": "unrelated"}), SKIP),
    ("update node with different affinity topologyKey value", P(aff=ZONE_AFF), node(zone="zone1"),
     node(zone="zone2"), Q),
    ("update node to have the affinity topology label", P(aff=ZONE_AFF), node(aaa="a"), node(zone="zone1"), Q),
    ("add a new node with matched pod anti-affinity topologyKey", P(anti=ZONE_ANTI), None, node(zone="zone1"), Q),
    ("add a new node without matched pod anti-affinity topologyKey", P(anti=ZONE_ANTI), None, node(), Q),
    ("update node label that isn't related to the pod anti-affinity", P(anti=ZONE_ANTI), node(zone="zone1"),
     node(zone="zone1", **{"unrelated-label": "unrelated"}), SKIP),
    ("update node with different anti-affinity topologyKey value", P(anti=ZONE_ANTI), node(zone="zone1"),
     node(zone="zone2"), Q),
    ("update node to have the anti-affinity topology label", P(anti=ZONE_ANTI), node(aaa="a"), node(zone="zone1"),
     SKIP),
    ("update node label not to have anti-affinity topology label", P(anti=ZONE_ANTI), node(zone="zone1"),
     node(aaa="a"), Q),
]


@pytest.mark.parametrize("name,pod,old,new,want", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_is_schedulable_after_node_change(name: str, pod: Pod, old: Node | None, new: Node,
                                          want: QueueingHint) -> None:
    assert plugin().is_schedulable_after_node_change(pod, old, new) == want


def test_events_to_register() -> None:
    A = ActionType
    assert [e.event for e in plugin().events_to_register()] == [
        ClusterEvent(EventResource.ASSIGNED_POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
        ClusterEvent(EventResource.TARGET_POD, A.UPDATE_POD_LABEL),
        ClusterEvent(EventResource.NODE, A.ADD | A.UPDATE_NODE_LABEL),
    ]
