"""The Scheduler: profiles, queue, cache, event handlers, and the loop around schedule_one
(scheduler/scheduler.go, eventhandlers.go, schedule_one.go)."""

from __future__ import annotations

import functools
import logging
import random
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import (
    EVENT_ASSIGNED_POD_DELETE,
    ActionType,
    ClusterEvent,
    EventResource,
)
from wasmsched.framework.interface import ClusterClient, EventRecorder, NominatingInfo, NominatingMode
from wasmsched.framework.runtime import Framework, FrameworkError, ProfilePlugins
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.events import node_scheduling_properties_change, pod_scheduling_properties_change
from wasmsched.scheduler.queue import SchedulingQueue, build_queueing_hint_map
from wasmsched.scheduler.schedule_one import (
    CLEAR_NOMINATED_NODE,
    CycleExplain,
    Diagnosis,
    FitError,
    NoNodesAvailable,
    ScheduleResult,
    SchedulingAlgorithm,
    SchedulingError,
)

log = logging.getLogger("wasmsched.scheduler")


@dataclass
class ProfileSpec:
    scheduler_name: str
    plugins: ProfilePlugins
    plugin_args: Mapping[str, Any]
    percentage_of_nodes_to_score: int | None = None


@dataclass
class PodRecord:
    """What the scheduler learned about one pod, for reports (simulate) and tests."""

    attempts: int = 0
    message: str = ""
    reason: str = ""
    explain: CycleExplain | None = None
    last_status: Status | None = None
    gave_up: bool = False


@dataclass
class SchedulerOptions:
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    seed: int = 0
    explain: bool = False
    # Threads running binding cycles, as kube runs each in a goroutine. 0: each binding cycle runs on the
    # scheduling thread right after the scheduling cycle that started it (or the event that ended its
    # Permit wait), so a run is deterministic: the same input gives the same writes in the same order.
    binding_workers: int = 4
    # kube-scheduler retries a pod that hit an internal error forever. A simulation must end, so it
    # gives up after this many consecutive errors and reports the pod (None: retry forever).
    max_consecutive_errors: int | None = None


