"""Ports of podtopologyspread/filtering_test.go (TestPreFilterState, AddPod/RemovePod, TestSingleConstraint,
TestMultipleConstraints, TestPreFilterDisabled)."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import PodTopologySpreadArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, is_skip, is_success
from wasmsched.framework.types import PodInfo
from wasmsched.plugins import podtopologyspread
from wasmsched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
)
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

from .util import add_spread_constraints, pods_on

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
FOO = ("foo",)  # st.MakeLabelSelector().Exists("foo")
BAR = ("bar",)


def node(name: str, taint: bool = False, **labels: str) -> Node:
    w = make_node(name).labels(labels)
    if taint:
        w.taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
    return w.obj()


def pod(name: str, node_name: str = "", ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    p = make_pod(name, ns).labels(labels).node(node_name).obj()
    if terminating:
        p.metadata.deletionTimestamp.seconds = 1
    return p


def incoming(labels: dict[str, str], *constraints: tuple[Any, ...], node_selector: dict[str, str] | None = None,
             affinity: tuple[str, str, list[str]] | None = None, tolerate_unschedulable: bool = False) -> Pod:
    """constraints: (maxSkew, key, when, exists-keys | None (nil selector), extra fields dict)."""
    w = make_pod("p").labels(labels)
    if node_selector:
        w.node_selector(node_selector)
    if affinity:
        w.node_affinity_in(affinity[0], affinity[2], affinity[1])
    if tolerate_unschedulable:
        w.toleration("node.kubernetes.io/unschedulable", operator="Exists")
    return add_spread_constraints(w.obj(), *constraints)


def new_plugin(pods: list[Pod], nodes: list[Node]) -> tuple[Any, FakeHandle]:
    h = FakeHandle(pods=pods, nodes=nodes)
    return podtopologyspread.new(PodTopologySpreadArgs(defaulting_type="List"), h), h


def _four_nodes(zone_b: str = "zone") -> list[Node]:
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", **{zone_b: "zone1", "node": "node-b"}),  # type: ignore[arg-type]
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


# ---- TestSingleConstraint ----------------------------------------------------------------------

SINGLE = [
    ("no existing pods", incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(), [],
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("no existing pods, incoming pod doesn't match itself", incoming({"foo": ""}, (1, "zone", DNS, BAR)),
     _four_nodes(), [], {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("existing pods in a different namespace do not count", incoming({"foo": ""}, (1, "zone", DNS, FOO)),
     _four_nodes(),
     [pod("p-a1", "node-a", "ns1", foo=""), pod("p-b1", "node-a", "ns2", foo=""), pod("p-x1", "node-x", foo=""),
      pod("p-y1", "node-y", foo="")],
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    ("existing pods do not match null selector", incoming({"foo": ""}, (1, "zone", DNS, None)), _four_nodes(),
     pods_on("node-x:1 node-y:1", foo=""), {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("pods spread across zones as 3/3, all nodes fit", incoming({"foo": ""}, (1, "zone", DNS, FOO)),
     _four_nodes(), pods_on("node-a:2 node-b:1 node-y:3", foo=""),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes("zon"),
     pods_on("node-a:1 node-b:1 node-x:1 node-y:1", foo=""),
     {"node-a": S, "node-b": UU, "node-x": U, "node-y": U}),
    ("pod cannot be scheduled as all nodes don't have label 'rack'", incoming({"foo": ""}, (1, "rack", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")], [],
     {"node-a": UU, "node-x": UU}),
    ("pods spread across nodes as 2/1/0/3, only node-x fits", incoming({"foo": ""}, (1, "node", DNS, FOO)),
     _four_nodes(), pods_on("node-a:2 node-b:1 node-y:3", foo=""),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     incoming({"foo": ""}, (2, "node", DNS, FOO)), _four_nodes(), pods_on("node-a:2 node-b:1 node-y:3", foo=""),
     {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     incoming({"bar": ""}, (1, "node", DNS, FOO)), _four_nodes(), pods_on("node-a:2 node-b:1 node-y:3", foo=""),
     {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     incoming({"foo": ""}, (1, "node", DNS, FOO), affinity=("node", "In", ["node-a", "node-y"])),
     _four_nodes(), pods_on("node-a:2 node-b:1 node-y:3", foo=""),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": U}),
    ("terminating Pods should be excluded", incoming({"foo": ""}, (1, "node", DNS, FOO)),
     [node("node-a", node="node-a"), node("node-b", node="node-b")],
     [pod("p-a", "node-a", terminating=True, foo=""), pod("p-b", "node-b", foo="")],
     {"node-a": S, "node-b": U}),
    ("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), affinity=("node", "NotIn", ["node-b"])),
     _four_nodes(), pods_on("node-b:2 node-y:1", foo=""),
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    (("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
     "then the third node fits"), incoming({"foo": ""}, (2, "node", DNS, FOO, {"minDomains": 4})),
     [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
     pods_on("node-a:2 node-b:2 node-c:1", foo=""), {"node-a": U, "node-b": U, "node-c": S}),
    (("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
     "then the all nodes fit"), incoming({"foo": ""}, (2, "node", DNS, FOO, {"minDomains": 2})),
     [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
     pods_on("node-a:2 node-b:2 node-c:1", foo=""), {"node-a": S, "node-b": S, "node-c": S}),
    (("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
     "then the third and fourth nodes fit"), incoming({"foo": ""}, (2, "zone", DNS, FOO, {"minDomains": 3})),
     _four_nodes(), pods_on("node-a:1 node-b:1 node-y:1", foo=""),
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    (("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
     "then the all nodes fit"), incoming({"foo": ""}, (2, "zone", DNS, FOO, {"minDomains": 1})),
     _four_nodes(), pods_on("node-a:1 node-b:1 node-y:1", foo=""),
     {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
]

_POLICY_NODES = [
    node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""), node("node-y", node="node-y"),
]
_TAINT_NODES = [
    node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""), node("node-y", True, node="node-y"),
]
_POLICY_PODS = pods_on("node-a:1 node-b:1 node-y:1", foo="")
SINGLE += [
    ("NodeAffinityPolicy honored with labelSelectors",
     incoming({"foo": ""}, (1, "node", DNS, FOO), node_selector={"foo": ""}), _POLICY_NODES, _POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeAffinityPolicy ignored with labelSelectors",
     incoming({"foo": ""}, (1, "node", DNS, FOO, {"nodeAffinityPolicy": "Ignore"}), node_selector={"foo": ""}),
     _POLICY_NODES, _POLICY_PODS, {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("NodeAffinityPolicy honored with nodeAffinity",
     incoming({"foo": ""}, (1, "node", DNS, FOO), affinity=("foo", "In", [""])), _POLICY_NODES, _POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     incoming({"foo": ""}, (1, "node", DNS, FOO, {"nodeAffinityPolicy": "Ignore"}),
              affinity=("foo", "In", [""])),
     _POLICY_NODES, _POLICY_PODS, {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("NodeTaintsPolicy honored", incoming({"foo": ""}, (1, "node", DNS, FOO, {"nodeTaintsPolicy": "Honor"})),
     _TAINT_NODES, _POLICY_PODS, {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    ("NodeTaintsPolicy ignored", incoming({"foo": ""}, (1, "node", DNS, FOO)),
     _TAINT_NODES, _POLICY_PODS, {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]


def _run_filter(p: Pod, nodes: list[Node], existing: list[Pod]) -> dict[str, int]:
    pl, h = new_plugin(existing, nodes)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    assert is_success(st), st
    got = {}
    for n in nodes:
        ni = snap.get(n.metadata.name)
        status = pl.filter(state, p, ni)
        got[n.metadata.name] = Code.SUCCESS if status is None else status.code
        if status is not None:
            want = ERR_REASON_NODE_LABEL_NOT_MATCH if status.code == UU else ERR_REASON_CONSTRAINTS_NOT_MATCH
            assert status.reasons == [want]
    infos = [ni for n in nodes if (ni := snap.get(n.metadata.name)) is not None]
    assert len(infos) == len(nodes)
    batch = filter_statuses(pl, state, p, infos)
    assert [Code.SUCCESS if s is None else s.code for s in batch] == list(got.values())
    return got


@pytest.mark.parametrize("name,p,nodes,existing,want", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_constraint(name: str, p: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, int]) -> None:
    assert _run_filter(p, nodes, existing) == want


# ---- TestMultipleConstraints -------------------------------------------------------------------

MULTI = [
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)), _four_nodes(),
     pods_on("node-a:2 node-b:1 node-y:3", foo=""), {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)), _four_nodes(),
     pods_on("node-a:2 node-b:1 node-y:4", foo=""), {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     incoming({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), _four_nodes(),
     [pod("p-a1", "node-a", foo=""), pod("p-y1", "node-y", bar="")],
     {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     incoming({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), _four_nodes(),
     [pod("p-a1", "node-a", foo=""), pod("p-x1", "node-x", bar=""), pod("p-y1", "node-y", bar="")],
     {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     incoming({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), _four_nodes(),
     [pod("p-a1", "node-a", foo=""), pod("p-a2", "node-a", foo="", bar=""), pod("p-y1", "node-y", foo=""),
      pod("p-y2", "node-y", foo="", bar=""), pod("p-y3", "node-y", foo="")],
     {"node-a": U, "node-b": S, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     incoming({"bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), _four_nodes(),
     [pod("p-a1", "node-a", foo=""), pod("p-x1", "node-x", bar=""), pod("p-y1", "node-y", bar="")],
     {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-x", zone="zone2"), node("node-y", zone="zone2", node="node-y")],
     [pod("p-a1", "node-a", foo=""), pod("p-y3", "node-y", foo="")],
     {"node-a": U, "node-b": S, "node-x": UU, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO, {"nodeAffinityPolicy": "Ignore"}),
              node_selector={"foo": ""}),
     [node("node-a", zone="zone1", node="node-a", foo=""), node("node-b", zone="zone1", node="node-b", foo=""),
      node("node-x", zone="zone2", node="node-x", foo=""), node("node-y", zone="zone2", node="node-y")],
     pods_on("node-a:1 node-b:1 node-y:1", foo=""), {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     incoming({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": "Honor"}), (1, "node", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a", foo=""), node("node-b", zone="zone1", node="node-b", foo=""),
      node("node-x", zone="zone2", node="node-x", foo=""), node("node-y", True, zone="zone2", node="node-y")],
     pods_on("node-a:1 node-b:1 node-y:1", foo=""), {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO), node_selector={"foo": ""}),
     [node("node-a", zone="zone1", node="node-a", foo=""), node("node-b", zone="zone1", node="node-b"),
      node("node-x", zone="zone2", node="node-x", foo=""), node("node-y", True, zone="zone2", node="node-y", foo="")],
     pods_on("node-a:1 node-b:1 node-y:1", foo=""), {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
]


@pytest.mark.parametrize("name,p,nodes,existing,want", MULTI, ids=[c[0] for c in MULTI])
def test_multiple_constraints(name: str, p: Pod, nodes: list[Node], existing: list[Pod],
                              want: dict[str, int]) -> None:
    assert _run_filter(p, nodes, existing) == want


# ---- TestPreFilterState ------------------------------------------------------------------------

def _state_view(s: PreFilterState) -> tuple[list[tuple[str, int]], list[dict[str, int]], list[int]]:
    return ([(c.topology_key, c.max_skew) for c in s.constraints], s.tp_value_to_match_num,
            [p.min_match_num() for p in s.critical_paths])


_MAXINT32 = (1 << 31) - 1
_AFFINITY_NODES = [
    node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""), node("node-c", node="node-c", bar=""),
]
_AFFINITY_PODS = [pod("p-a", "node-a", bar=""), pod("p-b", "node-b", bar=""), pod("p-c", "node-b", bar=""),
                  pod("p-d", "node-c")]
PRE_FILTER_STATE = [
    ("clean cluster with one spreadConstraint", incoming({"foo": ""}, (5, "zone", DNS, None, {})), _four_nodes(),
     [], ([("zone", 5)], [{"zone1": 0, "zone2": 0}], [0])),
    ("normal case with one spreadConstraint", incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(),
     pods_on("node-a:2 node-b:1 node-y:2", foo=""), ([("zone", 1)], [{"zone1": 3, "zone2": 2}], [2])),
    ("normal case with null label selector", incoming({"foo": ""}, (1, "zone", DNS, None)), _four_nodes(),
     pods_on("node-a:2 node-b:1 node-y:2", foo=""), ([("zone", 1)], [{"zone1": 0, "zone2": 0}], [0])),
    ("normal case with one spreadConstraint, on a 3-zone cluster", incoming({"foo": ""}, (1, "zone", DNS, FOO)),
     [*_four_nodes(), node("node-o", zone="zone3", node="node-o"), node("node-p", zone="zone3", node="node-p")],
     pods_on("node-a:2 node-b:1 node-y:2", foo=""),
     ([("zone", 1)], [{"zone1": 3, "zone2": 2, "zone3": 0}], [0])),
    ("namespace mismatch doesn't count", incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(),
     [pod("p-a1", "node-a", foo=""), pod("p-a2", "node-a", "ns1", foo=""), pod("p-b1", "node-b", foo=""),
      pod("p-y1", "node-y", "ns2", foo=""), pod("p-y2", "node-y", foo="")],
     ([("zone", 1)], [{"zone1": 2, "zone2": 1}], [1])),
    ("normal case with two spreadConstraints", incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
     _four_nodes(), pods_on("node-a:2 node-b:1 node-y:4", foo=""),
     ([("zone", 1), ("node", 1)],
      [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}], [3, 0])),
    ("soft spreadConstraints should be bypassed",
     incoming({"foo": ""}, (1, "zone", SA, FOO), (1, "zone", DNS, FOO), (1, "node", SA, FOO),
              (1, "node", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-y", zone="zone2", node="node-y")],
     pods_on("node-a:2 node-b:1 node-y:4", foo=""),
     ([("zone", 1), ("node", 1)], [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}], [3, 1])),
    ("different labelSelectors - simple version",
     incoming({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-y", zone="zone2", node="node-y")],
     [pod("p-a", "node-a", foo=""), pod("p-b", "node-b", bar="")],
     ([("zone", 1), ("node", 1)], [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}], [0, 0])),
    ("different labelSelectors - complex pods",
     incoming({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-y", zone="zone2", node="node-y")],
     [pod("p-a1", "node-a", foo=""), pod("p-a2", "node-a", foo="", bar=""), pod("p-b1", "node-b", foo=""),
      pod("p-y1", "node-y", foo=""), pod("p-y2", "node-y", foo="", bar=""), pod("p-y3", "node-y", foo=""),
      pod("p-y4", "node-y", foo="", bar="")],
     ([("zone", 1), ("node", 1)], [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}], [3, 0])),
    ("two spreadConstraints, and with podAffinity",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO), affinity=("node", "NotIn", ["node-x"])),
     _four_nodes(), pods_on("node-a:2 node-b:1 node-y:4", foo=""),
     ([("zone", 1), ("node", 1)], [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}], [3, 1])),
    ("NodeAffinityPolicy honored with labelSelectors",
     incoming({"foo": ""}, (1, "node", DNS, BAR), node_selector={"foo": ""}), _AFFINITY_NODES, _AFFINITY_PODS,
     ([("node", 1)], [{"node-a": 1, "node-b": 2}], [1])),
    ("NodeAffinityPolicy ignored with labelSelectors",
     incoming({"foo": ""}, (1, "node", DNS, BAR, {"nodeAffinityPolicy": "Ignore"}), node_selector={"foo": ""}),
     _AFFINITY_NODES, _AFFINITY_PODS, ([("node", 1)], [{"node-a": 1, "node-b": 2, "node-c": 0}], [0])),
    ("NodeTaintsPolicy honored with tolerated taints (extra, derived from filtering.go)",
     incoming({"foo": ""}, (1, "node", DNS, BAR, {"nodeTaintsPolicy": "Honor"}), tolerate_unschedulable=True),
     [node("node-a", True, node="node-a", foo=""), node("node-b", node="node-b", foo=""),
      node("node-c", node="node-c", bar="")], _AFFINITY_PODS,
     ([("node", 1)], [{"node-a": 1, "node-b": 2, "node-c": 0}], [0])),
    ("NodeTaintsPolicy honored with untolerated taints (extra, derived from filtering.go)",
     incoming({"foo": ""}, (1, "node", DNS, BAR, {"nodeTaintsPolicy": "Honor"})),
     [node("node-a", True, node="node-a", foo=""), node("node-b", node="node-b", foo=""),
      node("node-c", node="node-c", bar="")], _AFFINITY_PODS,
     ([("node", 1)], [{"node-b": 2, "node-c": 0}], [0])),
    ("matchLabelKeys merged into the selector (extra, derived from filtering.go)",
     incoming({"foo": "a", "bar": ""}, (1, "zone", DNS, BAR, {"matchLabelKeys": ["foo"]})), _four_nodes(),
     [pod("p-a1", "node-a", foo="a", bar=""), pod("p-a2", "node-a", foo="b", bar=""),
      pod("p-y1", "node-y", foo="a", bar=""), pod("p-y2", "node-y", foo="a")],
     ([("zone", 1)], [{"zone1": 1, "zone2": 1}], [1])),
    ("empty label selector counts no pods (extra, derived from filtering.go)",
     incoming({"foo": ""}, (1, "zone", DNS, ())), _four_nodes(), pods_on("node-a:2 node-y:1", foo=""),
     ([("zone", 1)], [{"zone1": 0, "zone2": 0}], [0])),
]


@pytest.mark.parametrize("name,p,nodes,existing,want", PRE_FILTER_STATE, ids=[c[0] for c in PRE_FILTER_STATE])
def test_pre_filter_state(name: str, p: Pod, nodes: list[Node], existing: list[Pod], want: Any) -> None:
    pl, h = new_plugin(existing, nodes)
    state = CycleState()
    _, st = pl.pre_filter(state, p, h.snapshot_shared_lister().list())
    assert st is None
    assert _state_view(state.read(PRE_FILTER_STATE_KEY)) == want


def test_pre_filter_skips_without_hard_constraints() -> None:
    pl, h = new_plugin([], [node("node-a", zone="z")])
    p = incoming({"foo": ""}, (1, "zone", SA, FOO))
    _, st = pl.pre_filter(CycleState(), p, h.snapshot_shared_lister().list())
    assert is_skip(st)


def test_pre_filter_system_defaults_skip() -> None:
    # System defaults use the default selector, empty without Services/controllers: Skip.
    h = FakeHandle(pods=[], nodes=[node("node-a", zone="z")])
    pl: Any = podtopologyspread.new(None, h)
    _, st = pl.pre_filter(CycleState(), make_pod("p").label("foo", "").obj(), h.snapshot_shared_lister().list())
    assert is_skip(st)


def test_pre_filter_disabled() -> None:
    # TestPreFilterDisabled: Filter without PreFilter state is an error.
    pl, h = new_plugin([], [node("node-a")])
    st = pl.filter(CycleState(), make_pod("p").obj(), h.snapshot_shared_lister().get("node-a"))
    assert st is not None and st.code == Code.ERROR


# ---- TestPreFilterStateAddPod / RemovePod ------------------------------------------------------

ADD_POD = [
    ("node a and b both impact current min match", incoming({"foo": ""}, (1, "node", DNS, FOO)), 1,
     pod("p-b1", "node-b", foo=""), [],
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
     ([("node", 1)], [{"node-a": 0, "node-b": 1}], [0])),
    ("only node a impacts current min match", incoming({"foo": ""}, (1, "node", DNS, FOO)), 0,
     pod("p-a1", "node-a", foo=""), [pod("p-b1", "node-b", foo="")],
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
     ([("node", 1)], [{"node-a": 1, "node-b": 1}], [1])),
    ("add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
     incoming({"foo": ""}, (1, "node", DNS, FOO)), 0, pod("p-a1", "node-a", "ns1", foo=""),
     [pod("p-a1", "node-a", foo="")],
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
     ([("node", 1)], [{"node-a": 1, "node-b": 0}], [0])),
    ("add pod on non-critical node won't trigger re-calculation",
     incoming({"foo": ""}, (1, "node", DNS, FOO)), 1, pod("p-b2", "node-b", foo=""),
     [pod("p-a1", "node-a", foo="")],
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
     ([("node", 1)], [{"node-a": 1, "node-b": 1}], [1])),
    ("add a label selector not matched pod when with NodeInclusionPolicy enabled",
     incoming({"foo": ""}, (1, "zone", DNS, FOO)), 1, pod("p-b1", "node-b", zone="zone2"),
     [pod("p-a1", "node-a", foo="", zone="zone1"), pod("p-b2", "node-b", foo="", zone="zone2")],
     [node("node-a", zone="zone1", node="node-a", foo="bar"), node("node-b", zone="zone2", node="node-b", foo="")],
     ([("zone", 1)], [{"zone1": 1, "zone2": 1}], [1])),
    ("add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), tolerate_unschedulable=True), 1,
     pod("p-b1", "node-b", foo="", zone="zone2"),
     [pod("p-a1", "node-a", foo="", zone="zone1"), pod("p-b2", "node-b", foo="", zone="zone2")],
     [node("node-a", True, zone="zone1", node="node-a"), node("node-b", zone="zone2", node="node-b")],
     ([("zone", 1)], [{"zone1": 1, "zone2": 2}], [1])),
]


@pytest.mark.parametrize("name,p,node_idx,added,existing,nodes,want", ADD_POD, ids=[c[0] for c in ADD_POD])
def test_pre_filter_state_add_pod(name: str, p: Pod, node_idx: int, added: Pod, existing: list[Pod],
                                  nodes: list[Node], want: Any) -> None:
    pl, h = new_plugin(existing, nodes)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    assert st is None
    ni = snap.get(nodes[node_idx].metadata.name)
    assert pl.pre_filter_extensions().add_pod(state, p, PodInfo(added), ni) is None
    assert _state_view(state.read(PRE_FILTER_STATE_KEY)) == want


REMOVE_POD = [
    ("one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
     incoming({"foo": ""}, (1, "zone", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-x", zone="zone2", node="node-x")],
     pods_on("node-a:1 node-b:1 node-x:1", foo=""), 0, None, 0, ([("zone", 1)], [{"zone1": 1, "zone2": 1}], [1])),
    ("one spreadConstraint on node, topologyKeyToMinPodsMap changed",
     incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(),
     pods_on("node-a:1 node-b:1 node-x:1 node-y:1", foo=""), 0, None, 0,
     ([("zone", 1)], [{"zone1": 1, "zone2": 2}], [1])),
    ("delete an irrelevant pod won't help", incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(),
     [pod("p-a0", "node-a", bar=""), *pods_on("node-a:1 node-b:1 node-x:1 node-y:1", foo="")], 0, None, 0,
     ([("zone", 1)], [{"zone1": 2, "zone2": 2}], [2])),
    ("delete a non-existing pod won't help", incoming({"foo": ""}, (1, "zone", DNS, FOO)), _four_nodes(),
     pods_on("node-a:1 node-b:1 node-x:1 node-y:1", foo=""), -1, pod("p-a0", "node-a", bar=""), 0,
     ([("zone", 1)], [{"zone1": 2, "zone2": 2}], [2])),
    ("two spreadConstraints", incoming({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
     [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
      node("node-x", zone="zone2", node="node-x")],
     pods_on("node-a:2 node-b:1 node-x:2", foo=""), 3, None, 2,
     ([("zone", 1), ("node", 1)], [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}], [1, 1])),
    ("remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     incoming({"foo": ""}, (1, "zone", DNS, FOO), affinity=("foo", "NotIn", ["bar"])),
     [node("node-a", zone="zone1", node="node-a", foo="bar"), node("node-b", zone="zone2", node="node-b", foo="")],
     [pod("p-a2", "node-a", foo="", zone="zone1"), pod("p-b1", "node-b", foo="", zone="zone2")], -1,
     pod("p-a1", "node-a", foo="", zone="zone1"), 0,
     ([("zone", 1)], [{"zone2": 1}], [1])),
]


@pytest.mark.parametrize("name,p,nodes,existing,deleted_idx,deleted,node_idx,want", REMOVE_POD,
                         ids=[c[0] for c in REMOVE_POD])
def test_pre_filter_state_remove_pod(name: str, p: Pod, nodes: list[Node], existing: list[Pod], deleted_idx: int,
                                     deleted: Pod | None, node_idx: int, want: Any) -> None:
    pl, h = new_plugin(existing, nodes)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    assert st is None
    victim = existing[deleted_idx] if deleted_idx >= 0 else deleted
    assert victim is not None
    ni = snap.get(nodes[node_idx].metadata.name)
    assert pl.pre_filter_extensions().remove_pod(state, p, PodInfo(victim), ni) is None
    assert _state_view(state.read(PRE_FILTER_STATE_KEY)) == want


def test_state_clone_is_independent() -> None:
    nodes = [node("node-a", node="node-a"), node("node-b", node="node-b")]
    p = incoming({"foo": ""}, (1, "node", DNS, FOO))
    pl, h = new_plugin(pods_on("node-a:1", foo=""), nodes)
    state = CycleState()
    pl.pre_filter(state, p, h.snapshot_shared_lister().list())
    c = state.clone()
    pl.add_pod(c, p, PodInfo(pod("p-b9", "node-b", foo="")), h.snapshot_shared_lister().get("node-b"))
    assert _state_view(state.read(PRE_FILTER_STATE_KEY))[1] == [{"node-a": 1, "node-b": 0}]
    assert _state_view(c.read(PRE_FILTER_STATE_KEY))[1] == [{"node-a": 1, "node-b": 1}]
