"""Ported from kube-scheduler's schedule_one_test.go: numFeasibleNodesToFind, the fair rotation
over nodes, FitError text, host selection, PreFilterResult narrowing, the nominated node path."""

from __future__ import annotations

import random
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.embedded.memory import KIND_NODE, KIND_POD, MemoryCluster
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.interface import (
    BindPlugin,
    FilterPlugin,
    NodePluginScores,
    NodeToStatus,
    PreFilterPlugin,
    PreFilterResult,
    ScorePlugin,
)
from wasmsched.framework.nodetable import ScoredNodes
from wasmsched.framework.runtime import PluginRef, ProfilePlugins
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import defaultbinder, prioritysort
from wasmsched.scheduler.algorithm import NoNodesAvailable, SchedulingAlgorithm, SchedulingError
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.queue import Nominator
from wasmsched.scheduler.scheduler import ProfileSpec, Scheduler, SchedulerOptions
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.util.clock import SimClock

ERR_REASON_FAKE = "Nodes failed the fake plugin"


def _algorithm(rng: random.Random, pct: int | None) -> SchedulingAlgorithm:
    return SchedulingAlgorithm(Cache(), Snapshot(), Nominator(), rng, pct)


# ----- numFeasibleNodesToFind ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "global_pct", "profile_pct", "num_all", "want"), [
    ("not set percentageOfNodesToScore and nodes number not more than 50", None, None, 10, 10),
    ("set profile percentageOfNodesToScore and nodes number not more than 50", None, 40, 10, 10),
    ("not set percentageOfNodesToScore and nodes number more than 50", None, None, 1000, 420),
    ("set profile percentageOfNodesToScore and nodes number more than 50", None, 40, 1000, 400),
    ("set global and profile percentageOfNodesToScore and nodes number more than 50", 100, 40, 1000, 400),
    ("set global percentageOfNodesToScore and nodes number more than 50", 40, None, 1000, 400),
    ("not set percentageOfNodesToScore and nodes number more than 50*125", None, None, 6000, 300),
    ("set profile percentageOfNodesToScore and nodes number more than 50*125", None, 40, 6000, 2400),
    ("profile percentage 0 means adaptive even with a global one", 40, 0, 1000, 420),
    ("exactly minFeasibleNodesToFind nodes", None, None, 100, 100),
    ("just above minFeasibleNodesToFind: at least 100", None, None, 120, 100),
    ("small percentage is raised to 100 nodes", None, 1, 1000, 100),
    ("adaptive percentage never below 5%", None, None, 100000, 5000),
])
def test_num_feasible_nodes_to_find(name: str, global_pct: int | None, profile_pct: int | None, num_all: int,
                                    want: int) -> None:
    algo = _algorithm(random.Random(0), global_pct)
    fwk = SimpleNamespace(percentage_of_nodes_to_score=profile_pct)
    assert algo.num_feasible_nodes_to_find(fwk, num_all) == want  # type: ignore[arg-type]


# ----- select_host --------------------------------------------------------------------------------


def _scores(*pairs: tuple[str, int]) -> list[NodePluginScores]:
    return [NodePluginScores(n, [], s) for n, s in pairs]


@pytest.mark.parametrize(("name", "scores", "possible"), [
    # TestSelectHost
    ("unique properly ordered scores", _scores(("node1.1", 1), ("node2.1", 2)), {"node2.1"}),
    ("equal scores", _scores(("node1.1", 1), ("node1.2", 2), ("node1.3", 2), ("node2.1", 2)),
     {"node1.2", "node1.3", "node2.1"}),
    ("out of order scores", _scores(("node1.1", 3), ("node1.2", 3), ("node2.1", 2), ("node3.1", 1), ("node1.3", 3)),
     {"node1.1", "node1.2", "node1.3"}),
    ("single node", _scores(("only", 0)), {"only"}),
])
def test_select_host(name: str, scores: list[NodePluginScores], possible: set[str]) -> None:
    got = set()
    for seed in range(200):
        algo = _algorithm(random.Random(seed), None)
        host = algo.select_host(scores)
        assert host in possible
        got.add(host)
    # Ties are broken at random: every best node gets picked sometimes.
    assert got == possible


