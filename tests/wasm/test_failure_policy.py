"""docs/abi.md §16.3: a wasm plugin's failurePolicy (Fail | Ignore) and its circuit breaker.

Fail is the ABI's behaviour: a guest fault (trap, timeout, failed host function, malformed answer) is an
Error status and the pod is retried. Ignore makes a fault "no opinion" at every extension point, logged
and counted in wasmsched_wasm_guest_faults_total{plugin,extension_point,policy}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeScore
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.args import decode_args
from wasmsched.wasm.circuit import CircuitBreaker
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.plugin import register_wasm_plugins
from wasmsched.wasm.pool import Pin

from .harness import WasmHandle, compile_wat, load, single_plugin_config, wat_source

PLUGIN = "wasm"


@pytest.fixture(scope="module")
def runtime(process_runtime: Runtime) -> Runtime:
    return process_runtime


def simulation(guest: Path, metrics: SchedulerMetrics, **args: Any) -> Simulation:
    cfg = config_from_dict(single_plugin_config(PLUGIN, guest, **args))
    registry = in_tree_registry()
    register_wasm_plugins(registry, cfg)
    return Simulation(cfg, registry, metrics=metrics)


def nodes(n: int, pods: int = 110) -> list[Node]:
    return [make_node(f"node-{i}").capacity(cpu="64", memory="256Gi", pods=str(pods)).obj() for i in range(1, n + 1)]


def pods(names: list[str]) -> list[Pod]:
    return [make_pod(n).req(cpu="10m", memory="16Mi").obj() for n in names]


def sample(m: SchedulerMetrics, name: str, **labels: str) -> float:
    return m.registry.get_sample_value(name, labels) or 0.0


def faults(m: SchedulerMetrics, point: str, policy: str) -> float:
    return sample(m, "wasmsched_wasm_guest_faults_total", plugin=PLUGIN, extension_point=point, policy=policy)


# ----- the runs: a guest trapping on every 3rd call, 1,000 pods -----------------------------------


def test_ignore_schedules_every_pod_and_the_counters_add_up(runtime: Runtime, tmp_path: Path) -> None:
    guest = compile_wat("faults/every_third", tmp_path)
    m = SchedulerMetrics()
    sim = simulation(guest, m, failurePolicy="Ignore")
    try:
        names = [f"p-{i:04d}" for i in range(1000)]
        sim.apply({"Node": nodes(2, pods=600), "Pod": pods(names)})
        result = sim.run_until_quiet()
        assert {p.phase for p in result.pods} == {"Scheduled"}
        assert all(p.attempts == 1 for p in result.pods)
        assert sim.cluster.bindings == 1000
        traps = sample(m, "wasmsched_wasm_traps_total", plugin=PLUGIN)
        by_point = {pt: faults(m, pt, "Ignore") for pt in ("PreFilter", "Filter", "Score")}
        # Each pod's cycle enters the guest 3 times before its third call (filter on node-2) traps; the rest of
        # that cycle is refused without entering the guest (the pod's instance is gone), which is no new fault.
        assert traps == 1000 and sum(by_point.values()) == traps, by_point
        assert by_point == {"PreFilter": 0, "Filter": 1000, "Score": 0}
        c = sim.wasm_counters()[PLUGIN]
        assert c["discarded"] == traps
        assert faults(m, "Filter", "Fail") == 0
    finally:
        sim.scheduler.close()


def test_fail_retries_every_affected_pod_and_loses_none(runtime: Runtime, tmp_path: Path) -> None:
    """A PreFilter-only variant (one call per attempt): every 3rd attempt traps, is an Error, and its pod is
    retried after backoff until it is bound, exactly once."""
    text = wat_source("faults/every_third")
    text = "\n".join(line for line in text.splitlines() if '"filter"' not in line and '"score"' not in line)
    guest = compile_wat(text, tmp_path)
    m = SchedulerMetrics()
    sim = simulation(guest, m)
    # As in `run` and kube-scheduler: an Error is retried for ever (simulate gives a pod up after 5 in a row).
    sim.scheduler.options.max_consecutive_errors = None
    try:
        names = [f"p-{i:04d}" for i in range(1000)]
        sim.apply({"Node": nodes(2, pods=600), "Pod": pods(names)})
        result = sim.run_until_quiet()
        assert {p.phase for p in result.pods} == {"Scheduled"}
        assert sim.cluster.bindings == 1000
        failed = [e for e in result.events if e.reason == "FailedScheduling"]
        assert all("wasm: prefilter error: wasm error: unreachable" in e.message for e in failed)
        retried = {e.regarding for e in failed}
        assert len(retried) >= 300
        assert {p.name for p in result.pods if p.attempts > 1} == {r.split("/")[1] for r in retried}
        n_faults = faults(m, "PreFilter", "Fail")
        assert n_faults == len(failed) == sample(m, "wasmsched_wasm_traps_total", plugin=PLUGIN)
        assert sum(p.attempts for p in result.pods) == 1000 + n_faults
    finally:
        sim.scheduler.close()


# ----- Ignore at each extension point -------------------------------------------------------------------

MISBEHAVE = {
    # pod name: the extension point its fault hits (tests/wat/faults/misbehave.wat)
    "bad-trap": "Filter",
    "bad-loop": "Filter",
    "bad-divide": "Score",
    "bad-setter": "PreFilter",
    "bad-eventf": "PreScore",
    "bad-normalize": "ScoreExtensionNormalize",
}


@pytest.mark.parametrize("bad", list(MISBEHAVE))
def test_ignore_schedules_the_pod_a_fault_hits(runtime: Runtime, tmp_path: Path, bad: str) -> None:
    guest = compile_wat("faults/misbehave", tmp_path)
    m = SchedulerMetrics()
    sim = simulation(guest, m, failurePolicy="Ignore")
    try:
        sim.apply({"Node": nodes(4), "Pod": pods(["good-1", bad, "good-2"])})
        result = sim.run_until_quiet()
        res = {p.name: p for p in result.pods}
        assert {n: p.phase for n, p in res.items()} == dict.fromkeys(res, "Scheduled")
        assert res[bad].attempts == 1
        assert res["good-1"].node == "node-4"  # the guest's scores still count for the good pods
        assert faults(m, MISBEHAVE[bad], "Ignore") == 1
        assert not [e for e in result.events if e.reason == "FailedScheduling"]
    finally:
        sim.scheduler.close()


def test_fail_keeps_the_error(runtime: Runtime, tmp_path: Path) -> None:
    guest = compile_wat("faults/misbehave", tmp_path)
    m = SchedulerMetrics()
    sim = simulation(guest, m, failurePolicy="Fail")
    try:
        sim.apply({"Node": nodes(4), "Pod": pods(["bad-divide"])})
        (p,) = sim.run_until_quiet().pods
        assert p.phase == "Error" and "wasm: score error: wasm error: integer divide by zero" in p.message
        assert faults(m, "Score", "Fail") == p.attempts
    finally:
        sim.scheduler.close()


TRAP_EVERYWHERE = """
(module
  (memory (export "memory") 1)
  (func (export "prefilter") (result i32) unreachable)
  (func (export "filter") (result i32) unreachable)
  (func (export "postfilter") (result i64) unreachable)
  (func (export "prescore") (result i32) unreachable)
  (func (export "score") (result i64) unreachable)
  (func (export "normalizescore") (result i32) unreachable)
  (func (export "reserve") (result i32) unreachable)
  (func (export "permit") (result i64) unreachable)
  (func (export "prebind") (result i32) unreachable)
  (func (export "bind") (result i32) unreachable)
  (func (export "preenqueue") (result i32) unreachable)
)
"""


def points(plugin: Any, node: Node) -> dict[str, Any]:
    """What each extension point answers for a guest that traps in every export: each point is called for a
    pod of its own, on an instance of its own (a trap discards the instance and ends the pod's cycle)."""
    ni = NodeInfo(node)
    name = node.metadata.name

    def pod(point: str, binding: bool = False) -> Pod:
        p = make_pod(point.lower()).obj()
        if binding:  # the pod's scheduling cycle succeeded: its instance is handed to its binding cycle
            inst = plugin.pool.enter(get_pod_key(p), Pin.SCHEDULING)
            plugin.pool.exit(inst)
            plugin.scheduling_cycle_done(p, True)
        return p

    scores = [NodeScore(name, 250)]
    return {
        "PreEnqueue": plugin.pre_enqueue(pod("PreEnqueue")),
        "PreFilter": plugin.pre_filter(CycleState(), pod("PreFilter"), [ni])[1],
        "Filter": plugin.filter(CycleState(), pod("Filter"), ni),
        "PostFilter": plugin.post_filter(CycleState(), pod("PostFilter"), {})[1],
        "PreScore": plugin.pre_score(CycleState(), pod("PreScore"), [ni]),
        "Score": plugin.score(CycleState(), pod("Score"), ni),
        "ScoreExtensionNormalize": (plugin.normalize_score(CycleState(), pod("Normalize"), scores), scores[0].score),
        "Reserve": plugin.reserve(CycleState(), pod("Reserve"), name),
        "Permit": plugin.permit(CycleState(), pod("Permit"), name),
        "PreBind": plugin.pre_bind(CycleState(), pod("PreBind", binding=True), name),
        "Bind": plugin.bind(CycleState(), pod("Bind", binding=True), name),
    }


def test_ignore_is_no_opinion_at_every_point(runtime: Runtime, tmp_path: Path) -> None:
    handle = WasmHandle()
    handle.metrics = SchedulerMetrics()
    plugin = load(TRAP_EVERYWHERE, tmp_path, handle, name=PLUGIN, runtime=runtime, failurePolicy="Ignore")
    try:
        got = points(plugin, nodes(1)[0])
        assert got["PreEnqueue"] is None
        assert got["PreFilter"].code == Code.SKIP
        assert got["Filter"] is None
        assert got["PostFilter"].code == Code.UNSCHEDULABLE  # "could not help": the next PostFilter runs
        assert got["PreScore"].code == Code.SKIP
        assert got["Score"] == (0, None)
        assert got["ScoreExtensionNormalize"] == (None, 0)
        assert got["Reserve"] is None
        assert got["Permit"] == (None, 0.0)
        assert got["PreBind"] is None
        assert got["Bind"].code == Code.SKIP  # the next Bind plugin binds
        assert {pt: faults(handle.metrics, pt, "Ignore") for pt in got} == dict.fromkeys(got, 1)
        assert plugin.counters()["discarded"] == len(got)  # each one a trap inside the guest
    finally:
        plugin.close()


def test_fail_is_an_error_at_every_point(runtime: Runtime, tmp_path: Path) -> None:
    plugin = load(TRAP_EVERYWHERE, tmp_path, WasmHandle(), name=PLUGIN, runtime=runtime)
    try:
        got = points(plugin, nodes(1)[0])
        for point in ("PreEnqueue", "PreFilter", "Filter", "PostFilter", "PreScore", "Reserve", "PreBind", "Bind"):
            assert got[point].code == Code.ERROR, point
        assert got["Score"][1].code == Code.ERROR
        assert got["ScoreExtensionNormalize"][0].code == Code.ERROR
        assert got["Permit"][0].code == Code.ERROR
    finally:
        plugin.close()


# ----- the circuit breaker ------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_after_max_consecutive_faults_and_probes_after_the_cooldown() -> None:
    clock = FakeClock()
    b = CircuitBreaker("p", 3, 30.0, clock)
    assert not b.fault() and not b.fault()
    assert b.open_until_now() is None
    assert b.success() is False and b.consecutive == 0  # a success in between starts the count again
    assert not b.fault() and not b.fault()
    assert b.fault()  # the third in a row
    assert b.open_until_now() == 1030.0
    clock.now = 1029.9
    assert b.open_until_now() == 1030.0
    clock.now = 1030.0
    assert b.open_until_now() is None  # the next call probes
    assert b.fault()  # ... and a faulting probe opens it again
    assert b.open_until_now() == 1060.0 and b.opened == 2
    clock.now = 1061.0
    assert b.success() is True  # a succeeding probe closes it
    assert b.open_until_now() is None and b.consecutive == 0


def test_breaker_zero_never_opens() -> None:
    b = CircuitBreaker("p", 0, 30.0, FakeClock())
    for _ in range(100):
        assert not b.fault()
    assert b.open_until_now() is None


PREFILTER_TRAPS_FOR_BAD = """
(module
  (import "k8s.io/scheduler" "currentPod" (func $current_pod (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (data (i32.const 0) "bad-")
  ;; traps for a pod whose protobuf bytes contain "bad-"
  (func (export "prefilter") (result i32)
    (local $n i32) (local $i i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (local.set $n (call $current_pod (i32.const 1024) (i32.const 4096)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $n)))
        (if (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.load (i32.const 0)))
          (then unreachable))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))
)
"""


@pytest.mark.parametrize("policy", ["Ignore", "Fail"])
def test_open_breaker_keeps_calls_out_of_the_guest(runtime: Runtime, tmp_path: Path, policy: str) -> None:
    handle = WasmHandle()
    handle.metrics = SchedulerMetrics()
    clock = FakeClock()
    handle.clock = clock
    plugin = load(PREFILTER_TRAPS_FOR_BAD, tmp_path, handle, name=PLUGIN, runtime=runtime, failurePolicy=policy,
                  maxConsecutiveFaults=3, faultCooldown="30s")
    node = NodeInfo(nodes(1)[0])
    try:
        for i in range(3):
            st = plugin.pre_filter(CycleState(), make_pod(f"bad-{i}").obj(), [node])[1]
            assert st is not None
            assert st.code == (Code.SKIP if policy == "Ignore" else Code.ERROR)
        created = plugin.counters()["created"]
        assert sample(handle.metrics, "wasmsched_wasm_circuit_breaker_opened_total", plugin=PLUGIN) == 1
        # Open: good pods do not enter the guest either.
        good = [make_pod(f"good-{i}").obj() for i in range(5)]
        for p in good:
            st = plugin.pre_filter(CycleState(), p, [node])[1]
            assert st is not None
            if policy == "Ignore":
                assert st.code == Code.SKIP
            else:
                assert st.code == Code.UNSCHEDULABLE
                assert st.message() == (f'wasm plugin "{PLUGIN}" is failing: its circuit breaker opened after 3 '
                                        "consecutive guest faults; its calls resume in 30s")
            plugin.scheduling_cycle_done(p, False)
        assert plugin.counters()["created"] == created
        assert sum(int(i.get_global("calls")) for i in plugin.pool.instances()) == 0
        assert faults(handle.metrics, "PreFilter", policy) == 3  # what the open breaker refused is no fault
        # After the cooldown a good pod's call probes, succeeds and closes the breaker; under Fail the pods the
        # breaker rejected are activated (they wait in the unschedulable pods for no cluster event).
        clock.now += 30
        probe = make_pod("good-probe").obj()
        assert plugin.pre_filter(CycleState(), probe, [node])[1] is None
        assert plugin.breaker.open_until_now() is None and plugin.breaker.consecutive == 0
        assert handle.activated == ([] if policy == "Ignore" else [f"default/good-{i}" for i in range(5)])
    finally:
        plugin.close()


# ----- args -------------------------------------------------------------------------------------------


def test_args_decode_and_refuse() -> None:
    a = decode_args("p", {"guestURL": "x.wasm", "failurePolicy": "Ignore", "maxConsecutiveFaults": 5,
                          "faultCooldown": "1m"})
    assert (a.failure_policy, a.max_consecutive_faults, a.fault_cooldown) == ("Ignore", 5, 60.0)
    d = decode_args("p", {"guestURL": "x.wasm"})
    assert (d.failure_policy, d.max_consecutive_faults, d.fault_cooldown) == ("Fail", 0, 30.0)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"failurePolicy": "ignore"}, "failurePolicy: 'ignore' is not one of \"Fail\", \"Ignore\""),
        ({"maxConsecutiveFaults": -1}, "maxConsecutiveFaults: -1 is out of range"),
        ({"faultCooldown": "0s"}, "faultCooldown: must be positive"),
    ]
    for raw, text in cases:
        with pytest.raises(WasmLoadError) as e:
            decode_args("p", {"guestURL": "x.wasm", **raw})
        assert str(e.value).startswith("failed to decode into p PluginConfig: " + text), str(e.value)
