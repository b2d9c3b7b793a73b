"""The Scheduler: construction from profiles, and the loop around schedule_one (scheduler/scheduler.go).

Its informer handlers are in eventhandlers.py and its cycles in schedule_one.py, as in kube-scheduler.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod
from wasmsched.framework.interface import ClusterClient, EventRecorder
from wasmsched.framework.pod_index import PodIndex
from wasmsched.framework.runtime import Framework, FrameworkError, ProfilePlugins, new_framework
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.status import Status
from wasmsched.framework.types import QueuedPodInfo
from wasmsched.framework.watched import WatchedObjectStore
from wasmsched.scheduler.algorithm import SchedulingAlgorithm
from wasmsched.scheduler.binding_workers import BindingWorkers
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.eventhandlers import EventHandlers
from wasmsched.scheduler.queue import SchedulingQueue, build_queueing_hint_map
from wasmsched.scheduler.records import PodRecords
from wasmsched.scheduler.schedule_one import ScheduleOne

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

# The longest the run loop sleeps without looking at the queue: kube-scheduler flushes backoffQ on
# the same period, which bounds how late a pod whose backoff ended during the sleep is retried.
IDLE_SECONDS = 1.0


@dataclass
class ProfileSpec:
    scheduler_name: str
    plugins: ProfilePlugins
    plugin_args: Mapping[str, Any]
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerOptions:
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    seed: int = 0
    explain: bool = False
    # --explain's data kept as counts per Filter verdict and the best nodes' scores (CycleExplain.summary).
    explain_summary: bool = False
    # Threads running binding cycles, as kube runs each in a goroutine. 0: each binding cycle runs on the
    # scheduling thread right after the scheduling cycle that started it (or the event that ended its
    # Permit wait), so a run is deterministic: the same input gives the same writes in the same order.
    binding_workers: int = 4
    # kube-scheduler retries a pod that hit an internal error forever. A simulation must end, so it
    # gives up after this many consecutive errors and reports the pod (None: retry forever).
    max_consecutive_errors: int | None = None
    # Equally-best nodes: the lowest name instead of a random one. It is one of the choices kube's random
    # tie-break makes, so a run can be compared with kube-scheduler's decision by decision.
    lowest_name_tie_break: bool = False


class Scheduler(EventHandlers, ScheduleOne):
    """One scheduler process: a queue and a cache shared by its profiles (one Framework each)."""

    def __init__(
        self,
        profiles: list[ProfileSpec],
        registry: Mapping[str, Callable[..., Any]],
        client: ClusterClient,
        recorder: EventRecorder,
        clock: Callable[[], float],
        options: SchedulerOptions | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        """`metrics`: where the scheduler records kube-scheduler's metrics; None records none."""
        self.options = options or SchedulerOptions()
        self.metrics = metrics
        self.clock = clock
        self.client = client
        self.recorder = recorder
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.records = PodRecords()
        self.pods = PodIndex()  # every pod, for plugins' pod listers (the event handlers keep it)
        self.binding_workers = BindingWorkers(self.options.binding_workers)
        self.profiles: dict[str, Framework] = {}
        # The objects of every resource a plugin declared it watches (framework/watched.py); the backend
        # fills it, and each change is a cluster event (eventhandlers.py on_watched_change).
        self.watched = WatchedObjectStore()
        self.watched.subscribe(self.on_watched_change)
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
            metrics=metrics,
        )
        for spec in profiles:
            if spec.scheduler_name in self.profiles:
                raise FrameworkError(f'duplicate profile with scheduler name "{spec.scheduler_name}"')
            fwk = new_framework(
                spec.scheduler_name, spec.plugins, spec.plugin_args, registry,
                client=client, event_recorder=recorder, snapshot=lambda: self.snapshot,
                pod_nominator=self.queue.nominator, clock=clock,
                percentage_of_nodes_to_score=spec.percentage_of_nodes_to_score, metrics=metrics,
                watched=self.watched, pod_activator=self.queue, pod_lister=self.pods,
            )
            self.profiles[spec.scheduler_name] = fwk
            less_fns[spec.scheduler_name] = fwk.queue_sort_less()
            pre_enqueue[spec.scheduler_name] = fwk.run_pre_enqueue_plugins
            hints[spec.scheduler_name] = build_queueing_hint_map(fwk.events_to_register())
        self.queue.queueing_hints = hints
        # One QueueSort plugin class in every profile with a sort key: the active queue orders by it.
        sorters = [fwk.queue_sort_key() for fwk in self.profiles.values()]
        keyed = sorters[0] if len({type(p) for p in sorters}) == 1 else None
        if keyed is not None:
            self.queue.active_q.use_sort_key(keyed.sort_key)
        self.algorithm = SchedulingAlgorithm(self.cache, self.snapshot, self.queue.nominator,
                                             None if self.options.lowest_name_tie_break
                                             else random.Random(self.options.seed),
                                             self.options.percentage_of_nodes_to_score)
        if metrics is not None:
            metrics.watch_queue(self.queue)
            metrics.watch_cache(self.cache)

    def run(self, stop: threading.Event) -> None:
        """Schedules pods as they come, until `stop` is set or the queue is closed (kube's Run).

        The clock must be real time (time.monotonic): when nothing is active the loop sleeps until a
        pod is added, a backoff ends or a Permit wait times out, at most IDLE_SECONDS. The simulator
        drives the same steps on its simulated clock instead (simulator/simulation.py).
        """
        while not stop.is_set() and not self.queue.closed():
            self.expire_waiting_pods()
            if self.schedule_one():
                continue
            wake = self.next_wake_up()
            idle = IDLE_SECONDS if wake is None else min(max(wake - self.clock(), 0.0), IDLE_SECONDS)
            self.queue.wait_for_active(idle)

    def warm_up(self) -> None:
        """Prepares what the first scheduling cycle would otherwise build (the snapshot and its node
        table), e.g. once a simulation's cluster is loaded."""
        self.algorithm.warm_up()

    def wait_for_bindings(self, timeout: float | None = None) -> bool:
        return self.binding_workers.wait(timeout)

    def bindings_in_flight(self) -> int:
        return self.binding_workers.in_flight()

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
        self.binding_workers.run_deferred()
        return expired

    def close(self) -> None:
        self.queue.close()
        self.binding_workers.close()
        for fwk in self.profiles.values():
            fwk.close()