def test_select_host_empty_list_is_an_error() -> None:
    algo = _algorithm(random.Random(0), None)
    # kube's selectHost returns errEmptyPriorityList.
    empties: list[Sequence[NodePluginScores]] = [[], ScoredNodes([], (), [])]
    for empty in empties:
        with pytest.raises(SchedulingError, match=r"^empty priorityList$"):
            algo.select_host(empty)


# ----- FitError -----------------------------------------------------------------------------------


def _fit(num: int, statuses: dict[str, Status], pre_filter_msg: str = "", post_filter_msg: str = "",
         absent: Status | None = None) -> str:
    d = Diagnosis(NodeToStatus(statuses), pre_filter_msg=pre_filter_msg, post_filter_msg=post_filter_msg)
    if absent is not None:
        d.node_to_status.absent_nodes_status = absent
    return str(FitError(make_pod("p").obj(), num, d))


@pytest.mark.parametrize(("name", "text", "want"), [
    ("one reason on every node",
     _fit(2, {"n1": Status.unschedulable(ERR_REASON_FAKE), "n2": Status.unschedulable(ERR_REASON_FAKE)}),
     "0/2 nodes are available: 2 Nodes failed the fake plugin."),
    ("reasons sorted as strings",
     _fit(3, {"n1": Status.unschedulable("Insufficient cpu"),
              "n2": Status.unresolvable("node(s) didn't match Pod's node affinity/selector"),
              "n3": Status.unresolvable("node(s) didn't match Pod's node affinity/selector")}),
     "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."),
    ("several reasons of one node all count",
     _fit(2, {"n1": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
              "n2": Status.unschedulable("Insufficient memory")}),
     "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."),
    ("absent nodes take the absent status",
     _fit(3, {"n1": Status.unschedulable("Insufficient cpu")},
          absent=Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")),
     "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."),
    ("PreFilter message replaces the node statuses",
     _fit(3, {}, pre_filter_msg="node(s) didn't match pod topology spread constraints (missing required label)",
          absent=Status.unresolvable("node(s) didn't match pod topology spread constraints (missing required label)")),
     "0/3 nodes are available: node(s) didn't match pod topology spread constraints (missing required label)."),
    # types.go FitError.Error appends the PostFilter message with " %v" (no extra period).
    ("PostFilter message appended",
     _fit(1, {"n1": Status.unschedulable("Insufficient cpu")},
          post_filter_msg="preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
     ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims "
     "found for incoming pod.")),
    ("no reasons at all", _fit(0, {}), "0/0 nodes are available:"),
])
def test_fit_error_text(name: str, text: str, want: str) -> None:
    assert text == want


# ----- the algorithm on a real scheduler -----------------------------------------------------------


class TrueFilter(FilterPlugin):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.seen.append(node_info.name)
        return None


class FalseFilter(FilterPlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable(ERR_REASON_FAKE)


class MatchFilter(FilterPlugin):
    """Passes only nodes named in `ok`."""

    def __init__(self, ok: set[str]) -> None:
        self.ok = ok

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if node_info.name in self.ok else Status.unschedulable(ERR_REASON_FAKE)


class ErrorFilter(FilterPlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.error("injected filter error")


class NodesPreFilter(PreFilterPlugin):
    def __init__(self, names: set[str] | None) -> None:
        self.names = names

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        return PreFilterResult(self.names), None


class NumericScore(ScorePlugin):
    """Scores a node by the number in its name (node-7 -> 7)."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return int(node_info.name.rsplit("-", 1)[1]) % 101, None


class ConstScore(ScorePlugin):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 1, None


def build(points: dict[str, list[tuple[str, Any]]], n_nodes: int = 0, node_names: list[str] | None = None,
          percentage: int | None = None, seed: int = 0) -> tuple[Scheduler, MemoryCluster, SimClock]:
    registry: dict[str, Any] = {"PrioritySort": prioritysort.new, "DefaultBinder": defaultbinder.new}
    cfg = ProfilePlugins()
    cfg.enabled["queue_sort"] = [PluginRef("PrioritySort")]
    cfg.enabled["bind"] = [PluginRef("DefaultBinder")]
    for point, entries in points.items():
        cfg.enabled.setdefault(point, [])
        for name, pl in entries:
            if point == "bind" and isinstance(pl, BindPlugin):
                cfg.enabled["bind"] = []
            pl.name = name
            registry[name] = lambda args, handle, pl=pl: pl
            cfg.enabled[point].append(PluginRef(name))
    clock = SimClock()
    cluster = MemoryCluster()
    sched = Scheduler([ProfileSpec("default-scheduler", cfg, {})], registry, cluster, cluster, clock.now,
                      SchedulerOptions(percentage_of_nodes_to_score=percentage, seed=seed))
    cluster.watch(KIND_NODE, sched.on_node_add, sched.on_node_update, sched.on_node_delete)
    cluster.watch(KIND_POD, sched.on_pod_add, sched.on_pod_update, sched.on_pod_delete)
    for name in node_names or [f"node-{i}" for i in range(n_nodes)]:
        cluster.create(make_node(name).res({"cpu": "4", "memory": "8Gi", "pods": "110"}).obj())
    return sched, cluster, clock


def _schedule(sched: Scheduler, pod: Pod) -> Any:
    fwk = sched.profiles["default-scheduler"]
    return sched.algorithm.schedule_pod(fwk, CycleState(), pod, None)


def test_fair_evaluation_for_nodes() -> None:
    # TestFairEvaluationForNodes: with 500 nodes and 30%, each cycle evaluates 150 nodes starting
    # where the previous one stopped.
    sched, _, _ = build({"filter": [("TrueFilter", TrueFilter())], "score": [("Score", ConstScore())]},
                        n_nodes=500, percentage=30)
    fwk = sched.profiles["default-scheduler"]
    to_find = sched.algorithm.num_feasible_nodes_to_find(fwk, 500)
    assert to_find == 150
    sched.cache.update_snapshot(sched.snapshot)
    pod = make_pod("p").uid("p").obj()
    for i in range(2 * (500 // to_find + 1)):
        feasible, _ = sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
        assert len(feasible) == to_find
        assert sched.algorithm.next_start_node_index == (i + 1) * to_find % 500


def test_rotation_starts_where_the_last_cycle_stopped() -> None:
    f = TrueFilter()
    sched, _, _ = build({"filter": [("TrueFilter", f)], "score": [("Score", ConstScore())]}, n_nodes=200,
                        percentage=50)
    fwk = sched.profiles["default-scheduler"]
    sched.cache.update_snapshot(sched.snapshot)
    order = [ni.name for ni in sched.snapshot.list()]
    pod = make_pod("p").uid("p").obj()
    feasible, _ = sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert [ni.name for ni in feasible] == order[:100]
    feasible, _ = sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert [ni.name for ni in feasible] == order[100:]


def test_without_scoring_one_feasible_node_is_enough() -> None:
    # findNodesThatPassFilters: without score plugins (and extenders) numNodesToFind is 1.
    sched, _, _ = build({"filter": [("TrueFilter", TrueFilter())]}, n_nodes=10)
    result = _schedule(sched, make_pod("p").uid("p").obj())
    assert (result.evaluated_nodes, result.feasible_nodes) == (1, 1)
    assert sched.algorithm.next_start_node_index == 1


def test_schedule_pod_fit_error() -> None:
    # TestSchedulerSchedulePod "test 1": FalseFilter on every node.
    sched, _, _ = build({"filter": [("FalseFilter", FalseFilter())]}, node_names=["node1", "node2"])
    with pytest.raises(FitError) as ei:
        _schedule(sched, make_pod("2").uid("2").obj())
    assert str(ei.value) == "0/2 nodes are available: 2 Nodes failed the fake plugin."
    d = ei.value.diagnosis
    assert d.unschedulable_plugins == {"FalseFilter"}
    assert {n: (st.code, st.plugin) for n, st in d.node_to_status.items()} == {
        "node1": (Code.UNSCHEDULABLE, "FalseFilter"), "node2": (Code.UNSCHEDULABLE, "FalseFilter")}


def test_schedule_pod_no_nodes() -> None:
    sched, _, _ = build({"filter": [("TrueFilter", TrueFilter())]})
    with pytest.raises(NoNodesAvailable, match="no nodes available to schedule pods"):
        _schedule(sched, make_pod("p").uid("p").obj())


def test_schedule_pod_filter_error() -> None:
    sched, _, _ = build({"filter": [("ErrorFilter", ErrorFilter())]}, n_nodes=2)
    with pytest.raises(Exception, match='running "ErrorFilter" filter plugin: injected filter error'):
        _schedule(sched, make_pod("p").uid("p").obj())


class ErrorOnFilter(FilterPlugin):
    """Passes the nodes in `ok`, fails with an Error on `error`, rejects the others."""

    def __init__(self, ok: set[str], error: str) -> None:
        self.ok, self.error = ok, error

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name == self.error:
            return Status.error(f"injected filter error on {node_info.name}")
        return None if node_info.name in self.ok else Status.unschedulable(ERR_REASON_FAKE)


def test_a_filter_error_still_moves_the_next_walks_start() -> None:
    # findNodesThatFitPod updates nextStartNodeIndex "regardless of whether an error has occurred": by the
    # nodes looked at before the failing one (one feasible, one rejected here), so the next cycle starts at it.
    sched, _, _ = build({"filter": [("F", ErrorOnFilter({"node-0", "node-4"}, "node-2"))],
                         "score": [("Score", ConstScore())]}, node_names=[f"node-{i}" for i in range(5)])
    fwk = sched.profiles["default-scheduler"]
    sched.cache.update_snapshot(sched.snapshot)
    order = [ni.name for ni in sched.snapshot.list()]
    assert order[:3] == ["node-0", "node-1", "node-2"]
    pod = make_pod("p").uid("p").obj()
    with pytest.raises(Exception, match="injected filter error on node-2"):
        sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert sched.algorithm.next_start_node_index == 2
    with pytest.raises(Exception, match="injected filter error on node-2"):
        sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert sched.algorithm.next_start_node_index == 2  # the failing node was first: nothing looked at before


def test_schedule_pod_picks_best_score() -> None:
    sched, _, _ = build({"filter": [("TrueFilter", TrueFilter())], "score": [("NumericScore", NumericScore())]},
                        n_nodes=5)
    result = _schedule(sched, make_pod("p").uid("p").obj())
    assert result.suggested_host == "node-4"
    assert (result.evaluated_nodes, result.feasible_nodes) == (5, 5)


def test_schedule_pod_single_feasible_node_skips_scoring() -> None:
    sched, _, _ = build({"filter": [("Match", MatchFilter({"node-2"}))], "score": [("NumericScore", NumericScore())]},
                        n_nodes=4)
    result = _schedule(sched, make_pod("p").uid("p").obj())
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("node-2", 4, 1)


def test_pre_filter_result_narrows_the_nodes() -> None:
    f = TrueFilter()
    sched, _, _ = build({"pre_filter": [("PF", NodesPreFilter({"node-1", "node-3", "ghost"}))],
                         "filter": [("TrueFilter", f)], "score": [("NumericScore", NumericScore())]}, n_nodes=5)
    result = _schedule(sched, make_pod("p").uid("p").obj())
    assert sorted(f.seen) == ["node-1", "node-3"]
    assert result.suggested_host == "node-3"


def test_pre_filter_result_absent_nodes_in_fit_error() -> None:
    sched, _, _ = build({"pre_filter": [("PF", NodesPreFilter({"node-1"}))],
                         "filter": [("FalseFilter", FalseFilter())]}, n_nodes=3)
    with pytest.raises(FitError) as ei:
        _schedule(sched, make_pod("p").uid("p").obj())
    assert str(ei.value) == ("0/3 nodes are available: 1 Nodes failed the fake plugin, "
                             "2 node(s) didn't satisfy plugin(s) [PF].")


def test_pre_filter_rejection_in_fit_error() -> None:
    sched, _, _ = build({"pre_filter": [("PF", NodesPreFilter(set()))], "filter": [("TrueFilter", TrueFilter())]},
                        n_nodes=3)
    with pytest.raises(FitError) as ei:
        _schedule(sched, make_pod("p").uid("p").obj())
    assert str(ei.value) == "0/3 nodes are available: node(s) didn't satisfy plugin PF."
    assert ei.value.diagnosis.unschedulable_plugins == {"PF"}


def test_nominated_node_is_tried_first() -> None:
    f = TrueFilter()
    sched, _, _ = build({"filter": [("TrueFilter", f)], "score": [("NumericScore", NumericScore())]}, n_nodes=5)
    pod = make_pod("p").uid("p").nominated_node("node-1").obj()
    result = _schedule(sched, pod)
    assert f.seen == ["node-1"]
    assert result.suggested_host == "node-1"


def test_nominated_node_failing_falls_back_to_all_nodes() -> None:
    sched, _, _ = build({"filter": [("Match", MatchFilter({"node-2", "node-3"}))],
                         "score": [("NumericScore", NumericScore())]}, n_nodes=5)
    pod = make_pod("p").uid("p").nominated_node("node-1").obj()
    result = _schedule(sched, pod)
    assert result.suggested_host == "node-3"


class ErrorFirstCall(FilterPlugin):
    """An Error on its first call, then passes the nodes in `ok` and rejects the others."""

    def __init__(self, ok: set[str]) -> None:
        self.ok, self.calls = ok, 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        if self.calls == 1:
            return Status.error(f"injected filter error on {node_info.name}")
        return None if node_info.name in self.ok else Status.unschedulable(ERR_REASON_FAKE)


def test_nominated_node_filter_error_falls_back_to_all_nodes() -> None:
    # evaluateNominatedNode's error is logged, not returned: the walk over all nodes decides
    sched, _, _ = build({"filter": [("F", ErrorFirstCall({"node-3"}))],
                         "score": [("NumericScore", NumericScore())]}, n_nodes=5)
    pod = make_pod("p").uid("p").nominated_node("node-1").obj()
    result = _schedule(sched, pod)
    assert result.suggested_host == "node-3"


def test_without_scores_the_walk_ends_at_one_feasible_node_more() -> None:
    # kube's walk wants one feasible node but cancels itself only when it finds a second (dropped): an
    # Error between the two ends the cycle, and the next walk starts after the node kept.
    sched, _, _ = build({"filter": [("F", ErrorOnFilter({"node-0", "node-2"}, "node-1"))]}, n_nodes=3)
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.profiles["default-scheduler"]
    pod = make_pod("p").uid("p").obj()
    with pytest.raises(Exception, match="injected filter error on node-1"):
        sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert sched.algorithm.next_start_node_index == 1


@pytest.mark.parametrize("second", [5, 31, 32, 36])
def test_the_walk_to_one_feasible_node_more_goes_past_the_chunk(second: int) -> None:
    # Nodes are filtered in chunks of 32: the second feasible node (where kube cancels the walk) may be in
    # the chunk that found the first one or after it. Either way every node up to it is rejected and
    # recorded, none after it, and the next walk starts after it.
    sched, _, _ = build({"filter": [("F", MatchFilter(set()))]}, n_nodes=40)
    sched.cache.update_snapshot(sched.snapshot)
    order = [ni.name for ni in sched.snapshot.list()]
    fwk = sched.profiles["default-scheduler"]
    fwk.plugins.filter[0].ok = {order[0], order[second]}  # type: ignore[attr-defined]
    feasible, diagnosis = sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), make_pod("p").uid("p").obj())
    assert [ni.name for ni in feasible] == [order[0]]
    assert [n for n in order if diagnosis.node_to_status.has(n)] == order[1:second]
    assert sched.algorithm.next_start_node_index == second


@pytest.mark.parametrize("lowest_name", [False, True])
def test_without_scores_nodes_after_the_second_feasible_one_are_not_walked(lowest_name: bool) -> None:
    # An Error after the second feasible node is not kube's; the lowest-name mode still filters those
    # nodes afterwards, for the lowest name, keeping their Errors as verdicts only.
    sched, _, _ = build({"filter": [("F", ErrorOnFilter({"node-0", "node-1"}, "node-2"))]}, n_nodes=3)
    if lowest_name:
        sched.algorithm.rng = None
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.profiles["default-scheduler"]
    pod = make_pod("p").uid("p").obj()
    feasible, diagnosis = sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert [ni.name for ni in feasible] == (["node-0", "node-1"] if lowest_name else ["node-0"])
    assert sched.algorithm.next_start_node_index == 1
    assert diagnosis.node_to_status.has("node-2") == lowest_name


def test_nominated_node_filter_error_then_the_walks_first_error() -> None:
    sched, _, _ = build({"filter": [("F", ErrorOnFilter(set(), "node-1"))]}, n_nodes=3)
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.profiles["default-scheduler"]
    pod = make_pod("p").uid("p").nominated_node("node-1").obj()
    with pytest.raises(Exception, match="injected filter error on node-1"):
        sched.algorithm.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    # the walk looked at node-0 (rejected) before the error
    assert sched.algorithm.next_start_node_index == 1


_ = Node
