"""The wasm plugin's metrics in a simulated run: instance gauges from the pool, guest call durations and traps.

The guest is tests/wat/faults/misbehave.wat: it schedules most pods and traps in Filter for a pod named
"bad-trap".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import compile_wat
from wasmsched.config import config_from_dict
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import MAX_CONSECUTIVE_ERRORS, Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import new_wasm_plugin

from .helpers import Exposition, scrape

PLUGIN = "misbehave"


@pytest.fixture(scope="module")
def guest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runtime]:
    tmp = tmp_path_factory.mktemp("guest")
    return compile_wat("faults/misbehave", tmp, "misbehave.wasm"), Runtime(cache_dir=tmp / "cache")


def simulate(guest: tuple[Path, Runtime], pod_names: list[str],
             metrics: SchedulerMetrics) -> tuple[dict[str, str], dict[str, int], Exposition]:
    """Phases by pod, the pool's counters and the exposition, both read before the scheduler closes."""
    path, runtime = guest
    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}],
    })
    registry = in_tree_registry()

    def factory(args: Any, handle: Any) -> Any:
        return new_wasm_plugin(PLUGIN, {"guestURL": str(path), "timeout": "1s"}, handle, runtime=runtime)

    registry.register(PLUGIN, factory)
    sim = Simulation(cfg, registry, metrics=metrics)
    sim.apply({"Node": [make_node(f"node-{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in (1, 2)],
               "Pod": [make_pod(n).req(cpu="100m", memory="128Mi").obj() for n in pod_names]})
    try:
        result = sim.run_until_quiet()
        counters = sim.wasm_counters()[PLUGIN]
        exposition = scrape(metrics)
    finally:
        sim.scheduler.close()
    return {p.name: p.phase for p in result.pods}, counters, exposition


def test_instance_gauges_follow_the_pool(guest: tuple[Path, Runtime]) -> None:
    phases, counters, e = simulate(guest, ["good-1", "good-2"], SchedulerMetrics())
    assert phases == {"good-1": "Scheduled", "good-2": "Scheduled"}
    assert {state: e.value("wasmsched_wasm_instances", plugin=PLUGIN, state=state)
            for state in ("idle", "scheduling", "binding")} == {
        state: counters[state] for state in ("idle", "scheduling", "binding")}
    assert e.value("wasmsched_wasm_instances", plugin=PLUGIN, state="idle") == counters["live"] >= 1
    assert e.value("wasmsched_wasm_instances_created_total", plugin=PLUGIN) == counters["created"]
    assert e.value("wasmsched_wasm_instances_discarded_total", plugin=PLUGIN) == 0
    assert e.value("wasmsched_wasm_traps_total", plugin=PLUGIN) is None


def test_guest_calls_are_timed_by_function_when_sampled(guest: tuple[Path, Runtime]) -> None:
    _, _, every = simulate(guest, ["good-1", "good-2"], SchedulerMetrics(guest_call_sample_percent=100))
    _, _, never = simulate(guest, ["good-1", "good-2"], SchedulerMetrics(guest_call_sample_percent=0))
    name = "wasmsched_wasm_guest_call_duration_seconds_count"
    # Two pods, two nodes: each pod's Filter and Score run the guest once per node.
    assert every.value(name, plugin=PLUGIN, function="filter") == 4
    assert every.value(name, plugin=PLUGIN, function="score") == 4
    assert every.value(name, plugin=PLUGIN, function="prefilter") == 2
    assert not never.matching(name)


def test_traps_are_counted_and_discard_instances(guest: tuple[Path, Runtime]) -> None:
    phases, counters, e = simulate(guest, ["good-1", "bad-trap"], SchedulerMetrics())
    assert phases == {"good-1": "Scheduled", "bad-trap": "Error"}
    # Every attempt of bad-trap traps once (the rest of its Filter batch fails without entering the guest).
    assert e.value("wasmsched_wasm_traps_total", plugin=PLUGIN) == MAX_CONSECUTIVE_ERRORS
    assert e.value("wasmsched_wasm_instances_discarded_total", plugin=PLUGIN) == counters["discarded"] == \
        MAX_CONSECUTIVE_ERRORS
    assert e.value("scheduler_schedule_attempts_total", result="error", profile="default-scheduler") == \
        MAX_CONSECUTIVE_ERRORS
