"""Ported from kube-scheduler's framework/preemption/preemption_test.go and executor_test.go."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeToStatus, NominatingMode
from wasmsched.framework.preemption import (
    Candidate,
    DisruptionBudget,
    Evaluator,
    ScoreFunc,
    Victims,
    fit_error_message,
    pick_one_node_for_preemption,
)
from wasmsched.framework.preemption.preemption import aggregate_errors
from wasmsched.framework.preemption.util import earliest_pod_start_time_ns, more_important_pod
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

MID, HIGH = 100, 1000


def pod(name: str, prio: int | None = None, node: str = "", containers: int = 0, uid: str | None = None) -> Pod:
    w = make_pod(name).uid(uid or name)
    if prio is not None:
        w.priority(prio)
    if node:
        w.node(node)
    for _ in range(containers):
        w.container()
    return w.obj()


def nodes(*names: str) -> list[Any]:
    return [make_node(n).res({"cpu": "500m", "memory": "500", "pods": "32"}).obj() for n in names]


class FakePostFilterPlugin:
    """Picks the first pod of every node as the victim."""

    def __init__(self, num_violating_victim: int = 0, score_by_containers: bool = False) -> None:
        self.num_violating_victim = num_violating_victim
        self.score_by_containers = score_by_containers

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[DisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        return [node_info.pods[0].pod], self.num_violating_victim, None

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc] | None:
        if not self.score_by_containers:
            return None

        def fewest_containers(node: str) -> int:
            return -sum(len(p.spec.containers) + len(p.spec.initContainers) for p in nodes_to_victims[node].pods)

        return [fewest_containers]


@pytest.mark.parametrize(("name", "num_violating", "expected"), [
    ("no pdb violation", 0, [("node1", ["p1"], 0), ("node2", ["p2"], 0)]),
    ("pdb violation on each node", 1, [("node1", ["p1"], 1), ("node2", ["p2"], 1)]),
])
def test_dry_run_preemption(name: str, num_violating: int, expected: list[tuple[str, list[str], int]]) -> None:
    handle = FakeHandle(pods=[pod("p1", MID, "node1"), pod("p2", MID, "node2")], nodes=nodes("node1", "node2"))
    ev = Evaluator("FakePostFilter", handle, FakePostFilterPlugin(num_violating))
    node_infos = sorted(handle.snapshot_shared_lister().list(), key=lambda ni: ni.name)
    got, statuses, err = ev.dry_run_preemption(CycleState(), pod("p", HIGH), node_infos, [], 0, len(node_infos))
    assert err is None and statuses.len() == 0
    assert sorted((c.name, [p.metadata.name for p in c.victims.pods], c.victims.num_pdb_violations)
                  for c in got) == expected


def test_dry_run_preemption_leaves_the_snapshot_untouched() -> None:
    handle = FakeHandle(pods=[pod("p1", MID, "node1")], nodes=nodes("node1"))

    class Removing(FakePostFilterPlugin):
        def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                                   pdbs: Sequence[DisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
            victim = node_info.pods[0].pod
            node_info.remove_pod(victim)
            state.write("touched", 1)
            return [victim], 0, None

    ev = Evaluator("FakePostFilter", handle, Removing())
    state = CycleState()
    ev.dry_run_preemption(state, pod("p", HIGH), handle.snapshot_shared_lister().list(), [], 0, 1)
    ni = handle.snapshot_shared_lister().get("node1")
    assert ni is not None and [pi.name for pi in ni.pods] == ["p1"]
    assert state.get("touched") is None


def test_select_candidate_with_plugin_score_funcs() -> None:
    """"pod has different number of containers on each node": the fewest containers win."""
    test_pods = [pod("p1.1", MID, "node1", 2), pod("p2.1", MID, "node2", 1), pod("p3.1", MID, "node3", 3)]
    handle = FakeHandle(pods=test_pods, nodes=nodes("node1", "node2", "node3"))
    ev = Evaluator("FakePreemptionScorePostFilter", handle, FakePostFilterPlugin(1, score_by_containers=True))
    node_infos = handle.snapshot_shared_lister().list()
    for p in test_pods:
        candidates, _, _ = ev.dry_run_preemption(CycleState(), p, node_infos, [], 0, len(node_infos))
        best = ev.select_candidate(candidates)
        assert best is not None and best.name == "node2"


def test_select_candidate_edge_cases() -> None:
    ev = Evaluator("x", FakeHandle(), FakePostFilterPlugin())
    assert ev.select_candidate([]) is None
    only = Candidate("n", Victims([pod("a")]))
    assert ev.select_candidate([only]) is only


# ---------------------------------------------------------------- pickOneNodeForPreemption

def _victims(*specs: tuple[int, int], violations: int = 0) -> Victims:
    """Victims from (priority, start seconds) pairs, ordered by decreasing priority as kube's are."""
    pods = []
    for i, (prio, start) in enumerate(specs):
        p = pod(f"v{i}-{prio}-{start}", prio)
        p.status.startTime.seconds = start
        pods.append(p)
    return Victims(pods, violations)


