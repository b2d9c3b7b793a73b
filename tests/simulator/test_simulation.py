"""The simulation driver: runs until quiet, reports every pod, never loops forever."""

import threading
from typing import Any

import pytest

from wasmsched.config import config_from_dict
from wasmsched.framework.interface import FilterPlugin, PermitPlugin, Plugin, PreBindPlugin
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.registry import Registry, in_tree_registry
from wasmsched.simulator.simulation import MAX_CONSECUTIVE_ERRORS, Simulation
from wasmsched.testing.builders import make_node, make_pod


class AlwaysErrorFilter(FilterPlugin):
    name = "AlwaysError"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return Status.error("boom")


class WaitPermit(PermitPlugin):
    """Holds every pod at Permit; pods labelled allow=true are allowed by a later pod's Permit."""

    name = "WaitPermit"

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        if pod.metadata.labels.get("release") == "true":
            self.handle.iterate_over_waiting_pods(
                lambda wp: wp.allow(self.name) if wp.get_pod().metadata.labels.get("allow") == "true" else None)
            return None, 0
        return Status(Code.WAIT), 30.0


def _config(extra_plugin: str) -> Any:
    return config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": extra_plugin}]}}}],
    })


def _sim(plugin: str, factory: Any) -> Simulation:
    reg = Registry({plugin: factory})
    return Simulation(_config(plugin), reg)


def test_pod_failing_with_errors_is_reported_as_error_not_retried_forever() -> None:
    sim = _sim("AlwaysError", lambda args, h: AlwaysErrorFilter())
    sim.apply({"Node": [make_node("n1").capacity(cpu="1", pods="10").obj()], "Pod": [make_pod("p").obj()]})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    (p,) = result.pods
    assert p.phase == "Error"
    assert p.attempts == MAX_CONSECUTIVE_ERRORS
    assert 'running "AlwaysError" filter plugin: boom' in p.message


def test_permit_wait_times_out_on_the_simulated_clock_and_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins: list[Plugin] = []

    def factory(args: Any, handle: Any) -> Plugin:
        plugins.append(WaitPermit(handle))
        return plugins[-1]

    sim = _sim("WaitPermit", factory)
    sim.apply({"Node": [make_node("n1").capacity(cpu="4", pods="10").obj()],
               "Pod": [make_pod("waiter").obj()]})
    start = sim.clock.now()
    jumps: list[float] = []  # the times the simulator moved the clock to, from start
    advance_to = sim.clock.advance_to

    def record(t: float) -> None:
        jumps.append(t - start)
        advance_to(t)

    monkeypatch.setattr(sim.clock, "advance_to", record)
    result = sim.run_until_quiet()
    sim.scheduler.close()
    (p,) = result.pods
    # Each attempt waits 30s at Permit and is rejected when the simulator jumps the clock to the wait's
    # deadline (no wall time is spent waiting); the assumed pod was forgotten. As in kube-scheduler, the
    # first failure's PodScheduled condition write is a pod update that a plugin registered for all
    # events (no EnqueueExtensions) requeues once; the second failure writes the same condition, no
    # update, so the pod stays.
    assert p.phase == "Unschedulable"
    assert p.attempts == 2
    assert "rejected due to timeout after waiting 30s at plugin WaitPermit" in p.message
    assert jumps[0] == 30  # the first attempt's Permit deadline
    assert sim.clock.now() - start == jumps[-1] >= 60  # the clock moved by the simulator's jumps only
    assert sim.scheduler.cache.pod_count() == 0


def test_permit_allow_lets_the_waiting_pod_bind() -> None:
    def factory(args: Any, handle: Any) -> Plugin:
        return WaitPermit(handle)

    sim = _sim("WaitPermit", factory)
    sim.apply({"Node": [make_node("n1").capacity(cpu="4", pods="10").obj()],
               "Pod": [make_pod("held").label("allow", "true").obj(),
                       make_pod("releaser").label("release", "true").obj()]})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    phases = {p.name: (p.phase, p.node) for p in result.pods}
    assert phases == {"held": ("Scheduled", "n1"), "releaser": ("Scheduled", "n1")}


class DeletionObserver(FilterPlugin):
    """Rejects every node and records the pods the framework reports deleted (the wasm pool's hook)."""

    name = "DeletionObserver"

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return Status(Code.UNSCHEDULABLE, ["no"])

    def pod_deleted(self, pod: Any) -> None:
        self.deleted.append(pod.metadata.name)


def test_deleting_a_pending_pod_notifies_the_plugins_of_its_profile() -> None:
    observer = DeletionObserver()
    sim = _sim("DeletionObserver", lambda args, h: observer)
    sim.apply({"Node": [make_node("n1").capacity(cpu="1", pods="10").obj()],
               "Pod": [make_pod("gone").obj(), make_pod("stays").obj()]})
    sim.run_until_quiet()
    sim.cluster.delete("Pod", "default/gone")
    sim.scheduler.close()
    assert observer.deleted == ["gone"]


