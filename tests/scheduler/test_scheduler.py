"""The Scheduler end to end on the embedded cluster with a simulated clock (schedule_one_test.go
TestSchedulerScheduleOne, TestSchedulerBinding, permit waits; scheduler never loses a pod)."""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.embedded.memory import KIND_NODE, KIND_POD, MemoryCluster
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    ReservePlugin,
    ScorePlugin,
)
from wasmsched.framework.runtime import PluginRef, ProfilePlugins
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.plugins import defaultbinder, prioritysort
from wasmsched.scheduler.scheduler import ProfileSpec, Scheduler, SchedulerOptions
from wasmsched.testing.builders import make_node, make_pod, make_priority_class
from wasmsched.util.clock import SimClock

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


class Env:
    def __init__(self, points: dict[str, list[tuple[str, Any]]], nodes: list[str], seed: int = 0) -> None:
        registry: dict[str, Any] = {"PrioritySort": prioritysort.new, "DefaultBinder": defaultbinder.new}
        cfg = ProfilePlugins()
        cfg.enabled["queue_sort"] = [PluginRef("PrioritySort")]
        cfg.enabled["bind"] = [PluginRef("DefaultBinder")]
        for point, entries in points.items():
            refs = [] if point == "bind" else list(cfg.enabled.get(point, []))
            for name, pl in entries:
                pl.name = name
                registry[name] = lambda args, handle, pl=pl: pl
                refs.append(PluginRef(name))
            cfg.enabled[point] = refs
        self.clock = SimClock()
        self.cluster = MemoryCluster()
        self.sched = Scheduler([ProfileSpec("default-scheduler", cfg, {})], registry, self.cluster, self.cluster,
                               self.clock.now, SchedulerOptions(seed=seed, binding_workers=2))
        s = self.sched
        self.cluster.watch(KIND_NODE, s.on_node_add, s.on_node_update, s.on_node_delete)
        self.cluster.watch(KIND_POD, s.on_pod_add, s.on_pod_update, s.on_pod_delete)
        for n in nodes:
            self.add_node(n)

    def add_node(self, name: str) -> None:
        self.cluster.create(make_node(name).res({"cpu": "4", "memory": "8Gi", "pods": "110"}).obj())

    def add_pod(self, name: str, prio: int = 0) -> Pod:
        """A pod of priority `prio` (through a PriorityClass named after it, as the API server admits it)."""
        w = make_pod(name).uid(name)
        if prio:
            cls = f"prio-{prio}"
            if self.cluster.get("PriorityClass", cls) is None:
                self.cluster.create(make_priority_class(cls, prio))
            w.priority_class(cls)
        return self.cluster.create(w.obj())  # type: ignore[no-any-return]

    def pod(self, name: str) -> Pod:
        p = self.cluster.get_pod("default", name)
        assert p is not None
        return p

    def run(self, max_cycles: int = 10_000) -> None:
        """As simulation.run_until_quiet: schedule, wait for bindings, jump the clock to the next timer."""
        s = self.sched
        cycles = 0
        while cycles < max_cycles:
            if s.schedule_one():
                cycles += 1
                continue
            if s.bindings_in_flight() and not s.wait_for_bindings(timeout=0.0):
                s.wait_for_bindings(timeout=10)
                continue
            if s.queue.has_work():
                continue
            wake = s.next_wake_up()
            if wake is None:
                break
            self.clock.advance_to(wake)
            s.expire_waiting_pods()
        s.wait_for_bindings(timeout=10)

    def where(self, name: str) -> str:
        q = self.sched.queue
        key = get_pod_key(self.pod(name))
        if q.active_q.get(key) is not None:
            return "active"
        if q.backoff_q.get(key) is not None:
            return "backoff"
        if key in q.unschedulable_pods:
            return "unschedulable"
        if key in q.gated_pods:
            return "gated"
        return "none"

    def events(self, reason: str) -> list[str]:
        return [e.message for e in self.cluster.events if e.reason == reason]

    def close(self) -> None:
        self.sched.close()


class FakeFilter(FilterPlugin, EnqueueExtensions):
    """Rejects nodes not in `ok`; registered for Node/Add."""

    def __init__(self, ok: set[str] | None = None, reason: str = "fake reason") -> None:
        self.ok, self.reason = ok, reason

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.ok is None or node_info.name in self.ok:
            return None
        return Status.unschedulable(self.reason)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD)]


class NoExtFilter(FilterPlugin):
    """Rejects nodes not in `ok`, without EnqueueExtensions."""

    def __init__(self, ok: set[str]) -> None:
        self.ok = ok

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if node_info.name in self.ok else Status.unschedulable("no ext says no")


