"""Ports of podtopologyspread/scoring_test.go (TestPodTopologySpreadScore) plus PreScore skip behaviour."""

from __future__ import annotations

from typing import Any, cast

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import PodTopologySpreadArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import podtopologyspread
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

from .util import add_spread_constraints, pods_on, score_each

HOST = "kubernetes.io/hostname"
SA, DNS = "ScheduleAnyway", "DoNotSchedule"
FOO = ("foo",)


def node(name: str, no_hostname: bool = False, **labels: str) -> Node:
    n = make_node(name).labels(labels).obj()
    if no_hostname:
        # st.MakeNode() sets no hostname label; our builder does, so drop it where kube's case lacks it.
        del n.metadata.labels[HOST]
    return n


def hnodes(*names: str) -> list[Node]:
    return [node(n) for n in names]


def incoming(labels: dict[str, str], *constraints: tuple[Any, ...]) -> Pod:
    return add_spread_constraints(make_pod("p").labels(labels).obj(), *constraints)


CASES = [
    ("one constraint on node, no existing pods", incoming({"foo": ""}, (1, HOST, SA, FOO)), [],
     hnodes("node-a", "node-b"), [], {"node-a": 100, "node-b": 100}),
    ("one constraint on node, only one node is candidate", incoming({"foo": ""}, (1, HOST, SA, FOO)),
     pods_on("node-a:2 node-b:1", foo=""), hnodes("node-a"), hnodes("node-b"), {"node-a": 100}),
    ("one constraint on node, all nodes have the same number of matching pods",
     incoming({"foo": ""}, (1, HOST, SA, FOO)), pods_on("node-a:1 node-b:1", foo=""), hnodes("node-a", "node-b"), [],
     {"node-a": 100, "node-b": 100}),
    ("one constraint on node, all 4 nodes are candidates", incoming({"foo": ""}, (1, HOST, SA, FOO)),
     pods_on("node-a:2 node-b:1 node-d:3", foo=""), hnodes("node-a", "node-b", "node-c", "node-d"), [],
     {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    ("one constraint on node, null selector", incoming({"foo": ""}, (1, HOST, SA, None)),
     pods_on("node-a:2 node-b:1 node-d:3", foo=""), hnodes("node-a", "node-b", "node-c", "node-d"), [],
     {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", incoming({"foo": ""}, (2, HOST, SA, FOO)),
     pods_on("node-a:2 node-b:1 node-d:3", foo=""), hnodes("node-a", "node-b", "node-c", "node-d"), [],
     {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", incoming({"foo": ""}, (3, HOST, SA, FOO)),
     pods_on("node-a:4 node-b:3 node-c:2 node-d:1", foo=""), hnodes("node-a", "node-b", "node-c", "node-d"), [],
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates", incoming({"foo": ""}, (1, HOST, SA, FOO)),
     pods_on("node-a:4 node-b:2 node-x:1 node-y:3", foo=""), hnodes("node-a", "node-b", "node-x"), hnodes("node-y"),
     {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     incoming({"foo": ""}, (1, HOST, SA, FOO)), pods_on("node-a:4 node-b:2 node-x:1 node-y:3", foo=""),
     [node("node-a"), node("node-b", True, n="node-b"), node("node-x")], hnodes("node-y"),
     {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 3 out of 4 nodes are candidates", incoming({"foo": ""}, (1, "zone", SA, FOO)),
     pods_on("node-a:4 node-b:2 node-x:1 node-y:3", foo=""),
     [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x", zone="zone2")],
     [node("node-y", zone="zone2")], {"node-a": 75, "node-b": 75, "node-x": 100}),
]


def _run(p: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node],
         args: PodTopologySpreadArgs | None = None) -> dict[str, int] | None:
    h = FakeHandle(pods=existing, nodes=nodes + failed)
    pl: Any = podtopologyspread.new(args or PodTopologySpreadArgs(defaulting_type="List"), h)
    snap = h.snapshot_shared_lister()
    filtered = cast(list[NodeInfo], [snap.get(n.metadata.name) for n in nodes])
    state = CycleState()
    st = pl.pre_score(state, p, filtered)
    if st is not None:
        assert is_skip(st)
        return None
    scores = score_each(pl, state, p, filtered)
    assert pl.score_extensions().normalize_score(state, p, scores) is None
    return {s.name: s.score for s in scores}


@pytest.mark.parametrize("name,p,existing,nodes,failed,want", CASES, ids=[c[0] for c in CASES])
def test_pod_topology_spread_score(name: str, p: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node],
                                   want: dict[str, int]) -> None:
    assert _run(p, existing, nodes, failed) == want


def test_pre_score_skips_without_soft_constraints() -> None:
    p = incoming({"foo": ""}, (1, HOST, DNS, FOO))
    assert _run(p, [], hnodes("node-a"), []) is None


def test_pre_score_skips_with_system_defaults_and_no_selector() -> None:
    # System default constraints use the default selector, which is empty without Services etc.
    p = make_pod("p").label("foo", "").obj()
    assert _run(p, [], hnodes("node-a"), [], PodTopologySpreadArgs()) is None


def test_pre_score_skips_without_nodes() -> None:
    h = FakeHandle(pods=[], nodes=[])
    pl: Any = podtopologyspread.new(PodTopologySpreadArgs(defaulting_type="List"), h)
    st = pl.pre_score(CycleState(), incoming({"foo": ""}, (1, HOST, SA, FOO)), [])
    assert is_skip(st)


def test_events_to_register() -> None:
    h = FakeHandle(pods=[], nodes=[])
    pl: Any = podtopologyspread.new(None, h)
    events = [(e.event.resource, int(e.event.action_type)) for e in pl.events_to_register()]
    from wasmsched.framework.events import ActionType as A
    assert events == [
        ("AssignedPod", int(A.ADD | A.UPDATE_POD_LABEL | A.DELETE)),
        ("TargetPod", int(A.UPDATE_POD_TOLERATION | A.UPDATE_POD_LABEL)),
        ("Node", int(A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT)),
    ]
