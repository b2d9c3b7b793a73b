"""The per-profile framework: builds the plugins of a profile and runs them at each extension
point in kube-scheduler's order and with its semantics (framework/runtime/framework.go)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod, pod_key, pod_priority
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import (
    ALL_PASS,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ClusterClient,
    EventRecorder,
    NodePluginScores,
    NodeScore,
    NodeToStatus,
    PluginFactory,
    PodNominator,
    PostFilterResult,
    PreFilterResult,
    ScoreExtensions,
    ScorePlugin,
)
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.status import (
    Code,
    Status,
    code_of,
    is_rejected,
    is_skip,
    is_success,
    is_wait,
    not_success,
)
from wasmsched.framework.types import NodeInfo, PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.framework.waiting_pods import WaitingPodImpl, WaitingPodsMap
from wasmsched.metrics import names as mn

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns, ScoredNodes
    from wasmsched.metrics.metrics import SchedulerMetrics

log = logging.getLogger("wasmsched.framework")

MAX_TIMEOUT = 15 * 60.0  # Permit wait cap, as kube-scheduler's maxTimeout

# framework.UnrollWildCardResource: the events of a plugin without EnqueueExtensions (every resource
# with every action; kube 1.37 leaves out ResourceSlice, and PodGroup unless GenericWorkload is on).
ALL_CLUSTER_EVENTS = [
    ClusterEvent(r, ActionType.ALL)
    for r in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD,
              EventResource.NODE, EventResource.PERSISTENT_VOLUME, EventResource.PERSISTENT_VOLUME_CLAIM,
              EventResource.CSI_NODE, EventResource.CSI_DRIVER, EventResource.CSI_STORAGE_CAPACITY,
              EventResource.STORAGE_CLASS, EventResource.RESOURCE_CLAIM, EventResource.DEVICE_CLASS)
]


class FrameworkError(ValueError):
    """A profile that cannot be built (unknown plugin, plugin without the extension point, ...)."""


@dataclass
class PluginRef:
    name: str
    weight: int = 0


@dataclass
class ProfilePlugins:
    """Enabled/disabled plugins per extension point, after config defaulting (config.Plugins)."""

    enabled: dict[str, list[PluginRef]] = field(default_factory=dict)
    disabled: dict[str, list[str]] = field(default_factory=dict)
    multi_point: list[PluginRef] = field(default_factory=list)


class Framework:
    """Runs one profile's plugins. Also the Handle plugins receive."""

    def __init__(
        self,
        profile_name: str,
        plugins: ProfilePlugins,
        plugin_args: Mapping[str, Any],
        registry: Mapping[str, PluginFactory],
        *,
        client: ClusterClient,
        event_recorder: EventRecorder,
        snapshot: Callable[[], Snapshot],
        pod_nominator: PodNominator,
        clock: Callable[[], float],
        percentage_of_nodes_to_score: int | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self._profile_name = profile_name
        self._metrics = metrics
        self._client = client
        self._event_recorder = event_recorder
        self._snapshot = snapshot
        self._pod_nominator = pod_nominator
        self.clock = clock
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.waiting_pods = WaitingPodsMap()
        self.plugins_map: dict[str, fw.Plugin] = {}
        self.score_plugin_weight: dict[str, int] = {}
        self._build(plugins, plugin_args, registry)
        if metrics is not None:
            self._time_extension_points(metrics)

    # ----- construction -------------------------------------------------------------------------

    def _build(self, cfg: ProfilePlugins, args: Mapping[str, Any], registry: Mapping[str, PluginFactory]) -> None:
        names = [ref.name for ref in cfg.multi_point]
        for refs in cfg.enabled.values():
            names.extend(r.name for r in refs)
        for name in dict.fromkeys(names):
            factory = registry.get(name)
            if factory is None:
                raise FrameworkError(f'profile "{self._profile_name}": plugin "{name}" does not exist')
            try:
                plugin = factory(args.get(name), self)
                fw.check_extension_points(plugin)  # every method its extension points require
            except FrameworkError:
                raise
            except Exception as e:  # a plugin's own validation error names the plugin for the user
                raise FrameworkError(f'profile "{self._profile_name}": initializing plugin "{name}": {e}') from e
            if not plugin.name:
                plugin.name = name
            self.plugins_map[name] = plugin

        for ref in cfg.enabled.get("score", []):
            self.score_plugin_weight[ref.name] = ref.weight or 1
        for ref in cfg.multi_point:
            if ref.name not in self.score_plugin_weight:
                self.score_plugin_weight[ref.name] = ref.weight or 1

        self.points: dict[str, list[Any]] = {}
        for ep in fw.EXTENSION_POINTS:
            point, iface = ep.attr, ep.interface
            if iface is None:
                continue
            specific = [r.name for r in cfg.enabled.get(point, [])]
            for n in specific:
                if not isinstance(self.plugins_map[n], iface):
                    raise FrameworkError(
                        f'profile "{self._profile_name}": plugin "{n}" does not extend '
                        f"{_point_title(point)}Plugin plugin"
                    )
            disabled = set(cfg.disabled.get(point, []))
            self.points[point] = self._expand_multi_point(point, iface, specific, disabled, cfg.multi_point)

        if len(self.points["queue_sort"]) != 1:
            raise FrameworkError(
                f'profile "{self._profile_name}": only one queue sort plugin required for profile with scheduler'
                f' name "{self._profile_name}", but got {len(self.points["queue_sort"])}'
            )
        if not self.points["bind"]:
            raise FrameworkError(f'profile "{self._profile_name}": at least one bind plugin is needed for profile with'
                                 f' scheduler name "{self._profile_name}"')
        # Filter/score weights only matter for score plugins; validate their range as kube does.
        for pl in self.points["score"]:
            if self.score_plugin_weight.get(pl.name, 1) <= 0:
                raise FrameworkError(
                    f'profile "{self._profile_name}": score plugin "{pl.name}" weight must be positive'
                )
        self.enqueue_extensions = [p for p in self.plugins_map.values() if isinstance(p, fw.EnqueueExtensions)]

    def _expand_multi_point(self, point: str, iface: type, specific: list[str], disabled: set[str],
                            multi_point: list[PluginRef]) -> list[Any]:
        if "*" in disabled:
            return [self.plugins_map[n] for n in specific]
        enabled_set = list(dict.fromkeys(specific))
        multi: list[str] = []
        overrides: set[str] = set()
        for ref in multi_point:
            pl = self.plugins_map[ref.name]
            if not isinstance(pl, iface) or ref.name in disabled:
                continue
            if ref.name in enabled_set:
                overrides.add(ref.name)
                continue
            if ref.name in multi:
                raise FrameworkError(
                    f'profile "{self._profile_name}": plugin "{ref.name}" already registered as '
                    f'"{_point_title(point)}Plugin"'
                )
            multi.append(ref.name)
        # Order: overridden plugins as listed in the specific point, then multiPoint ones, then the rest.
        ordered = [n for n in enabled_set if n in overrides] + multi + [n for n in enabled_set if n not in overrides]
        return [self.plugins_map[n] for n in ordered]

    def _time_extension_points(self, m: SchedulerMetrics) -> None:
        """Observes framework_extension_point_duration_seconds around each run_*_plugins method.

        The methods are wrapped on this instance only when metrics are on, so a Framework without
        metrics runs them exactly as written. Filter is timed by the algorithm around the whole node
        walk, as kube does in findNodesThatPassFilters.
        """
        profile = self._profile_name
        for method, point, where in _TIMED_EXTENSION_POINTS:
            setattr(self, method, _timed(getattr(self, method), m, point, profile, where))

    def _observe_plugin(self, plugin: str, point: str, st: Status | None, start: float) -> None:
        """plugin_execution_duration_seconds of one plugin call, in a sampled cycle."""
        if self._metrics is not None:
            self._metrics.observe_plugin(plugin, point, code_of(st), perf_counter() - start)

    def _observe_plugin_batch(self, plugin: str, point: str, codes: set[Code], seconds: float, nodes: int) -> None:
        """A batch call over n nodes stands for n per-node calls: one sample per status code it returned,
        of the mean duration per node (observing it n times would cost more than the plugin)."""
        if self._metrics is None or not nodes:
            return
        for code in codes:
            self._metrics.observe_plugin(plugin, point, code, seconds / nodes)

    # ----- Handle -------------------------------------------------------------------------------

    def scheduler_metrics(self) -> SchedulerMetrics | None:
        return self._metrics

    def profile_name(self) -> str:
        return self._profile_name

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot()

    def client(self) -> ClusterClient:
        return self._client

    def event_recorder(self) -> EventRecorder:
        return self._event_recorder

    def pod_nominator(self) -> PodNominator:
        return self._pod_nominator

    def parallelize_until(self, pieces: int, fn: Callable[[int], None]) -> None:
        # Plugin work per piece is short Python; threads would only contend for the GIL.
        for i in range(pieces):
            fn(i)

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_over_waiting_pods(self, fn: Callable[[Any], None]) -> None:
        for wp in self.waiting_pods.all():
            fn(wp)

    def has_filter_plugins(self) -> bool:
        return bool(self.points["filter"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points["post_filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])

    # ----- queue-side extension points ----------------------------------------------------------

    def queue_sort_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        return self.points["queue_sort"][0].less  # type: ignore[no-any-return]

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for pl in self.points["pre_enqueue"]:
            st = pl.pre_enqueue(pod)
            if not_success(st):
                st.plugin = pl.name
                if not is_rejected(st):
                    log.error("running PreEnqueue plugin %s: %s", pl.name, st.message())
                return st
        return None

    def events_to_register(self) -> list[tuple[str, ClusterEventWithHint]]:
        """(plugin, event) pairs for the queue. A plugin that can reject pods (PreEnqueue, PreFilter,
        Filter, Reserve, Permit) without EnqueueExtensions is registered for every event, as kube's
        defaultEnqueueExtension, since nothing says which events could help it."""
        out: list[tuple[str, ClusterEventWithHint]] = []
        seen: set[str] = set()
        for point in ("pre_enqueue", "pre_filter", "filter", "reserve", "permit"):
            for pl in self.points[point]:
                if pl.name in seen:
                    continue
                seen.add(pl.name)
                if not isinstance(pl, fw.EnqueueExtensions):
                    out.extend((pl.name, ClusterEventWithHint(ev)) for ev in ALL_CLUSTER_EVENTS)
                    continue
                try:
                    events = pl.events_to_register()
                except Exception as e:
                    log.error("plugin %s: EventsToRegister failed: %s", pl.name, e)
                    out.extend((pl.name, ClusterEventWithHint(ev)) for ev in ALL_CLUSTER_EVENTS)
                    continue
                out.extend((pl.name, ev) for ev in events)
        return out

    # ----- scheduling cycle ---------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod,
                               nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        skip: set[str] = set()
        return_status: Status | None = None
        rec = state.record_plugin_metrics
        for pl in self.points["pre_filter"]:
            start = perf_counter() if rec else 0.0
            try:
                r, st = pl.pre_filter(state, pod, nodes)
            except Exception as e:
                st, r = Status.error(e), None
            if rec:
                self._observe_plugin(pl.name, mn.PRE_FILTER, st, start)
            if is_skip(st):
                skip.add(pl.name)
                continue
            if not_success(st):
                st.plugin = pl.name
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    # Preemption cannot help: no need to run the remaining PreFilter plugins.
                    return None, st, set()
                if st.code == Code.UNSCHEDULABLE:
                    # Preemption may help later in this cycle, which needs every PreFilter's state.
                    return_status = st
                    continue
                err = Status.error(f'running PreFilter plugin "{pl.name}": {st.message()}', pl.name)
                return None, err, set()
            if r is not None and not r.all_nodes():
                plugins_with_nodes.add(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(plugins_with_nodes)
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1
                       else f"node(s) didn't satisfy plugin(s) {_go_list(names)} simultaneously")
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg]), plugins_with_nodes
        state.skip_filter_plugins = skip
        return result, return_status, plugins_with_nodes

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("AddPod", state, pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("RemovePod", state, pod_to_schedule, pod_info_to_remove, node_info)

    def _run_pre_filter_extension(self, which: str, state: CycleState, pod_to_schedule: Pod, pod_info: PodInfo,
                                  node_info: NodeInfo) -> Status | None:
        for pl in self.points["pre_filter"]:
            ext = pl.pre_filter_extensions()
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            fn = ext.add_pod if which == "AddPod" else ext.remove_pod
            start = perf_counter() if state.record_plugin_metrics else 0.0
            try:
                st = fn(state, pod_to_schedule, pod_info, node_info)
            except Exception as e:
                st = Status.error(e)
            if state.record_plugin_metrics:
                self._observe_plugin(pl.name, mn.PRE_FILTER_EXTENSION_ADD_POD if which == "AddPod"
                                     else mn.PRE_FILTER_EXTENSION_REMOVE_POD, st, start)
            if not_success(st):
                return Status.error(f'running {which} on PreFilter plugin "{pl.name}": {st.message()}', pl.name)
        return None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        skip = state.skip_filter_plugins
        rec = state.record_plugin_metrics
        for pl in self.points["filter"]:
            if pl.name in skip:
                continue
            start = perf_counter() if rec else 0.0
            try:
                st = pl.filter(state, pod, node_info)
            except Exception as e:
                st = Status.error(e)
            if rec:
                self._observe_plugin(pl.name, mn.FILTER, st, start)
            if not_success(st):
                return self._filter_failure(pl.name, st)
        return None

    @staticmethod
    def _filter_failure(plugin: str, st: Status) -> Status:
        if not is_rejected(st):
            st = Status.error(f'running "{plugin}" filter plugin: {st.message()}')
        st.plugin = plugin
        return st

    def run_filter_plugins_batch(self, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo],
                                 columns: NodeColumns | None = None) -> list[Status | None]:
        """Filter for many nodes, plugin by plugin over the nodes still feasible (same result as per node).

        With `columns` (the nodes' rows in the snapshot's node table), plugins with a columnar form
        answer for all the nodes at once, and only the nodes they reject are asked of `filter_nodes`.
        """
        if columns is not None:
            return self._run_filter_plugins_columns(state, pod, node_infos, columns)
        results: list[Status | None] = [None] * len(node_infos)
        alive = list(range(len(node_infos)))
        skip = state.skip_filter_plugins
        rec = state.record_plugin_metrics
        for pl in self.points["filter"]:
            if pl.name in skip or not alive:
                continue
            start = perf_counter() if rec else 0.0
            try:
                sts = pl.filter_nodes(state, pod, [node_infos[i] for i in alive])
            except Exception as e:
                sts = [Status.error(e)] * len(alive)
            if len(sts) != len(alive):
                sts = [_miscount("filter_nodes", len(sts), len(alive), "statuses")] * len(alive)
            elapsed = perf_counter() - start if rec else 0.0
            still = []
            rejected: set[Code] = set() if rec else _NO_CODES
            for i, st in zip(alive, sts, strict=True):
                if not_success(st):
                    if rec:
                        rejected.add(st.code)
                    results[i] = self._filter_failure(pl.name, st)
                else:
                    still.append(i)
            if rec:
                codes = rejected | {Code.SUCCESS} if still else rejected
                self._observe_plugin_batch(pl.name, mn.FILTER, codes, elapsed, len(alive))
            alive = still
        return results

    def _run_filter_plugins_columns(self, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo],
                                    columns: NodeColumns) -> list[Status | None]:
        """run_filter_plugins_batch with the columnar forms. In a cycle whose plugin metrics are sampled,
        each plugin's pass is timed as run_filter_plugins_batch times its batch."""
        import numpy as np  # loaded with the node table

        results: list[Status | None] = [None] * len(node_infos)
        # Indexes into node_infos of the nodes still feasible, and their rows.
        alive = np.arange(len(node_infos), dtype=np.intp)
        cols = columns
        skip = state.skip_filter_plugins
        rec = state.record_plugin_metrics
        sts: list[Status | None]
        for pl in self.points["filter"]:
            if pl.name in skip:
                continue
            if not len(alive):
                break
            ok = None
            start = perf_counter() if rec else 0.0
            try:
                ok = pl.filter_columns(state, pod, cols)
                if ok is not None and ok is not ALL_PASS and len(ok) != len(alive):
                    # Every node fails: the answers cannot be matched to nodes.
                    asked = list(range(len(alive)))
                    sts = [_miscount("filter_columns", len(ok), len(alive), "answers")] * len(asked)
                elif ok is not None:
                    if ok is ALL_PASS or ok.all():
                        if rec:
                            self._observe_plugin_batch(pl.name, mn.FILTER, {Code.SUCCESS}, perf_counter() - start,
                                                       len(alive))
                        continue
                    # The rejected nodes' statuses come from the per-node form, which has the final word.
                    rejected = np.flatnonzero(~ok)
                    asked = rejected.tolist()
                    sts = pl.filter_nodes(state, pod, [node_infos[i] for i in alive[rejected].tolist()])
                else:
                    asked = list(range(len(alive)))
                    sts = pl.filter_nodes(state, pod, [node_infos[i] for i in alive.tolist()])
            except Exception as e:
                asked = list(range(len(alive))) if ok is None or ok is ALL_PASS else np.flatnonzero(~ok).tolist()
                sts = [Status.error(e)] * len(asked)
            if len(sts) != len(asked):
                sts = [_miscount("filter_nodes", len(sts), len(asked), "statuses")] * len(asked)
            if sts.count(None) == len(asked):
                if rec:
                    self._observe_plugin_batch(pl.name, mn.FILTER, {Code.SUCCESS}, perf_counter() - start, len(alive))
                continue  # every node asked passed (a per-node form that rejects nothing here)
            keep = np.ones(len(alive), dtype=np.bool_)
            idx = alive.tolist()
            rejected_codes: set[Code] = set() if rec else _NO_CODES
            for j, st in zip(asked, sts, strict=True):
                if not_success(st):
                    if rec:
                        rejected_codes.add(st.code)
                    results[idx[j]] = self._filter_failure(pl.name, st)
                    keep[j] = False
            if rec:
                codes = rejected_codes | {Code.SUCCESS} if keep.any() else rejected_codes
                self._observe_plugin_batch(pl.name, mn.FILTER, codes, perf_counter() - start, len(alive))
            if not keep.all():
                alive = alive[keep]
                cols = cols.take(keep)
        return results

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, info: NodeInfo) -> Status | None:
        status: Status | None = None
        pods_added = False
        for i in range(2):
            state_to_use, info_to_use = state, info
            if i == 0:
                pods_added, state_to_use, info_to_use, err = self._add_ge_nominated_pods(pod, state, info)
                if err is not None:
                    return err
            elif not pods_added or (not_success(status)):
                break
            status = self.run_filter_plugins(state_to_use, pod, info_to_use)
            if not_success(status) and not is_rejected(status):
                return status
        return status

    def _add_ge_nominated_pods(self, pod: Pod, state: CycleState,
                               info: NodeInfo) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        if info.node is None:
            return False, state, info, None
        nominated = self._pod_nominator.nominated_pods_for_node(info.name)
        if not nominated:
            return False, state, info, None
        prio = pod_priority(pod)
        uid = get_pod_key(pod)
        info_out, state_out, added = info.clone(), state.clone(), False
        for pi in nominated:
            if pi.priority >= prio and get_pod_key(pi.pod) != uid:
                info_out.add_pod_info(pi)
                st = self.run_pre_filter_extension_add_pod(state_out, pod, pi, info_out)
                if not_success(st):
                    return False, state, info, st
                added = True
        return added, state_out, info_out, None

    def run_post_filter_plugins(self, state: CycleState, pod: Pod,
                                m: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        rec = state.record_plugin_metrics
        for pl in self.points["post_filter"]:
            start = perf_counter() if rec else 0.0
            try:
                r, st = pl.post_filter(state, pod, m)
            except Exception as e:
                r, st = None, Status.error(e)
            if rec:
                self._observe_plugin(pl.name, mn.POST_FILTER, st, start)
            if is_success(st):
                return r, st or Status()
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                st.plugin = pl.name
                return r, st
            if not is_rejected(st):
                return None, Status.error(st.message(), pl.name)
            if r is not None and r.nominating_info is not None and r.nominating_info.mode != fw.NominatingMode.NOOP:
                result = r
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.UNSCHEDULABLE, reasons, None, rejector)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        skip: set[str] = set()
        rec = state.record_plugin_metrics
        for pl in self.points["pre_score"]:
            start = perf_counter() if rec else 0.0
            try:
                st = pl.pre_score(state, pod, nodes)
            except Exception as e:
                st = Status.error(e)
            if rec:
                self._observe_plugin(pl.name, mn.PRE_SCORE, st, start)
            if is_skip(st):
                skip.add(pl.name)
                continue
            if not_success(st):
                return Status.error(f'running PreScore plugin "{pl.name}": {st.message()}', pl.name)
        state.skip_score_plugins = skip
        return None

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                          columns: NodeColumns | None = None
                          ) -> tuple[Sequence[NodePluginScores], Status | None]:
        """Score, NormalizeScore and weights for every node. With `columns` (the nodes' rows in the
        snapshot's node table) plugins with a columnar form answer for all nodes at once, and the
        result is a ScoredNodes (arrays; NodePluginScores are made when read)."""
        if columns is not None:
            return self._run_score_plugins_columns(state, pod, nodes, columns)
        plugins = [pl for pl in self.points["score"] if pl.name not in state.skip_score_plugins]
        per_plugin: list[list[int]] = []
        rec = state.record_plugin_metrics
        for pl in plugins:
            start = perf_counter() if rec else 0.0
            try:
                scores, st = pl.score_nodes(state, pod, nodes)
            except Exception as e:
                scores, st = [], Status.error(e)
            if is_success(st) and len(scores) != len(nodes):
                st = _miscount("score_nodes", len(scores), len(nodes))
            if rec:
                self._observe_plugin_batch(pl.name, mn.SCORE, {code_of(st)}, perf_counter() - start, len(nodes))
            if not_success(st):
                return [], Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            ext = pl.score_extensions()
            if ext is not None:
                scores, st = self._normalize_scores(pl.name, ext, state, pod, nodes, scores, rec)
                if st is not None:
                    return [], st
            per_plugin.append(scores)
        names = tuple(pl.name for pl in plugins)
        weighted: list[list[int]] = []
        for pl, scores in zip(plugins, per_plugin, strict=True):
            if scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                return [], _invalid_score(pl.name, scores)
            w = self.score_plugin_weight.get(pl.name, 1)
            weighted.append(scores if w == 1 else [s * w for s in scores])
        if not weighted:
            return [NodePluginScores(ni.name) for ni in nodes], None
        rows = list(zip(*weighted, strict=True))
        return [NodePluginScores(ni.name, None, sum(row), names, row)
                for ni, row in zip(nodes, rows, strict=True)], None

    def _normalize_scores(self, name: str, ext: ScoreExtensions, state: CycleState, pod: Pod,
                          nodes: Sequence[NodeInfo], scores: list[int], rec: bool) -> tuple[list[int], Status | None]:
        """A Score plugin's NormalizeScore over its per-node scores: (the normalized scores, None), or the
        cycle's Error status."""
        lst = [NodeScore(ni.name, sc) for ni, sc in zip(nodes, scores, strict=True)]
        start = perf_counter() if rec else 0.0
        try:
            st = ext.normalize_score(state, pod, lst)
        except Exception as e:
            st = Status.error(e)
        # Go's NormalizeScore cannot resize the caller's slice; a Python list can be.
        if is_success(st) and len(lst) != len(nodes):
            st = _miscount("normalize_score", len(lst), len(nodes))
        if rec:
            self._observe_plugin(name, mn.SCORE_EXTENSION_NORMALIZE, st, start)
        if not_success(st):
            return [], Status.error(f'running Normalize on Score plugins: plugin "{name}" failed with: '
                                    f"{st.message()}")
        return [ns.score for ns in lst], None

    def _normalize_columns(self, pl: ScorePlugin, state: CycleState, pod: Pod,
                           scores: NDArray[np.int64]) -> tuple[NDArray[np.int64] | None, Status | None]:
        """A plugin's normalize_columns, timed as its NormalizeScore: (the normalized scores or None when it
        has no columnar form, None) or (None, the cycle's Error status)."""
        start = perf_counter()
        try:
            out, st = pl.normalize_columns(state, pod, scores), None
        except Exception as e:
            out, st = None, Status.error(e)
        if out is None and st is None:
            return None, None  # normalized per node, and timed there
        if out is not None and len(out) != len(scores):
            st = _miscount("normalize_columns", len(out), len(scores))
        self._observe_plugin(pl.name, mn.SCORE_EXTENSION_NORMALIZE, st, start)
        if st is not None:
            return None, Status.error(f'running Normalize on Score plugins: plugin "{pl.name}" failed with: '
                                      f"{st.message()}")
        return out, None

    def _run_score_plugins_columns(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                                   columns: NodeColumns) -> tuple[ScoredNodes, Status | None]:
        """run_score_plugins with the columnar forms. In a cycle whose plugin metrics are sampled, a plugin
        with a NormalizeScore extension gives its scores and normalizes them apart (its per-node forms,
        without score_columns_unnormalized), so that Score and NormalizeScore are timed apart as
        run_score_plugins times them; the others' passes are timed as their Score."""
        import numpy as np  # loaded with the node table

        from wasmsched.framework.nodetable import ScoredNodes

        plugins = [pl for pl in self.points["score"] if pl.name not in state.skip_score_plugins]
        failed = ScoredNodes([], (), [])
        rec = state.record_plugin_metrics
        # Per plugin its normalized scores: an array (columnar form) or a list (per-node form).
        per_plugin: list[Any] = []
        for pl in plugins:
            ext = pl.score_extensions()
            apart = rec and ext is not None  # Score and NormalizeScore timed apart
            start = perf_counter() if rec else 0.0
            raw = None
            try:
                arr = None if apart else pl.score_columns(state, pod, columns)
                raw = pl.score_columns_unnormalized(state, pod, columns) if apart else None
                scores, st = pl.score_nodes(state, pod, nodes) if arr is None and raw is None else ([], None)
            except Exception as e:
                arr, raw, scores, st = None, None, [], Status.error(e)
            if is_success(st):
                method, got = (("score_columns", arr) if arr is not None else
                               ("score_columns_unnormalized", raw) if raw is not None else ("score_nodes", scores))
                if len(got) != len(nodes):
                    st = _miscount(method, len(got), len(nodes))
            if rec:
                self._observe_plugin_batch(pl.name, mn.SCORE, {code_of(st)}, perf_counter() - start, len(nodes))
            if not_success(st):
                return failed, Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            if raw is not None:
                arr, st = self._normalize_columns(pl, state, pod, raw)
                if st is not None:
                    return failed, st
                if arr is None:
                    scores = raw.tolist()  # no columnar NormalizeScore: the extension's, per node
            if arr is not None:
                per_plugin.append(arr)
                continue
            if ext is not None:
                scores, st = self._normalize_scores(pl.name, ext, state, pod, nodes, scores, rec)
                if st is not None:
                    return failed, st
            per_plugin.append(scores)
        # Lists (per-node forms) may hold any int: each is checked before it becomes an array; the arrays
        # are checked together. The first invalid plugin in order is reported, as in run_score_plugins.
        bad_lists: set[int] = set()
        arrays: list[Any] = []
        for i, scores in enumerate(per_plugin):
            if isinstance(scores, np.ndarray):
                arrays.append(scores)
            elif scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                bad_lists.add(i)
                arrays.append(np.zeros(len(scores), dtype=np.int64))
            else:
                arrays.append(np.array(scores, dtype=np.int64))
        n = len(nodes)
        matrix = np.vstack(arrays, dtype=np.int64, casting="unsafe") if arrays else np.zeros((0, n), dtype=np.int64)
        bad = set(bad_lists)
        if n and arrays and (matrix.max() > MAX_NODE_SCORE or matrix.min() < MIN_NODE_SCORE):
            bad.update(np.flatnonzero((matrix.max(axis=1) > MAX_NODE_SCORE)
                                      | (matrix.min(axis=1) < MIN_NODE_SCORE)).tolist())
        if bad:
            first = min(bad)
            scores = per_plugin[first]
            return failed, _invalid_score(plugins[first].name,
                                          scores.tolist() if isinstance(scores, np.ndarray) else scores)
        weights = [self.score_plugin_weight.get(pl.name, 1) for pl in plugins]
        if any(w != 1 for w in weights):
            matrix *= np.array(weights, dtype=np.int64)[:, None]  # vstack made it: ours to change
        return ScoredNodes(nodes, tuple(pl.name for pl in plugins), matrix), None

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_until_failure("reserve", "Reserve", set(), state, pod, node_name)

    def _run_until_failure(self, point: str, title: str, skip: set[str], state: CycleState, pod: Pod,
                           node_name: str) -> Status | None:
        """Reserve and PreBind: run in order, stop at the first failure; a rejection keeps its code
        (the pod is unschedulable), anything else becomes an Error naming the plugin."""
        rec = state.record_plugin_metrics
        for pl in self.points[point]:
            if pl.name in skip:
                continue
            start = perf_counter() if rec else 0.0
            try:
                st = getattr(pl, point)(state, pod, node_name)
            except Exception as e:
                st = Status.error(e)
            if rec:
                self._observe_plugin(pl.name, title, st, start)
            if not_success(st):
                if is_rejected(st):
                    st.plugin = pl.name
                    return st
                return Status.error(f'running {title} plugin "{pl.name}": {st.message()}', pl.name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Reverse order, as kube-scheduler, so state is unwound like a stack.
        rec = state.record_plugin_metrics
        for pl in reversed(self.points["reserve"]):
            start = perf_counter() if rec else 0.0
            try:
                pl.unreserve(state, pod, node_name)
            except Exception as e:
                log.error("plugin %s: Unreserve failed for pod %s: %s", pl.name, pod_key(pod), e)
            if rec:
                self._observe_plugin(pl.name, mn.UNRESERVE, None, start)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        pending: dict[str, tuple[float, float]] = {}
        now = self.clock()
        rec = state.record_plugin_metrics
        for pl in self.points["permit"]:
            start = perf_counter() if rec else 0.0
            try:
                st, timeout = pl.permit(state, pod, node_name)
            except Exception as e:
                st, timeout = Status.error(e), 0.0
            if rec:
                self._observe_plugin(pl.name, mn.PERMIT, st, start)
            if is_success(st):
                continue
            if is_rejected(st):
                st.plugin = pl.name
                return st
            if is_wait(st):
                timeout = min(max(timeout, 0.0), MAX_TIMEOUT)
                pending[pl.name] = (now + timeout, timeout)
                continue
            return Status.error(f'running Permit plugin "{pl.name}": {st.message()}', pl.name)
        if pending:
            self.waiting_pods.add(get_pod_key(pod), WaitingPodImpl(pod, pending))
            msg = f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"'
            return Status(Code.WAIT, [msg])
        return None

    def wait_on_permit(self, pod: Pod, done: Callable[[Status | None], None]) -> None:
        """Calls `done` once the pod is allowed, rejected or timed out (at once if it is not waiting)."""
        uid = get_pod_key(pod)
        wp = self.waiting_pods.get(uid)
        if wp is None:
            done(None)
            return

        def finish(st: Status | None) -> None:
            self.waiting_pods.remove(uid)
            done(st)

        wp.on_done(finish)

    def expire_waiting_pods(self, now: float) -> int:
        return sum(1 for wp in self.waiting_pods.all() if wp.expire(now))

    def next_waiting_deadline(self) -> float | None:
        deadlines = [wp.deadline() for wp in self.waiting_pods.all() if not wp.done()]
        return min(deadlines) if deadlines else None

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_until_failure("pre_bind", "PreBind", state.skip_pre_bind_plugins, state, pod, node_name)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        st: Status | None = Status.skip()
        rec = state.record_plugin_metrics
        for pl in self.points["bind"]:
            start = perf_counter() if rec else 0.0
            try:
                st = pl.bind(state, pod, node_name)
            except Exception as e:
                st = Status.error(e)
            if rec:
                self._observe_plugin(pl.name, mn.BIND, st, start)
            if is_skip(st):
                continue
            if not_success(st):
                if is_rejected(st):
                    st.plugin = pl.name
                    return st
                return Status.error(f'running Bind plugin "{pl.name}": {st.message()}', pl.name)
            return st
        return st

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        rec = state.record_plugin_metrics
        for pl in self.points["post_bind"]:
            start = perf_counter() if rec else 0.0
            try:
                pl.post_bind(state, pod, node_name)
            except Exception as e:
                log.error("plugin %s: PostBind failed for pod %s: %s", pl.name, pod_key(pod), e)
            if rec:
                self._observe_plugin(pl.name, mn.POST_BIND, None, start)

    # ----- cycle observers (the wasm pool pins instances by these) ------------------------------

    def notify_scheduling_cycle_done(self, pod: Pod, succeeded: bool) -> None:
        for pl in self.plugins_map.values():
            fn = getattr(pl, "scheduling_cycle_done", None)
            if fn is not None:
                fn(pod, succeeded)

    def notify_binding_cycle_done(self, pod: Pod) -> None:
        for pl in self.plugins_map.values():
            fn = getattr(pl, "binding_cycle_done", None)
            if fn is not None:
                fn(pod)

    def notify_pod_deleted(self, pod: Pod) -> None:
        """A pod of this profile was deleted: plugins holding per-pod resources release them."""
        for pl in self.plugins_map.values():
            fn = getattr(pl, "pod_deleted", None)
            if fn is not None:
                fn(pod)

    def close(self) -> None:
        for pl in self.plugins_map.values():
            fn = getattr(pl, "close", None)
            if fn is not None:
                fn()


_NO_CODES: set[Code] = set()  # never added to: a batch's rejection codes when the cycle is not sampled

# Where each timed method's result holds its status.
_RESULT, _SECOND, _ALWAYS_SUCCESS = 0, 1, 2

# (method, extension_point label, where its status is). PostBind and Unreserve report Success, as kube:
# their plugins cannot fail the pod.
_TIMED_EXTENSION_POINTS: tuple[tuple[str, str, int], ...] = (
    ("run_pre_filter_plugins", mn.PRE_FILTER, _SECOND),
    ("run_post_filter_plugins", mn.POST_FILTER, _SECOND),
    ("run_pre_score_plugins", mn.PRE_SCORE, _RESULT),
    ("run_score_plugins", mn.SCORE, _SECOND),
    ("run_reserve_plugins_reserve", mn.RESERVE, _RESULT),
    ("run_reserve_plugins_unreserve", mn.UNRESERVE, _ALWAYS_SUCCESS),
    ("run_permit_plugins", mn.PERMIT, _RESULT),
    ("run_pre_bind_plugins", mn.PRE_BIND, _RESULT),
    ("run_bind_plugins", mn.BIND, _RESULT),
    ("run_post_bind_plugins", mn.POST_BIND, _ALWAYS_SUCCESS),
)


def _timed(fn: Callable[..., Any], m: SchedulerMetrics, point: str, profile: str, where: int) -> Callable[..., Any]:
    # Each extension point runs once or twice per pod: the wrapper keeps its histogram children by code,
    # so an observation costs a dict lookup besides prometheus_client's own work.
    children: dict[Code, Any] = {}

    def run(*args: Any, **kwargs: Any) -> Any:
        start = perf_counter()
        result = fn(*args, **kwargs)
        elapsed = perf_counter() - start
        st = result if where == _RESULT else result[1] if where == _SECOND else None
        code = Code.SUCCESS if st is None else st.code
        child = children.get(code)
        if child is None:
            child = children[code] = m.extension_point_histogram(point, code, profile)
        child.observe(elapsed)
        return result

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _miscount(method: str, got: int, want: int, what: str = "scores") -> Status:
    # A batch or columnar answer is matched to the nodes by position: with any other count some nodes would
    # go unfiltered or get another node's score, so the cycle fails instead, as on a plugin's Error.
    return Status.error(f"{method} returned {got} {what} for {want} nodes")


def _invalid_score(plugin: str, scores: Sequence[int]) -> Status:
    bad = next(s for s in scores if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE)
    return Status.error(
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an invalid score '
        f"{bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )


def _go_list(items: Sequence[str]) -> str:
    return "[" + " ".join(items) + "]"


def _point_title(point: str) -> str:
    return "".join(w.capitalize() for w in point.split("_"))
