"""PodTopologySpread's default constraints with the selector DefaultSelector deduces from Services and
ReplicaSets: ports of the cases of filtering_test.go (TestPreFilterState) and scoring_test.go
(TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore) that have such objects."""

from __future__ import annotations

from typing import Any, cast

import pytest

from wasmsched.api.types import Node, Pod, TopologySpreadConstraint
from wasmsched.config.args import PodTopologySpreadArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import podtopologyspread
from wasmsched.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY
from wasmsched.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, topology_normalizing_weight
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

from .test_helper_spread import replica_set, service
from .util import add_spread_constraints, labeled_node, pods_on, score_each

DNS, SA = "DoNotSchedule", "ScheduleAnyway"
HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
NS = "default"
FOO = "foo"  # fooSelector: st.MakeLabelSelector().Exists("foo"), as a selector string


def defaults(*constraints: tuple[int, str, str]) -> PodTopologySpreadArgs:
    """ListDefaulting with these (maxSkew, topologyKey, whenUnsatisfiable) default constraints."""
    return PodTopologySpreadArgs(
        [TopologySpreadConstraint(maxSkew=m, topologyKey=k, whenUnsatisfiable=w) for m, k, w in constraints], "List")


SYSTEM = PodTopologySpreadArgs()


def plugin(args: PodTopologySpreadArgs, nodes: list[Node], objects: list[Any],
           pods: list[Pod] | None = None) -> tuple[Any, FakeHandle]:
    h = FakeHandle(pods=pods or [], nodes=nodes, client=RecordingClient(objects=objects))
    return podtopologyspread.new(args, h), h


def rs_owned(labels: dict[str, str], rs: str = "rs1") -> Pod:
    return make_pod("p", NS).labels(labels).owner_reference(rs, "apps/v1", "ReplicaSet").obj()


def constraints_view(constraints: Any) -> list[tuple[str, int, str]]:
    return [(c.topology_key, c.max_skew, str(c.selector)) for c in constraints]


# ---- filtering_test.go TestPreFilterState ------------------------------------------------------

def test_pre_filter_default_constraints_and_a_service() -> None:
    pl, _ = plugin(defaults((3, "node", DNS), (2, "node", SA), (5, "rack", DNS)), [],
                   [service("s", {"foo": "bar"}, NS)])
    state = CycleState()
    _, st = pl.pre_filter(state, make_pod("p", NS).labels({"foo": "bar", "baz": "kar"}).obj(), [])
    assert st is None
    s = state.read(PRE_FILTER_STATE_KEY)
    assert constraints_view(s.constraints) == [("node", 3, "foo=bar"), ("rack", 5, "foo=bar")]
    assert s.tp_value_to_match_num == [{}, {}]


@pytest.mark.parametrize(
    ("case", "args", "svc_selector"),
    [
        ("default constraints and a service that doesn't match", defaults((3, "node", DNS)), {"baz": "kep"}),
        ("default soft constraints and a service", defaults((2, "node", SA)), {"foo": "bar"}),
    ],
)
def test_pre_filter_default_constraints_skip(case: str, args: PodTopologySpreadArgs,
                                             svc_selector: dict[str, str]) -> None:
    pl, _ = plugin(args, [], [service("s", svc_selector, NS)])
    _, st = pl.pre_filter(CycleState(), make_pod("p", NS).label("foo", "bar").obj(), [])
    assert is_skip(st), case


def test_pre_filter_default_constraints_and_a_service_but_pod_has_constraints() -> None:
    pl, _ = plugin(defaults((2, "node", DNS)), [], [service("s", {"foo": "bar"}, NS)])
    p = (make_pod("p", NS).labels({"foo": "bar", "baz": "tar"})
         .spread_constraint(1, "zone", DNS, {"baz": "tar"}).spread_constraint(2, "planet", SA, {"fot": "rok"}).obj())
    state = CycleState()
    _, st = pl.pre_filter(state, p, [])
    assert st is None
    assert constraints_view(state.read(PRE_FILTER_STATE_KEY).constraints) == [("zone", 1, "baz=tar")]


# ---- scoring_test.go TestPreScoreSkip and TestPreScoreStateEmptyNodes --------------------------