@pytest.mark.parametrize(("name", "victims", "want"), [
    ("no candidates", {}, ""),
    ("minimum PDB violations", {"a": _victims((1, 0), violations=2), "b": _victims((5, 0), violations=1)}, "b"),
    ("minimum highest priority", {"a": _victims((10, 0)), "b": _victims((5, 0), (5, 0))}, "b"),
    ("minimum sum of priorities", {"a": _victims((5, 0), (4, 0)), "b": _victims((5, 0), (3, 0))}, "b"),
    ("negative priorities: fewer victims win", {"a": _victims((-5, 0), (-5, 0)), "b": _victims((-5, 0))}, "b"),
    ("minimum number of victims", {"a": _victims((5, 0), (0, 0)), "b": _victims((5, 0), (-1, 0), (1, 0))}, "a"),
    ("latest start time of the highest priority victims",
     {"a": _victims((5, 3), (1, 0)), "b": _victims((5, 7), (1, 0)), "c": _victims((5, 5), (1, 9))}, "b"),
    ("ties: the first node", {"a": _victims((5, 1)), "b": _victims((5, 1))}, "a"),
])
def test_pick_one_node_for_preemption(name: str, victims: dict[str, Victims], want: str) -> None:
    assert pick_one_node_for_preemption(victims, None) == want


def test_pick_one_node_with_custom_score_funcs_falls_through_ties() -> None:
    victims = {"a": _victims((1, 0)), "b": _victims((2, 0)), "c": _victims((3, 0))}
    funcs: list[ScoreFunc] = [lambda n: 0 if n == "a" else 1, lambda n: -ord(n)]
    assert pick_one_node_for_preemption(victims, funcs) == "b"


def test_earliest_start_time_and_more_important_pod() -> None:
    v = _victims((5, 9), (5, 4), (1, 1))
    assert earliest_pod_start_time_ns(v.pods) == 4_000_000_000
    assert earliest_pod_start_time_ns([]) is None
    assert more_important_pod(v.pods[0], v.pods[2])  # higher priority
    assert more_important_pod(v.pods[1], v.pods[0])  # same priority, started earlier
    assert not more_important_pod(v.pods[0], v.pods[1])


# ---------------------------------------------------------------- prepareCandidate (executor_test.go)

class FlakyClient(RecordingClient):
    """delete/patch fail for "fail-victim" and report not-found for "not-found-victim", as kube's reactors."""

    def __init__(self, existing: Sequence[str] = ()) -> None:
        super().__init__()
        self.existing = set(existing)

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        if pod.metadata.name == "fail-victim":
            raise RuntimeError("patch pod status failed")
        if pod.metadata.name == "not-found-victim":
            raise KeyError("not-found-victim")
        super().set_pod_condition(pod, ctype, status, reason, message)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        if pod.metadata.name == "fail-victim":
            raise RuntimeError("delete pod failed")
        if pod.metadata.name == "not-found-victim":
            raise KeyError("not-found-victim")
        super().delete_pod(pod, reason)


_CONDITION = ("DisruptionTarget", "True", "PreemptionByScheduler",
              "default-scheduler: preempting to accommodate a higher priority pod")


