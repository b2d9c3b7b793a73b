"""wasmsched's side of a differential case: the same result document `kube-oracle` prints for
kube-scheduler (docs/compatibility.md), from wasmsched's own scheduler on the embedded cluster.

Both sides run the same protocol: every object but the pending pods exists first, the pending pods are
created in input order one millisecond apart (so the queue order is priority, then creation), every
node is evaluated (percentageOfNodesToScore 100) and equally-best nodes are resolved by the lowest name.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from tests.differential.swap import swapped_registry
from wasmsched.api.manifest import load_text
from wasmsched.api.types import Node, Pod, object_key
from wasmsched.config.load import API_VERSION, KIND, config_from_dict
from wasmsched.config.types import KubeSchedulerConfiguration
from wasmsched.embedded.memory import KIND_POD, AdmissionError, ConflictError, MemoryCluster
from wasmsched.embedded.watched import follow_cluster
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.diagnosis import FitError
from wasmsched.framework.interface import NominatingMode
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.defaultpreemption import default_preemption
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.algorithm import CycleExplain, NoNodesAvailable, ScheduleResult, SchedulingError
from wasmsched.scheduler.eventhandlers import add_all_event_handlers
from wasmsched.scheduler.explain import explain_document
from wasmsched.scheduler.factory import new_scheduler
from wasmsched.scheduler.scheduler import Scheduler
from wasmsched.simulator.simulation import create_objects
from wasmsched.util.clock import SimClock

MODES = ("cycle", "run")
# The clock moves 1 ms between pod creations and after every scheduling cycle (as kube-oracle's fake
# clock), and jumps to the earliest backoff expiry when only backoffQ holds pods.
CREATION_STEP = 0.001
# kube-oracle's fake clock starts at 2024-01-01T00:00:00Z.
CLOCK_START = 1_704_067_200.0
CYCLE_STEP = 0.001
MAX_ATTEMPTS_PER_POD = 20


class CaseError(ValueError):
    """The case is not valid input (wasmsched's loaders refused it)."""


def scheduler_config(raw: Mapping[str, Any] | None) -> KubeSchedulerConfiguration:
    """The case's configuration (or the default one) with node sampling off everywhere."""
    cfg = config_from_dict(dict(raw) if raw is not None else {"apiVersion": API_VERSION, "kind": KIND})
    cfg.percentage_of_nodes_to_score = 100
    for p in cfg.profiles:
        p.percentage_of_nodes_to_score = 100
    return cfg


@contextlib.contextmanager
def _preemption_from_first_node() -> Iterator[None]:
    """DefaultPreemption starts its dry run at a random node; the oracle starts at offset 0, so does this."""
    saved = default_preemption.get_offset_rand
    default_preemption.get_offset_rand = lambda n: 0
    try:
        yield
    finally:
        default_preemption.get_offset_rand = saved


class LocalCase:
    """One case on wasmsched's scheduler, built once, run in one mode."""

    def __init__(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
                 swap: str | None = None) -> None:
        try:
            cfg = scheduler_config(config)
            loaded = load_text("\n---\n".join(json.dumps(o) for o in objects), "case")
        except ValueError as e:
            raise CaseError(str(e)) from e
        self.clock = SimClock(CLOCK_START)
        self.cluster = MemoryCluster(start_pods_on_bind=self.clock.now)
        registry = swapped_registry(swap) if swap else in_tree_registry()
        self.scheduler: Scheduler = new_scheduler(
            cfg, registry, self.cluster, self.cluster, self.clock.now, explain=True, binding_workers=0,
            max_consecutive_errors=MAX_ATTEMPTS_PER_POD, lowest_name_tie_break=True)
        add_all_event_handlers(self.scheduler, self.cluster)
        # Resources a swapped-in guest declared it watches follow the cluster, as in `simulate`.
        follow_cluster(self.cluster, self.scheduler.watched)
        # kube-oracle's fake clientset lists objects sorted by name, so kube's informer adds the nodes, and
        # its node tree interleaves their zones, in name order: the order of the Filter walk (which node's
        # Error ends a cycle) depends on it.
        loaded.by_kind["Node"] = sorted(loaded.of_kind("Node"), key=lambda n: cast(Node, n).metadata.name)
        try:
            _, pending = create_objects(self.cluster, loaded.by_kind,
                                        before_pending_pod=lambda: self.clock.advance(CREATION_STEP))
        except (AdmissionError, ConflictError) as e:
            self.scheduler.close()
            raise CaseError(str(e)) from e
        self.pending = [object_key(p) for p in pending]

    def run(self, mode: str) -> dict[str, Any]:
        with _preemption_from_first_node():
            try:
                if mode == "cycle":
                    return {"mode": mode, "attempts": self._cycle()}
                if mode == "run":
                    return self._run()
            finally:
                self.scheduler.close()
        raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")

    def _cycle(self) -> list[dict[str, Any]]:
        s = self.scheduler
        out = []
        for key in self.pending:
            pod: Pod | None = self.cluster.get(KIND_POD, key)
            fwk = s.profiles.get(pod.spec.schedulerName) if pod is not None else None
            if pod is None or fwk is None or pod.spec.schedulingGates:
                continue
            ex = CycleExplain()
            result, status = ScheduleResult(), None
            try:
                result = s.algorithm.schedule_pod(fwk, CycleState(), pod, ex)
            except NoNodesAvailable as e:
                status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [str(e)])
            except FitError as e:
                status = Status(Code.UNSCHEDULABLE, [str(e)])
            except SchedulingError as e:
                status = Status(Code.ERROR, [str(e)])
            out.append(_attempt(pod, fwk.profile_name(), ex, result, status))
        return out

    def _run(self) -> dict[str, Any]:
        s = self.scheduler
        attempts: list[dict[str, Any]] = []
        deleted_before = set(self.cluster.deleted_pods)

        def observe(pod: Pod, profile: str, ex: CycleExplain | None, result: ScheduleResult,
                    status: Status | None) -> None:
            attempts.append(_attempt(pod, profile, ex, result, status, run=True))

        s.attempt_observer = observe
        # Bounded as kube-oracle bounds it: the run stops once some pod has had MAX_ATTEMPTS_PER_POD.
        while all(rec.attempts < MAX_ATTEMPTS_PER_POD for rec in s.records.values()):
            before = len(attempts)
            if s.schedule_one():
                s.wait_for_bindings()
                # Every cycle's failure gets its own timestamp, so equal-priority pods keep a strict order.
                self.clock.advance(CYCLE_STEP)
                if len(attempts) > before:
                    gone = set(self.cluster.deleted_pods) - deleted_before
                    deleted_before |= gone
                    attempts[-1]["victims"] = sorted(gone)
                continue
            expiry = s.queue.next_backoff_expiry()
            if expiry is None:
                break
            self.clock.advance_to(expiry)
        final: dict[str, Any] = {}
        for key in self.pending:
            pod = self.cluster.get(KIND_POD, key)
            if pod is None:  # bound, then preempted
                final[key] = {"node": None, "nominatedNode": None}
                continue
            final[key] = {"node": pod.spec.nodeName or None,
                          "nominatedNode": pod.status.nominatedNodeName or None}
        return {"mode": "run", "attempts": attempts, "final": final}


def _attempt(pod: Pod, profile: str, ex: CycleExplain | None, result: ScheduleResult, status: Status | None,
             run: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {"pod": object_key(pod), "profile": profile}
    doc.update(explain_document(ex))
    ok = status is None or status.code == Code.WAIT
    doc["node"] = result.suggested_host if ok else None
    doc["code"] = str(Code.SUCCESS) if ok else str(status.code if status else Code.SUCCESS)
    doc["message"] = "" if ok or status is None else status.message()
    if run:
        info = result.nominating_info
        doc["nominatedNode"] = (info.nominated_node_name or None) if info is not None \
            and info.mode == NominatingMode.OVERRIDE else None
        doc["victims"] = []
    return doc


def run_case(objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None, mode: str,
             swap: str | None = None) -> dict[str, Any]:
    return LocalCase(objects, config, swap).run(mode)