def _pre_score(pl: Any, h: FakeHandle, p: Pod) -> Any:
    state = CycleState()
    st = pl.pre_score(state, p, h.snapshot_shared_lister().list())
    if st is not None:
        assert is_skip(st)
        return None
    return state.read(PRE_SCORE_STATE_KEY)


def test_pre_score_skip_default_constraints_and_a_replicaset_that_does_not_match() -> None:
    rs1 = replica_set("rs1", exprs=[("tar", "Exists", [])], ns=NS)
    pl, h = plugin(defaults((2, "planet", SA)), [labeled_node("node-a", planet="mars")], [rs1])
    assert _pre_score(pl, h, rs_owned({"foo": "bar", "baz": "sup"}, "rs2")) is None


def test_pre_score_system_default_constraints_and_a_replicaset() -> None:
    nodes = [make_node("node-a").label(ZONE, "mars").obj(), make_node("node-b").label(ZONE, "mars").obj(),
             # Nodes with no zone are not excluded. They are considered a separate zone.
             make_node("node-c").obj(), make_node("node-d").obj()]
    pl, h = plugin(SYSTEM, nodes, [replica_set("rs1", exprs=[("foo", "Exists", [])], ns=NS)])
    s = _pre_score(pl, h, rs_owned({"foo": "tar", "baz": "sup"}))
    assert constraints_view(s.constraints) == [(HOST, 3, FOO), (ZONE, 5, FOO)]
    assert s.ignored_nodes == set()
    assert s.topology_value_to_pod_counts == [{}, {"mars": 0, "": 0}]
    assert s.topology_normalizing_weight == [topology_normalizing_weight(4), topology_normalizing_weight(2)]


def test_pre_score_default_constraints_and_a_replicaset() -> None:
    args = defaults((1, HOST, SA), (2, "rack", DNS), (2, "planet", SA))
    node = make_node("node-a").labels({"rack": "rack1", "planet": "mars"}).obj()
    pl, h = plugin(args, [node], [replica_set("rs1", exprs=[("foo", "Exists", [])], ns=NS)])
    s = _pre_score(pl, h, rs_owned({"foo": "tar", "baz": "sup"}))
    assert constraints_view(s.constraints) == [(HOST, 1, FOO), ("planet", 2, FOO)]
    assert s.topology_value_to_pod_counts == [{}, {"mars": 0}]
    assert s.topology_normalizing_weight == [topology_normalizing_weight(1), topology_normalizing_weight(1)]


def test_pre_score_default_constraints_and_a_replicaset_but_pod_has_constraints() -> None:
    p = add_spread_constraints(rs_owned({"foo": "bar", "baz": "sup"}), (1, "zone", DNS, ("bar",)))
    c = p.spec.topologySpreadConstraints.add(maxSkew=2, topologyKey="planet", whenUnsatisfiable=SA)
    c.labelSelector.matchLabels["baz"] = "sup"
    node = labeled_node("node-a", planet="mars", galaxy="andromeda")
    pl, h = plugin(defaults((2, "galaxy", SA)), [node], [replica_set("rs1", exprs=[("foo", "Exists", [])], ns=NS)])
    s = _pre_score(pl, h, p)
    assert constraints_view(s.constraints) == [("planet", 2, "baz=sup")]
    assert s.topology_value_to_pod_counts == [{"mars": 0}]


# ---- scoring_test.go TestPodTopologySpreadScore ------------------------------------------------

def test_score_system_defaulting_nodes_without_zone_pods_match_service() -> None:
    existing = pods_on("node-a:4 node-b:3 node-c:2 node-d:1", foo="")
    nodes = [make_node(n).obj() for n in ("node-a", "node-b", "node-c", "node-d")]
    pl, h = plugin(SYSTEM, nodes, [service("svc", {"foo": ""}, NS)], existing)
    p = make_pod("p", NS).label("foo", "").obj()
    snap = h.snapshot_shared_lister()
    filtered = cast(list[NodeInfo], [snap.get(n.metadata.name) for n in nodes])
    state = CycleState()
    assert pl.pre_score(state, p, filtered) is None
    scores = score_each(pl, state, p, filtered)
    assert pl.score_extensions().normalize_score(state, p, scores) is None
    # Same scores as if we were using one spreading constraint.
    assert {s.name: s.score for s in scores} == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