class Scheduler:
    def __init__(
        self,
        profiles: list[ProfileSpec],
        registry: Mapping[str, Callable[..., Any]],
        client: ClusterClient,
        recorder: EventRecorder,
        clock: Callable[[], float],
        options: SchedulerOptions | None = None,
    ) -> None:
        self.options = options or SchedulerOptions()
        self.clock = clock
        self.client = client
        self.recorder = recorder
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.rng = random.Random(self.options.seed)
        self.records: dict[str, PodRecord] = {}
        self._records_lock = threading.Lock()
        self._binding_lock = threading.Condition()
        self._bindings_in_flight = 0
        self._executor = (ThreadPoolExecutor(max_workers=self.options.binding_workers, thread_name_prefix="binding")
                          if self.options.binding_workers > 0 else None)
        self._futures: set[Future[None]] = set()
        self._deferred_bindings: deque[Callable[[], None]] = deque()
        self.queue: SchedulingQueue
        self.profiles: dict[str, Framework] = {}
        pre_enqueue: dict[str, Callable[[Pod], Status | None]] = {}
        hints = {}
        # The queue is created before the frameworks (they need its nominator), with a late-bound less.
        less_fns: dict[str, Callable[[QueuedPodInfo, QueuedPodInfo], bool]] = {}

        def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            fn = less_fns.get(a.pod.spec.schedulerName) or next(iter(less_fns.values()))
            return fn(a, b)

        self.queue = SchedulingQueue(
            less, clock,
            pod_initial_backoff=self.options.pod_initial_backoff_seconds,
            pod_max_backoff=self.options.pod_max_backoff_seconds,
            pre_enqueue=pre_enqueue,
        )
        for spec in profiles:
            if spec.scheduler_name in self.profiles:
                raise FrameworkError(f'duplicate profile with scheduler name "{spec.scheduler_name}"')
            fwk = Framework(
                spec.scheduler_name, spec.plugins, spec.plugin_args, registry,
                client=client, event_recorder=recorder, snapshot=lambda: self.snapshot,
                pod_nominator=self.queue.nominator, clock=clock,
                percentage_of_nodes_to_score=spec.percentage_of_nodes_to_score,
            )
            self.profiles[spec.scheduler_name] = fwk
            less_fns[spec.scheduler_name] = fwk.queue_sort_less()
            pre_enqueue[spec.scheduler_name] = fwk.run_pre_enqueue_plugins
            hints[spec.scheduler_name] = build_queueing_hint_map(fwk.events_to_register())
        self.queue.queueing_hints = hints
        self.algorithm = SchedulingAlgorithm(self, self.rng, self.options.percentage_of_nodes_to_score)

    # ----- event handlers (informers) ---------------------------------------------------------

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.schedulerName in self.profiles

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd"),
                                                       None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(old, new)
        for ev in node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(ev, old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node)

    def on_pod_add(self, pod: Pod) -> None:
        if pod.spec.nodeName:
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd"), None, pod)
        elif self.responsible_for(pod):
            self.queue.add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if old.spec.nodeName and new.spec.nodeName:
            self.cache.update_pod(old, new)
            for ev in pod_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff_queue(ev, old, new)
        elif new.spec.nodeName:
            # Unassigned -> assigned: the pod leaves the queue and enters the cache (the binding landed).
            if self.responsible_for(old):
                self.queue.delete(old)
            self.on_pod_add(new)
        elif self.responsible_for(new):
            # An update carrying the same object (a resync) must not schedule the pod twice.
            if old.metadata.resourceVersion and old.metadata.resourceVersion == new.metadata.resourceVersion:
                return
            if self.cache.is_assumed_pod(new):
                return
            self.queue.update(old, new)
            if old.status.nominatedNodeName != new.status.nominatedNodeName:
                # The space the pod held on its old nominated node is free again for pods of lower or
                # equal priority.
                prio = _priority(new)
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, old, None, lambda p: _priority(p) <= prio)

    def on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.nodeName:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)
            return
        if not self.responsible_for(pod):
            return
        self.queue.delete(pod)
        fwk = self.profiles[pod.spec.schedulerName]
        fwk.notify_pod_deleted(pod)
        if fwk.reject_waiting_pod(get_pod_key(pod)):
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)

    def on_event(self, event: ClusterEvent, old: Any = None, new: Any = None) -> None:
        """Any other object change a plugin registered for (PDBs, namespaces, storage, ...)."""
        self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    # ----- the loop ---------------------------------------------------------------------------

    def schedule_one(self) -> bool:
        """Pops and schedules one pod; False when the active queue is empty."""
        try:
            return self._schedule_one()
        finally:
            self.run_deferred_bindings()

    def _schedule_one(self) -> bool:
        self.queue.flush_backoff_q_completed()
        qpi = self.queue.pop()
        if qpi is None:
            return False
        pod = qpi.pod
        fwk = self.profiles.get(pod.spec.schedulerName)
        if fwk is None:
            self.queue.done(pod)
            return True
        if pod.metadata.HasField("deletionTimestamp") or self.cache.is_assumed_pod(pod):
            self.queue.done(pod)
            return True
        rec = self._record(pod)
        rec.attempts += 1
        state = CycleState()
        explain = CycleExplain() if self.options.explain else None
        result, assumed_pi, status = self._scheduling_cycle(fwk, state, qpi, explain)
        rec.explain = explain
        if status is not None and not status.is_success() and not status.is_wait():
            fwk.notify_scheduling_cycle_done(pod, False)
            self._handle_scheduling_failure(fwk, qpi, status, result.nominating_info)
            return True
        fwk.notify_scheduling_cycle_done(assumed_pi.pod, True)
        with self._binding_lock:
            self._bindings_in_flight += 1
        fwk.wait_on_permit(assumed_pi.pod, lambda st: self._submit_binding(fwk, state, result, qpi, assumed_pi, st))
        return True

    def _scheduling_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo,
                          explain: CycleExplain | None) -> tuple[ScheduleResult, PodInfo, Status | None]:
        pod = qpi.pod
        try:
            result = self.algorithm.schedule_pod(fwk, state, pod, explain)
        except NoNodesAvailable as e:
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi.pod_info, Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [str(e)], e)
        except FitError as fit:
            if not fwk.has_post_filter_plugins():
                return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi.pod_info, Status(
                    Code.UNSCHEDULABLE, [str(fit)], fit)
            pf_result, pf_status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
            fit.diagnosis.post_filter_msg = pf_status.message()
            if pf_status.code == Code.ERROR:
                log.error("Status after running PostFilter plugins for pod pod=%s status=%s",
                          _key(pod), pf_status.message())
            nominating = pf_result.nominating_info if pf_result is not None else None
            return ScheduleResult(nominating_info=nominating), qpi.pod_info, Status(
                Code.UNSCHEDULABLE, [str(fit)], fit)
        except SchedulingError as e:
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi.pod_info, Status.error(e)

        assumed = Pod()
        assumed.CopyFrom(pod)
        assumed.spec.nodeName = result.suggested_host
        assumed_pi = PodInfo(assumed)
        try:
            self.cache.assume_pod(assumed, assumed_pi)
        except Exception as e:
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_pi, Status.error(e)
        host = result.suggested_host
        st = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_pi, self._single_node_fit(pod, host, st)
        st = fwk.run_permit_plugins(state, assumed, host)
        if st is not None and not st.is_success() and not st.is_wait():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_pi, self._single_node_fit(pod, host, st)
        return result, assumed_pi, st

    @staticmethod
    def _single_node_fit(pod: Pod, host: str, st: Status) -> Status:
        if not st.is_rejected():
            return st
        d = Diagnosis()
        d.node_to_status.set(host, st)
        d.add_plugin_status(st)
        fit = FitError(pod, 1, d)
        return Status(st.code, [str(fit)], fit, st.plugin)

    def _forget(self, pod: Pod) -> None:
        try:
            self.cache.forget_pod(pod)
        except Exception as e:
            log.error("scheduler cache ForgetPod failed: %s", e)

    # ----- binding cycle ----------------------------------------------------------------------

    def _submit_binding(self, fwk: Framework, state: CycleState, result: ScheduleResult, qpi: QueuedPodInfo,
                        assumed_pi: PodInfo, permit: Status | None) -> None:
        if self._executor is None:
            self._deferred_bindings.append(
                functools.partial(self._binding_cycle, fwk, state, result, qpi, assumed_pi, permit))
            return
        fut = self._executor.submit(self._binding_cycle, fwk, state, result, qpi, assumed_pi, permit)
        with self._binding_lock:
            self._futures.add(fut)
        fut.add_done_callback(self._binding_done)

    def run_deferred_bindings(self) -> None:
        """Runs the binding cycles waiting for the scheduling thread (binding_workers == 0), in order."""
        while self._deferred_bindings:
            job = self._deferred_bindings.popleft()
            try:
                job()
            except Exception as e:
                log.error("binding cycle crashed: %r", e)
            finally:
                with self._binding_lock:
                    self._bindings_in_flight -= 1
                    self._binding_lock.notify_all()

    def _binding_done(self, fut: Future[None]) -> None:
        with self._binding_lock:
            self._futures.discard(fut)
            self._bindings_in_flight -= 1
            self._binding_lock.notify_all()
        exc = fut.exception()
        if exc is not None:
            log.error("binding cycle crashed: %r", exc)

    def _binding_cycle(self, fwk: Framework, state: CycleState, result: ScheduleResult, qpi: QueuedPodInfo,
                       assumed_pi: PodInfo, permit: Status | None) -> None:
        assumed = assumed_pi.pod
        host = result.suggested_host
        try:
            st = permit
            if st is not None and not st.is_success():
                st = self._single_node_fit(qpi.pod, host, st)
            if st is None or st.is_success():
                st = fwk.run_pre_bind_plugins(state, assumed, host)
                if st is not None and st.is_rejected():
                    st = self._single_node_fit(qpi.pod, host, st)
            if st is None or st.is_success():
                st = fwk.run_bind_plugins(state, assumed, host)
                if st is not None and st.is_skip():
                    st = Status.error(f'no bind plugin bound pod "{_key(assumed)}"')
            if st is None or st.is_success():
                self.cache.finish_binding(assumed)
                self.recorder.eventf(assumed, None, "Normal", "Scheduled", "Binding",
                                     f"Successfully assigned {assumed.metadata.namespace}/{assumed.metadata.name} "
                                     f"to {host}")
                log.info('"Successfully bound pod to node" pod="%s" node="%s" evaluatedNodes=%d feasibleNodes=%d',
                         _key(assumed), host, result.evaluated_nodes, result.feasible_nodes)
                fwk.run_post_bind_plugins(state, assumed, host)
                rec = self._record(assumed)
                rec.message, rec.reason, rec.last_status = "", "Scheduled", None
                self.queue.done(assumed)
                return
            self._handle_binding_failure(fwk, state, qpi, assumed, host, st)
        finally:
            fwk.notify_binding_cycle_done(assumed)

    def _handle_binding_failure(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod,
                                host: str, st: Status) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        try:
            self.cache.forget_pod(assumed)
        except Exception as e:
            log.error("scheduler cache ForgetPod failed: %s", e)
            self._handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE)
            return
        # Forgetting an assumed pod frees resources: like an assigned pod's deletion for the others.
        # A rejected pod must not see that event itself (it would be requeued by its own rejection),
        # so the move happens after the pod is back in the queue, as kube defers it.
        if st.is_rejected():
            self._handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE)
            uid = get_pod_key(assumed)
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: get_pod_key(p) != uid)
        else:
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, assumed, None)
            self._handle_scheduling_failure(fwk, qpi, st, CLEAR_NOMINATED_NODE)

    # ----- failures ---------------------------------------------------------------------------

    def _handle_scheduling_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status,
                                   nominating: NominatingInfo | None) -> None:
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        err = status.err
        msg = status.message()
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
            log.info('"Unable to schedule pod; no fit; waiting" pod="%s" err="%s"', _key(pod), msg)
        elif isinstance(err, NoNodesAvailable):
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            log.info('"Unable to schedule pod; no nodes are registered to the cluster; waiting" pod="%s"', _key(pod))
        else:
            qpi.unschedulable_plugins = {status.plugin} if status.is_rejected() and status.plugin else set()
            qpi.pending_plugins = set()
            log.error('"Error scheduling pod; retrying" err="%s" pod="%s"', msg, _key(pod))
        rec = self._record(pod)
        # The record keeps the verdict, not the FitError: its per-node statuses cost ~200 bytes a node for
        # every unschedulable pod (kube drops them once the message is made, too).
        rec.message, rec.reason, rec.last_status = msg, reason, Status(status.code, [msg], None, status.plugin)
        qpi.consecutive_errors_count = 0 if status.is_rejected() else qpi.consecutive_errors_count + 1
        limit = self.options.max_consecutive_errors
        current = self._current_pod(pod)
        if limit is not None and qpi.consecutive_errors_count >= limit:
            log.error('"Giving up on pod after consecutive scheduling errors" pod="%s" errors=%d',
                      _key(pod), qpi.consecutive_errors_count)
            rec.gave_up = True
            self.queue.done(pod)
        elif current is None:
            log.info('"Pod doesn\'t exist in informer cache" pod="%s"', _key(pod))
            self.queue.done(pod)
        elif current.spec.nodeName:
            log.info('"Pod has been assigned to node. Abort adding it back to queue." pod="%s" node="%s"',
                     _key(pod), current.spec.nodeName)
            self.queue.done(pod)
        else:
            qpi.pod_info = PodInfo(current)
            self.queue.add_unschedulable_if_not_present(qpi)
        self.queue.nominator.add_nominated_pod(PodInfo(pod), nominating)
        if current is None:
            return
        self.recorder.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", _truncate(msg))
        self.client.set_pod_condition(pod, "PodScheduled", "False", reason, msg)
        if (nominating is not None and nominating.mode == NominatingMode.OVERRIDE
                and current.status.nominatedNodeName != nominating.nominated_node_name):
            self.client.set_nominated_node_name(pod, nominating.nominated_node_name)

    def _current_pod(self, pod: Pod) -> Pod | None:
        return self.client.get_pod(pod.metadata.namespace, pod.metadata.name)

    def _record(self, pod: Pod) -> PodRecord:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        with self._records_lock:
            rec = self.records.get(key)
            if rec is None:
                rec = self.records[key] = PodRecord()
            return rec

    # ----- driving ----------------------------------------------------------------------------

    def wait_for_bindings(self, timeout: float | None = None) -> bool:
        self.run_deferred_bindings()
        with self._binding_lock:
            return self._binding_lock.wait_for(lambda: not self._futures, timeout)

    def bindings_in_flight(self) -> int:
        with self._binding_lock:
            return self._bindings_in_flight

    def next_wake_up(self) -> float | None:
        """The earliest time something will happen by itself: a backoff ends or a Permit wait times out."""
        times = [t for t in [self.queue.next_backoff_expiry()] if t is not None]
        for fwk in self.profiles.values():
            d = fwk.next_waiting_deadline()
            if d is not None:
                times.append(d)
        return min(times) if times else None

    def expire_waiting_pods(self) -> int:
        now = self.clock()
        expired = sum(fwk.expire_waiting_pods(now) for fwk in self.profiles.values())
        self.run_deferred_bindings()
        return expired

    def close(self) -> None:
        self.queue.close()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        self.run_deferred_bindings()
        for fwk in self.profiles.values():
            fwk.close()


def _priority(pod: Pod) -> int:
    return pod.spec.priority if pod.spec.HasField("priority") else 0


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _truncate(msg: str, limit: int = 1024) -> str:
    # Event notes are capped by the API; kube truncates the FailedScheduling message the same way.
    if len(msg) <= limit:
        return msg
    suffix = " ..."
    return msg[: limit - len(suffix)] + suffix
