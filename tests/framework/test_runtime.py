"""Ported from kube-scheduler's framework/runtime/framework_test.go: building a profile (multiPoint
expansion, weights, validation) and running every extension point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeBatch,
    NodeScore,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from wasmsched.framework.nodetable import NodeColumns, NodeTable
from wasmsched.framework.runtime import Framework, FrameworkError, PluginRef, ProfilePlugins
from wasmsched.framework.snapshot import Snapshot, new_snapshot
from wasmsched.framework.status import Code, Status, is_success
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.helper.columns import verdicts_of_rejected
from wasmsched.plugins.prioritysort import PrioritySort
from wasmsched.scheduler.queue import Nominator
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import RecordingClient, RecordingEvents
from wasmsched.util.clock import SimClock

QS = "QueueSort"
BINDER = "Binder"
INJECTED = "injected status"


class Log:
    def __init__(self) -> None:
        self.calls: list[str] = []


LOG = Log()


class OkBinder(BindPlugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        LOG.calls.append(f"bind:{self.name}")
        return None


# ----- configurable test plugins ------------------------------------------------------------------


class PreFilterPl(PreFilterPlugin):
    def __init__(self, result: PreFilterResult | None = None, status: Status | None = None,
                 add_pod_status: Status | None = None) -> None:
        self.result, self.pf_status, self.add_pod_status = result, status, add_pod_status
        self.added: list[str] = []

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        LOG.calls.append(f"prefilter:{self.name}")
        return self.result, _copy(self.pf_status)

    def pre_filter_extensions(self) -> Any:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        self.added.append(pi.pod.metadata.name)
        return _copy(self.add_pod_status)

    def remove_pod(self, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        return None


class FilterPl(FilterPlugin):
    def __init__(self, status: Status | None = None, per_node: dict[str, Status] | None = None,
                 max_pods: int | None = None, min_pods: int | None = None) -> None:
        self.status, self.per_node = status, per_node or {}
        self.max_pods, self.min_pods = max_pods, min_pods

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        LOG.calls.append(f"filter:{self.name}")
        if self.max_pods is not None and len(node_info.pods) > self.max_pods:
            return Status.unschedulable("too many pods")
        if self.min_pods is not None and len(node_info.pods) < self.min_pods:
            return Status.unschedulable("too few pods")
        return _copy(self.per_node.get(node_info.name, self.status))


class PreScorePl(PreScorePlugin):
    def __init__(self, status: Status | None = None) -> None:
        self.ps_status = status

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        LOG.calls.append(f"prescore:{self.name}")
        return _copy(self.ps_status)


class ScorePl(ScorePlugin):
    def __init__(self, scores: dict[str, int] | int = 1, status: Status | None = None,
                 normalize: Any = None, normalize_status: Status | None = None) -> None:
        self.scores, self.status = scores, status
        self.normalize, self.normalize_status = normalize, normalize_status

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        LOG.calls.append(f"score:{self.name}")
        s = self.scores if isinstance(self.scores, int) else self.scores[node_info.name]
        return s, _copy(self.status)

    def score_extensions(self) -> Any:
        return self if (self.normalize is not None or self.normalize_status is not None) else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        if self.normalize_status is not None:
            return _copy(self.normalize_status)
        for ns in scores:
            ns.score = self.normalize(ns.score)
        return None


class ColumnarScorePl(ScorePl):
    """ScorePl with array answers: its raw scores as an array when the node table's rows are given, and its
    NormalizeScore over an array."""

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> Any:
        scores, st = super().score_batch(state, pod, batch)
        if st is not None or batch.columns is None:
            return scores, st
        return np.array(scores, dtype=np.int64), None

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: Any) -> Any:
        LOG.calls.append(f"normalize_score_batch:{self.name}")
        if self.normalize_status is not None:
            return None  # the per-node NormalizeScore reports it
        return np.array([self.normalize(s) for s in scores.tolist()], dtype=np.int64)


class ReservePl(ReservePlugin):
    def __init__(self, status: Status | None = None) -> None:
        self.status = status

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        LOG.calls.append(f"reserve:{self.name}")
        return _copy(self.status)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        LOG.calls.append(f"unreserve:{self.name}")


class PermitPl(PermitPlugin):
    def __init__(self, status: Status | None = None, timeout: float = 0.0) -> None:
        self.status, self.timeout = status, timeout

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        LOG.calls.append(f"permit:{self.name}")
        return _copy(self.status), self.timeout


class BindPl(BindPlugin):
    def __init__(self, status: Status | None = None) -> None:
        self.status = status

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        LOG.calls.append(f"bind:{self.name}")
        return _copy(self.status)


class PostFilterPl(PostFilterPlugin):
    def __init__(self, status: Status | None = None, result: PostFilterResult | None = None) -> None:
        self.status, self.result = status, result

    def post_filter(self, state: CycleState, pod: Pod, m: NodeToStatus) -> tuple[PostFilterResult | None,
                                                                                  Status | None]:
        LOG.calls.append(f"postfilter:{self.name}")
        return self.result, _copy(self.status)


class PreEnqueuePl(PreEnqueuePlugin):
    def __init__(self, status: Status | None = None) -> None:
        self.status = status

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return _copy(self.status)


class FilterScorePl(FilterPlugin, ScorePlugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 1, None


class AllPl(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin, PermitPlugin,
            PreBindPlugin, PostBindPlugin):
    """Implements many points, for multiPoint expansion."""

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return None, 0.0

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pass


class WithEvents(FilterPlugin, EnqueueExtensions):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]


def _copy(st: Status | None) -> Status | None:
    return None if st is None else Status(st.code, list(st.reasons), st.err, st.plugin)


def unsched(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, list(reasons) or [INJECTED])


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons) or [INJECTED])


def error(msg: str = INJECTED) -> Status:
    return Status.error(msg)


# ----- framework construction ---------------------------------------------------------------------


def new_framework(points: dict[str, list[tuple[str, Plugin] | tuple[str, Plugin, int]]] | None = None,
                  *, multi_point: list[tuple[str, Plugin] | tuple[str, Plugin, int]] | None = None,
                  disabled: dict[str, list[str]] | None = None, snapshot: Snapshot | None = None,
                  nominator: Nominator | None = None, clock: SimClock | None = None,
                  with_defaults: bool = True) -> Framework:
    LOG.calls.clear()
    registry: dict[str, Any] = {}
    cfg = ProfilePlugins()

    def reg(name: str, pl: Plugin) -> None:
        pl.name = name
        registry[name] = lambda args, handle, pl=pl: pl

    for point, entries in (points or {}).items():
        refs = []
        for e in entries:
            reg(e[0], e[1])
            refs.append(PluginRef(e[0], e[2] if len(e) > 2 else 0))  # type: ignore[misc]
        cfg.enabled[point] = refs
    for e in multi_point or []:
        reg(e[0], e[1])
        cfg.multi_point.append(PluginRef(e[0], e[2] if len(e) > 2 else 0))  # type: ignore[misc]
    if with_defaults:
        if "queue_sort" not in cfg.enabled:
            reg(QS, PrioritySort())
            cfg.enabled["queue_sort"] = [PluginRef(QS)]
        if "bind" not in cfg.enabled:
            reg(BINDER, OkBinder())
            cfg.enabled["bind"] = [PluginRef(BINDER)]
    cfg.disabled = disabled or {}
    snap = snapshot if snapshot is not None else new_snapshot([], [make_node("node1").obj(), make_node("node2").obj()])
    return Framework("default-scheduler", cfg, {}, registry, client=RecordingClient(),
                     event_recorder=RecordingEvents(), snapshot=lambda: snap,
                     pod_nominator=nominator or Nominator(), clock=(clock or SimClock()).now)


def names(fwk: Framework, point: str) -> list[str]:
    return [pl.name for pl in fwk.plugins.of(point)]


POD = make_pod("pod").uid("pod").obj()


def nodes(*ns: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in ns]


# ----- construction: multiPoint expansion ---------------------------------------------------------


def test_multi_point_expansion_to_every_implemented_point() -> None:
    fwk = new_framework(multi_point=[("A", AllPl()), ("B", FilterScorePl())])
    for point in ("pre_filter", "pre_score", "reserve", "permit", "pre_bind", "post_bind"):
        assert names(fwk, point) == ["A"], point
    assert names(fwk, "filter") == ["A", "B"]
    assert names(fwk, "score") == ["A", "B"]
    assert fwk.score_plugin_weight == {"A": 1, "B": 1}


@pytest.mark.parametrize(("name", "multi", "score", "disabled", "want_score", "want_weights", "want_filter"), [
    ("disable MultiPoint plugin at some extension points", [("A", 0), ("B", 0)], [], {"score": ["A"]},
     ["B"], {"B": 1}, ["A", "B"]),
    ("Reorder MultiPoint plugins (specific extension takes precedence)", [("A", 0), ("B", 0), ("C", 0)],
     [("C", 5)], {}, ["C", "A", "B"], {"A": 1, "B": 1, "C": 5}, ["A", "B", "C"]),
    ("Reorder MultiPoint plugins (specific extension only takes effect after multipoint)",
     [("A", 0), ("B", 0)], [("C", 0), ("A", 3)], {}, ["A", "B", "C"], {"A": 3, "B": 1, "C": 1}, ["A", "B"]),
    ("Override MultiPoint plugins weights", [("A", 5), ("B", 2)], [("A", 3)], {}, ["A", "B"],
     {"A": 3, "B": 2}, ["A", "B"]),
    ("disable all MultiPoint plugins at an extension point with *", [("A", 0), ("B", 0)], [("C", 0)],
     {"score": ["*"]}, ["C"], {"C": 1}, ["A", "B"]),
])
def test_multi_point_expansion(name: str, multi: list[tuple[str, int]], score: list[tuple[str, int]],
                               disabled: dict[str, list[str]], want_score: list[str], want_weights: dict[str, int],
                               want_filter: list[str]) -> None:
    plugins = {n: FilterScorePl() for n in ("A", "B", "C")}
    points: dict[str, Any] = {}
    if score:
        points["score"] = [(n, plugins[n], w) for n, w in score]
    fwk = new_framework(points, multi_point=[(n, plugins[n], w) for n, w in multi], disabled=disabled)
    assert names(fwk, "score") == want_score
    assert {n: fwk.score_plugin_weight[n] for n in want_score} == want_weights
    assert names(fwk, "filter") == want_filter


def test_disabled_star_keeps_only_explicit_plugins() -> None:
    fwk = new_framework({"filter": [("X", FilterPl())]}, multi_point=[("A", AllPl())], disabled={"filter": ["*"]})
    assert names(fwk, "filter") == ["X"]
    assert names(fwk, "pre_filter") == ["A"]


def test_multi_point_double_registration_is_an_error() -> None:
    with pytest.raises(FrameworkError, match='plugin "A" already registered as "FilterPlugin"'):
        new_framework(multi_point=[("A", FilterPl()), ("A", FilterPl())])


def test_plugin_not_extending_point_is_an_error() -> None:
    with pytest.raises(FrameworkError, match='plugin "A" does not extend FilterPlugin plugin'):
        new_framework({"filter": [("A", ScorePl())]})


def test_unknown_plugin_is_an_error() -> None:
    cfg = ProfilePlugins(enabled={"filter": [PluginRef("Nope")]})
    with pytest.raises(FrameworkError, match='"Nope" does not exist'):
        Framework("p", cfg, {}, {}, client=RecordingClient(), event_recorder=RecordingEvents(),
                  snapshot=Snapshot, pod_nominator=Nominator(), clock=SimClock().now)


def test_queue_sort_and_bind_required() -> None:
    with pytest.raises(FrameworkError,
                       match='only one queue sort plugin required for profile with scheduler name '
                             '"default-scheduler", but got 0'):
        new_framework({"bind": [("B", OkBinder())]}, with_defaults=False)
    with pytest.raises(FrameworkError,
                       match='at least one bind plugin is needed for profile with scheduler name "default-scheduler"'):
        new_framework({"queue_sort": [("Q", PrioritySort())]}, with_defaults=False)


def test_events_to_register_defaults_for_plugins_without_enqueue_extensions() -> None:
    # framework.go fillEnqueueExtensions: PreEnqueue/PreFilter/Filter/Reserve/Permit plugins without
    # EnqueueExtensions are registered for every event (defaultEnqueueExtension); Score-only plugins not.
    fwk = new_framework({"filter": [("Ext", WithEvents()), ("NoExt", FilterPl())], "score": [("S", ScorePl())]})
    registered = {plugin for plugin, _ in fwk.events_to_register()}
    assert "Ext" in registered
    assert "NoExt" in registered
    assert "S" not in registered


# ----- PreEnqueue ---------------------------------------------------------------------------------


def test_run_pre_enqueue_plugins() -> None:
    fwk = new_framework({"pre_enqueue": [("A", PreEnqueuePl()), ("B", PreEnqueuePl(unresolvable("gated"))),
                                         ("C", PreEnqueuePl(unsched("never")))]})
    st = fwk.run_pre_enqueue_plugins(POD)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert (st.plugin, st.reasons) == ("B", ["gated"])


# ----- PreFilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "plugins", "want_code", "want_plugin", "want_calls", "want_skip"), [
    ("all PreFilter returned success", [("A", None), ("B", None)], Code.SUCCESS, "",
     ["A", "B"], set()),
    ("the second PreFilter plugin returned Unschedulable", [("A", None), ("B", unsched())],
     Code.UNSCHEDULABLE, "B", ["A", "B"], set()),
    ("the first PreFilter plugin returned UnschedulableAndUnresolvable: the rest don't run",
     [("A", unresolvable()), ("B", None)], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A", ["A"], set()),
    ("the first PreFilter plugin returned an error: the rest don't run", [("A", error()), ("B", None)],
     Code.ERROR, "A", ["A"], set()),
    ("one PreFilter plugin returned Skip", [("A", Status.skip()), ("B", None)], Code.SUCCESS, "",
     ["A", "B"], {"A"}),
    ("all PreFilter plugins returned Skip", [("A", Status.skip()), ("B", Status.skip())], Code.SUCCESS, "",
     ["A", "B"], {"A", "B"}),
    # kubernetes/kubernetes#119770: an Unschedulable PreFilter doesn't stop the others (preemption
    # needs their state); the status returned is the last Unschedulable one.
    ("the first PreFilter plugin returned Unschedulable: the rest still run", [("A", unsched()), ("B", None)],
     Code.UNSCHEDULABLE, "A", ["A", "B"], set()),
    ("both PreFilter plugins returned Unschedulable", [("A", unsched()), ("B", unsched())],
     Code.UNSCHEDULABLE, "B", ["A", "B"], set()),
    ("Unschedulable then UnschedulableAndUnresolvable", [("A", unsched()), ("B", unresolvable())],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "B", ["A", "B"], set()),
])
def test_run_pre_filter_plugins(name: str, plugins: list[tuple[str, Status | None]], want_code: int,
                                want_plugin: str, want_calls: list[str], want_skip: set[str]) -> None:
    fwk = new_framework({"pre_filter": [(n, PreFilterPl(status=st)) for n, st in plugins]})
    state = CycleState()
    _, st, _ = fwk.run_pre_filter_plugins(state, POD, nodes("node1"))
    code = Code.SUCCESS if st is None else st.code
    assert code == want_code
    if st is not None:
        assert st.plugin == want_plugin
    assert LOG.calls == [f"prefilter:{n}" for n in want_calls]
    if want_code == Code.SUCCESS:
        assert state.skip_filter_plugins == want_skip


def test_pre_filter_error_is_wrapped() -> None:
    fwk = new_framework({"pre_filter": [("A", PreFilterPl(status=error("boom")))]})
    _, st, _ = fwk.run_pre_filter_plugins(CycleState(), POD, nodes("node1"))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'running PreFilter plugin "A": boom'


@pytest.mark.parametrize(("name", "results", "want_nodes", "want_code", "want_msg", "want_plugins"), [
    ("all nodes", [None, PreFilterResult(None)], None, Code.SUCCESS, "", set()),
    ("one plugin narrows", [PreFilterResult({"n1", "n2"}), None], {"n1", "n2"}, Code.SUCCESS, "", {"A"}),
    ("intersection of two plugins", [PreFilterResult({"n1", "n2"}), PreFilterResult({"n2", "n3"})], {"n2"},
     Code.SUCCESS, "", {"A", "B"}),
    ("disjoint results", [PreFilterResult({"n1"}), PreFilterResult({"n2"})], set(),
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [A B] simultaneously", {"A", "B"}),
    ("a single plugin returning no node", [None, PreFilterResult(set())], set(),
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin B", {"B"}),
])
def test_pre_filter_result_merge(name: str, results: list[PreFilterResult | None], want_nodes: set[str] | None,
                                 want_code: int, want_msg: str, want_plugins: set[str]) -> None:
    fwk = new_framework({"pre_filter": [(n, PreFilterPl(result=r)) for n, r in zip("AB", results, strict=True)]})
    res, st, plugins = fwk.run_pre_filter_plugins(CycleState(), POD, nodes("n1", "n2", "n3"))
    got_nodes = None if res is None or res.all_nodes() else res.node_names
    assert got_nodes == want_nodes
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if want_msg:
        assert st is not None and st.message() == want_msg
    assert set(plugins) == want_plugins


def test_pre_filter_simultaneously_message_lists_plugins_sorted() -> None:
    fwk = new_framework({"pre_filter": [("Zeta", PreFilterPl(result=PreFilterResult({"n1"}))),
                                        ("Alpha", PreFilterPl(result=PreFilterResult({"n2"})))]})
    _, st, _ = fwk.run_pre_filter_plugins(CycleState(), POD, nodes("n1", "n2"))
    assert st is not None
    assert st.message() == "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously"


def test_pre_filter_skip_ignores_its_result() -> None:
    fwk = new_framework({"pre_filter": [("A", PreFilterPl(result=PreFilterResult(set()), status=Status.skip()))]})
    res, st, _ = fwk.run_pre_filter_plugins(CycleState(), POD, nodes("n1"))
    assert st is None and (res is None or res.all_nodes())


class PreFilterAndFilter(PreFilterPl, FilterPl):
    def __init__(self, pre_filter_status: Status | None, filter_status: Status | None) -> None:
        PreFilterPl.__init__(self, status=pre_filter_status)
        FilterPl.__init__(self, filter_status)


def test_pre_filter_skip_skips_filter_and_extensions() -> None:
    a = PreFilterAndFilter(Status.skip(), unsched())
    b = PreFilterAndFilter(None, None)
    fwk = new_framework({"pre_filter": [("A", a), ("B", b)], "filter": [("A", a), ("B", b)]})
    state = CycleState()
    fwk.run_pre_filter_plugins(state, POD, nodes("node1"))
    assert state.skip_filter_plugins == {"A"}
    LOG.calls.clear()
    assert fwk.run_filter_plugins(state, POD, nodes("node1")[0]) is None
    assert LOG.calls == ["filter:B"]
    assert fwk.run_filter_plugins_batch(state, POD, nodes("node1")) == [None]
    fwk.run_pre_filter_extension_add_pod(state, POD, PodInfo(make_pod("x").obj()), nodes("node1")[0])
    assert a.added == [] and b.added == ["x"]


# ----- Filter -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "statuses", "skip", "want_code", "want_plugin", "want_msg", "want_calls"), [
    ("SuccessFilter", [None], set(), Code.SUCCESS, "", "", ["A"]),
    ("ErrorFilter", [error()], set(), Code.ERROR, "A", f'running "A" filter plugin: {INJECTED}', ["A"]),
    ("UnschedulableFilter", [unsched()], set(), Code.UNSCHEDULABLE, "A", INJECTED, ["A"]),
    ("UnschedulableAndUnresolvableFilter", [unresolvable()], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A",
     INJECTED, ["A"]),
    ("PendingFilter", [Status(Code.PENDING, [INJECTED])], set(), Code.PENDING, "A", INJECTED, ["A"]),
    ("WaitFilter is an error", [Status(Code.WAIT, [INJECTED])], set(), Code.ERROR, "A",
     f'running "A" filter plugin: {INJECTED}', ["A"]),
    ("ErrorAndErrorFilters", [error(), error("second")], set(), Code.ERROR, "A",
     f'running "A" filter plugin: {INJECTED}', ["A"]),
    ("SuccessAndSuccessFilters", [None, None], set(), Code.SUCCESS, "", "", ["A", "B"]),
    ("SuccessAndErrorFilters", [None, error()], set(), Code.ERROR, "B",
     f'running "B" filter plugin: {INJECTED}', ["A", "B"]),
    ("SuccessAndUnschedulableFilters", [None, unsched()], set(), Code.UNSCHEDULABLE, "B", INJECTED, ["A", "B"]),
    ("UnschedulableAndSuccessFilters: stops at the first failure", [unsched(), None], set(), Code.UNSCHEDULABLE,
     "A", INJECTED, ["A"]),
    ("ErrorAndSuccessFilters where the first filter is skipped", [error(), None], {"A"}, Code.SUCCESS, "", "",
     ["B"]),
])
def test_run_filter_plugins(name: str, statuses: list[Status | None], skip: set[str], want_code: int,
                            want_plugin: str, want_msg: str, want_calls: list[str]) -> None:
    # Some rows have a single plugin: "AB" names as many plugins as there are statuses.
    fwk = new_framework({"filter": [(n, FilterPl(st)) for n, st in zip("AB", statuses, strict=False)]})
    state = CycleState()
    state.skip_filter_plugins = set(skip)
    ni = nodes("node1")[0]
    st = fwk.run_filter_plugins(state, POD, ni)
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if st is not None:
        assert st.plugin == want_plugin
        assert st.message() == want_msg
    assert LOG.calls == [f"filter:{n}" for n in want_calls]
    # The batch form gives the same result, with and without the node table.
    for columns in (None, NodeColumns(NodeTable([ni]), np.arange(1, dtype=np.intp))):
        batch = fwk.run_filter_plugins_batch(state, POD, [ni], columns)[0]
        assert (None if batch is None else (batch.code, batch.plugin, batch.message())) == (
            None if st is None else (st.code, st.plugin, st.message()))


def test_run_filter_plugins_batch_per_node() -> None:
    fwk = new_framework({"filter": [("A", FilterPl(per_node={"n2": unsched("a says no")})),
                                    ("B", FilterPl(per_node={"n3": unresolvable("b says no")}))]})
    res = fwk.run_filter_plugins_batch(CycleState(), POD, nodes("n1", "n2", "n3"))
    assert res[0] is None
    assert res[1] is not None and (res[1].plugin, res[1].reasons) == ("A", ["a says no"])
    assert res[2] is not None and (res[2].plugin, res[2].reasons) == ("B", ["b says no"])


class ColumnarFilterPl(FilterPl):
    """FilterPl with a columnar answer when the node table's rows are given: True where the per-node form
    passes (or a wrong answer, or an exception), the rejected nodes' statuses from the per-node form."""

    def __init__(self, *args: Any, lie: set[str] = frozenset(), raises: bool = False,  # type: ignore[assignment]
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lie, self.raises = lie, raises

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> Any:
        columns = batch.columns
        if columns is None:
            return super().filter_batch(state, pod, batch)
        if self.raises:
            raise RuntimeError("columns broke")
        infos = [columns.table.infos[r] for r in columns.rows.tolist()]
        assert [ni.name for ni in infos] == [ni.name for ni in batch.node_infos]
        LOG.calls.append(f"columns:{self.name}:{','.join(ni.name for ni in infos)}")
        ok = np.array([(self.per_node.get(ni.name, self.status) is None) != (ni.name in self.lie)
                       for ni in infos], dtype=np.bool_)
        return verdicts_of_rejected(ok, batch, lambda node_infos: FilterPlugin.filter_batch(
            self, state, pod, NodeBatch(node_infos)))


def test_columnar_filters_see_the_feasible_nodes_rows_only() -> None:
    ns = nodes("n1", "n2", "n3", "n4")
    columns = NodeColumns(NodeTable(ns), np.arange(4, dtype=np.intp))
    fwk = new_framework({"filter": [
        ("A", ColumnarFilterPl(per_node={"n2": unsched("a says no")}, lie={"n4"})),
        ("B", FilterPl(per_node={"n3": unresolvable("b says no")})),
        ("C", ColumnarFilterPl(per_node={"n1": unsched("c says no")}))]})
    LOG.calls.clear()
    res = fwk.run_filter_plugins_batch(CycleState(), POD, ns, columns)
    # A's columns rejected n2 and (wrongly) n4: its per-node form confirms n2 only. B sees n1, n3, n4; C the rest.
    assert LOG.calls == ["columns:A:n1,n2,n3,n4", "filter:A", "filter:A", "filter:B", "filter:B", "filter:B",
                         "columns:C:n1,n4", "filter:C"]
    assert [None if st is None else (st.plugin, st.reasons) for st in res] == [
        ("C", ["c says no"]), ("A", ["a says no"]), ("B", ["b says no"]), None]
    per_node = fwk.run_filter_plugins_batch(CycleState(), POD, ns)
    assert [None if st is None else (st.code, st.plugin, st.message()) for st in res] == [
        None if st is None else (st.code, st.plugin, st.message()) for st in per_node]
    fwk = new_framework({"filter": [("A", ColumnarFilterPl(raises=True))]})
    res = fwk.run_filter_plugins_batch(CycleState(), POD, ns, columns)
    assert all(st is not None and st.code == Code.ERROR and "columns broke" in st.message() for st in res)


class MisplacedFilterPl(FilterPlugin):
    """Rejects every node, but its filter_batch also answers for a position outside the batch."""

    def __init__(self, position: int) -> None:
        self.position = position

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return unsched("no")

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> Any:
        verdicts = {i: unsched("no") for i in range(len(batch))}
        verdicts[self.position] = unsched("no")
        return verdicts


@pytest.mark.parametrize("position", [3, 7, -1], ids=["just past", "far past", "negative"])
@pytest.mark.parametrize("mode", ["per node", "columns"])
def test_a_verdict_for_a_node_outside_the_batch_fails_every_node(position: int, mode: str) -> None:
    ns = nodes("n1", "n2", "n3")
    columns = None if mode == "per node" else NodeColumns(NodeTable(ns), np.arange(3, dtype=np.intp))
    fwk = new_framework({"filter": [("A", MisplacedFilterPl(position)), ("B", FilterPl())]})
    res = fwk.run_filter_plugins_batch(CycleState(), POD, ns, columns)
    want = f'running "A" filter plugin: filter_batch returned a verdict for node {position} of a batch of 3 nodes'
    assert [None if st is None else (st.code, st.plugin, st.message()) for st in res] == [(Code.ERROR, "A", want)] * 3
    assert LOG.calls == []  # B never saw a node


# ----- Filter with nominated pods -----------------------------------------------------------------


def _nominated_setup(filter_pl: FilterPl, prefilter: PreFilterPl | None = None,
                     nominated: list[Pod] | None = None) -> tuple[Framework, NodeInfo]:
    node = make_node("node1").obj()
    snap = new_snapshot([], [node])
    nom = Nominator()
    for p in nominated or []:
        nom.add_nominated_pod(PodInfo(p), NominatingInfo("node1", NominatingMode.OVERRIDE))
    points: dict[str, Any] = {"filter": [("F", filter_pl)]}
    if prefilter is not None:
        points["pre_filter"] = [("PF", prefilter)]
    fwk = new_framework(points, snapshot=snap, nominator=nom)
    return fwk, snap.get("node1")  # type: ignore[return-value]


LOW = make_pod("low").uid("low").priority(0).obj()
HIGH = make_pod("high").uid("high").priority(1000).obj()
MID = make_pod("mid").uid("mid").priority(100).obj()


@pytest.mark.parametrize(("name", "pod", "nominated", "filter_pl", "prefilter", "want_code", "want_msg",
                          "want_passes"), [
    ("node has no nominated pod", MID, [], FilterPl(), None, Code.SUCCESS, "", 1),
    ("node has a high-priority nominated pod and all filters succeed: both passes run", MID, [HIGH], FilterPl(),
     PreFilterPl(), Code.SUCCESS, "", 2),
    ("node has a high-priority nominated pod and pre filters fail", MID, [HIGH], FilterPl(),
     PreFilterPl(add_pod_status=error()), Code.ERROR, f'running AddPod on PreFilter plugin "PF": {INJECTED}', 0),
    ("node has a high-priority nominated pod and filters fail", MID, [HIGH], FilterPl(error()), PreFilterPl(),
     Code.ERROR, f'running "F" filter plugin: {INJECTED}', 1),
    ("node has a low-priority nominated pod and pre filters return unschedulable", MID, [LOW], FilterPl(),
     PreFilterPl(add_pod_status=unsched()), Code.SUCCESS, "", 1),
    ("nominated pod with equal priority counts", MID, [make_pod("mid2").uid("mid2").priority(100).obj()],
     FilterPl(max_pods=0), None, Code.UNSCHEDULABLE, "too many pods", 1),
    ("filter fails only with the nominated pods added: first pass rejects", MID, [HIGH], FilterPl(max_pods=0),
     None, Code.UNSCHEDULABLE, "too many pods", 1),
    ("filter fails only without the nominated pods: second pass rejects", MID, [HIGH], FilterPl(min_pods=1),
     None, Code.UNSCHEDULABLE, "too few pods", 2),
    ("the pod's own nomination is not added", MID, [MID], FilterPl(max_pods=0), None, Code.SUCCESS, "", 1),
])
def test_run_filter_plugins_with_nominated_pods(name: str, pod: Pod, nominated: list[Pod], filter_pl: FilterPl,
                                                prefilter: PreFilterPl | None, want_code: int, want_msg: str,
                                                want_passes: int) -> None:
    fwk, ni = _nominated_setup(filter_pl, prefilter, nominated)
    state = CycleState()
    if prefilter is not None:
        fwk.run_pre_filter_plugins(state, pod, [ni])
    LOG.calls.clear()
    st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if want_msg:
        assert st is not None and st.message() == want_msg
    assert LOG.calls.count("filter:F") == want_passes
    assert len(ni.pods) == 0  # the snapshot's NodeInfo is never modified


# ----- PostFilter ---------------------------------------------------------------------------------


def test_run_post_filter_plugins() -> None:
    nominate = PostFilterResult(NominatingInfo("node1", NominatingMode.OVERRIDE))
    fwk = new_framework({"post_filter": [("A", PostFilterPl(unsched("a"))), ("B", PostFilterPl(None, nominate))]})
    r, st = fwk.run_post_filter_plugins(CycleState(), POD, NodeToStatus())
    assert is_success(st) and r is nominate
    fwk = new_framework(
        {"post_filter": [("A", PostFilterPl(unsched("a"), nominate)), ("B", PostFilterPl(unsched("b")))]}
    )
    r, st = fwk.run_post_filter_plugins(CycleState(), POD, NodeToStatus())
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ["a", "b"], "A")
    assert r is nominate
    fwk = new_framework({"post_filter": [("A", PostFilterPl(unresolvable("x"))), ("B", PostFilterPl())]})
    r, st = fwk.run_post_filter_plugins(CycleState(), POD, NodeToStatus())
    assert (st.code, st.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A")
    assert LOG.calls == ["postfilter:A"]
    fwk = new_framework({"post_filter": [("A", PostFilterPl(error("boom"))), ("B", PostFilterPl())]})
    r, st = fwk.run_post_filter_plugins(CycleState(), POD, NodeToStatus())
    assert (st.code, st.plugin, st.message(), r) == (Code.ERROR, "A", "boom", None)


# ----- PreScore / Score ---------------------------------------------------------------------------


class PreScoreAndScore(PreScorePl, ScorePl):
    def __init__(self, pre_score_status: Status | None, score: int) -> None:
        PreScorePl.__init__(self, pre_score_status)
        ScorePl.__init__(self, score)


def test_pre_score_skip_skips_score() -> None:
    a, b = PreScoreAndScore(Status.skip(), 7), PreScoreAndScore(None, 3)
    fwk = new_framework({"pre_score": [("A", a), ("B", b)], "score": [("A", a), ("B", b)]})
    state = CycleState()
    ns = nodes("node1", "node2")
    assert fwk.run_pre_score_plugins(state, POD, ns) is None
    assert state.skip_score_plugins == {"A"}
    LOG.calls.clear()
    scores, st = fwk.run_score_plugins(state, POD, ns)
    assert st is None
    assert [(s.name, [(p.name, p.score) for p in s.scores], s.total_score) for s in scores] == [
        ("node1", [("B", 3)], 3), ("node2", [("B", 3)], 3)]
    assert "score:A" not in LOG.calls


def test_pre_score_error_is_wrapped() -> None:
    fwk = new_framework({"pre_score": [("A", PreScorePl(error("boom"))), ("B", PreScorePl())]})
    st = fwk.run_pre_score_plugins(CycleState(), POD, nodes("node1"))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'running PreScore plugin "A": boom'
    assert LOG.calls == ["prescore:A"]


def _double(s: int) -> int:
    return s * 2


def _to_101(s: int) -> int:
    return 101


@pytest.mark.parametrize(("name", "plugins", "want", "want_err"), [
    ("no Score plugins", [], {"n1": 0, "n2": 0}, ""),
    ("single Score plugin", [("A", ScorePl(1), 1)], {"n1": 1, "n2": 1}, ""),
    ("single Score plugin with weight", [("A", ScorePl({"n1": 10, "n2": 40}), 3)], {"n1": 30, "n2": 120}, ""),
    ("single ScoreWithNormalize plugin", [("A", ScorePl({"n1": 10, "n2": 40}, normalize=_double), 1)],
     {"n1": 20, "n2": 80}, ""),
    ("2 Score plugins, 2 NormalizeScore plugins, weights applied after normalizing",
     [("A", ScorePl({"n1": 10, "n2": 20}, normalize=_double), 1),
      ("B", ScorePl({"n1": 5, "n2": 50}, normalize=_double), 3)],
     {"n1": 20 + 30, "n2": 40 + 300}, ""),
    ("score fails", [("A", ScorePl(1, status=error("boom")), 1)], {},
     'running Score plugins: plugin "A" failed with: boom'),
    ("normalize fails", [("A", ScorePl(1, normalize_status=error("boom")), 1)], {},
     'running Normalize on Score plugins: plugin "A" failed with: boom'),
    ("Score plugin return score greater than MaxNodeScore", [("A", ScorePl(101), 1)], {},
     ('applying score defaultWeights on Score plugins: plugin "A" returns an invalid score 101, '
     "it should in the range of [0, 100] after normalizing")),
    ("Score plugin return score less than MinNodeScore", [("A", ScorePl(-1), 1)], {},
     ('applying score defaultWeights on Score plugins: plugin "A" returns an invalid score -1, '
     "it should in the range of [0, 100] after normalizing")),
    ("ScoreWithNormalize plugin return score greater than MaxNodeScore", [("A", ScorePl(1, normalize=_to_101), 1)],
     {}, ('applying score defaultWeights on Score plugins: plugin "A" returns an invalid score 101, '
         "it should in the range of [0, 100] after normalizing")),
    ("a raw score over 100 normalized into range is fine", [("A", ScorePl({"n1": 500, "n2": 1000},
                                                                         normalize=lambda s: s // 10), 2)],
     {"n1": 100, "n2": 200}, ""),
])
@pytest.mark.parametrize("mode", ["per node", "columns", "columnar plugins", "columnar plugins, sampled cycle"])
def test_run_score_plugins(name: str, plugins: list[tuple[str, ScorePl, int]], want: dict[str, int],
                           want_err: str, mode: str) -> None:
    # The same results without the node table, with it (plugins' per-node forms), and from array answers (in
    # a cycle whose plugin durations are sampled too).
    state = CycleState()
    if mode.startswith("columnar plugins"):
        plugins = [(n, ColumnarScorePl(pl.scores, pl.status, pl.normalize, pl.normalize_status), w)
                   for n, pl, w in plugins]
        state.record_plugin_metrics = mode.endswith("sampled cycle")
    fwk = new_framework({"score": [(n, pl, w) for n, pl, w in plugins]} if plugins else {})
    ns = nodes("n1", "n2")
    columns = None if mode == "per node" else NodeColumns(NodeTable(ns), np.arange(2, dtype=np.intp))
    scores, st = fwk.run_score_plugins(state, POD, ns, columns)
    if mode.startswith("columnar plugins"):
        for n, pl, _ in plugins:
            if pl.score_extensions() is not None and pl.status is None:
                assert f"normalize_score_batch:{n}" in LOG.calls
    if want_err:
        assert st is not None and st.code == Code.ERROR
        assert st.message() == want_err
        return
    assert st is None
    assert {s.name: s.total_score for s in scores} == want
    for s in scores:
        assert s.total_score == sum(p.score for p in s.scores)
        assert [p.name for p in s.scores] == [n for n, _, _ in plugins]


@pytest.mark.parametrize(("first", "second", "bad"), [
    (ColumnarScorePl(101), ScorePl(-1), "A"), (ScorePl(101), ColumnarScorePl(-1), "A"),
    (ColumnarScorePl(5), ScorePl(-1), "B"), (ScorePl(5), ColumnarScorePl(101), "B"),
])
def test_invalid_scores_name_the_first_plugin_in_order(first: ScorePl, second: ScorePl, bad: str) -> None:
    fwk = new_framework({"score": [("A", first, 1), ("B", second, 1)]})
    ns = nodes("n1", "n2")
    for columns in (None, NodeColumns(NodeTable(ns), np.arange(2, dtype=np.intp))):
        _, st = fwk.run_score_plugins(CycleState(), POD, ns, columns)
        assert st is not None and f'plugin "{bad}" returns an invalid score' in st.message()


def _resize(xs: list[Any], extra: int, filler: Any) -> None:
    """xs, in place, `extra` items longer (shorter when negative)."""
    if extra < 0:
        del xs[extra:]
    else:
        xs.extend([filler] * extra)


class MiscountingScorePl(ScorePlugin):
    """Scores 50 everywhere, but its form `form` gives `extra` scores more (fewer when negative) than nodes."""

    def __init__(self, form: str, extra: int) -> None:
        self.form, self.extra = form, extra

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 50, None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> Any:
        n = len(batch) + (self.extra if self.form == "score_batch" else 0)
        # An array where the node table's rows are given, so that normalize_score_batch is asked.
        return ([50] * n if batch.columns is None else np.full(n, 50, dtype=np.int64)), None

    def score_extensions(self) -> Any:
        return self if self.form.startswith("normalize") else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        if self.form == "normalize_score":
            _resize(scores, self.extra, NodeScore("nowhere", 50))
        return None

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: Any) -> Any:
        if self.form != "normalize_score_batch":
            return None
        return np.full(len(scores) + self.extra, 50, dtype=np.int64)


@pytest.mark.parametrize("extra", [-1, 1], ids=["short", "long"])
@pytest.mark.parametrize(("form", "mode"), [
    ("score_batch", "per node"), ("score_batch", "columns"),
    ("normalize_score", "per node"), ("normalize_score", "columns"),
    ("normalize_score_batch", "columns"), ("normalize_score_batch", "columns, sampled cycle"),
])
def test_a_wrong_count_of_scores_is_the_cycles_error(form: str, mode: str, extra: int) -> None:
    ns = nodes("n1", "n2", "n3")
    columns = None if mode == "per node" else NodeColumns(NodeTable(ns), np.arange(3, dtype=np.intp))
    state = CycleState()
    state.record_plugin_metrics = mode.endswith("sampled cycle")
    fwk = new_framework({"score": [("A", MiscountingScorePl(form, extra), 1), ("B", ScorePl(1), 1)]})
    scores, st = fwk.run_score_plugins(state, POD, ns, columns)
    title = "Normalize on Score" if form.startswith("normalize") else "Score"
    assert st is not None and st.code == Code.ERROR
    assert st.message() == (f'running {title} plugins: plugin "A" failed with: '
                            f"{form} returned {3 + extra} scores for 3 nodes")
    assert len(scores) == 0


# ----- Reserve / Unreserve ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "statuses", "want_code", "want_plugin", "want_msg", "want_calls"), [
    ("all succeed", [None, None], Code.SUCCESS, "", "", ["A", "B"]),
    ("error is wrapped and stops", [error("boom"), None], Code.ERROR, "A", 'running Reserve plugin "A": boom', ["A"]),
    ("unschedulable keeps its code", [None, unsched("no room")], Code.UNSCHEDULABLE, "B", "no room", ["A", "B"]),
    ("unresolvable keeps its code", [unresolvable("never"), None], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A",
     "never", ["A"]),
])
def test_run_reserve_plugins(name: str, statuses: list[Status | None], want_code: int, want_plugin: str,
                             want_msg: str, want_calls: list[str]) -> None:
    fwk = new_framework({"reserve": [(n, ReservePl(st)) for n, st in zip("AB", statuses, strict=True)]})
    st = fwk.run_reserve_plugins_reserve(CycleState(), POD, "node1")
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if st is not None:
        assert (st.plugin, st.message()) == (want_plugin, want_msg)
    assert LOG.calls == [f"reserve:{n}" for n in want_calls]


def test_unreserve_runs_in_reverse_order() -> None:
    fwk = new_framework({"reserve": [("A", ReservePl()), ("B", ReservePl(unsched())), ("C", ReservePl())]})
    st = fwk.run_reserve_plugins_reserve(CycleState(), POD, "node1")
    assert st is not None
    LOG.calls.clear()
    fwk.run_reserve_plugins_unreserve(CycleState(), POD, "node1")
    assert LOG.calls == ["unreserve:C", "unreserve:B", "unreserve:A"]


# ----- Permit -------------------------------------------------------------------------------------


WAIT = Status(Code.WAIT, ["wait"])


@pytest.mark.parametrize(("name", "plugins", "want_code", "want_plugin", "want_msg"), [
    ("nil plugins", [], Code.SUCCESS, "", ""),
    ("success", [("A", None)], Code.SUCCESS, "", ""),
    ("unschedulable", [("A", unsched("no"))], Code.UNSCHEDULABLE, "A", "no"),
    ("unschedulable and unresolvable", [("A", unresolvable("never"))], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A",
     "never"),
    ("error", [("A", error("boom"))], Code.ERROR, "A", 'running Permit plugin "A": boom'),
    ("wait", [("A", WAIT)], Code.WAIT, "", 'one or more plugins asked to wait and no plugin rejected pod "pod"'),
    ("success and wait", [("A", None), ("B", WAIT)], Code.WAIT, "",
     'one or more plugins asked to wait and no plugin rejected pod "pod"'),
    ("wait and unschedulable: rejection wins", [("A", WAIT), ("B", unsched("no"))], Code.UNSCHEDULABLE, "B", "no"),
])
def test_run_permit_plugins(name: str, plugins: list[tuple[str, Status | None]], want_code: int, want_plugin: str,
                            want_msg: str) -> None:
    fwk = new_framework({"permit": [(n, PermitPl(st, 10)) for n, st in plugins]})
    st = fwk.run_permit_plugins(CycleState(), POD, "node1")
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if st is not None:
        assert (st.plugin, st.message()) == (want_plugin, want_msg)
    assert (fwk.get_waiting_pod("pod") is not None) == (want_code == Code.WAIT)


def _wait(fwk: Framework) -> list[Status | None]:
    got: list[Status | None] = []
    fwk.wait_on_permit(POD, got.append)
    return got


def test_permit_wait_then_allow() -> None:
    clock = SimClock()
    fwk = new_framework({"permit": [("A", PermitPl(WAIT, 10)), ("B", PermitPl(WAIT, 20))]}, clock=clock)
    fwk.run_permit_plugins(CycleState(), POD, "node1")
    wp = fwk.get_waiting_pod("pod")
    assert wp is not None and wp.get_pending_plugins() == ["A", "B"]
    got = _wait(fwk)
    wp.allow("A")
    assert got == []  # B still pending
    wp.allow("B")
    assert got == [None]
    assert fwk.get_waiting_pod("pod") is None


def test_permit_wait_then_reject() -> None:
    fwk = new_framework({"permit": [("A", PermitPl(WAIT, 10))]})
    fwk.run_permit_plugins(CycleState(), POD, "node1")
    got = _wait(fwk)
    fwk.get_waiting_pod("pod").reject("A", "reject message")  # type: ignore[union-attr]
    assert len(got) == 1 and got[0] is not None
    assert (got[0].code, got[0].plugin, got[0].message()) == (Code.UNSCHEDULABLE, "A", "reject message")
    assert fwk.get_waiting_pod("pod") is None


def test_permit_wait_times_out() -> None:
    clock = SimClock()
    fwk = new_framework({"permit": [("A", PermitPl(WAIT, 10)), ("B", PermitPl(WAIT, 30))]}, clock=clock)
    fwk.run_permit_plugins(CycleState(), POD, "node1")
    got = _wait(fwk)
    assert fwk.next_waiting_deadline() == pytest.approx(clock.now() + 10)
    clock.advance(9.9)
    assert fwk.expire_waiting_pods(clock.now()) == 0 and got == []
    clock.advance(0.1)
    assert fwk.expire_waiting_pods(clock.now()) == 1
    assert len(got) == 1 and got[0] is not None
    assert got[0].code == Code.UNSCHEDULABLE and got[0].plugin == "A"
    assert got[0].message() == "rejected due to timeout after waiting 10s at plugin A"


def test_permit_timeout_capped_at_15_minutes() -> None:
    clock = SimClock()
    fwk = new_framework({"permit": [("A", PermitPl(WAIT, 3600))]}, clock=clock)
    fwk.run_permit_plugins(CycleState(), POD, "node1")
    got = _wait(fwk)
    assert fwk.next_waiting_deadline() == pytest.approx(clock.now() + 15 * 60)
    clock.advance(15 * 60)
    fwk.expire_waiting_pods(clock.now())
    assert got[0] is not None and got[0].message() == "rejected due to timeout after waiting 15m0s at plugin A"


def test_reject_waiting_pod_from_handle() -> None:
    fwk = new_framework({"permit": [("A", PermitPl(WAIT, 10))]})
    assert not fwk.reject_waiting_pod("pod")
    fwk.run_permit_plugins(CycleState(), POD, "node1")
    got = _wait(fwk)
    assert fwk.reject_waiting_pod("pod")
    assert got[0] is not None and (got[0].code, got[0].message()) == (Code.UNSCHEDULABLE, "removed")


def test_wait_on_permit_for_a_pod_not_waiting() -> None:
    fwk = new_framework({"permit": [("A", PermitPl())]})
    assert _wait(fwk) == [None]


# ----- PreBind / Bind -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "statuses", "want_code", "want_plugin", "want_msg", "want_calls"), [
    ("one bind plugin binds", [None], Code.SUCCESS, "", "", ["A"]),
    ("bind plugins skipped to bind", [Status.skip(), Status.skip()], Code.SKIP, "", "", ["A", "B"]),
    ("one bind plugin skipped, but the other binds", [Status.skip(), None], Code.SUCCESS, "", "", ["A", "B"]),
    ("first binder binds: the next isn't called", [None, None], Code.SUCCESS, "", "", ["A"]),
    ("one bind plugin returned an error", [error("boom"), None], Code.ERROR, "A", 'running Bind plugin "A": boom',
     ["A"]),
    ("skip then error", [Status.skip(), error("boom")], Code.ERROR, "B", 'running Bind plugin "B": boom',
     ["A", "B"]),
    ("bind rejected", [unsched("nope"), None], Code.UNSCHEDULABLE, "A", "nope", ["A"]),
])
def test_run_bind_plugins(name: str, statuses: list[Status | None], want_code: int, want_plugin: str,
                          want_msg: str, want_calls: list[str]) -> None:
    # Some rows have a single plugin: "AB" names as many plugins as there are statuses.
    fwk = new_framework({"bind": [(n, BindPl(st)) for n, st in zip("AB", statuses, strict=False)]})
    st = fwk.run_bind_plugins(CycleState(), POD, "node1")
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if st is not None and want_code != Code.SKIP:
        assert (st.plugin, st.message()) == (want_plugin, want_msg)
    assert LOG.calls == [f"bind:{n}" for n in want_calls]


