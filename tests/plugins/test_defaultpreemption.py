"""Ported from kube-scheduler's plugins/defaultpreemption/default_preemption_test.go.

The harness: a Handle (FakeHandle plus real PreFilter/Filter plugins) whose
run_filter_plugins_with_nominated_pods runs the given filters and whose PreFilter extensions are
the plugins' own. `_Fit` is a small stand-in for NodeResourcesFit (pods, cpu and memory, with its
reasons), enough for the resource-based cases; cases needing other plugins are left out.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from wasmsched.api.types import Node, Pod, PodDisruptionBudget, pod_priority
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    FilterPlugin,
    NodeToStatus,
    NominatingMode,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
)
from wasmsched.framework.preemption import Candidate, DisruptionBudget
from wasmsched.framework.status import Code, Status, is_rejected, is_success, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, Resource
from wasmsched.plugins import defaultpreemption, podtopologyspread
from wasmsched.plugins.defaultpreemption import default_preemption as dp
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}


# ---------------------------------------------------------------- test plugins and harness

class _FitState:
    def __init__(self, requests: Resource) -> None:
        self.requests = requests

    def clone(self) -> _FitState:
        return self


class _Fit(PreFilterPlugin, FilterPlugin):
    """Pods, cpu and memory of NodeResourcesFit, with its reasons."""

    name = "NodeResourcesFit"

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        state.write("PreFilterTestFit", _FitState(PodInfo(pod).requests))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        req: Resource = state.read("PreFilterTestFit").requests
        reasons = []
        if len(node_info.pods) + 1 > node_info.allocatable.allowed_pod_number:
            reasons.append("Too many pods")
        alloc, used = node_info.allocatable, node_info.requested
        if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
            reasons.append("Insufficient cpu")
        if req.memory > 0 and req.memory > alloc.memory - used.memory:
            reasons.append("Insufficient memory")
        return Status.unschedulable(*reasons, plugin=self.name) if reasons else None


class _ErrorOnLabel(PreFilterPlugin, FilterPlugin):
    """kube's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def pre_filter_extensions(self) -> _ErrorOnLabel:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        if node_info.node.metadata.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod_to_schedule.metadata.name}")
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        if node_info.node.metadata.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod_to_schedule.metadata.name}")
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class PluginHandle(FakeHandle):
    """A Handle running real PreFilter/Filter plugins, counting filter runs (kube's FakeFilterPlugin)."""

    def __init__(self, pods: list[Pod], nodes: list[Node], plugins: Sequence[Plugin],
                 pdbs: list[PodDisruptionBudget] | None = None, client: RecordingClient | None = None,
                 fake_filter_code: int = Code.SUCCESS) -> None:
        super().__init__(pods=pods, nodes=nodes, client=client or RecordingClient(pdbs=list(pdbs or [])))
        self.plugins = list(plugins)
        self.num_filter_called = 0
        self.fake_filter_code = fake_filter_code
        self.waiting: set[str] = set()

    def reject_waiting_pod(self, uid: str) -> bool:
        return uid in self.waiting

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod) -> None:
        nodes = self.snapshot_shared_lister().list()
        for pl in self.plugins:
            if isinstance(pl, PreFilterPlugin):
                _, st = pl.pre_filter(state, pod, nodes)
                assert is_success(st), st

    def _run_extension(self, op: str, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        for pl in self.plugins:
            ext = pl.pre_filter_extensions() if isinstance(pl, PreFilterPlugin) else None
            if ext is None:
                continue
            fn = ext.add_pod if op == "AddPod" else ext.remove_pod
            st = fn(state, pod, pi, ni)
            if not_success(st):
                assert st is not None
                return Status.error(f'running {op} on PreFilter plugin "{pl.name}": {st.message()}')
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._run_extension("AddPod", state, pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._run_extension("RemovePod", state, pod_to_schedule, pod_info_to_remove, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        self.num_filter_called += 1
        if self.fake_filter_code != Code.SUCCESS:
            return Status(Code(self.fake_filter_code), [], plugin="FakeFilter")
        for pl in self.plugins:
            if isinstance(pl, FilterPlugin):
                st = pl.filter(state, pod, node_info)
                if not_success(st):
                    return st
        return None


def pod(name: str, prio: int | None = None, node: str = "", req: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, start: int | None = None, policy: str = "",
        nominated: str = "") -> Pod:
    w = make_pod(name).uid(name)
    if prio is not None:
        w.priority(prio)
    if node:
        w.node(node)
    if req:
        w.res(req)
    if labels:
        w.labels(labels)
    if start is not None:
        w.start_time(start)
    if nominated:
        w.nominated_node(nominated)
    p = w.obj()
    if policy:
        p.spec.preemptionPolicy = policy
    return p


def node(name: str, res: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Node:
    """A node like st.MakeNode().Capacity(res): 32 pods unless `res` says otherwise."""
    w = make_node(name).res({"pods": "32", **(res or {})})
    if labels:
        w.labels(labels)
    return w.obj()


def pdb(match: dict[str, str], allowed: int = 0, disrupted: Sequence[str] = (),
        namespace: str = "default") -> PodDisruptionBudget:
    p = PodDisruptionBudget()
    p.metadata.namespace = namespace
    p.spec.selector.matchLabels.update(match)
    p.status.disruptionsAllowed = allowed
    for name in disrupted:
        p.status.disruptedPods[name].seconds = 1
    return p


def statuses(codes: dict[str, int]) -> NodeToStatus:
    return NodeToStatus({n: Status(Code(c)) for n, c in codes.items()})


def new_plugin(handle: PluginHandle, pct: int = 10, absolute: int = 100) -> dp.DefaultPreemption:
    return defaultpreemption.new(
        dp.DefaultPreemptionArgs(min_candidate_nodes_percentage=pct, min_candidate_nodes_absolute=absolute),
        handle,
    )


@pytest.fixture
def offsets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The offsets get_offset_rand returns in turn (kube seeds rand with 4: 4, 1, 3 for 5 nodes)."""
    seq: list[int] = []
    monkeypatch.setattr(dp, "get_offset_rand", lambda n: seq.pop(0) if seq else 0)
    yield seq


# ---------------------------------------------------------------- TestPostFilter

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@dataclass
class PostFilterCase:
    name: str
    pod: Pod
    pods: list[Pod]
    nodes: list[Node]
    filtered: dict[str, int]
    want_node: str | None  # None: no result
    want_code: int = Code.SUCCESS
    want_msg: str = ""
    pdbs: Sequence[PodDisruptionBudget] = ()


POST_FILTER_CASES = [
    PostFilterCase(
        "pod with higher priority can be made schedulable",
        pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, "node1",
    ),
    PostFilterCase(
        "pod with tied priority is still unschedulable",
        pod("p"), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, "", U,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    PostFilterCase(
        "preemption should respect filteredNodesStatuses",
        pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": UU}, "", U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {}, "", U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "pod can be made schedulable on one node",
        pod("p", MID), [pod("p1", HIGH, "node1"), pod("p2", LOW, "node2")],
        [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U}, "node2",
    ),
    PostFilterCase(
        "pod can be made schedulable on minHighestPriority node",
        pod("p", VERY_HIGH),
        [pod("p1", HIGH, "node1", labels={"pdb": "non-violating"}),
         pod("p2", LOW, "node1", labels={"pdb": "violating"}),
         pod("p3", MID, "node2", labels={"pdb": "violating"})],
        [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U}, "node2",
        pdbs=[pdb({"pdb": "violating"}), pdb({"pdb": "non-violating"}, allowed=(1 << 31) - 1)],
    ),
    PostFilterCase(
        "no candidate nodes found, no enough resource after removing low priority pods",
        pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")],
        [node("node1", NODE_RES), node("node2", NODE_RES)], {"node1": U, "node2": U}, "", U,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        pod("p", HIGH, req=LARGE),
        [pod("p1", HIGH, "node1"), pod("p2", node="node2"), pod("p3", HIGH, "node3")],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U}, "", U,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
        "don't have enough CPU resource",
        pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)], {"node1": U, "node2": U, "node4": UU}, "", U,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "only one node but failed with TestPlugin",
        pod("p", HIGH, req=LARGE), [pod("p1", node="node1")], [node("node1", LARGE, {"error": "true"})],
        {"node1": U}, None, Code.ERROR,
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    ),
    PostFilterCase(
        "one failed with TestPlugin and the other pass",
        pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
        [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)], {"node1": U, "node2": U}, "node2",
    ),
]


@pytest.mark.parametrize("tc", POST_FILTER_CASES, ids=lambda tc: tc.name)
def test_post_filter(tc: PostFilterCase) -> None:
    handle = PluginHandle(tc.pods, tc.nodes, [_Fit(), _ErrorOnLabel()], pdbs=list(tc.pdbs))
    pl = new_plugin(handle)
    state = CycleState()
    handle.run_pre_filter_plugins(state, tc.pod)
    result, status = pl.post_filter(state, tc.pod, statuses(tc.filtered))
    if tc.want_code == Code.SUCCESS:
        # kube 1.37's success message; every case of kube's table preempts one victim
        assert status is not None and status.code == Code.SUCCESS
        assert status.message() == (f"preemption: found a potential placement for pod on node {tc.want_node}, "
                                    "preempting 1 victims")
    else:
        assert status is not None and status.code == tc.want_code
        assert status.message() == tc.want_msg
    if tc.want_node is None:
        assert result is None
    else:
        assert result is not None and result.nominating_info is not None
        assert result.nominating_info.nominated_node_name == tc.want_node
        assert result.nominating_info.mode == NominatingMode.OVERRIDE


# ---------------------------------------------------------------- TestDryRunPreemption

@dataclass
class DryRunCase:
    name: str
    node_names: list[str]
    test_pods: list[Pod]
    init_pods: list[Pod]
    expected: list[list[tuple[str, list[str], int]]]  # per cycle: (node, victim names, PDB violations)
    expected_num_filter_called: list[int]
    pdbs: Sequence[PodDisruptionBudget] = ()
    fake_filter_code: int = Code.SUCCESS
    pct: int = 10
    absolute: int = 100
    offsets: Sequence[int] = ()


def _p(name: str, prio: int, node: str, req: dict[str, str] | None = LARGE,
       labels: dict[str, str] | None = None) -> Pod:
    return pod(name, prio, node, req=req, labels=labels)


FIVE = ["node1", "node2", "node3", "node4", "node5"]

DRY_RUN_CASES = [
    DryRunCase(
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"], [pod("p", HIGH, req=LARGE)], [_p("p1", MID, "node1"), _p("p2", MID, "node2")],
        [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]], [4],
    ),
    DryRunCase(
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption "
        "would happen",
        ["node1", "node2"], [pod("p", LOW, req=LARGE)], [_p("p1", MID, "node1"), _p("p2", MID, "node2")],
        [[]], [0],
    ),
    DryRunCase(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        ["node1", "node2"], [pod("p", HIGH, req=LARGE)],
        [_p("p1.1", LOW, "node1", SMALL), _p("p1.2", MID, "node1"), _p("p2", MID, "node2")],
        [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]], [5],
    ),
    DryRunCase(
        "mixed priority pods are preempted",
        ["node1", "node2"], [pod("p", HIGH, req=LARGE)],
        [_p("p1.1", MID, "node1", SMALL), _p("p1.2", LOW, "node1", SMALL), _p("p1.3", MID, "node1", MEDIUM),
         _p("p1.4", HIGH, "node1", SMALL), _p("p2", HIGH, "node2")],
        [[("node1", ["p1.2", "p1.3"], 0)]], [4],
    ),
    DryRunCase(
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        ["node1", "node2"], [pod("p", HIGH, req=LARGE)], [_p("p1", MID, "node1"), _p("p2", MID, "node2")],
        [[]], [2], fake_filter_code=Code.UNSCHEDULABLE,
    ),
    DryRunCase(
        "preemption with violation of same pdb",
        ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
        [_p("p1.1", MID, "node1", MEDIUM, {"app": "foo"}), _p("p1.2", MID, "node1", MEDIUM, {"app": "foo"})],
        [[("node1", ["p1.1", "p1.2"], 1)]], [3], pdbs=[pdb({"app": "foo"}, allowed=1)],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
        "belong to DisruptedPods",
        ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
        [_p("p1.1", MID, "node1", MEDIUM, {"app": "foo"}), _p("p1.2", MID, "node1", MEDIUM, {"app": "foo"})],
        [[("node1", ["p1.1", "p1.2"], 1)]], [3], pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs "
        "to DisruptedPods",
        ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
        [_p("p1.1", MID, "node1", MEDIUM, {"app": "foo"}), _p("p1.2", MID, "node1", MEDIUM, {"app": "foo"})],
        [[("node1", ["p1.1", "p1.2"], 0)]], [3], pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p1.2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which "
        "belongs to DisruptedPods is treated as 'nonViolating'",
        ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
        [_p("p1.1", MID, "node1", MEDIUM, {"app": "foo"}), _p("p1.2", MID, "node1", MEDIUM, {"app": "foo"}),
         _p("p1.3", MID, "node1", MEDIUM, {"app": "foo"})],
        [[("node1", ["p1.1", "p1.2", "p1.3"], 1)]], [4],
        pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p1.3"])],
    ),
    DryRunCase(
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        FIVE, [pod("p", HIGH, req=LARGE)], [_p(f"p{i}", MID, f"node{i}") for i in range(1, 6)],
        # offset=4 => node5 (yes), node1 (yes)
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]], [4], pct=40, absolute=1, offsets=[4],
    ),
    DryRunCase(
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        FIVE, [pod("p", HIGH, req=LARGE)],
        [_p("p1", MID, "node1"), _p("p2", VERY_HIGH, "node2"), _p("p3", MID, "node3"),
         _p("p4", MID, "node4"), _p("p5", VERY_HIGH, "node5")],
        # offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
        [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]], [4], pct=40, absolute=1, offsets=[4],
    ),
    DryRunCase(
        "preemption offset across multiple scheduling cycles and wrap around",
        FIVE, [pod("tp1", HIGH, req=LARGE), pod("tp2", HIGH, req=LARGE), pod("tp3", HIGH, req=LARGE)],
        [_p(f"p{i}", MID, f"node{i}") for i in range(1, 6)],
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)],
         [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
         [("node4", ["p4"], 0), ("node5", ["p5"], 0)]],
        [4, 4, 4], pct=40, absolute=1, offsets=[4, 1, 3],
    ),
    DryRunCase(
        "preemption looks past numCandidates until a non-PDB violating node is found",
        FIVE, [pod("p", HIGH, req=LARGE)],
        [_p("p1", MID, "node1", labels={"app": "foo"}), _p("p2", MID, "node2", labels={"app": "foo"}),
         _p("p3", MID, "node3"), _p("p4", MID, "node4"), _p("p5", MID, "node5", labels={"app": "foo"})],
        # offset=4 => node5 (pdb), node1 (pdb), node2 (pdb, dropped: the violating list is full), node3
        [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]], [8],
        pdbs=[pdb({"app": "foo"}, allowed=0)], pct=40, absolute=2, offsets=[4],
    ),
]


@pytest.mark.parametrize("tc", DRY_RUN_CASES, ids=lambda tc: tc.name)
def test_dry_run_preemption(tc: DryRunCase, offsets: list[int]) -> None:
    offsets.extend(tc.offsets)
    nodes = [node(n, VERY_LARGE) for n in tc.node_names]
    handle = PluginHandle(tc.init_pods, nodes, [_Fit()], fake_filter_code=tc.fake_filter_code)
    pl = new_plugin(handle, tc.pct, tc.absolute)
    node_infos = sorted(handle.snapshot_shared_lister().list(), key=lambda ni: ni.name)
    pdbs = [DisruptionBudget.from_pdb(p) for p in tc.pdbs]
    prev = 0
    for cycle, p in enumerate(tc.test_pods):
        state = CycleState()
        handle.run_pre_filter_plugins(state, p)
        offset, num = pl.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = pl.evaluator.dry_run_preemption(state, p, node_infos, pdbs, offset, num)
        summary = sorted(
            (c.name, sorted(v.metadata.name for v in c.victims.pods), c.victims.num_pdb_violations) for c in got
        )
        assert summary == tc.expected[cycle]
        assert handle.num_filter_called - prev == tc.expected_num_filter_called[cycle]
        prev = handle.num_filter_called


def test_dry_run_preemption_picks_later_start_time_when_priorities_are_equal() -> None:
    """"mixed priority pods are preempted, pick later StartTime one when priorities are equal"."""
    init = [pod("p1.1", LOW, "node1", SMALL, start=5), pod("p1.2", LOW, "node1", SMALL, start=4),
            pod("p1.3", MID, "node1", MEDIUM, start=3), pod("p1.4", HIGH, "node1", SMALL, start=2),
            pod("p2", HIGH, "node2", LARGE, start=1)]
    handle = PluginHandle(init, [node("node1", VERY_LARGE), node("node2", VERY_LARGE)], [_Fit()])
    pl = new_plugin(handle)
    p = pod("p", HIGH, req=LARGE)
    state = CycleState()
    handle.run_pre_filter_plugins(state, p)
    got, _, _ = pl.evaluator.dry_run_preemption(state, p, handle.snapshot_shared_lister().list(), [], 0, 2)
    assert [(c.name, [v.metadata.name for v in c.victims.pods]) for c in got] == [("node1", ["p1.3", "p1.1"])]
    assert handle.num_filter_called == 4


# ---------------------------------------------------------------- TestSelectBestCandidate

SELECT_CASES = [
    ("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
     pod("p", HIGH, req=LARGE),
     [pod("p1", MID, "node1", LARGE, start=0), pod("p2", MID, "node2", LARGE, start=0)], ["node1", "node2"]),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", MEDIUM, start=0), pod("p1.2", MID, "node1", LARGE, start=0),
      pod("p2.1", MID, "node2", MEDIUM, start=0), pod("p2.2", LOW, "node2", MEDIUM, start=0),
      pod("p3.1", LOW, "node3", MEDIUM, start=0), pod("p3.2", LOW, "node3", MEDIUM, start=0)], ["node3"]),
    ("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"],
     pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", MEDIUM, start=0), pod("p1.2", MID, "node1", LARGE, start=0),
      pod("p2.1", MID, "node2", LARGE, start=0), pod("p2.2", LOW, "node2", MEDIUM, start=0),
      pod("p3.1", MID, "node3", MEDIUM, start=0), pod("p3.2", MID, "node3", MEDIUM, start=0)], ["node2"]),
    ("when highest priority and sum are the same, minimum number of pods is picked",
     ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", SMALL, start=0), pod("p1.2", NEG, "node1", SMALL, start=0),
      pod("p1.3", MID, "node1", SMALL, start=0), pod("p1.4", NEG, "node1", SMALL, start=0),
      pod("p2.1", MID, "node2", LARGE, start=0), pod("p2.2", NEG, "node2", MEDIUM, start=0),
      pod("p3.1", MID, "node3", MEDIUM, start=0), pod("p3.2", NEG, "node3", SMALL, start=0),
      pod("p3.3", LOW, "node3", SMALL, start=0)], ["node2"]),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", SMALL, start=0), pod("p1.2", NEG, "node1", SMALL, start=0),
      pod("p1.3", NEG, "node1", SMALL, start=0), pod("p2.1", MID, "node2", LARGE, start=0),
      pod("p2.2", NEG, "node2", MEDIUM, start=0), pod("p3.1", MID, "node3", MEDIUM, start=0),
      pod("p3.2", NEG, "node3", SMALL, start=0), pod("p3.3", LOW, "node3", SMALL, start=0)], ["node2"]),
    ("non-overlapping lowest high priority, sum priorities, and number of pods",
     ["node1", "node2", "node3", "node4"], pod("p", VERY_HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", SMALL, start=0), pod("p1.2", LOW, "node1", SMALL, start=0),
      pod("p1.3", LOW, "node1", SMALL, start=0), pod("p2.1", HIGH, "node2", LARGE, start=0),
      pod("p3.1", MID, "node3", MEDIUM, start=0), pod("p3.2", LOW, "node3", SMALL, start=0),
      pod("p3.3", LOW, "node3", SMALL, start=0), pod("p3.4", LOW, "node3", MEDIUM, start=0),
      pod("p4.1", MID, "node4", MEDIUM, start=0), pod("p4.2", MID, "node4", SMALL, start=0),
      pod("p4.3", MID, "node4", SMALL, start=0), pod("p4.4", NEG, "node4", SMALL, start=0)], ["node1"]),
    ("same priority, same number of victims, different start time for each node's pod",
     ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", MEDIUM, start=2), pod("p1.2", MID, "node1", MEDIUM, start=2),
      pod("p2.1", MID, "node2", MEDIUM, start=3), pod("p2.2", MID, "node2", MEDIUM, start=3),
      pod("p3.1", MID, "node3", MEDIUM, start=1), pod("p3.2", MID, "node3", MEDIUM, start=1)], ["node2"]),
    ("same priority, same number of victims, different start time for all pods",
     ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", MID, "node1", MEDIUM, start=4), pod("p1.2", MID, "node1", MEDIUM, start=2),
      pod("p2.1", MID, "node2", MEDIUM, start=5), pod("p2.2", MID, "node2", MEDIUM, start=1),
      pod("p3.1", MID, "node3", MEDIUM, start=3), pod("p3.2", MID, "node3", MEDIUM, start=6)], ["node3"]),
    ("different priority, same number of victims, different start time for all pods",
     ["node1", "node2", "node3"], pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", LOW, "node1", MEDIUM, start=4), pod("p1.2", MID, "node1", MEDIUM, start=2),
      pod("p2.1", MID, "node2", MEDIUM, start=6), pod("p2.2", LOW, "node2", MEDIUM, start=1),
      pod("p3.1", LOW, "node3", MEDIUM, start=3), pod("p3.2", MID, "node3", MEDIUM, start=5)], ["node2"]),
]


@pytest.mark.parametrize(("name", "node_names", "preemptor", "pods", "expected"), SELECT_CASES,
                         ids=[c[0] for c in SELECT_CASES])
def test_select_best_candidate(name: str, node_names: list[str], preemptor: Pod, pods: list[Pod],
                               expected: list[str], offsets: list[int]) -> None:
    offsets.append(4 % len(node_names))
    handle = PluginHandle(pods, [node(n, VERY_LARGE) for n in node_names], [_Fit()])
    pl = new_plugin(handle)
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    node_infos = handle.snapshot_shared_lister().list()
    offset, num = pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = pl.evaluator.dry_run_preemption(state, preemptor, node_infos, [], offset, num)
    best = pl.evaluator.select_candidate(candidates)
    assert best is not None and best.name in expected


# ---------------------------------------------------------------- TestCustomSelection / TestCustomOrdering

def _label_is(key: str, val: str) -> dp.IsEligiblePodFunc:
    return lambda ni, victim, preemptor: victim.pod.metadata.labels.get(key) == val


def _node_is(name: str) -> dp.IsEligiblePodFunc:
    return lambda ni, victim, preemptor: ni.name == name


def _preemptor_at_least(p: int) -> dp.IsEligiblePodFunc:
    return lambda ni, victim, preemptor: pod_priority(preemptor) >= p


def _victim_at_most(p: int) -> dp.IsEligiblePodFunc:
    return lambda ni, victim, preemptor: victim.priority <= p


def _v(name: str, prio: int, node: str, req: dict[str, str] = LARGE, label: str | None = None) -> Pod:
    return pod(name, prio, node, req, labels={"preemptible": label} if label else None, start=0)


_LABELLED = [_v("v1", MID, "node1", label="no"), _v("v2", MID, "node2", label="yes"),
             _v("v3", LOW, "node3", label="yes"), _v("v4", LOW, "node4")]
_ON_NODE1 = [_v("v1", HIGH, "node1", SMALL), _v("v2", MID, "node1", SMALL), _v("v3", LOW, "node1", SMALL),
             _v("v4", MID, "node2"), _v("v5", LOW, "node3")]
_THREE = [_v("v1", HIGH, "node1"), _v("v2", MID, "node2"), _v("v3", LOW, "node3")]
_N4, _N3 = ["node1", "node2", "node3", "node4"], ["node1", "node2", "node3"]

CUSTOM_SELECTION_CASES = [
    ("filter for matching pod label: high priority", _label_is("preemptible", "yes"), _N4, HIGH, _LABELLED,
     {"node2": ["v2"], "node3": ["v3"]}),
    ("filter for matching pod label: mid priority", _label_is("preemptible", "yes"), _N4, MID, _LABELLED,
     {"node3": ["v3"]}),
    ("filter for matching pod label: low priority", _label_is("preemptible", "yes"), _N4, LOW, _LABELLED, {}),
    ("filter for matching victim node: high priority", _node_is("node1"), _N3, HIGH,
     [_v("v1", HIGH, "node1", MEDIUM), *_ON_NODE1[1:]], {"node1": ["v2", "v3"]}),
    ("filter for matching victim node: mid priority", _node_is("node1"), _N3, MID, _ON_NODE1, {"node1": ["v3"]}),
    ("filter for matching victim node: low priority", _node_is("node1"), _N3, LOW, _ON_NODE1, {}),
    ("only pods at or above specified priority can preempted: high priority", _preemptor_at_least(HIGH), _N3,
     HIGH, _THREE, {"node2": ["v2"], "node3": ["v3"]}),
    ("only pods at or above specified priority can preempted: mid priority", _preemptor_at_least(HIGH), _N3,
     MID, _THREE, {}),
    ("only pods at or below specified priority can be preempted: high priority", _victim_at_most(MID), _N3,
     HIGH, _THREE, {"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize(("name", "eligible", "node_names", "prio", "pods", "expected"), CUSTOM_SELECTION_CASES,
                         ids=[c[0] for c in CUSTOM_SELECTION_CASES])
def test_custom_selection(name: str, eligible: dp.IsEligiblePodFunc, node_names: list[str], prio: int,
                          pods: list[Pod], expected: dict[str, list[str]]) -> None:
    preemptor = pod("p", prio, req=LARGE)
    handle = PluginHandle(pods, [node(n, VERY_LARGE) for n in node_names], [_Fit()])
    pl = new_plugin(handle)
    pl.is_eligible_pod = eligible
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    node_infos = handle.snapshot_shared_lister().list()
    candidates: list[Candidate] = pl.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], 0, len(node_infos))[0]
    assert len(candidates) == len(expected)
    while candidates:
        selected = pl.evaluator.select_candidate(candidates)
        assert selected is not None and selected.name in expected
        assert [v.metadata.name for v in selected.victims.pods] == expected[selected.name]
        candidates = [c for c in candidates if c.name != selected.name]


@pytest.mark.parametrize(("name", "order", "pods", "expected"), [
    ("select newest pods",
     lambda a, b: dp.pod_start_time_ns(a) < dp.pod_start_time_ns(b),
     [pod("v1", LOW, "node1", MEDIUM, start=2), pod("v2", LOW, "node1", MEDIUM, start=0),
      pod("v3", MID, "node1", MEDIUM, start=1)], ["v3", "v1"]),
    ("select alphabetically-last pods",
     lambda a, b: a.metadata.name < b.metadata.name,
     [pod("foo", LOW, "node1", MEDIUM, start=0), pod("bar", LOW, "node1", MEDIUM, start=0),
      pod("baz", MID, "node1", MEDIUM, start=0)], ["baz", "foo"]),
])
def test_custom_ordering(name: str, order: dp.MoreImportantPodFunc, pods: list[Pod], expected: list[str]) -> None:
    preemptor = pod("p2", HIGH, req=LARGE)
    handle = PluginHandle(pods, [node("node1", VERY_LARGE)], [_Fit()])
    pl = new_plugin(handle)
    pl.more_important_pod = order
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    candidates = pl.evaluator.dry_run_preemption(state, preemptor, handle.snapshot_shared_lister().list(),
                                                 [], 0, 1)[0]
    assert len(candidates) == 1
    assert [v.metadata.name for v in candidates[0].victims.pods] == expected


# ---------------------------------------------------------------- TestPodEligibleToPreemptOthers

def _terminating(p: Pod, by_preemption: bool = False) -> Pod:
    p.metadata.deletionTimestamp.seconds = 1
    if by_preemption:
        c = p.status.conditions.add()
        c.type, c.status, c.reason = "DisruptionTarget", "True", "PreemptionByScheduler"
    return p


@pytest.mark.parametrize(("name", "preemptor", "pods", "nodes", "nominated_status", "expected"), [
    ("Pod with nominated node", pod("p_with_nominated_node", HIGH, nominated="node1"),
     [_terminating(pod("p1", LOW, "node1"))], ["node1"], Status.unresolvable("node(s) had untolerated taint"),
     True),
    ("Pod without nominated node", pod("p_without_nominated_node", HIGH), [], [], None, True),
    ("Pod with 'PreemptNever' preemption policy", pod("p_with_preempt_never_policy", HIGH, policy="Never"),
     [], [], None, False),
    ("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
     pod("p_with_nominated_node", HIGH, nominated="node1"),
     [_terminating(pod("p1", LOW, "node1"), by_preemption=True)], ["node1"], None, False),
    ("non-victim Pods terminating", pod("p_with_nominated_node", HIGH, nominated="node1"),
     [_terminating(pod("p1", LOW, "node1"))], ["node1"], None, True),
])
def test_pod_eligible_to_preempt_others(name: str, preemptor: Pod, pods: list[Pod], nodes: list[str],
                                        nominated_status: Status | None, expected: bool) -> None:
    handle = PluginHandle(pods, [node(n) for n in nodes], [])
    pl = new_plugin(handle)
    got, _ = pl.pod_eligible_to_preempt_others(preemptor, nominated_status)
    assert got == expected


def test_preemption_policy_never_returns_unschedulable_message() -> None:
    handle = PluginHandle([pod("p1", LOW, "node1")], [node("node1", ONE_POD)], [_Fit()])
    pl = new_plugin(handle)
    p = pod("p", HIGH, policy="Never")
    result, status = pl.post_filter(CycleState(), p, statuses({"node1": U}))
    assert result is None
    assert status is not None and status.code == Code.UNSCHEDULABLE
    assert status.message() == "preemption: not eligible due to preemptionPolicy=Never."
    assert handle.client().deleted == []


# ---------------------------------------------------------------- TestPreempt

_BASIC_PODS = [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL),
               pod("p2.1", HIGH, "node2", LARGE), pod("p3.1", MID, "node3", MEDIUM)]


@pytest.mark.parametrize(("name", "policy", "want", "expected_pods"), [
    ("basic preemption logic", "PreemptLowerPriority", "node1", ["p1.1", "p1.2"]),
    ("no preempting in pod", "Never", None, []),
    ("PreemptionPolicy is nil", "", "node1", ["p1.1", "p1.2"]),
])
def test_preempt(name: str, policy: str, want: str | None, expected_pods: list[str]) -> None:
    preemptor = pod("p", HIGH, req=VERY_LARGE, policy=policy)
    nodes = [node(n, VERY_LARGE) for n in ("node1", "node2", "node3")]
    handle = PluginHandle([copy.deepcopy(p) for p in _BASIC_PODS], nodes, [_Fit()])
    pl = new_plugin(handle)
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    m = statuses({n.metadata.name: U for n in nodes})
    res, status = pl.evaluator.preempt(state, preemptor, m)
    assert is_success(status) or is_rejected(status)
    if want is None:
        assert res is None
    else:
        assert res is not None and res.nominating_info is not None
        assert res.nominating_info.nominated_node_name == want
    client = handle.client()
    assert sorted(client.deleted) == expected_pods
    # Every deleted victim got the DisruptionTarget condition first, and a Preempted event.
    assert sorted(c[0] for c in client.conditions) == expected_pods
    for c in client.conditions:
        assert c[1:] == ("DisruptionTarget", "PreemptionByScheduler",
                         "default-scheduler: preempting to accommodate a higher priority pod")
    events = handle.event_recorder().events
    assert sorted(e[0].metadata.name for e in events) == expected_pods
    for e in events:
        assert e[1:] == ("Normal", "Preempted", f"Preempted by pod p on node {want}")


def test_preempt_clears_lower_priority_nominations_and_rejects_waiting_victims() -> None:
    victim = pod("victim", LOW, "node1", LARGE)
    handle = PluginHandle([victim], [node("node1", VERY_LARGE)], [_Fit()])
    handle.waiting.add("victim")
    lower, higher = pod("lower", LOW, nominated="node1"), pod("higher", VERY_HIGH, nominated="node1")
    handle.nominated["node1"] = [PodInfo(lower), PodInfo(higher)]
    pl = new_plugin(handle)
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    res, status = pl.post_filter(state, preemptor, statuses({"node1": U}))
    assert is_success(status)
    assert res is not None and res.nominating_info is not None
    assert res.nominating_info.nominated_node_name == "node1"
    client = handle.client()
    # The waiting victim is rejected in memory: no API calls for it.
    assert client.deleted == [] and client.conditions == []
    assert [e[3] for e in handle.event_recorder().events] == [
        "Preempted by pod p on node node1 (in kube-scheduler memory)."
    ]
    assert client.nominations == [("lower", "")]


# ---------------------------------------------------------------- helpers ported as units

def test_calculate_num_candidates() -> None:
    handle = PluginHandle([], [], [])
    cases = [  # (pct, abs, nodes, want), from kube's TestGetOffsetAndNumCandidates
        (0, 0, 10, 0), (10, 0, 10, 1), (10, 100, 10, 10), (10, 100, 1000, 100), (50, 100, 1000, 500),
        (10, 50, 20, 20), (10, 10, 100, 10), (40, 1, 5, 2), (40, 2, 5, 2),
    ]
    for pct, absolute, n, want in cases:
        pl = dp.DefaultPreemption(dp.DefaultPreemptionArgs(pct, absolute), handle)
        assert pl.calculate_num_candidates(n) == want, (pct, absolute, n)


def test_new_validates_args() -> None:
    from wasmsched.config.errors import ConfigError

    with pytest.raises(ConfigError):
        defaultpreemption.new(dp.DefaultPreemptionArgs(0, 0), PluginHandle([], [], []))
    pl = defaultpreemption.new(None, PluginHandle([], [], []))
    assert pl.name == "DefaultPreemption"
    assert (pl.args.min_candidate_nodes_percentage, pl.args.min_candidate_nodes_absolute) == (10, 100)
    assert pl.events_to_register() == []
    assert pl.pre_enqueue(pod("x")) is None


@pytest.mark.parametrize(("name", "pods", "pdbs", "violating", "non_violating"), [
    ("no pdbs", ["a", "b"], [], [], ["a", "b"]),
    ("budget of one", ["a", "b"], [pdb({"app": "foo"}, allowed=1)], ["b"], ["a"]),
    ("other namespace", ["a"], [pdb({"app": "foo"}, namespace="other")], [], ["a"]),
    ("empty selector matches nothing", ["a"], [pdb({})], [], ["a"]),
    ("already disrupted pods are not counted", ["a", "b"], [pdb({"app": "foo"}, allowed=1, disrupted=["a"])],
     [], ["a", "b"]),
])
def test_filter_pods_with_pdb_violation(name: str, pods: list[str], pdbs: list[PodDisruptionBudget],
                                        violating: list[str], non_violating: list[str]) -> None:
    infos = [PodInfo(pod(n, labels={"app": "foo"})) for n in pods]
    v, nv = dp.filter_pods_with_pdb_violation(infos, [DisruptionBudget.from_pdb(p) for p in pdbs])
    assert [pi.name for pi in v] == violating
    assert [pi.name for pi in nv] == non_violating


def test_pod_without_labels_matches_no_pdb() -> None:
    infos = [PodInfo(pod("a"))]
    sel_all = PodDisruptionBudget()
    sel_all.metadata.namespace = "default"
    sel_all.spec.selector.matchExpressions.add(key="x", operator="DoesNotExist")
    v, nv = dp.filter_pods_with_pdb_violation(infos, [DisruptionBudget.from_pdb(sel_all)])
    assert (v, [pi.name for pi in nv]) == ([], ["a"])


# ---------------------------------------------------------------- with the real PodTopologySpread plugin

def _spread_nodes() -> list[Node]:
    out = []
    for spec in ("node-a/zone1", "node-b/zone1", "node-x/zone2"):
        name, zone = spec.split("/")
        out.append(node(name, VERY_LARGE, {"hostname": name, "zone": zone}))
    return out


def _spread_preemptor() -> Pod:
    w = make_pod("p").uid("p").label("foo", "").priority(HIGH)
    w.spread_constraint(1, "zone", "DoNotSchedule", {"foo": ""})
    w.spread_constraint(1, "hostname", "DoNotSchedule", {"foo": ""})
    return w.obj()


def _spread_plugin(handle: PluginHandle) -> Plugin:
    pl: Plugin = podtopologyspread.new(None, handle)
    return pl


def test_dry_run_preemption_resolves_pod_topology_spread_failure() -> None:
    """"preemption to resolve pod topology spread filter failure"."""
    init = [pod("pod-a1", MID, "node-a", labels={"foo": ""}), pod("pod-a2", LOW, "node-a", labels={"foo": ""}),
            pod("pod-b1", LOW, "node-b", labels={"foo": ""}), pod("pod-x1", HIGH, "node-x", labels={"foo": ""}),
            pod("pod-x2", HIGH, "node-x", labels={"foo": ""})]
    handle = PluginHandle(init, _spread_nodes(), [])
    handle.plugins = [_spread_plugin(handle)]
    pl = new_plugin(handle)
    preemptor = _spread_preemptor()
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    node_infos = sorted(handle.snapshot_shared_lister().list(), key=lambda ni: ni.name)
    got, _, _ = pl.evaluator.dry_run_preemption(state, preemptor, node_infos, [], 0, 3)
    assert sorted((c.name, [v.metadata.name for v in c.victims.pods]) for c in got) == [
        ("node-a", ["pod-a2"]), ("node-b", ["pod-b1"]),
    ]
    assert handle.num_filter_called == 5  # node-a (3), node-b (2), node-x (0)


def test_preempt_for_topology_spread_constraints() -> None:
    init = [pod("p-a1", HIGH, "node-a", labels={"foo": ""}), pod("p-a2", HIGH, "node-a", labels={"foo": ""}),
            pod("p-b1", LOW, "node-b", labels={"foo": ""}), pod("p-x1", HIGH, "node-x", labels={"foo": ""}),
            pod("p-x2", HIGH, "node-x", labels={"foo": ""})]
    nodes = _spread_nodes()
    handle = PluginHandle(init, nodes, [])
    handle.plugins = [_spread_plugin(handle)]
    pl = new_plugin(handle)
    preemptor = _spread_preemptor()
    state = CycleState()
    handle.run_pre_filter_plugins(state, preemptor)
    res, status = pl.evaluator.preempt(state, preemptor, statuses({n.metadata.name: U for n in nodes}))
    assert is_success(status)
    assert res is not None and res.nominating_info is not None
    assert res.nominating_info.nominated_node_name == "node-b"
    assert handle.client().deleted == ["p-b1"]
