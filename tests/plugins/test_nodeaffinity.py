"""Port of nodeaffinity/node_affinity_test.go."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from wasmsched.api.types import Node, NodeAffinity, NodeSelectorTerm, Pod
from wasmsched.config.args import NodeAffinityArgs
from wasmsched.config.errors import ConfigError
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.interface import MAX_NODE_SCORE, PreFilterResult
from wasmsched.framework.status import Code, Status, is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import nodeaffinity
from wasmsched.plugins.nodeaffinity import ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD
from wasmsched.plugins.nodeaffinity import NodeAffinity as NodeAffinityPlugin
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

from .util import score_each

Req = tuple[str, str, Sequence[str]]  # key, operator, values
Term = dict[str, list[Req]]  # {"expr": [...], "fields": [...]}

NAME_FIELD = "metadata.name"
POD_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_POD])
ENFORCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_ENFORCED])
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_CONFLICT])
SKIP = Status(Code.SKIP)


def _fill_term(term: NodeSelectorTerm, spec: Term) -> None:
    for key, op, values in spec.get("expr", []):
        r = term.matchExpressions.add()
        r.key, r.operator = key, op
        r.values.extend(values)
    for key, op, values in spec.get("fields", []):
        r = term.matchFields.add()
        r.key, r.operator = key, op
        r.values.extend(values)


def node_affinity(required: list[Term] | None = None,
                  preferred: list[tuple[int, Term]] | None = None) -> NodeAffinity:
    na = NodeAffinity()
    if required is not None:
        sel = na.requiredDuringSchedulingIgnoredDuringExecution
        sel.SetInParent()
        for spec in required:
            _fill_term(sel.nodeSelectorTerms.add(), spec)
    for weight, spec in preferred or []:
        t = na.preferredDuringSchedulingIgnoredDuringExecution.add()
        t.weight = weight
        _fill_term(t.preference, spec)
    return na


def pod(selector: dict[str, str] | None = None, required: list[Term] | None = None,
        preferred: list[tuple[int, Term]] | None = None, empty_node_affinity: bool = False) -> Pod:
    p = make_pod("p").obj()
    if selector:
        p.spec.nodeSelector.update(selector)
    if required is not None or preferred is not None or empty_node_affinity:
        p.spec.affinity.nodeAffinity.CopyFrom(node_affinity(required, preferred))
    return p


def node(name: str, labels: dict[str, str] | None = None) -> Node:
    n = Node()
    n.metadata.name = name
    n.metadata.labels.update(labels or {})
    return n


def _plugin(args: NodeAffinityArgs | None = None, nodes: list[Node] | None = None) -> NodeAffinityPlugin:
    pl = nodeaffinity.new(args, FakeHandle(nodes=nodes or []))
    assert isinstance(pl, NodeAffinityPlugin)
    return pl


def _in(key: str, *values: str) -> Req:
    return (key, "In", values)


ADDED_NODE2 = NodeAffinityArgs(node_affinity(required=[{"fields": [_in(NAME_FIELD, "node2")]}]))

FILTER_CASES: list[tuple[str, Pod, dict[str, str], str, Status | None, Status | None,
                         PreFilterResult | None, NodeAffinityArgs | None, bool]] = [
    # name, pod, labels, nodeName, wantStatus, wantPreFilterStatus, wantPreFilterResult, args, runPreFilter
    ("missing labels", pod({"foo": "bar"}), {}, "", POD_MISMATCH, None, None, None, True),
    ("same labels", pod({"foo": "bar"}), {"foo": "bar"}, "", None, None, None, None, True),
    ("node labels are superset", pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None,
     None, True),
    ("node labels are subset", pod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", POD_MISMATCH, None,
     None, None, True),
    ("Pod with matchExpressions using In operator that matches the existing node",
     pod(required=[{"expr": [_in("foo", "bar", "value2")]}]), {"foo": "bar"}, "", None, None, None, None,
     True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     pod(required=[{"expr": [("kernel-version", "Gt", ["0204"])]}]), {"kernel-version": "0206"}, "", None,
     None, None, None, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     pod(required=[{"expr": [("mem-type", "NotIn", ["DDR", "DDR2"])]}]), {"mem-type": "DDR3"}, "", None,
     None, None, None, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     pod(required=[{"expr": [("GPU", "Exists", [])]}]), {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None,
     None, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     pod(required=[{"expr": [_in("foo", "value1", "value2")]}]), {"foo": "bar"}, "", POD_MISMATCH, None,
     None, None, True),
    (("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto "
     "the node"),
     pod(required=[{}]), {"foo": "bar"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with no Affinity will schedule onto a node", pod(), {"foo": "bar"}, "", None, SKIP, None, None,
     True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node", pod(empty_node_affinity=True),
     {"foo": "bar"}, "", None, SKIP, None, None, True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     pod(required=[{"expr": [("GPU", "Exists", []), ("GPU", "NotIn", ["AMD", "INTER"])]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     pod(required=[{"expr": [("GPU", "Exists", []), _in("GPU", "AMD", "INTER")]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", POD_MISMATCH, None, None, None, True),
    (("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule "
     "onto the node"),
     pod(required=[{"expr": [_in("foo", "bar", "value2")]}, {"expr": [_in("diffkey", "wrong", "value2")]}]),
     {"foo": "bar"}, "", None, None, None, None, True),
    (("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
     "satisfied, will schedule onto the node"),
     pod({"foo": "bar"}, required=[{"expr": [("foo", "Exists", [])]}]), {"foo": "bar"}, "", None, None,
     None, None, True),
    (("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node"),
     pod({"foo": "bar"}, required=[{"expr": [("foo", "Exists", [])]}]), {"foo": "barrrrrr"}, "",
     POD_MISMATCH, None, None, None, True),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     pod(required=[{"expr": [("foo", "NotIn", ["invalid value: ___@#$%^"])]}]), {"foo": "bar"}, "",
     POD_MISMATCH, None, None, None, True),
    ("Pod with matchFields using In operator that matches the existing node",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")]}]), {}, "node1", None, None,
     PreFilterResult({"node1"}), None, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")]}]), {}, "node2", POD_MISMATCH, None,
     PreFilterResult({"node1"}), None, True),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1"), _in(NAME_FIELD, "node2")]},
                   {"expr": [_in("foo", "bar")]}]),
     {"foo": "bar"}, "node2", None, None, None, None, True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")], "expr": [_in("foo", "bar")]}]),
     {"foo": "bar"}, "node2", POD_MISMATCH, None, PreFilterResult({"node1"}), None, True),
    ("Pod with one term: both matchFields and matchExpressions match",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")], "expr": [_in("foo", "bar")]}]),
     {"foo": "bar"}, "node1", None, None, PreFilterResult({"node1"}), None, True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")]}, {"expr": [_in("foo", "not-match-to-bar")]}]),
     {"foo": "bar"}, "node2", POD_MISMATCH, None, None, None, True),
    ("Pod with two terms of node.Name affinity",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1")]}, {"fields": [_in(NAME_FIELD, "node2")]}]),
     {}, "node2", None, None, PreFilterResult({"node1", "node2"}), None, True),
    ("Pod with two conflicting mach field requirements",
     pod(required=[{"fields": [_in(NAME_FIELD, "node1"), _in(NAME_FIELD, "node2")]}]),
     {"foo": "bar"}, "node2", POD_MISMATCH, CONFLICT, None, None, True),
    ("Matches added affinity and Pod's node affinity",
     pod(required=[{"expr": [_in("zone", "foo")]}]), {"zone": "foo"}, "node2", None, None, None,
     ADDED_NODE2, True),
    ("Matches added affinity but not Pod's node affinity",
     pod(required=[{"expr": [_in("zone", "bar")]}]), {"zone": "foo"}, "node2", POD_MISMATCH, None, None,
     ADDED_NODE2, True),
    ("Doesn't match added affinity", pod(), {"zone": "foo"}, "node2", ENFORCED, None, None,
     NodeAffinityArgs(node_affinity(required=[{"expr": [_in("zone", "bar")]}])), True),
    ("Matches node selector correctly even if PreFilter is not called", pod({"foo": "bar"}),
     {"foo": "bar", "baz": "blah"}, "", None, None, None, None, False),
    ("Matches node affinity correctly even if PreFilter is not called",
     pod(required=[{"expr": [("GPU", "Exists", []), ("GPU", "NotIn", ["AMD", "INTER"])]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, False),
]


@pytest.mark.parametrize(
    ("name", "pod_", "labels", "node_name", "want_status", "want_pre_filter_status", "want_pre_filter_result",
     "args", "run_pre_filter"),
    FILTER_CASES,
)
def test_node_affinity(name: str, pod_: Pod, labels: dict[str, str], node_name: str,
                       want_status: Status | None, want_pre_filter_status: Status | None,
                       want_pre_filter_result: PreFilterResult | None, args: NodeAffinityArgs | None,
                       run_pre_filter: bool) -> None:
    ni = NodeInfo(node(node_name, labels))
    pl = _plugin(args)
    state = CycleState()
    if run_pre_filter:
        result, status = pl.pre_filter(state, pod_, [ni])
        assert status == want_pre_filter_status
        assert result == want_pre_filter_result
    assert pl.filter(state, pod_, ni) == want_status
    assert filter_statuses(pl, state, pod_, [ni]) == [want_status]


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1: list[tuple[int, Term]] = [(2, {"expr": [_in("foo", "bar")]})]
AFFINITY2: list[tuple[int, Term]] = [
    (2, {"expr": [_in("foo", "bar")]}),
    (4, {"expr": [_in("key", "value")]}),
    (5, {"expr": [_in("foo", "bar"), _in("key", "value"), _in("az", "az1")]}),
]

SCORE_CASES: list[tuple[str, Pod, list[tuple[str, dict[str, str]]], list[int], NodeAffinityArgs | None,
                        bool]] = [
    ("all nodes are same priority as NodeAffinity is nil", pod(),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [0, 0, 0], None, True),
    (("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
     "zero"), pod(preferred=AFFINITY1),
     [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], [0, 0, 0], None, True),
    ("only node1 matches the preferred scheduling requirements of pod", pod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [MAX_NODE_SCORE, 0, 0], None, True),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities ",
     pod(preferred=AFFINITY2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
     [18, MAX_NODE_SCORE, 36], None, True),
    ("added affinity", pod(), [("node1", LABEL1), ("node2", LABEL2)], [MAX_NODE_SCORE, 0],
     NodeAffinityArgs(node_affinity(preferred=AFFINITY1)), True),
    ("added affinity and pod has default affinity", pod(preferred=AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)], [40, 60, MAX_NODE_SCORE],
     NodeAffinityArgs(node_affinity(preferred=[(3, {"expr": [_in("key", "value")]})])), True),
    ("calculate the priorities correctly even if PreScore is not called", pod(preferred=AFFINITY2),
     [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [18, MAX_NODE_SCORE, 36], None, False),
]


@pytest.mark.parametrize(("name", "pod_", "nodes", "expected", "args", "run_pre_score"), SCORE_CASES)
def test_node_affinity_priority(name: str, pod_: Pod, nodes: list[tuple[str, dict[str, str]]],
                                expected: list[int], args: NodeAffinityArgs | None, run_pre_score: bool) -> None:
    node_objs = [node(n, labels) for n, labels in nodes]
    infos = [NodeInfo(n) for n in node_objs]
    pl = _plugin(args, node_objs)
    state = CycleState()
    if run_pre_score:
        status = pl.pre_score(state, pod_, infos)
        # A pod without preferred terms and no added preferred terms skips Score.
        assert status is None or is_skip(status)
    got = score_each(pl, state, pod_, infos)
    assert pl.normalize_score(state, pod_, got) is None
    assert [s.score for s in got] == expected


@pytest.mark.parametrize(
    ("name", "pod_", "args", "want"),
    [
        ("no affinity skips", pod(), None, SKIP),
        ("pod preferred terms", pod(preferred=AFFINITY1), None, None),
        ("added preferred terms", pod(), NodeAffinityArgs(node_affinity(preferred=AFFINITY1)), None),
        # Not in kube's table: an invalid preferred term is an error, as NewPreferredSchedulingTerms returns.
        ("invalid preferred term", pod(preferred=[(1, {"expr": [("foo", "Gt", ["x", "y"])]})]), None,
         "error"),
    ],
)
def test_pre_score(name: str, pod_: Pod, args: NodeAffinityArgs | None, want: Any) -> None:
    status = _plugin(args).pre_score(CycleState(), pod_, [])
    if want == "error":
        assert status is not None and status.code == Code.ERROR
    else:
        assert status == want


POD_FOO_BAR = make_pod("p").node_affinity_in("foo", ["bar"]).obj()
ADDED_FOO_BAR = NodeAffinityArgs(node_affinity(required=[{"expr": [_in("foo", "bar")]}]))


@pytest.mark.parametrize(
    ("name", "args", "old", "new", "want"),
    [
        ("backoff-wrong-new-object", None, None, "not-a-node", QueueingHint.QUEUE),
        ("backoff-wrong-old-object", None, "not-a-node", make_node("n").obj(), QueueingHint.QUEUE),
        ("skip-queue-on-add", None, None, make_node("n").obj(), QueueingHint.QUEUE_SKIP),
        ("queue-on-add", None, None, make_node("n").label("foo", "bar").obj(), QueueingHint.QUEUE),
        ("skip-unrelated-changes", None, make_node("n").obj(), make_node("n").capacity(cpu="1").obj(),
         QueueingHint.QUEUE_SKIP),
        ("skip-unrelated-changes-on-labels", None, make_node("n").obj(), make_node("n").label("k", "v").obj(),
         QueueingHint.QUEUE_SKIP),
        ("skip-labels-changes-on-suitable-node", None, make_node("n").label("foo", "bar").obj(),
         make_node("n").label("foo", "bar").label("k", "v").obj(), QueueingHint.QUEUE_SKIP),
        ("skip-labels-changes-on-node-from-suitable-to-unsuitable", None,
         make_node("n").label("foo", "bar").obj(), make_node("n").label("k", "v").obj(),
         QueueingHint.QUEUE_SKIP),
        ("queue-on-labels-change-makes-pod-schedulable", None, make_node("n").obj(),
         make_node("n").label("foo", "bar").obj(), QueueingHint.QUEUE),
        ("skip-queue-on-add-scheduler-enforced-node-affinity", ADDED_FOO_BAR, None, make_node("n").obj(),
         QueueingHint.QUEUE_SKIP),
        ("queue-on-add-scheduler-enforced-node-affinity", ADDED_FOO_BAR, None,
         make_node("n").label("foo", "bar").obj(), QueueingHint.QUEUE),
    ],
)
def test_is_schedulable_after_node_change(name: str, args: NodeAffinityArgs | None, old: object, new: object,
                                          want: QueueingHint) -> None:
    assert _plugin(args).is_schedulable_after_node_change(POD_FOO_BAR, old, new) == want


def test_events_to_register() -> None:
    events = [(e.event.resource, e.event.action_type) for e in _plugin().events_to_register()]
    assert events == [(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]


def test_new_rejects_invalid_added_affinity() -> None:
    bad = NodeAffinityArgs(node_affinity(required=[{"expr": [("foo", "Bogus", ["x"])]}]))
    with pytest.raises(ConfigError, match=r'addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.'
                       r'nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.operator: Unsupported value: "Bogus"'):
        nodeaffinity.new(bad, FakeHandle())
