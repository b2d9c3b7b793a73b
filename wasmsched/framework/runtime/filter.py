"""PreFilter (with its AddPod/RemovePod extensions), Filter and PostFilter: kube's RunPreFilterPlugins,
RunFilterPlugins(WithNominatedPods) and RunPostFilterPlugins with their runXPlugin helpers
(framework/runtime/framework.go), and Filter over many nodes at once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod, pod_priority
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    ALL_PASS,
    FilterPlugin,
    NodeToStatus,
    PodNominator,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
)
from wasmsched.framework.runtime.plugin_timer import PluginTimer
from wasmsched.framework.runtime.profile import PluginLists
from wasmsched.framework.status import Code, Status, is_rejected, is_skip, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, get_pod_key
from wasmsched.metrics import names as mn

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

log = logging.getLogger("wasmsched.framework")

_NO_CODES: set[Code] = set()  # never added to: a batch's rejection codes when the cycle is not sampled


def run_pre_filter_plugin(pl: PreFilterPlugin, state: CycleState, pod: Pod,
                          nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
    try:
        return pl.pre_filter(state, pod, nodes)
    except Exception as e:
        return None, Status.error(e)


def run_pre_filter_extension(pl: PreFilterPlugin, add: bool, state: CycleState, pod_to_schedule: Pod,
                             pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
    """AddPod (`add`) or RemovePod of `pl`, which has PreFilterExtensions."""
    ext = pl.pre_filter_extensions()
    assert ext is not None
    try:
        if add:
            return ext.add_pod(state, pod_to_schedule, pod_info, node_info)
        return ext.remove_pod(state, pod_to_schedule, pod_info, node_info)
    except Exception as e:
        return Status.error(e)


def run_filter_plugin(pl: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
    try:
        return pl.filter(state, pod, node_info)
    except Exception as e:
        return Status.error(e)


def run_filter_nodes(pl: FilterPlugin, state: CycleState, pod: Pod,
                     node_infos: Sequence[NodeInfo]) -> list[Status | None]:
    """The batch form of run_filter_plugin: a list of another length fails every node with an Error."""
    try:
        sts = pl.filter_nodes(state, pod, node_infos)
    except Exception as e:
        return [Status.error(e)] * len(node_infos)
    if len(sts) != len(node_infos):
        return [miscount("filter_nodes", len(sts), len(node_infos), "statuses")] * len(node_infos)
    return sts


def run_post_filter_plugin(pl: PostFilterPlugin, state: CycleState, pod: Pod,
                           m: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
    try:
        return pl.post_filter(state, pod, m)
    except Exception as e:
        return None, Status.error(e)


class FilterRunners:
    """The Framework's PreFilter, Filter and PostFilter runners."""

    plugins: PluginLists
    timer: PluginTimer
    _pod_nominator: PodNominator

    def has_filter_plugins(self) -> bool:
        return bool(self.plugins.filter)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.plugins.post_filter)

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod,
                               nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        skip: set[str] = set()
        return_status: Status | None = None
        rec = state.record_plugin_metrics
        for pl in self.plugins.pre_filter:
            r, st = (self.timer.result(mn.PRE_FILTER, run_pre_filter_plugin, pl, state, pod, nodes) if rec
                     else run_pre_filter_plugin(pl, state, pod, nodes))
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
        return self._run_pre_filter_extension(True, state, pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extension(False, state, pod_to_schedule, pod_info_to_remove, node_info)

    def _run_pre_filter_extension(self, add: bool, state: CycleState, pod_to_schedule: Pod, pod_info: PodInfo,
                                  node_info: NodeInfo) -> Status | None:
        rec = state.record_plugin_metrics
        for pl in self.plugins.pre_filter:
            if pl.pre_filter_extensions() is None or pl.name in state.skip_filter_plugins:
                continue
            point = mn.PRE_FILTER_EXTENSION_ADD_POD if add else mn.PRE_FILTER_EXTENSION_REMOVE_POD
            st = (self.timer.status(point, run_pre_filter_extension, pl, add, state, pod_to_schedule, pod_info,
                                    node_info) if rec
                  else run_pre_filter_extension(pl, add, state, pod_to_schedule, pod_info, node_info))
            if not_success(st):
                which = "AddPod" if add else "RemovePod"
                return Status.error(f'running {which} on PreFilter plugin "{pl.name}": {st.message()}', pl.name)
        return None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        skip = state.skip_filter_plugins
        rec = state.record_plugin_metrics
        for pl in self.plugins.filter:
            if pl.name in skip:
                continue
            st = (self.timer.status(mn.FILTER, run_filter_plugin, pl, state, pod, node_info) if rec
                  else run_filter_plugin(pl, state, pod, node_info))
            if not_success(st):
                return _filter_failure(pl.name, st)
        return None

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
        seconds = 0.0
        for pl in self.plugins.filter:
            if pl.name in skip or not alive:
                continue
            batch = [node_infos[i] for i in alive]
            if rec:
                sts, seconds = self.timer.timed(run_filter_nodes, pl, state, pod, batch)
            else:
                sts = run_filter_nodes(pl, state, pod, batch)
            still = []
            rejected: set[Code] = set() if rec else _NO_CODES
            for i, st in zip(alive, sts, strict=True):
                if not_success(st):
                    if rec:
                        rejected.add(st.code)
                    results[i] = _filter_failure(pl.name, st)
                else:
                    still.append(i)
            if rec:
                codes = rejected | {Code.SUCCESS} if still else rejected
                self.timer.observe_batch(pl.name, mn.FILTER, codes, seconds, len(alive))
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
        seconds = 0.0
        for pl in self.plugins.filter:
            if pl.name in skip:
                continue
            if not len(alive):
                break
            if rec:
                (asked, sts), seconds = self.timer.timed(_filter_columns_pass, pl, state, pod, node_infos, alive, cols)
            else:
                asked, sts = _filter_columns_pass(pl, state, pod, node_infos, alive, cols)
            if sts.count(None) == len(asked):
                if rec:
                    self.timer.observe_batch(pl.name, mn.FILTER, (Code.SUCCESS,), seconds, len(alive))
                continue  # every node asked passed
            keep = np.ones(len(alive), dtype=np.bool_)
            idx = alive.tolist()
            rejected_codes: set[Code] = set() if rec else _NO_CODES
            for j, st in zip(asked, sts, strict=True):
                if not_success(st):
                    if rec:
                        rejected_codes.add(st.code)
                    results[idx[j]] = _filter_failure(pl.name, st)
                    keep[j] = False
            if rec:
                codes = rejected_codes | {Code.SUCCESS} if keep.any() else rejected_codes
                self.timer.observe_batch(pl.name, mn.FILTER, codes, seconds, len(alive))
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
        for pl in self.plugins.post_filter:
            r, st = (self.timer.result(mn.POST_FILTER, run_post_filter_plugin, pl, state, pod, m) if rec
                     else run_post_filter_plugin(pl, state, pod, m))
            if st is None or st.code == Code.SUCCESS:
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


def _filter_columns_pass(pl: FilterPlugin, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo],
                         alive: NDArray[np.intp], cols: NodeColumns) -> tuple[list[int], list[Status | None]]:
    """One plugin over the feasible nodes at `alive` (indexes into node_infos; their rows are `cols`): the
    positions in `alive` of the nodes it was asked about per node, and their statuses (a node not asked
    passed). The columnar form answers first; the nodes it rejects are asked of `filter_nodes`, which has
    the final word."""
    import numpy as np

    ok = None
    sts: list[Status | None]
    try:
        ok = pl.filter_columns(state, pod, cols)
        if ok is not None and ok is not ALL_PASS and len(ok) != len(alive):
            # Every node fails: the answers cannot be matched to nodes.
            return list(range(len(alive))), [miscount("filter_columns", len(ok), len(alive), "answers")] * len(alive)
        if ok is not None:
            if ok is ALL_PASS or ok.all():
                return [], []
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
        sts = [miscount("filter_nodes", len(sts), len(asked), "statuses")] * len(asked)
    return asked, sts


def _filter_failure(plugin: str, st: Status) -> Status:
    if not is_rejected(st):
        st = Status.error(f'running "{plugin}" filter plugin: {st.message()}')
    st.plugin = plugin
    return st


def miscount(method: str, got: int, want: int, what: str = "scores") -> Status:
    # A batch or columnar answer is matched to the nodes by position: with any other count some nodes would
    # go unfiltered or get another node's score, so the cycle fails instead, as on a plugin's Error.
    return Status.error(f"{method} returned {got} {what} for {want} nodes")


def _go_list(items: Sequence[str]) -> str:
    return "[" + " ".join(items) + "]"
