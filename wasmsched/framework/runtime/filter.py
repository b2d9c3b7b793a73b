"""PreFilter (with its AddPod/RemovePod extensions), Filter and PostFilter: kube's RunPreFilterPlugins,
RunFilterPlugins(WithNominatedPods) and RunPostFilterPlugins with their runXPlugin helpers
(framework/runtime/framework.go), and Filter over many nodes at once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import compress
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod, pod_priority
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    FilterPlugin,
    FilterVerdicts,
    NodeBatch,
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
    from wasmsched.framework.nodetable import NodeColumns

log = logging.getLogger("wasmsched.framework")


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


def run_filter_batch_plugin(pl: FilterPlugin, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
    """kube's runFilterPlugin over a batch: an exception, or a verdict for a node outside the batch, fails
    every node of the batch with an Error (the verdicts cannot be trusted to be the nodes')."""
    try:
        rejected = pl.filter_batch(state, pod, batch)
    except Exception as e:
        return dict.fromkeys(range(len(batch)), Status.error(e))
    if rejected and (max(rejected) >= len(batch) or min(rejected) < 0):
        bad = max(rejected) if max(rejected) >= len(batch) else min(rejected)
        return dict.fromkeys(range(len(batch)), Status.error(
            f"filter_batch returned a verdict for node {bad} of a batch of {len(batch)} nodes"))
    return rejected


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
        """Filter for many nodes (with their rows in the snapshot's node table, when it has one), plugin by
        plugin over the nodes still feasible, each plugin answering for them all at once (filter_batch):
        the same result as run_filter_plugins node by node. The result is None for a node that passed, its
        failure otherwise."""
        batch = NodeBatch(node_infos, columns)
        results: list[Status | None] = [None] * len(batch)
        alive: Sequence[int] = range(len(batch))  # the nodes still feasible, by their index in node_infos
        skip = state.skip_filter_plugins
        rec = state.record_plugin_metrics
        seconds = 0.0
        for pl in self.plugins.filter:
            if pl.name in skip:
                continue
            if not len(alive):
                break
            if rec:
                rejected, seconds = self.timer.timed(run_filter_batch_plugin, pl, state, pod, batch)
            else:
                rejected = run_filter_batch_plugin(pl, state, pod, batch)
            if rec:
                codes = {st.code for st in rejected.values()}
                if len(rejected) < len(alive):
                    codes.add(Code.SUCCESS)
                self.timer.observe_batch(pl.name, mn.FILTER, codes, seconds, len(alive))
            if not rejected:
                continue
            for i, st in rejected.items():
                results[alive[i]] = _filter_failure(pl.name, st)
            kept = [True] * len(alive)
            for i in rejected:
                kept[i] = False
            alive = list(compress(alive, kept))
            batch = batch.without(rejected)
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
