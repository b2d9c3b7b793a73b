"""One pod through the scheduling cycle and the binding cycle, and the failure handler
(scheduler/schedule_one.go)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod, pod_key
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.events import EVENT_ASSIGNED_POD_DELETE
from wasmsched.framework.interface import ClusterClient, EventRecorder, NominatingInfo, NominatingMode, PodCondition
from wasmsched.framework.runtime import Framework
from wasmsched.framework.status import Code, Status, is_rejected, is_skip, is_success, is_wait, not_success
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.scheduler.algorithm import (
    CycleExplain,
    NoNodesAvailable,
    ScheduleResult,
    SchedulingAlgorithm,
    SchedulingError,
)
from wasmsched.scheduler.binding_workers import BindingWorkers
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.queue import SchedulingQueue
from wasmsched.scheduler.records import PodRecords
from wasmsched.util.klog import quote

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics
    from wasmsched.scheduler.scheduler import SchedulerOptions

log = logging.getLogger("wasmsched.scheduler")

AttemptObserver = Callable[[Pod, str, CycleExplain | None, ScheduleResult, Status | None], None]
CLEAR_NOMINATED_NODE = NominatingInfo("", NominatingMode.OVERRIDE)
# Event notes are capped by the API; kube truncates the FailedScheduling message the same way.
NOTE_LENGTH_LIMIT = 1024


class ScheduleOne:
    """The Scheduler's cycles (a mixin: in Go these are methods of *Scheduler in schedule_one.go)."""

    options: SchedulerOptions
    cache: Cache
    queue: SchedulingQueue
    profiles: dict[str, Framework]
    algorithm: SchedulingAlgorithm
    client: ClusterClient
    recorder: EventRecorder
    records: PodRecords
    binding_workers: BindingWorkers
    metrics: SchedulerMetrics | None
    clock: Callable[[], float]
    # Called after each scheduling cycle (differential tests, tools): the pod, its profile, the
    # --explain data (None without explain), the result and the cycle's status (None: assumed).
    attempt_observer: AttemptObserver | None = None

    def schedule_one(self) -> bool:
        """Pops and schedules one pod; False when the active queue is empty."""
        try:
            return self._schedule_one()
        finally:
            self.binding_workers.run_deferred()

    def _schedule_one(self) -> bool:
        self.queue.flush_backoff_q_completed()
        qpi = self.queue.pop()
        if qpi is None:
            return False
        pod = qpi.pod
        fwk = self.profiles.get(pod.spec.schedulerName)
        if fwk is None or self._skip_pod_schedule(pod):
            self.queue.done(pod)
            return True
        rec = self.records.of(pod)
        rec.attempts += 1
        # The attempt's duration is measured on the CPU clock: the simulator's clock does not move while
        # a pod is scheduled (in `run` both are real time).
        start = perf_counter() if self.metrics is not None else None
        state = CycleState()
        state.pod_info = qpi.pod_info
        if self.metrics is not None:
            state.record_plugin_metrics = self.metrics.should_record_plugin_metrics()
        # The full form when --explain asked for it; a summary serves what only wants the summary too.
        explain = CycleExplain(summary=not self.options.explain) \
            if self.options.explain or self.options.explain_summary else None
        result, assumed_pi, status = self.scheduling_cycle(fwk, state, qpi, explain)
        rec.explain = explain
        if self.attempt_observer is not None:
            self.attempt_observer(pod, fwk.profile_name(), explain, result, status)
        if not_success(status) and not is_wait(status):
            fwk.notify_scheduling_cycle_done(pod, False)
            self.handle_scheduling_failure(fwk, qpi, status, result.nominating_info, start)
            return True
        fwk.notify_scheduling_cycle_done(assumed_pi.pod, True)
        self.binding_workers.reserve()
        fwk.wait_on_permit(assumed_pi.pod, lambda permit: self.binding_workers.submit(
            lambda: self.binding_cycle(fwk, state, result, qpi, assumed_pi, permit, start)))
        return True

    def _skip_pod_schedule(self, pod: Pod) -> bool:
        """A pod being deleted, or already assumed (its update arrived before its binding landed)."""
        return pod.metadata.HasField("deletionTimestamp") or self.cache.is_assumed_pod(pod)

    # ----- scheduling cycle -------------------------------------------------------------------

    def scheduling_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                         explain: CycleExplain | None) -> tuple[ScheduleResult, PodInfo, Status | None]:
        """The result, the (assumed) pod and the status: None (assumed, reserved, permitted), Wait
        (assumed, reserved, waiting on Permit) or the failure."""
        result, status = self.scheduling_algorithm(fwk, state, qpi.pod, explain)
        if not_success(status):
            return result, qpi.pod_info, status
        assumed_pi, status = self.prepare_for_binding_cycle(fwk, state, qpi.pod, result, qpi.pod_info)
        if not_success(status) and not is_wait(status):
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_pi, status
        return result, assumed_pi, status

    def scheduling_algorithm(self, fwk: Framework, state: CycleState, pod: Pod,
                             explain: CycleExplain | None) -> tuple[ScheduleResult, Status | None]:
        """SchedulePod, and PostFilter (preemption) when no node fits."""
        try:
            return self.algorithm.schedule_pod(fwk, state, pod, explain), None
        except NoNodesAvailable as e:
            return (ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                    Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [str(e)], e))
        except SchedulingError as e:
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), Status.error(e)
        except FitError as fit:
            unschedulable = Status(Code.UNSCHEDULABLE, [str(fit)], fit)
            if not fwk.has_post_filter_plugins():
                return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), unschedulable
            pf_result, pf_status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
            fit.diagnosis.post_filter_msg = pf_status.message()
            if pf_status.code == Code.ERROR:
                log.error("Status after running PostFilter plugins for pod pod=%s status=%s",
                          pod_key(pod), pf_status.message())
            nominating = pf_result.nominating_info if pf_result is not None else None
            # The message includes PostFilter's verdict, so it is made after PostFilter ran.
            return ScheduleResult(nominating_info=nominating), Status(Code.UNSCHEDULABLE, [str(fit)], fit)

    def prepare_for_binding_cycle(self, fwk: Framework, state: CycleState, pod: Pod, result: ScheduleResult,
                                  pod_info: PodInfo | None = None) -> tuple[PodInfo, Status | None]:
        """Assume, Reserve and Permit; on failure the pod is unreserved and forgotten again. `pod_info`,
        when given, is `pod`'s (its precomputed requests and terms are reused for the assumed copy)."""
        host = result.suggested_host
        assumed = Pod()
        assumed.CopyFrom(pod)
        assumed.spec.nodeName = host
        assumed_pi = pod_info.with_pod(assumed) if pod_info is not None and pod_info.pod is pod else PodInfo(assumed)
        try:
            self.cache.assume_pod(assumed, assumed_pi)
        except Exception as e:
            return assumed_pi, Status.error(e)
        st = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if is_success(st):
            st = fwk.run_permit_plugins(state, assumed, host)
        if not_success(st) and not is_wait(st):
            self._unreserve_and_forget(fwk, state, assumed, host)
            return assumed_pi, _single_node_fit(pod, host, st)
        return assumed_pi, st

    def _unreserve_and_forget(self, fwk: Framework, state: CycleState, assumed: Pod, host: str) -> bool:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        try:
            self.cache.forget_pod(assumed)
        except Exception as e:
            log.error("scheduler cache ForgetPod failed: %s", e)
            return False
        return True

    # ----- binding cycle ----------------------------------------------------------------------

    def binding_cycle(self, fwk: Framework, state: CycleState, result: ScheduleResult, qpi: QueuedPodInfo,
                      assumed_pi: PodInfo, permit: Status | None, start: float | None = None) -> None:
        """Runs once Permit allowed (or rejected) the pod: PreBind, Bind, PostBind. `start` is when the
        attempt began (perf_counter), for its duration metric."""
        assumed = assumed_pi.pod
        host = result.suggested_host
        try:
            st = permit
            if not_success(st):
                st = _single_node_fit(qpi.pod, host, st)
            if is_success(st):
                st = fwk.run_pre_bind_plugins(state, assumed, host)
                if is_rejected(st):
                    st = _single_node_fit(qpi.pod, host, st)
            if is_success(st):
                st = fwk.run_bind_plugins(state, assumed, host)
                if is_skip(st):
                    st = Status.error(f'no bind plugin bound pod "{pod_key(assumed)}"')
            if not_success(st):
                self.handle_binding_cycle_error(fwk, state, qpi, assumed, host, st, start)
                return
            self.cache.finish_binding(assumed)
            self.recorder.eventf(assumed, None, "Normal", "Scheduled", "Binding",
                                 f"Successfully assigned {pod_key(assumed)} to {host}")
            log.info('"Successfully bound pod to node" pod="%s" node="%s" evaluatedNodes=%d feasibleNodes=%d',
                     pod_key(assumed), host, result.evaluated_nodes, result.feasible_nodes)
            if self.metrics is not None:
                self._observe_bound(fwk, qpi, start)
            fwk.run_post_bind_plugins(state, assumed, host)
            rec = self.records.of(assumed)
            rec.message, rec.reason, rec.last_status = "", "Scheduled", None
            self.queue.done(assumed)
        finally:
            fwk.notify_binding_cycle_done(assumed)

    def _observe_bound(self, fwk: Framework, qpi: QueuedPodInfo, start: float | None) -> None:
        """The attempt's metrics and the pod's scheduling SLI, which runs on the scheduler's clock (so a
        simulation reports the backoff and Permit waits it simulated)."""
        m = self.metrics
        assert m is not None
        if start is not None:
            m.pod_scheduled(fwk.profile_name(), perf_counter() - start)
        first = qpi.initial_attempt_timestamp
        m.pod_bound(qpi.attempts, None if first is None else self.clock() - first)

    def handle_binding_cycle_error(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod,
                                   host: str, st: Status, start: float | None = None) -> None:
        if not self._unreserve_and_forget(fwk, state, assumed, host):
            self.handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE, start)
            return
        # Forgetting an assumed pod frees resources: like an assigned pod's deletion for the others.
        # A rejected pod must not see that event itself (it would be requeued by its own rejection),
        # so the move happens after the pod is back in the queue, as kube defers it.
        if is_rejected(st):
            self.handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE, start)
            uid = get_pod_key(assumed)
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: get_pod_key(p) != uid)
        else:
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, assumed, None)
            self.handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE, start)

    # ----- failures ---------------------------------------------------------------------------

    def handle_scheduling_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status,
                                  nominating: NominatingInfo | None, start: float | None = None) -> None:
        """Records the verdict, requeues the pod (unless gone, bound, or given up on), and reports it.
        `start` is when the attempt began (perf_counter), for its duration metric."""
        pod = qpi.pod
        reason = "Unschedulable" if is_rejected(status) else "SchedulerError"
        if self.metrics is not None and start is not None:
            seconds = perf_counter() - start
            if is_rejected(status):
                self.metrics.pod_unschedulable(fwk.profile_name(), seconds)
            else:
                self.metrics.pod_schedule_error(fwk.profile_name(), seconds)
        err = status.err
        msg = status.message()
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
            log.info('"Unable to schedule pod; no fit; waiting" pod="%s" err="%s"', pod_key(pod), msg)
        elif isinstance(err, NoNodesAvailable):
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            log.info('"Unable to schedule pod; no nodes are registered to the cluster; waiting" pod="%s"',
                     pod_key(pod))
        else:
            qpi.unschedulable_plugins = {status.plugin} if is_rejected(status) and status.plugin else set()
            qpi.pending_plugins = set()
            log.error('"Error scheduling pod; retrying" err="%s" pod="%s"', msg, pod_key(pod))
        rec = self.records.of(pod)
        # The record keeps the verdict, not the FitError: its per-node statuses cost ~200 bytes a node for
        # every unschedulable pod (kube drops them once the message is made, too).
        rec.message, rec.reason, rec.last_status = msg, reason, Status(status.code, [msg], None, status.plugin)
        qpi.consecutive_errors_count = 0 if is_rejected(status) else qpi.consecutive_errors_count + 1
        limit = self.options.max_consecutive_errors
        current = self.client.get_pod(pod.metadata.namespace, pod.metadata.name)
        if limit is not None and qpi.consecutive_errors_count >= limit:
            log.error('"Giving up on pod after consecutive scheduling errors" pod="%s" errors=%d',
                      pod_key(pod), qpi.consecutive_errors_count)
            rec.gave_up = True
            self.queue.done(pod)
        elif current is None:
            log.info('"Pod doesn\'t exist in informer cache" pod="%s"', pod_key(pod))
            self.queue.done(pod)
        elif current.spec.nodeName:
            log.info('"Pod has been assigned to node. Abort adding it back to queue." pod="%s" node="%s"',
                     pod_key(pod), current.spec.nodeName)
            self.queue.done(pod)
        else:
            qpi.pod_info = PodInfo(current)
            self.queue.add_unschedulable_if_not_present(qpi)
        self.queue.nominator.add_nominated_pod(PodInfo(pod), nominating)
        if current is None:
            return
        self.recorder.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", truncate_message(msg))
        # kube's updatePod: a failed write (the pod went away meanwhile, the server is unreachable) is
        # logged; the pod is already back in the queue, and the next attempt writes its status again.
        try:
            self.client.update_pod_status(pod, PodCondition("PodScheduled", "False", reason, msg), nominating)
        except Exception as e:
            log.error('"Error updating pod" err=%s pod="%s"', quote(e), pod_key(pod))


def _single_node_fit(pod: Pod, host: str, st: Status) -> Status:
    """A rejection by Reserve, Permit or PreBind reads as a FitError over the one chosen node."""
    if not is_rejected(st):
        return st
    d = Diagnosis()
    d.node_to_status.set(host, st)
    d.add_plugin_status(st)
    fit = FitError(pod, 1, d)
    return Status(st.code, [str(fit)], fit, st.plugin)


def truncate_message(msg: str, limit: int = NOTE_LENGTH_LIMIT) -> str:
    if len(msg) <= limit:
        return msg
    suffix = " ..."
    return msg[: limit - len(suffix)] + suffix


__all__ = ["CLEAR_NOMINATED_NODE", "ScheduleOne", "truncate_message"]