class RecordingReserve(ReservePlugin, EnqueueExtensions):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD)]

    def __init__(self, status: Status | None = None) -> None:
        self.status = status
        self.calls: list[str] = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(f"reserve:{pod.metadata.name}:{node_name}")
        return self.status

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"unreserve:{pod.metadata.name}:{node_name}")


class FlakyBinder(BindPlugin):
    """Fails the first `failures` binds of each pod, then binds through the client."""

    def __init__(self, cluster: MemoryCluster, failures: int = 1) -> None:
        self.cluster, self.failures = cluster, failures
        self.attempts: dict[str, int] = {}

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        n = self.attempts.get(pod.metadata.name, 0) + 1
        self.attempts[pod.metadata.name] = n
        if n <= self.failures:
            return Status.error("binding rejected by the API server")
        self.cluster.bind(pod, node_name)
        return None


class WaitPermit(PermitPlugin, EnqueueExtensions):
    """Asks pods named in `wait` to wait `timeout` seconds on their first attempt."""

    def __init__(self, wait: set[str], timeout: float = 10.0, only_first: bool = True) -> None:
        self.wait, self.timeout, self.only_first = wait, timeout, only_first
        self.seen: dict[str, int] = {}

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        n = self.seen.get(pod.metadata.name, 0) + 1
        self.seen[pod.metadata.name] = n
        if pod.metadata.name in self.wait and (n == 1 or not self.only_first):
            return Status(Code.WAIT), self.timeout
        return None, 0.0

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD)]


class ConstScore(ScorePlugin):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 10, None


# ----- scheduling cycle outcomes ------------------------------------------------------------------


def test_pod_is_bound() -> None:
    env = Env({"filter": [("F", FakeFilter())], "score": [("S", ConstScore())]}, ["node1", "node2"])
    try:
        env.add_pod("p")
        env.run()
        p = env.pod("p")
        assert p.spec.nodeName in ("node1", "node2")
        assert env.events("Scheduled") == [f"Successfully assigned default/p to {p.spec.nodeName}"]
        assert not env.sched.cache.is_assumed_pod(p)
        assert env.sched.queue.in_flight_count() == 0
    finally:
        env.close()


def test_unschedulable_pod_reports_fit_error() -> None:
    env = Env({"filter": [("F", FakeFilter(set()))]}, ["node1", "node2"])
    try:
        env.add_pod("p")
        env.run()
        assert env.where("p") == "unschedulable"
        msg = "0/2 nodes are available: 2 fake reason."
        assert env.events("FailedScheduling") == [msg]
        cond = next(c for c in env.pod("p").status.conditions if c.type == "PodScheduled")
        assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", msg)
        assert env.sched.records["default/p"].reason == "Unschedulable"
        # A node the plugin registered for brings it back; this one fits.
        env.sched.profiles["default-scheduler"].plugins_map["F"].ok = {"node3"}  # type: ignore[attr-defined]
        env.add_node("node3")
        env.run()
        assert env.pod("p").spec.nodeName == "node3"
    finally:
        env.close()


def test_rejection_by_plugin_without_enqueue_extensions_is_retried_on_any_event() -> None:
    # framework.go: plugins without EnqueueExtensions get every event (defaultEnqueueExtension).
    env = Env({"filter": [("NoExt", NoExtFilter({"node2"}))]}, ["node1"])
    try:
        env.add_pod("p")
        env.run()
        assert env.where("p") == "unschedulable"
        env.add_node("node2")
        env.run()
        assert env.pod("p").spec.nodeName == "node2"
    finally:
        env.close()


def test_filter_error_is_scheduler_error_and_backs_off() -> None:
    class ErrFilter(FilterPlugin):
        calls = 0

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            ErrFilter.calls += 1
            return Status.error("boom") if ErrFilter.calls == 1 else None

    env = Env({"filter": [("E", ErrFilter())]}, ["node1"])
    try:
        env.add_pod("p")
        assert env.sched.schedule_one()
        assert env.where("p") == "backoff"
        rec = env.sched.records["default/p"]
        assert rec.reason == "SchedulerError"
        assert rec.message == 'running "E" filter plugin: boom'
        env.run()
        assert env.pod("p").spec.nodeName == "node1"
    finally:
        env.close()


def test_no_post_filter_clears_nominated_node() -> None:
    # schedule_one.go schedulingCycle: without PostFilter plugins the result carries clearNominatedNode,
    # so a pod's stale nominatedNodeName is cleared when it fails.
    env = Env({"filter": [("F", FakeFilter(set()))]}, ["node1"])
    try:
        p = make_pod("p").uid("p").priority(0).nominated_node("node1").obj()
        env.cluster.create(p)
        env.sched.schedule_one()
        assert env.pod("p").status.nominatedNodeName == ""
        assert env.sched.queue.nominator.nominated_node(p) == ""
    finally:
        env.close()