def _victim(name: str, prio: int = MID, condition: bool = False, deleting: bool = False) -> Pod:
    p = pod(name, prio, "node1", 1, uid="victim1")
    if condition:
        c = p.status.conditions.add()
        c.type, c.status, c.reason, c.message = _CONDITION
    if deleting:
        p.metadata.deletionTimestamp.seconds = 1
        p.metadata.uid = name
    return p


@pytest.mark.parametrize(("name", "victims", "deleted", "patched", "error"), [
    ("no victims", [], [], [], None),
    ("one victim without condition", [_victim("victim1")], ["victim1"], ["victim1"], None),
    ("one victim, but victim is already being deleted", [_victim("victim1-with-deletion-timestamp",
                                                                 deleting=True)], [], [], None),
    ("one victim, but victim is already deleted", [_victim("not-found-victim")], [], [], None),
    ("one victim with same condition", [_victim("victim1", condition=True)], ["victim1"], [], None),
    ("one victim, not-found victim error is ignored when deleting",
     [_victim("not-found-victim", condition=True)], [], [], None),
    ("one victim, but pod deletion failed", [_victim("fail-victim", condition=True)], [], [],
     "delete pod failed"),
    ("one victim, but patch pod failed", [_victim("fail-victim")], [], [], "patch pod status failed"),
    ("two victims without condition, one passes successfully and the second fails",
     [_victim("fail-victim"), _victim("victim2", 50000)], [], [], "patch pod status failed"),
])
def test_prepare_candidate(name: str, victims: list[Pod], deleted: list[str], patched: list[str],
                           error: str | None) -> None:
    client = FlakyClient()
    handle = FakeHandle(nodes=nodes("node1"), client=client)
    preemptor = pod("preemptor", HIGH, containers=1)
    ev = Evaluator("FakePreemptionScorePostFilter", handle, FakePostFilterPlugin())
    st = ev.executor.prepare_candidate(Candidate("node1", Victims(victims)), preemptor, "test-plugin")
    if error is None:
        assert st is None
    else:
        assert st is not None and st.code == Code.ERROR and st.message() == error
    assert client.deleted == deleted
    assert [c[0] for c in client.conditions] == patched
    for c in client.conditions:
        assert (c[1], *c[2:]) == (_CONDITION[0], *_CONDITION[2:])
    # An event for every victim actually deleted.
    assert [(e[0].metadata.name, e[3]) for e in handle.event_recorder().events] == [
        (n, "Preempted by pod preemptor on node node1") for n in deleted
    ]


def test_prepare_candidate_clears_only_lower_priority_nominations() -> None:
    client = RecordingClient()
    handle = FakeHandle(nodes=nodes("node1", "node2"), client=client)
    handle.nominated = {
        "node1": [PodInfo(pod("low", MID)), PodInfo(pod("same", HIGH)), PodInfo(pod("none"))],
        "node2": [PodInfo(pod("elsewhere", MID))],
    }
    ev = Evaluator("DefaultPreemption", handle, FakePostFilterPlugin())
    assert ev.executor.prepare_candidate(Candidate("node1", Victims([])), pod("p", HIGH), "x") is None
    assert client.nominations == [("low", ""), ("none", "")]


# ---------------------------------------------------------------- Preempt and findCandidates

def test_find_candidates_only_considers_unschedulable_nodes() -> None:
    """UnschedulableAndUnresolvable nodes (explicit or absent) are never tried."""
    names = ("node1", "node2", "node3", "node4")
    handle = FakeHandle(pods=[pod(f"p{i}", MID, n) for i, n in enumerate(names)], nodes=nodes(*names))
    ev = Evaluator("x", handle, FakePostFilterPlugin())
    m = NodeToStatus({"node2": Status.unresolvable(""), "node3": Status.unschedulable(""),
                      "node4": Status.unresolvable("")})
    candidates, _, err = ev.find_candidates(CycleState(), handle.snapshot_shared_lister().list(), pod("p", HIGH), m)
    assert err is None
    assert [c.name for c in candidates] == ["node3"]


def test_preempt_without_nodes_is_an_error() -> None:
    ev = Evaluator("x", FakeHandle(), FakePostFilterPlugin())
    res, st = ev.preempt(CycleState(), pod("p", HIGH), NodeToStatus())
    assert res is None
    assert st is not None and st.code == Code.ERROR and st.message() == "no nodes available"


