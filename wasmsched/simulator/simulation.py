"""Run a scheduler against the embedded cluster until nothing more can happen ("quiet").

Time is simulated: when no pod is ready to schedule and no binding runs, the clock jumps to the
next backoff expiry or Permit deadline, so a run takes only the CPU time scheduling needs.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wasmsched.api.kinds import RESOURCES
from wasmsched.api.manifest import UnstructuredObject
from wasmsched.api.types import Pod, object_key
from wasmsched.config.types import KubeSchedulerConfiguration
from wasmsched.embedded.memory import (
    KIND_NODE,
    KIND_POD,
    MemoryCluster,
    RecordedEvent,
    system_priority_classes,
)
from wasmsched.embedded.pv_provisioner import attach_volume_controllers
from wasmsched.embedded.resourceclaim_controller import attach_resourceclaim_controller
from wasmsched.embedded.watched import follow_cluster, load_manifest_objects
from wasmsched.framework.interface import PluginFactory
from wasmsched.framework.status import Status, is_rejected
from wasmsched.scheduler.algorithm import CycleExplain
from wasmsched.scheduler.eventhandlers import add_all_event_handlers
from wasmsched.scheduler.factory import new_scheduler
from wasmsched.scheduler.scheduler import Scheduler
from wasmsched.util.clock import SimClock

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

log = logging.getLogger("wasmsched.simulate")

# Kinds applied before pods, in this order, so pods see their priority classes and nodes exist.
# Every kind `run` watches and `snapshot` writes (api/kinds.py), so no kind a manifest may hold is dropped.
APPLY_ORDER = tuple(kind for kind in RESOURCES if kind != "Pod")
# A pod failing with internal errors this many times in a row is reported as Error, not retried.
MAX_CONSECUTIVE_ERRORS = 5
# When a simulation whose pods keep being retried without any pod bound stops (Simulation._stalled): after
# this much simulated time (three times kube's podMaxInUnschedulablePodsDuration of 5 min, more than any
# backoff or default Permit wait), or this many attempts per pending pod with no time passing.
STALL_SECONDS = 15 * 60.0
STALL_ATTEMPTS_PER_POD = 100


@dataclass
class PodResult:
    namespace: str
    name: str
    node: str | None
    phase: str
    message: str
    nominated_node: str | None
    attempts: int
    explain: CycleExplain | None = None


@dataclass(frozen=True)
class Progress:
    """Where a running simulation is, for a progress display: cheap to take a few times a second."""

    total: int  # the pods to schedule (running pods of the input excluded)
    scheduled: int  # bindings so far (a pod preempted after its binding still counts)
    pending: int  # waiting for an attempt: in the active or backoff queue
    unschedulable: int  # parked after a failed attempt, or gated
    seconds: float  # wall time since run_until_quiet started


@dataclass
class SimulationResult:
    pods: list[PodResult]
    events: list[RecordedEvent]
    seconds: float
    cluster: MemoryCluster
    scheduler: Scheduler
    extra_summary: dict[str, Any] = field(default_factory=dict)
    # Stopped by Ctrl-C (run_until_quiet(interruptible=True)): the pods are reported as they were, those not
    # decided yet as "Pending".
    interrupted: bool = False

    def count(self, phase: str) -> int:
        return sum(1 for p in self.pods if p.phase == phase)


def create_objects(cluster: MemoryCluster, objects_by_kind: Mapping[str, Iterable[Any]],
                   before_pending_pod: Callable[[], None] | None = None) -> tuple[list[Pod], list[Pod]]:
    """Creates the objects in APPLY_ORDER (with the API server's own PriorityClasses, unless the input has
    them: a dump of a real cluster does), then the running pods, then the pending pods, calling
    `before_pending_pod` before each of these. Returns (running, pending) pods."""
    for kind in APPLY_ORDER:
        for obj in objects_by_kind.get(kind, []):
            cluster.create(obj)
        if kind == "PriorityClass":
            for pc in system_priority_classes():
                if cluster.get(kind, pc.metadata.name) is None:
                    cluster.create(pc)
    pods: list[Pod] = list(objects_by_kind.get("Pod", []))
    running = [p for p in pods if p.spec.nodeName]
    pending = [p for p in pods if not p.spec.nodeName]
    for pod in running:
        cluster.create(pod)
    for pod in pending:
        if before_pending_pod is not None:
            before_pending_pod()
        cluster.create(pod)
    return running, pending


class Simulation:
    def __init__(self, cfg: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory], *,
                 seed: int = 0, explain: bool = False, explain_summary: bool = False,
                 metrics: SchedulerMetrics | None = None, provision_volumes: bool = False) -> None:
        """`provision_volumes`: also emulate an external provisioner for every StorageClass (a claim of a
        WaitForFirstConsumer class gets a PV on the node the scheduler selected); the PV controller's
        binding and the resourceclaim controller always run, as kube-controller-manager's would."""
        self.clock = SimClock()
        self.cluster = MemoryCluster()
        self.scheduler = new_scheduler(cfg, registry, self.cluster, self.cluster, self.clock.now,
                                       seed=seed, explain=explain, explain_summary=explain_summary,
                                       max_consecutive_errors=MAX_CONSECUTIVE_ERRORS, binding_workers=0,
                                       metrics=metrics)
        add_all_event_handlers(self.scheduler, self.cluster)
        # The resources plugins declared they watch (args.watch) follow the cluster's objects of their kind.
        follow_cluster(self.cluster, self.scheduler.watched)
        attach_volume_controllers(self.cluster, provision=provision_volumes)
        attach_resourceclaim_controller(self.cluster, random.Random(seed))
        self._pending: list[str] = []
        self._running: list[str] = []
        # Set when run_until_quiet stopped pods retried with none bound (_stalled): the simulated seconds since
        # the last binding (0.0 then too, when no time passed). None: it ran until quiet.
        self.stalled_seconds: float | None = None
        # Called after every scheduling cycle while run_until_quiet runs (a progress display); it must
        # return quickly, so it looks at the time and mostly returns at once. None costs one test a cycle.
        self.on_cycle: Callable[[Simulation], None] | None = None
        self._started = 0.0

    def load_watched(self, objects: Iterable[UnstructuredObject]) -> list[UnstructuredObject]:
        """The manifests' objects of kinds without a type that plugins declared they watch (a CRD's), into
        the scheduler's watched objects, before `apply`; returns those taken (embedded/watched.py).
        Raises ManifestError for a taken object that is malformed or defined twice."""
        return load_manifest_objects(self.scheduler.watched, objects)

    def apply(self, objects_by_kind: Mapping[str, Iterable[Any]]) -> list[Pod]:
        """Creates the objects: cluster-scoped and supporting kinds first, then running, then pending pods.

        Returns the running pods bound to a node that does not exist (they hold no node's resources).
        """
        running, pending = create_objects(self.cluster, objects_by_kind)
        # Loading the cluster includes the scheduler's view of it (kube's informers sync before scheduling).
        self.scheduler.warm_up()
        self._running.extend(object_key(p) for p in running)
        self._pending.extend(object_key(p) for p in pending)
        return [p for p in running if self.cluster.get(KIND_NODE, p.spec.nodeName) is None]

    def progress(self) -> Progress:
        queued = self.scheduler.queue.pending_pods()
        return Progress(total=len(self._pending), scheduled=self.cluster.bindings,
                        pending=len(queued["active"]) + len(queued["backoff"]),
                        unschedulable=len(queued["unschedulable"]) + len(queued["gated"]),
                        seconds=time.perf_counter() - self._started)

    def run_until_quiet(self, max_cycles: int | None = None, *, interruptible: bool = False) -> SimulationResult:
        """Schedules until nothing more can happen. `interruptible`: Ctrl-C (KeyboardInterrupt) stops the
        run where it is and the result reports the pods so far (`interrupted`); binding cycles not yet run
        are abandoned, as a guest call would raise the pending interrupt again (wasm/interrupt.py)."""
        start = self._started = time.perf_counter()
        interrupted = False
        try:
            self._run(max_cycles)
        except KeyboardInterrupt:
            if not interruptible:
                raise
            interrupted = True
        seconds = time.perf_counter() - start
        s = self.scheduler
        result = SimulationResult(self._results(interrupted), list(self.cluster.events), seconds, self.cluster, s,
                                  interrupted=interrupted)
        wasm = self.wasm_counters()
        if wasm:
            result.extra_summary["wasm"] = wasm
        return result

    def _run(self, max_cycles: int | None) -> None:
        s = self.scheduler
        on_cycle = self.on_cycle
        cycles = 0
        # The last progress: (pods bound so far, when, the cycle count then).
        progress = (self.cluster.bindings, self.clock.now(), 0)
        attempts_limit = STALL_ATTEMPTS_PER_POD * max(len(self._pending), 1)
        while max_cycles is None or cycles < max_cycles:
            if self.cluster.bindings != progress[0]:
                progress = (self.cluster.bindings, self.clock.now(), cycles)
            elif self._stalled(cycles - progress[2] > attempts_limit, progress[1], cycles - progress[2]):
                break
            if s.schedule_one():
                cycles += 1
                if on_cycle is not None:
                    on_cycle(self)
                continue
            if s.bindings_in_flight() and not s.wait_for_bindings(timeout=0.0):
                s.wait_for_bindings()
                continue
            if s.queue.has_work():
                continue
            wake = s.next_wake_up()
            if wake is not None and self._nothing_can_change():
                # kube-scheduler retries such pods after backoff forever, waiting for a node to be added;
                # here no node will ever come, so every retry would fail the same way.
                break
            if wake is None:
                if s.bindings_in_flight():
                    # Only Permit-waiting pods without a deadline could remain; they cannot resolve alone.
                    s.wait_for_bindings(timeout=0.05)
                    if s.queue.has_work() or s.next_wake_up() is not None:
                        continue
                break
            if self.cluster.bindings == progress[0] and self._stalled(wake - progress[1] > STALL_SECONDS, progress[1],
                                                                   cycles - progress[2]):
                break
            self.clock.advance_to(wake)
            s.expire_waiting_pods()
        s.wait_for_bindings()

    def _stalled(self, too_long: bool, since: float, attempts: int) -> bool:
        """Whether to stop a simulation in which no pod was bound for too long (`too_long`: too many attempts
        or too much simulated time) while pods keep being retried: pods failing in a loop (a gang rejected and
        activated again, on and on) that kube-scheduler would retry forever. Only where no pod waits at
        Permit, so that none is left half-way; the pods are reported as they are."""
        if not too_long or not self._nothing_waits():
            return False
        s = self.scheduler
        self.stalled_seconds = max(self.clock.now() - since, 0.0)
        log.warning('"Simulation stopped: pods kept failing with none bound, as they would forever" '
                    "attemptsSinceLastBinding=%d simulatedSeconds=%.0f pending=%d", attempts, self.stalled_seconds,
                    sum(len(v) for v in s.queue.pending_pods().values()))
        return True

    def _nothing_waits(self) -> bool:
        """No pod waits at Permit and no binding cycle is in flight: stopping here leaves no pod half-way."""
        s = self.scheduler
        return not s.bindings_in_flight() and all(len(fwk.waiting_pods) == 0 for fwk in s.profiles.values())

    def _nothing_can_change(self) -> bool:
        """No node exists and no binding (or Permit wait) is in flight: every further attempt ends in
        "no nodes available"."""
        s = self.scheduler
        return s.cache.node_count() == 0 and not s.bindings_in_flight()

    def wasm_counters(self) -> dict[str, dict[str, int]]:
        """Instance counters per wasm plugin, summed over profiles that enable the same plugin."""
        out: dict[str, dict[str, int]] = {}
        for fwk in self.scheduler.profiles.values():
            for name, pl in fwk.plugins_map.items():
                counters = getattr(pl, "counters", None)
                if counters is None:
                    continue
                acc = out.setdefault(name, {})
                for k, v in counters().items():
                    acc[k] = acc.get(k, 0) + v
        return out

    def _deletion_message(self, key: str) -> str:
        notes = [e.message for e in self.cluster.events if e.reason == "Preempted" and e.regarding == key]
        return notes[-1] if notes else self.cluster.deleted_pods.get(key, "deleted")

    def _results(self, interrupted: bool = False) -> list[PodResult]:
        s = self.scheduler
        queued = s.queue.pending_pods()
        gated = {object_key(q.pod): q for q in queued["gated"]}
        out: list[PodResult] = []
        running = set(self._running)
        for key in self._pending + self._running:
            rec = s.records.get(key)
            pod = self.cluster.get(KIND_POD, key)
            ns, name = key.split("/", 1)
            attempts = rec.attempts if rec else 0
            explain = rec.explain if rec else None
            if pod is None:
                out.append(PodResult(ns, name, None, "Preempted", self._deletion_message(key), None, attempts,
                                     explain))
                continue
            nominated = pod.status.nominatedNodeName or None
            if key in running:
                node = pod.spec.nodeName
                msg = "" if self.cluster.get(KIND_NODE, node) else f'node "{node}" does not exist'
                out.append(PodResult(ns, name, node, "Running", msg, None, 0, None))
            elif pod.spec.nodeName:
                out.append(PodResult(ns, name, pod.spec.nodeName, "Scheduled", "", nominated, attempts, explain))
            elif not s.responsible_for(pod):
                msg = f'no profile for schedulerName "{pod.spec.schedulerName}"'
                out.append(PodResult(ns, name, None, "Ignored", msg, None, 0, None))
            elif key in gated:
                # The gating PreEnqueue plugin's message (SchedulingGates': "waiting for scheduling gates: [...]").
                out.append(PodResult(ns, name, None, "Unschedulable", gated[key].gating_message, nominated,
                                     attempts, explain))
            elif interrupted and (rec is None or not rec.message or s.cache.is_assumed_pod(pod)):
                # Not attempted yet, or on its way to a binding the interrupt abandoned: nothing decided.
                out.append(PodResult(ns, name, None, "Pending", "interrupted before it was scheduled", nominated,
                                     attempts, explain))
            else:
                phase = "Unschedulable"
                msg = rec.message if rec else ""
                last: Status | None = rec.last_status if rec else None
                if last is not None and not is_rejected(last):
                    phase = "Error"
                out.append(PodResult(ns, name, None, phase, msg, nominated, attempts, explain))
        return out
