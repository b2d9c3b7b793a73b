"""A guest can never take the scheduler down (docs/abi.md §2, §4.2 memory faults, §6, §8 discard, §9 limits, §10 texts).

The real scheduler (Simulation, a KubeSchedulerConfiguration enabling the wasm plugin in multiPoint next
to the default plugins) runs tests/wat/faults/misbehave.wat, which misbehaves only for pods named
"bad-<word>" (the first letter of <word> picks the fault). Every bad pod must end in phase Error (or
Unschedulable when the guest's misbehaviour is not a failure) with the §10 text, the good pods must all
be scheduled, trapped instances must be discarded, and no instance may leak (live == idle afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config import config_from_dict
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import MAX_CONSECUTIVE_ERRORS, Simulation, SimulationResult
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import register_wasm_plugins

from .harness import compile_wat, single_plugin_config

PLUGIN = "wasm"
NODES = [f"node-{i}" for i in range(1, 5)]
GOOD = ["good-1", "good-2", "good-3"]
MEMORY_LIMIT_PAGES = 3


@dataclass(frozen=True)
class Fault:
    phase: str  # the bad pod's final phase
    message: str  # contained in the pod's message and in its FailedScheduling events
    discards: bool | None  # whether each attempt discards the instance (None: the ABI does not say)


FAULTS: dict[str, Fault] = {
    # §10: `wasm: <export> error: <captured output>\n<trap>`, or just `<trap>` with nothing captured.
    "bad-trap": Fault("Error", 'running "wasm" filter plugin: wasm: filter error: wasm error: unreachable', True),
    "bad-panic": Fault("Error", "wasm: filter error: panic: boom\nwasm error: unreachable", True),
    # §9 timeout (epoch deadline): `timeout after <timeout>`.
    "bad-loop": Fault("Error", "wasm: filter error: wasm error: timeout after 100ms", True),
    # §9 memoryLimitPages: memory.grow past the limit returns -1 (at exactly the limit); the guest then traps.
    "bad-memory": Fault("Error", f"wasm: filter error: grow failed at {MEMORY_LIMIT_PAGES} pages\n"
                                 "wasm error: unreachable", True),
    "bad-divide": Fault("Error", 'plugin "wasm" failed with: wasm: score error: wasm error: integer divide by zero',
                        True),
    # §4.2: a getter writing outside memory traps the call (host function text); only on node-2.
    "bad-getter": Fault("Error", "wasm: score error: wasm error: host function k8s.io/scheduler.currentPod failed: "
                                 "out of bounds memory access", True),
    # §4.2: a setter reading outside memory traps too.
    "bad-setter": Fault("Error", 'running PreFilter plugin "wasm": wasm: prefilter error: wasm error: host function '
                                 "k8s.io/scheduler.result.node_names failed: out of bounds memory access", True),
    # §4.1: eventf with invalid JSON fails the call (a host-function failure: discarded).
    "bad-eventf": Fault("Error", 'running PreScore plugin "wasm": wasm: prescore error: wasm error: host function '
                                 "k8s.io/scheduler.handle.eventrecorder.eventf failed: ", True),
    # §4.3: invalid JSON in result.normalized_score_list fails the call.
    "bad-normalize": Fault("Error", "wasm: normalizescore error: ", None),
    # §4.2: an unreadable status reason is no trap: the reason is a fixed text, the code the guest's (2).
    "bad-reason": Fault("Unschedulable", "0/4 nodes are available: 4 BUG: out of memory reading message.", False),
    # Conventions: invalid UTF-8 becomes U+FFFD.
    "bad-utf8": Fault("Unschedulable", "0/4 nodes are available: 4 bad \ufffd\ufffd reason.", False),
}


@pytest.fixture(scope="module")
def runtime(process_runtime: Runtime) -> Runtime:
    return process_runtime


@pytest.fixture(scope="module")
def guest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_wat("faults/misbehave", tmp_path_factory.mktemp("guest"), "misbehave.wasm")


def nodes() -> list[Node]:
    return [make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in NODES]


def pods(*names: str) -> list[Pod]:
    return [make_pod(n).req(cpu="100m", memory="128Mi").obj() for n in names]


def new_simulation(guest: Path, **args: Any) -> Simulation:
    cfg = config_from_dict(single_plugin_config(PLUGIN, guest, memoryLimitPages=MEMORY_LIMIT_PAGES, **args))
    registry = in_tree_registry()
    assert register_wasm_plugins(registry, cfg) == [PLUGIN]
    return Simulation(cfg, registry)


def counters(sim: Simulation) -> dict[str, int]:
    return sim.wasm_counters()[PLUGIN]


def by_name(result: SimulationResult) -> dict[str, Any]:
    return {p.name: p for p in result.pods}


def failed_scheduling(result: SimulationResult, pod: str) -> list[str]:
    return [e.message for e in result.events if e.reason == "FailedScheduling" and e.regarding == f"default/{pod}"]


def assert_no_leak(c: dict[str, int]) -> None:
    assert c["live"] == c["idle"], c
    assert c["scheduling"] == 0, c
    assert c["binding"] == 0, c


def test_good_pods_alone(runtime: Runtime, guest_path: Path) -> None:
    """The baseline: no fault, nothing discarded, all pods on node-4 (the guest's best score), one instance."""
    sim = new_simulation(guest_path)
    try:
        sim.apply({"Node": nodes(), "Pod": pods(*GOOD)})
        result = sim.run_until_quiet()
        assert {p.name: (p.phase, p.node) for p in result.pods} == dict.fromkeys(GOOD, ("Scheduled", "node-4"))
        c = counters(sim)
        assert c["created"] == 1 and c["discarded"] == 0, c
        assert_no_leak(c)
        assert c["live"] == 1
    finally:
        sim.scheduler.close()


@pytest.mark.parametrize("bad", list(FAULTS))
def test_fault_is_contained(runtime: Runtime, guest_path: Path, bad: str) -> None:
    fault = FAULTS[bad]
    sim = new_simulation(guest_path)
    try:
        sim.apply({"Node": nodes(), "Pod": pods(GOOD[0], bad, *GOOD[1:])})
        result = sim.run_until_quiet()
        res = by_name(result)

        for name in GOOD:
            assert res[name].phase == "Scheduled", (name, res[name])
            assert res[name].node == "node-4"
        p = res[bad]
        assert p.phase == fault.phase, p
        assert p.node is None
        assert fault.message in p.message, p.message
        events = failed_scheduling(result, bad)
        assert events, result.events
        assert all(fault.message in m for m in events), events
        assert events[-1] == p.message
        if fault.phase == "Error":
            # simulate gives up after MAX_CONSECUTIVE_ERRORS consecutive errors.
            assert p.attempts == MAX_CONSECUTIVE_ERRORS
            assert len(events) == MAX_CONSECUTIVE_ERRORS

        c = counters(sim)
        if fault.discards:
            # Every attempt's instance trapped and was discarded (§8), never reused.
            assert c["discarded"] == p.attempts, c
            assert c["created"] >= c["discarded"]
        elif fault.discards is False:
            assert c["discarded"] == 0, c
            assert c["created"] == 1, c
        assert_no_leak(c)

        # The scheduler keeps working: later pods are scheduled on a healthy (possibly fresh) instance.
        created = c["created"]
        sim.apply({"Pod": pods("late-1", "late-2")})
        result = sim.run_until_quiet()
        res = by_name(result)
        assert res["late-1"].phase == "Scheduled" and res["late-2"].phase == "Scheduled"
        assert res["late-1"].node == "node-4"
        c = counters(sim)
        assert c["created"] <= created + 1, c  # at most one new instance, reused by both pods
        assert_no_leak(c)
        assert c["live"] == 1, c
    finally:
        sim.scheduler.close()


def test_all_faults_in_one_run_with_one_instance(runtime: Runtime, guest_path: Path) -> None:
    """Every fault at once, interleaved with good pods, with maxInstances=1: a discarded instance frees
    its slot (otherwise the good pods after the first fault would wait for an instance and fail)."""
    sim = new_simulation(guest_path, maxInstances=1)
    try:
        # (the good pods' names must not contain "bad-")
        names = [n for bad in FAULTS for n in (bad, "good-after-" + bad.removeprefix("bad-"))]
        sim.apply({"Node": nodes(), "Pod": pods(*names)})
        result = sim.run_until_quiet()
        res = by_name(result)
        assert len(res) == 2 * len(FAULTS)
        for bad, fault in FAULTS.items():
            good = res["good-after-" + bad.removeprefix("bad-")]
            assert (good.phase, good.attempts) == ("Scheduled", 1), good
            assert res[bad].phase == fault.phase, res[bad]
            assert fault.message in res[bad].message, res[bad].message
            assert all(fault.message in m for m in failed_scheduling(result, bad))
        assert result.count("Scheduled") == len(FAULTS)
        assert result.count("Error") == sum(1 for f in FAULTS.values() if f.phase == "Error")
        c = counters(sim)
        trapping = sum(1 for f in FAULTS.values() if f.discards)
        assert c["discarded"] >= trapping * MAX_CONSECUTIVE_ERRORS, c
        assert_no_leak(c)
        assert c["live"] <= 1
    finally:
        sim.scheduler.close()


def test_fault_text_in_failed_scheduling_event(runtime: Runtime, guest_path: Path) -> None:
    """The §10 example, end to end: captured stderr, then the trap, then the stack trace, in the pod's
    FailedScheduling events (type Warning) and its final message."""
    sim = new_simulation(guest_path)
    try:
        sim.apply({"Node": nodes(), "Pod": pods("bad-panic", "good-1")})
        result = sim.run_until_quiet()
        evs = [e for e in result.events if e.regarding == "default/bad-panic"]
        assert [e.reason for e in evs] == ["FailedScheduling"] * MAX_CONSECUTIVE_ERRORS
        for e in evs:
            assert e.type == "Warning"
            assert e.message.startswith(
                'running "wasm" filter plugin: wasm: filter error: panic: boom\nwasm error: unreachable'), e.message
            # Output of earlier calls never leaks into a later error text (§2: cleared after each call).
            assert e.message.count("panic: boom") == 1
            assert "\nwasm stack trace:" in e.message
        assert by_name(result)["bad-panic"].phase == "Error"
        assert by_name(result)["good-1"].phase == "Scheduled"
        pod = sim.cluster.get("Pod", "default/bad-panic")
        assert pod is not None
        cond = [c for c in pod.status.conditions if c.type == "PodScheduled"]
        assert cond and cond[0].reason == "SchedulerError"
        assert "panic: boom\nwasm error: unreachable" in cond[0].message
    finally:
        sim.scheduler.close()


def test_node_specific_fault_only_hits_that_node(runtime: Runtime, guest_path: Path) -> None:
    """bad-getter traps only when scoring node-2; without node-2 the same pod schedules normally."""
    sim = new_simulation(guest_path)
    try:
        cluster_nodes = [n for n in nodes() if n.metadata.name != "node-2"]
        sim.apply({"Node": cluster_nodes, "Pod": pods("bad-getter", "good-1")})
        result = sim.run_until_quiet()
        res = by_name(result)
        assert (res["bad-getter"].phase, res["bad-getter"].node) == ("Scheduled", "node-4")
        assert res["good-1"].phase == "Scheduled"
        c = counters(sim)
        assert c["discarded"] == 0, c
        assert_no_leak(c)
    finally:
        sim.scheduler.close()