def test_reserve_failure_unreserves_and_forgets() -> None:
    reserve = RecordingReserve(Status.unschedulable("reserve says no"))
    later = RecordingReserve()
    env = Env({"reserve": [("R", reserve), ("Later", later)]}, ["node1"])
    try:
        env.add_pod("p")
        env.sched.schedule_one()
        assert reserve.calls == ["reserve:p:node1", "unreserve:p:node1"]
        assert later.calls == ["unreserve:p:node1"]  # Unreserve runs for every reserve plugin
        assert not env.sched.cache.is_assumed_pod(env.pod("p"))
        assert env.sched.cache.nodes["node1"].pods == []
        assert env.sched.records["default/p"].message == "0/1 nodes are available: 1 reserve says no."
        assert env.where("p") == "unschedulable"
    finally:
        env.close()


def test_permit_rejection_unreserves_in_reverse_order() -> None:
    order: list[str] = []

    class R(ReservePlugin):
        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            order.append(f"reserve:{self.name}")
            return None

        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            order.append(f"unreserve:{self.name}")

    class RejectPermit(PermitPlugin):
        def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
            return Status.unschedulable("permit says no"), 0.0

    env = Env({"reserve": [("R1", R()), ("R2", R())], "permit": [("P", RejectPermit())]}, ["node1"])
    try:
        env.add_pod("p")
        env.sched.schedule_one()
        assert order == ["reserve:R1", "reserve:R2", "unreserve:R2", "unreserve:R1"]
        assert env.sched.records["default/p"].message == "0/1 nodes are available: 1 permit says no."
        assert env.sched.cache.pod_count() == 0
    finally:
        env.close()


# ----- binding failures ---------------------------------------------------------------------------


def test_binding_failure_unreserves_forgets_requeues_then_succeeds() -> None:
    reserve = RecordingReserve()
    env = Env({"reserve": [("R", reserve)]}, ["node1"])
    binder = FlakyBinder(env.cluster, failures=1)
    try:
        env.sched.profiles["default-scheduler"].plugins.bind = [binder]
        binder.name = "FlakyBinder"
        env.add_pod("p")
        assert env.sched.schedule_one()
        env.sched.wait_for_bindings(timeout=10)
        assert reserve.calls == ["reserve:p:node1", "unreserve:p:node1"]
        p = env.pod("p")
        assert p.spec.nodeName == ""
        assert not env.sched.cache.is_assumed_pod(p)
        assert env.sched.cache.nodes["node1"].pods == []
        assert env.where("p") == "backoff"
        rec = env.sched.records["default/p"]
        assert rec.reason == "SchedulerError"
        assert rec.message == 'running Bind plugin "FlakyBinder": binding rejected by the API server'
        assert env.events("FailedScheduling") == [rec.message]
        env.run()
        assert env.pod("p").spec.nodeName == "node1"
        assert binder.attempts == {"p": 2}
        assert env.sched.cache.nodes["node1"].pods[0].pod.metadata.name == "p"
        assert env.sched.queue.in_flight_count() == 0
    finally:
        env.close()


# ----- Permit waits on the simulated clock --------------------------------------------------------


def test_permit_wait_then_allow_binds() -> None:
    permit = WaitPermit({"p"}, timeout=10)
    env = Env({"permit": [("P", permit)]}, ["node1"])
    try:
        env.add_pod("p")
        assert env.sched.schedule_one()
        fwk = env.sched.profiles["default-scheduler"]
        wp = fwk.get_waiting_pod(get_pod_key(env.pod("p")))
        assert wp is not None and wp.get_pending_plugins() == ["P"]
        assert env.sched.bindings_in_flight() == 1
        assert env.sched.cache.is_assumed_pod(env.pod("p"))
        assert env.pod("p").spec.nodeName == ""
        env.clock.advance(5)
        assert env.sched.expire_waiting_pods() == 0
        wp.allow("P")
        env.sched.wait_for_bindings(timeout=10)
        assert env.pod("p").spec.nodeName == "node1"
        assert fwk.get_waiting_pod(get_pod_key(env.pod("p"))) is None
    finally:
        env.close()


def test_permit_wait_times_out_then_retried() -> None:
    permit = WaitPermit({"p"}, timeout=10)
    reserve = RecordingReserve()
    env = Env({"reserve": [("R", reserve)], "permit": [("P", permit)]}, ["node1"])
    try:
        env.add_pod("p")
        start = env.clock.now()
        env.sched.schedule_one()
        assert env.sched.next_wake_up() == start + 10
        env.run()  # jumps the clock to the deadline; the wait times out
        assert env.clock.now() == start + 10
        msg = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin P."
        assert env.sched.records["default/p"].message == msg
        assert env.events("FailedScheduling") == [msg]
        assert reserve.calls == ["reserve:p:node1", "unreserve:p:node1"]
        assert env.pod("p").spec.nodeName == ""
        assert env.sched.cache.pod_count() == 0
        assert env.where("p") == "unschedulable"
        # An event P registered for retries it; this time Permit allows at once.
        env.add_node("node2")
        env.run()
        assert env.pod("p").spec.nodeName in ("node1", "node2")
        assert permit.seen["p"] == 2
    finally:
        env.close()


