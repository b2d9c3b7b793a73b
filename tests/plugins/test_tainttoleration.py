"""Port of tainttoleration/taint_toleration_test.go."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import tainttoleration
from wasmsched.plugins.tainttoleration import ERR_REASON_UNTOLERATED, TaintToleration
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

from .util import score_each

Tol = tuple[str, str, str, str]  # key, operator, value, effect
Tnt = tuple[str, str, str]  # key, value, effect

UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNTOLERATED])


def pod_with_tolerations(name: str, tolerations: list[Tol], uid: str = "") -> Pod:
    pod = make_pod(name).obj()
    if uid:
        pod.metadata.uid = uid
    for key, op, value, effect in tolerations:
        t = pod.spec.tolerations.add()
        t.key, t.operator, t.value, t.effect = key, op, value, effect
    return pod


def node_with_taints(name: str, taints: list[Tnt]) -> Node:
    node = make_node(name).obj()
    for key, value, effect in taints:
        t = node.spec.taints.add()
        t.key, t.value, t.effect = key, value, effect
    return node


def _plugin(nodes: list[Node] | None = None) -> TaintToleration:
    pl = tainttoleration.new(None, FakeHandle(nodes=nodes or []))
    assert isinstance(pl, TaintToleration)
    return pl


PNS = "PreferNoSchedule"
NS = "NoSchedule"
SLA = "node.kubernetes.io/sla"

SCORE_CASES = [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     [("foo", "Equal", "bar", PNS)],
     [("nodeA", [("foo", "bar", PNS)]), ("nodeB", [("foo", "blah", PNS)])],
     [MAX_NODE_SCORE, 0]),
    (("the nodes that all of their taints are tolerated by the pod, get the same score, "
     "no matter how many tolerable taints a node has"),
     [("cpu-type", "Equal", "arm64", PNS), ("disk-type", "Equal", "ssd", PNS)],
     [("nodeA", []), ("nodeB", [("cpu-type", "arm64", PNS)]),
      ("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE]),
    ("the more intolerable taints a node has, the lower score it gets.",
     [("foo", "Equal", "bar", PNS)],
     [("nodeA", []), ("nodeB", [("cpu-type", "arm64", PNS)]),
      ("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX_NODE_SCORE, 50, 0]),
    (("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
     "priority function"),
     [("cpu-type", "Equal", "arm64", NS), ("disk-type", "Equal", "ssd", NS)],
     [("nodeA", []), ("nodeB", [("cpu-type", "arm64", NS)]),
      ("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
     [MAX_NODE_SCORE, MAX_NODE_SCORE, 0]),
    ("Default behaviour No taints and tolerations, lands on node with no taints",
     [],
     [("nodeA", []), ("nodeB", [("cpu-type", "arm64", PNS)])],
     [MAX_NODE_SCORE, 0]),
    ("Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
     [(SLA, "Gt", "950", PNS)],
     [("nodeA", [(SLA, "800", PNS)]), ("nodeB", [(SLA, "999", PNS)])],
     [0, MAX_NODE_SCORE]),
    ("Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
     [(SLA, "Lt", "800", PNS)],
     [("nodeA", [(SLA, "950", PNS)]), ("nodeB", [(SLA, "700", PNS)])],
     [0, MAX_NODE_SCORE]),
    ("Score ignores parse errors from numeric PreferNoSchedule taint value",
     [(SLA, "Gt", "950", PNS)],
     [("nodeA", []), ("nodeB", [(SLA, "high", PNS)])],
     [MAX_NODE_SCORE, 0]),
]


@pytest.mark.parametrize(("name", "tolerations", "nodes", "expected"), SCORE_CASES)
def test_taint_toleration_score(name: str, tolerations: list[Tol], nodes: list[tuple[str, list[Tnt]]],
                                expected: list[int]) -> None:
    pod = pod_with_tolerations("pod1", tolerations)
    node_objs = [node_with_taints(n, t) for n, t in nodes]
    pl = _plugin(node_objs)
    infos = [NodeInfo(n) for n in node_objs]
    state = CycleState()
    assert pl.pre_score(state, pod, infos) is None
    got = score_each(pl, state, pod, infos)
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, pod, got) is None
    assert [s.score for s in got] == expected


def test_score_without_pre_score_is_an_error() -> None:
    pl = _plugin()
    _score, st = pl.score(CycleState(), make_pod("p").obj(), NodeInfo(make_node("n").obj()))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


FILTER_CASES = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [("dedicated", "user1", NS)], UNTOLERATED),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [("dedicated", "", "user1", NS)], [("dedicated", "user1", NS)], None),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [("dedicated", "Equal", "user2", NS)], [("dedicated", "user1", NS)], UNTOLERATED),
    (("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints "
     "on the node"),
     [("foo", "Exists", "", NS)], [("foo", "bar", NS)], None),
    (("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
     "scheduled onto the node"),
     [("dedicated", "Equal", "user2", NS), ("foo", "Exists", "", NS)],
     [("dedicated", "user2", NS), ("foo", "bar", NS)], None),
    (("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
     "doesn't match, can't be scheduled onto the node"),
     [("foo", "Equal", "bar", PNS)], [("foo", "bar", NS)], UNTOLERATED),
    (("The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
     "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node"),
     [("foo", "Equal", "bar", "")], [("foo", "bar", NS)], None),
    (("The pod has a toleration that key and value don't match the taint on the node, but the effect of "
     "taint on node is PreferNoSchedule. Pod can be scheduled onto the node"),
     [("dedicated", "Equal", "user2", NS)], [("dedicated", "user1", PNS)], None),
    (("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled "
     "onto the node"),
     [], [("dedicated", "user1", PNS)], None),
    ("Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold",
     [("node.example.com/priority-level", "Gt", "950", NS)],
     [("node.example.com/priority-level", "800", NS)], UNTOLERATED),
    ("Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
     [(SLA, "Gt", "750", NS)], [(SLA, "950", NS)], None),
    ("Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold",
     [("node.example.com/priority-level", "Lt", "800", NS)],
     [("node.example.com/priority-level", "950", NS)], UNTOLERATED),
    ("Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
     [(SLA, "Lt", "950", NS)], [(SLA, "800", NS)], None),
    # Not in kube's table: NoExecute taints are filtered too.
    ("NoExecute taint is not tolerated", [], [("foo", "bar", "NoExecute")], UNTOLERATED),
]


@pytest.mark.parametrize(("name", "tolerations", "taints", "want"), FILTER_CASES)
def test_taint_toleration_filter(name: str, tolerations: list[Tol], taints: list[Tnt],
                                 want: Status | None) -> None:
    pod = pod_with_tolerations("pod1", tolerations)
    ni = NodeInfo(node_with_taints("nodeA", taints))
    pl = _plugin()
    assert pl.filter(CycleState(), pod, ni) == want
    assert filter_statuses(pl, CycleState(), pod, [ni]) == [want]


USER2 = [("dedicated", "Equal", "user2", NS)]


@pytest.mark.parametrize(
    ("name", "tolerations", "old", "new", "want"),
    [
        ("backoff-wrong-new-object", [], None, "not-a-node", QueueingHint.QUEUE),
        ("backoff-wrong-old-object", [], "not-a-node",
         node_with_taints("nodeA", [("dedicated", "user1", NS)]), QueueingHint.QUEUE),
        ("skip-queue-on-untoleratedtaint-node-added", USER2, None,
         node_with_taints("nodeA", [("dedicated", "user1", NS)]), QueueingHint.QUEUE_SKIP),
        ("queue-on-toleratedtaint-node-added", USER2, None,
         node_with_taints("nodeA", [("dedicated", "user2", NS)]), QueueingHint.QUEUE),
        ("skip-unrelated-change", USER2, node_with_taints("nodeA", [("dedicated", "user1", NS)]),
         node_with_taints("nodeA", [("dedicated", "user1", NS), ("dedicated", "user3", NS)]),
         QueueingHint.QUEUE_SKIP),
        ("queue-on-taint-change", USER2, node_with_taints("nodeA", [("dedicated", "user1", NS)]),
         node_with_taints("nodeA", [("dedicated", "user2", NS)]), QueueingHint.QUEUE),
    ],
)
def test_is_schedulable_after_node_change(name: str, tolerations: list[Tol], old: object, new: object,
                                          want: QueueingHint) -> None:
    pod = pod_with_tolerations("pod1", tolerations)
    assert _plugin().is_schedulable_after_node_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("queue-on-toleration-added", pod_with_tolerations("pod-1", [], uid="u1"),
         pod_with_tolerations("pod-1", [("foo", "", "", NS)], uid="u1"), QueueingHint.QUEUE),
    ],
)
def test_is_schedulable_after_target_pod_toleration_change(name: str, old: Pod, new: Pod,
                                                           want: QueueingHint) -> None:
    pod = pod_with_tolerations("pod-1", [], uid="u1")
    assert _plugin().is_schedulable_after_target_pod_toleration_change(pod, old, new) == want


def test_events_to_register() -> None:
    events = [(e.event.resource, e.event.action_type) for e in _plugin().events_to_register()]
    assert events == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
    ]