def test_no_nodes_ends_with_the_pods_unschedulable() -> None:
    """kube-scheduler retries such a pod after backoff until a node is added; no node will ever be added
    to a simulated cluster, so the run must end instead of retrying forever."""
    sim = Simulation(_config("PrioritySort"), Registry(in_tree_registry()))
    sim.apply({"Pod": [make_pod("a").obj(), make_pod("b").obj()]})
    result = sim.run_until_quiet(max_cycles=50)
    sim.scheduler.close()
    assert [(p.name, p.phase, p.message, p.attempts) for p in result.pods] == [
        ("a", "Unschedulable", "no nodes available to schedule pods", 1),
        ("b", "Unschedulable", "no nodes available to schedule pods", 1),
    ]
    assert [e.message for e in result.events if e.reason == "FailedScheduling"] == [
        "no nodes available to schedule pods"] * 2


class ThreadRecordingPreBind(PreBindPlugin):
    name = "ThreadRecordingPreBind"

    def __init__(self) -> None:
        self.threads: list[int] = []

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        self.threads.append(threading.get_ident())
        return None


def test_binding_cycles_run_on_the_scheduling_thread() -> None:
    """simulate runs each binding cycle right after its scheduling cycle, on the same thread, so that the
    writes (and their resourceVersions) come in the same order in every run."""
    plugins: list[ThreadRecordingPreBind] = []

    def factory(args: Any, handle: Any) -> Plugin:
        plugins.append(ThreadRecordingPreBind())
        return plugins[-1]

    sim = _sim("ThreadRecordingPreBind", factory)
    sim.apply({"Node": [make_node("n1").capacity(cpu="4", pods="10").obj()],
               "Pod": [make_pod(f"p{i}").obj() for i in range(5)]})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    assert [p.phase for p in result.pods] == ["Scheduled"] * 5
    assert plugins[0].threads == [threading.get_ident()] * 5
    # The two system PriorityClasses, one node and five pods created (1..8), then one bind each, in
    # scheduling order.
    assert {p.metadata.name: int(p.metadata.resourceVersion) for p in sim.cluster.list("Pod")} == {
        "p0": 9, "p1": 10, "p2": 11, "p3": 12, "p4": 13}


def test_an_unschedulable_pod_keeps_no_per_node_statuses() -> None:
    """The FitError's per-node statuses (~200 bytes a node) are dropped once its message is made."""
    sim = Simulation(_config("PrioritySort"), Registry(in_tree_registry()))
    sim.apply({"Node": [make_node(f"n{i}").capacity(cpu="1", pods="10").obj() for i in range(50)],
               "Pod": [make_pod("big").req(cpu="8").obj()]})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    (p,) = result.pods
    assert p.phase == "Unschedulable"
    assert p.message.startswith("0/50 nodes are available: 50 Insufficient cpu.")
    last = sim.scheduler.records["default/big"].last_status
    assert last is not None and last.err is None and last.reasons == [p.message]


def _default_sim() -> Simulation:
    cfg = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    return Simulation(cfg, in_tree_registry())


def _cluster(pods: int) -> dict[str, list[Any]]:
    return {"Node": [make_node("n1").capacity(cpu="100", pods="200").obj()],
            "Pod": [make_pod(f"p{i:03d}").req(cpu="1").obj() for i in range(pods)]}


def test_the_cycle_hook_sees_the_progress_of_every_cycle() -> None:
    sim = _default_sim()
    sim.apply(_cluster(5))
    seen: list[tuple[int, int]] = []
    sim.on_cycle = lambda s: seen.append((s.progress().scheduled, s.progress().pending))
    result = sim.run_until_quiet()
    sim.scheduler.close()
    assert seen == [(1, 4), (2, 3), (3, 2), (4, 1), (5, 0)]
    assert sim.progress().total == 5 and not result.interrupted


def _interrupt_after(cycles: int) -> Any:
    def hook(sim: Simulation) -> None:
        if sim.progress().scheduled == cycles:
            raise KeyboardInterrupt
    return hook


def test_an_interruptible_run_stopped_by_ctrl_c_reports_the_pods_so_far() -> None:
    sim = _default_sim()
    sim.apply(_cluster(5))
    sim.on_cycle = _interrupt_after(2)
    result = sim.run_until_quiet(interruptible=True)
    sim.scheduler.close()
    assert result.interrupted
    assert [p.phase for p in result.pods] == ["Scheduled"] * 2 + ["Pending"] * 3
    assert result.pods[2].message == "interrupted before it was scheduled"


def test_ctrl_c_still_raises_out_of_a_run_that_is_not_interruptible() -> None:
    sim = _default_sim()
    sim.apply(_cluster(3))
    sim.on_cycle = _interrupt_after(1)
    with pytest.raises(KeyboardInterrupt):
        sim.run_until_quiet()
    sim.scheduler.close()