def test_preempt_without_potential_nodes_clears_nomination() -> None:
    handle = FakeHandle(pods=[pod("p1", MID, "node1")], nodes=nodes("node1", "node2", "node3"))
    ev = Evaluator("x", handle, FakePostFilterPlugin())
    res, st = ev.preempt(CycleState(), pod("p", HIGH), NodeToStatus())
    assert res is not None and res.nominating_info is not None
    assert (res.nominating_info.nominated_node_name, res.nominating_info.mode) == ("", NominatingMode.OVERRIDE)
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert st.message() == "0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def test_preempt_nominates_and_evicts() -> None:
    client = RecordingClient()
    handle = FakeHandle(pods=[pod("p1", MID, "node1")], nodes=nodes("node1"), client=client)
    ev = Evaluator("x", handle, FakePostFilterPlugin())
    res, st = ev.preempt(CycleState(), pod("p", HIGH), NodeToStatus({"node1": Status.unschedulable()}))
    assert st is not None and st.code == Code.SUCCESS
    assert st.message() == "found a potential placement for pod on node node1, preempting 1 victims"
    assert res is not None and res.nominating_info is not None
    assert res.nominating_info.nominated_node_name == "node1"
    assert client.deleted == ["p1"]


def test_dry_run_statuses_and_errors() -> None:
    handle = FakeHandle(pods=[pod("p1", MID, "node1")], nodes=nodes("node1", "node2", "node3"))

    class Mixed(FakePostFilterPlugin):
        def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                                   pdbs: Sequence[DisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
            if node_info.name == "node1":
                return [], 0, Status.error("boom")
            if node_info.name == "node2":
                return [], 0, None  # success without victims is an error
            return [], 0, Status.unschedulable("Insufficient cpu")

    ev = Evaluator("x", handle, Mixed())
    got, statuses, err = ev.dry_run_preemption(CycleState(), pod("p", HIGH),
                                               handle.snapshot_shared_lister().list(), [], 0, 3)
    assert got == []
    assert str(err) == '[boom, expected at least one victim pod on node "node2"]'
    assert statuses.get("node3").message() == "Insufficient cpu"
    assert fit_error_message(4, statuses) == (
        '0/4 nodes are available: 1 Insufficient cpu, 1 boom, 1 expected at least one victim pod on node "node2".'
    )


def test_fit_error_message_counts_absent_nodes() -> None:
    m = NodeToStatus({"a": Status.unresolvable("x"), "b": Status(Code.UNSCHEDULABLE)})
    m.absent_nodes_status = Status.unresolvable("Preemption is not helpful for scheduling")
    assert fit_error_message(12, m) == (
        "0/12 nodes are available: 1 x, 10 Preemption is not helpful for scheduling."
    )
    assert fit_error_message(0, NodeToStatus()) == "0/0 nodes are available:"


def test_aggregate_errors() -> None:
    assert aggregate_errors([]) is None
    e = ValueError("one")
    assert aggregate_errors([e]) is e
    assert str(aggregate_errors([ValueError("a"), ValueError("a")])) == "a"
    assert str(aggregate_errors([ValueError("a"), ValueError("b"), ValueError("a")])) == "[a, b]"


def test_disruption_budget_from_pdb() -> None:
    from wasmsched.api.types import PodDisruptionBudget

    p = PodDisruptionBudget()
    p.metadata.namespace = "ns"
    p.status.disruptionsAllowed = 2
    p.status.disruptedPods["x"].seconds = 1
    b = DisruptionBudget.from_pdb(p)
    assert (b.namespace, b.selector, b.disruptions_allowed, b.disrupted_pods) == ("ns", None, 2, frozenset({"x"}))
    p.spec.selector.matchExpressions.add(key="k", operator="Bogus")
    assert DisruptionBudget.from_pdb(p).selector is None  # invalid selectors match nothing
    p.spec.selector.ClearField("matchExpressions")
    p.spec.selector.matchLabels["k"] = "v"
    sel = DisruptionBudget.from_pdb(p).selector
    assert sel is not None and sel.matches({"k": "v"}) and not sel.matches({"k": "w"})
