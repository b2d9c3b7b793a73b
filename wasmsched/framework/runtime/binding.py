"""Reserve/Unreserve, Permit (and waiting on it), PreBind, Bind and PostBind: kube's Run*Plugins from
Reserve on, with their runXPlugin helpers (framework/runtime/framework.go)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from wasmsched.api.types import Pod, pod_key
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BindPlugin, PermitPlugin, PostBindPlugin, PreBindPlugin, ReservePlugin
from wasmsched.framework.runtime.plugin_timer import PluginTimer
from wasmsched.framework.runtime.profile import PluginLists
from wasmsched.framework.runtime.waiting_pods import WaitingPodImpl, WaitingPodsMap
from wasmsched.framework.status import Code, Status, is_rejected, is_skip, is_wait, not_success
from wasmsched.framework.types import get_pod_key
from wasmsched.metrics import names as mn

log = logging.getLogger("wasmsched.framework")

MAX_TIMEOUT = 15 * 60.0  # Permit wait cap, as kube-scheduler's maxTimeout


def run_reserve_plugin_reserve(pl: ReservePlugin, state: CycleState, pod: Pod, node_name: str) -> Status | None:
    try:
        return pl.reserve(state, pod, node_name)
    except Exception as e:
        return Status.error(e)


def run_reserve_plugin_unreserve(pl: ReservePlugin, state: CycleState, pod: Pod, node_name: str) -> None:
    try:
        pl.unreserve(state, pod, node_name)
    except Exception as e:
        log.error("plugin %s: Unreserve failed for pod %s: %s", pl.name, pod_key(pod), e)


def run_permit_plugin(pl: PermitPlugin, state: CycleState, pod: Pod, node_name: str) -> tuple[float, Status | None]:
    """(timeout, status): the status second, as in every helper that returns a pair."""
    try:
        st, timeout = pl.permit(state, pod, node_name)
    except Exception as e:
        return 0.0, Status.error(e)
    return timeout, st


def run_pre_bind_plugin(pl: PreBindPlugin, state: CycleState, pod: Pod, node_name: str) -> Status | None:
    try:
        return pl.pre_bind(state, pod, node_name)
    except Exception as e:
        return Status.error(e)


def run_bind_plugin(pl: BindPlugin, state: CycleState, pod: Pod, node_name: str) -> Status | None:
    try:
        return pl.bind(state, pod, node_name)
    except Exception as e:
        return Status.error(e)


def run_post_bind_plugin(pl: PostBindPlugin, state: CycleState, pod: Pod, node_name: str) -> None:
    try:
        pl.post_bind(state, pod, node_name)
    except Exception as e:
        log.error("plugin %s: PostBind failed for pod %s: %s", pl.name, pod_key(pod), e)


class BindingRunners:
    """The Framework's runners from Reserve on, and the pods waiting on Permit."""

    plugins: PluginLists
    timer: PluginTimer
    waiting_pods: WaitingPodsMap
    clock: Callable[[], float]

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.record_plugin_metrics
        for pl in self.plugins.reserve:
            st = (self.timer.status(mn.RESERVE, run_reserve_plugin_reserve, pl, state, pod, node_name) if rec
                  else run_reserve_plugin_reserve(pl, state, pod, node_name))
            if not_success(st):
                return _until_failure("Reserve", pl.name, st)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Reverse order, as kube-scheduler, so state is unwound like a stack.
        rec = state.record_plugin_metrics
        for pl in reversed(self.plugins.reserve):
            if rec:
                self.timer.status(mn.UNRESERVE, run_reserve_plugin_unreserve, pl, state, pod, node_name)
            else:
                run_reserve_plugin_unreserve(pl, state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        pending: dict[str, tuple[float, float]] = {}
        now = self.clock()
        rec = state.record_plugin_metrics
        for pl in self.plugins.permit:
            timeout, st = (self.timer.result(mn.PERMIT, run_permit_plugin, pl, state, pod, node_name) if rec
                           else run_permit_plugin(pl, state, pod, node_name))
            if st is None or st.code == Code.SUCCESS:
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
        skip = state.skip_pre_bind_plugins
        rec = state.record_plugin_metrics
        for pl in self.plugins.pre_bind:
            if pl.name in skip:
                continue
            st = (self.timer.status(mn.PRE_BIND, run_pre_bind_plugin, pl, state, pod, node_name) if rec
                  else run_pre_bind_plugin(pl, state, pod, node_name))
            if not_success(st):
                return _until_failure("PreBind", pl.name, st)
        return None

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        st: Status | None = Status.skip()
        rec = state.record_plugin_metrics
        for pl in self.plugins.bind:
            st = (self.timer.status(mn.BIND, run_bind_plugin, pl, state, pod, node_name) if rec
                  else run_bind_plugin(pl, state, pod, node_name))
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
        for pl in self.plugins.post_bind:
            if rec:
                self.timer.status(mn.POST_BIND, run_post_bind_plugin, pl, state, pod, node_name)
            else:
                run_post_bind_plugin(pl, state, pod, node_name)


def _until_failure(title: str, plugin: str, st: Status) -> Status:
    """Reserve and PreBind stop at the first failure: a rejection keeps its code (the pod is
    unschedulable), anything else becomes an Error naming the plugin."""
    if is_rejected(st):
        st.plugin = plugin
        return st
    return Status.error(f'running {title} plugin "{plugin}": {st.message()}', plugin)