def test_waiting_pod_deleted_is_rejected() -> None:
    permit = WaitPermit({"p"}, timeout=100)
    env = Env({"permit": [("P", permit)]}, ["node1"])
    try:
        env.add_pod("p")
        env.sched.schedule_one()
        env.cluster.delete(KIND_POD, "default/p")
        env.sched.wait_for_bindings(timeout=10)
        assert env.sched.cache.pod_count() == 0
        assert env.sched.bindings_in_flight() == 0
    finally:
        env.close()


# ----- the scheduler never loses a pod ------------------------------------------------------------


def test_scheduler_never_loses_a_pod() -> None:
    rng = random.Random(7)
    nodes = [f"node{i}" for i in range(6)]
    pods = [f"p{i}" for i in range(60)]
    # Each pod fits a random subset of nodes (sometimes none), may wait at Permit (sometimes past
    # its timeout), and may fail its first bind.
    fits = {p: {n for n in nodes if rng.random() < 0.4} for p in pods}

    class SubsetFilter(FilterPlugin, EnqueueExtensions):
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return None if node_info.name in fits[pod.metadata.name] else Status.unschedulable("not in subset")

        def events_to_register(self) -> list[ClusterEventWithHint]:
            return [ClusterEventWithHint(NODE_ADD)]

    waiting = {p for p in pods if rng.random() < 0.3}
    permit = WaitPermit(waiting, timeout=5)
    env = Env({"filter": [("Subset", SubsetFilter())], "score": [("S", ConstScore())],
               "permit": [("P", permit)]}, nodes, seed=3)
    binder = FlakyBinder(env.cluster, failures=1)
    binder.name = "FlakyBinder"
    env.sched.profiles["default-scheduler"].plugins.bind = [binder]
    try:
        for i, p in enumerate(pods):
            env.add_pod(p, prio=rng.choice([0, 10, 100]))
            if i % 7 == 0:
                env.sched.schedule_one()
        # Some waiting pods get allowed, the others time out.
        fwk = env.sched.profiles["default-scheduler"]
        for wp in fwk.waiting_pods.all():
            if rng.random() < 0.5:
                wp.allow("P")
        env.run()
        for p in pods:
            pod = env.pod(p)
            if pod.spec.nodeName:
                assert pod.spec.nodeName in fits[p]
                continue
            # Not bound: it must be somewhere in the queue and reported.
            assert env.where(p) != "none", p
            assert env.sched.records[f"default/{p}"].message, p
            assert not fits[p] or env.where(p) in ("unschedulable", "backoff", "active"), p
        bound = [p for p in pods if env.pod(p).spec.nodeName]
        assert not env.sched.queue.has_work()
        assert env.sched.queue.in_flight_count() == 0
        assert env.sched.bindings_in_flight() == 0
        assert len(fwk.waiting_pods) == 0
        assert env.sched.cache.pod_count() == len(bound)
        assert all(not env.sched.cache.is_assumed_pod(env.pod(p)) for p in pods)
        # Every pod that fits somewhere and never timed out at Permit ends bound (a timed-out pod
        # waits in unschedulable pods for an event Permit registered for).
        for p in pods:
            if fits[p] and p not in waiting:
                assert p in bound, p
    finally:
        env.close()


def test_a_failed_status_write_is_logged_and_the_pod_stays_queued(caplog: pytest.LogCaptureFixture) -> None:
    """As kube's updatePod errors: the API server refusing the PodScheduled patch (the pod went away, the
    server is unreachable) must not take the scheduler down; the pod is requeued all the same."""
    env = Env({"filter": [("F", FakeFilter(set()))]}, ["node1"])

    def refuse(*_args: Any) -> None:
        raise LookupError('pods "p" not found')

    env.cluster.set_pod_condition = refuse  # type: ignore[method-assign,assignment]
    try:
        env.add_pod("p")
        with caplog.at_level(logging.ERROR, logger="wasmsched.scheduler"):
            env.run()
        assert env.where("p") == "unschedulable"
        assert env.events("FailedScheduling") == ["0/1 nodes are available: 1 fake reason."]
        assert any('"Error updating pod"' in r.getMessage() and 'pods \\"p\\" not found' in r.getMessage()
                   for r in caplog.records)
    finally:
        env.close()