class PreBindPl(PreBindPlugin):
    def __init__(self, status: Status | None = None) -> None:
        self.status = status

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        LOG.calls.append(f"prebind:{self.name}")
        return _copy(self.status)


@pytest.mark.parametrize(("name", "statuses", "want_code", "want_plugin", "want_msg"), [
    ("all succeed", [None, None], Code.SUCCESS, "", ""),
    ("error wrapped", [error("boom"), None], Code.ERROR, "A", 'running PreBind plugin "A": boom'),
    ("rejected", [None, unsched("no")], Code.UNSCHEDULABLE, "B", "no"),
])
def test_run_pre_bind_plugins(name: str, statuses: list[Status | None], want_code: int, want_plugin: str,
                              want_msg: str) -> None:
    fwk = new_framework({"pre_bind": [(n, PreBindPl(st)) for n, st in zip("AB", statuses, strict=True)]})
    st = fwk.run_pre_bind_plugins(CycleState(), POD, "node1")
    assert (Code.SUCCESS if st is None else st.code) == want_code
    if st is not None:
        assert (st.plugin, st.message()) == (want_plugin, want_msg)


def test_a_batch_normalize_that_raises_is_the_cycles_error() -> None:
    class Broken(ColumnarScorePl):
        def normalize_score_batch(self, state: CycleState, pod: Pod, scores: Any) -> Any:
            raise RuntimeError("normalize broke")

    fwk = new_framework({"score": [("A", Broken(5, normalize=_double), 1)]})
    ns = nodes("n1", "n2")
    state = CycleState()
    state.record_plugin_metrics = True
    _, st = fwk.run_score_plugins(state, POD, ns, NodeColumns(NodeTable(ns), np.arange(2, dtype=np.intp)))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'running Normalize on Score plugins: plugin "A" failed with: normalize broke'
