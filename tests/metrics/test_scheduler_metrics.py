"""The metrics a scheduler records match what happened in a simulated run."""

from __future__ import annotations

import random
from typing import Any

import pytest

from wasmsched.config import config_from_dict
from wasmsched.embedded.generate import generate
from wasmsched.framework.interface import FilterPlugin, Plugin
from wasmsched.framework.status import Status
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation, SimulationResult
from wasmsched.testing.builders import make_node, make_pod, make_priority_class

from .helpers import Exposition, scrape

PROFILE = "default-scheduler"


def config(*extra_plugins: str) -> Any:
    profile: dict[str, Any] = {"schedulerName": PROFILE}
    if extra_plugins:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": n} for n in extra_plugins]}}
    return config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1",
                             "kind": "KubeSchedulerConfiguration", "profiles": [profile]})


def run(objects: dict[str, list[Any]], metrics: Any = None, plugins: dict[str, Any] | None = None,
        seed: int = 0) -> tuple[SimulationResult, Exposition | None]:
    """Runs the objects until quiet; the exposition is scraped before the scheduler closes."""
    from wasmsched.metrics.metrics import SchedulerMetrics

    m = metrics if metrics is not None else SchedulerMetrics(plugin_metrics_sample_percent=100)
    registry = in_tree_registry()
    for name, factory in (plugins or {}).items():
        registry.register(name, factory)
    sim = Simulation(config(*(plugins or {})), registry, seed=seed, metrics=m or None)
    sim.apply(objects)
    try:
        result = sim.run_until_quiet()
        return result, (scrape(m) if m else None)
    finally:
        sim.scheduler.close()


def three_fit_one_does_not() -> dict[str, list[Any]]:
    return {
        "Node": [make_node(n).capacity(cpu="2", pods="10").obj() for n in ("n1", "n2")],
        "Pod": [make_pod(f"small-{i}").req(cpu="1").obj() for i in range(3)] + [make_pod("huge").req(cpu="8").obj()],
    }


def test_attempts_by_result_and_pending_pods_match_the_run() -> None:
    result, e = run(three_fit_one_does_not())
    assert e is not None
    assert result.count("Scheduled") == 3 and result.count("Unschedulable") == 1
    assert e.value("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 3
    assert e.value("scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == 1
    assert e.value("scheduler_schedule_attempts_total", result="error", profile=PROFILE) is None
    assert e.value("scheduler_scheduling_attempt_duration_seconds_count", result="scheduled", profile=PROFILE) == 3
    assert e.value("scheduler_scheduling_attempt_duration_seconds_count", result="unschedulable",
                   profile=PROFILE) == 1
    # Bound pods: how many attempts each took, and their SLI (all on the first attempt).
    assert e.value("scheduler_pod_scheduling_attempts_count") == 3
    assert e.value("scheduler_pod_scheduling_attempts_sum") == 3
    assert e.value("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 3
    # The unschedulable pod waits in the queue, rejected by NodeResourcesFit.
    assert e.value("scheduler_pending_pods", queue="unschedulable") == 1
    for queue in ("active", "backoff", "gated"):
        assert e.value("scheduler_pending_pods", queue=queue) == 0
    assert e.value("scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 1
    assert e.value("scheduler_queue_incoming_pods_total", queue="active", event="UnscheduledPodAdd") == 4
    assert e.value("scheduler_queue_incoming_pods_total", queue="unschedulable", event="ScheduleAttemptFailure") == 1
    assert e.value("scheduler_cache_size", type="pods") == 3
    assert e.value("scheduler_cache_size", type="nodes") == 2
    assert e.value("scheduler_cache_size", type="assumed_pods") == 0


def test_pending_pods_gauges_equal_the_queue_at_the_end() -> None:
    from wasmsched.metrics.metrics import SchedulerMetrics

    m = SchedulerMetrics()
    objects = three_fit_one_does_not()
    objects["Pod"].append(make_pod("gated").scheduling_gates("example.com/wait").obj())
    sim = Simulation(config(), in_tree_registry(), metrics=m)
    sim.apply(objects)
    try:
        sim.run_until_quiet()
        e = scrape(m)
        pending = sim.scheduler.queue.pending_pods()
    finally:
        sim.scheduler.close()
    assert {q: e.value("scheduler_pending_pods", queue=q) for q in pending} == {
        q: len(pods) for q, pods in pending.items()}
    assert e.value("scheduler_pending_pods", queue="gated") == 1
    # A gated pod counts as entering the unschedulable pods, as kube keeps gated pods there.
    assert e.value("scheduler_queue_incoming_pods_total", queue="unschedulable", event="UnscheduledPodAdd") == 1


def test_extension_points_have_samples_with_their_status() -> None:
    _, e = run(three_fit_one_does_not())
    assert e is not None
    point = "scheduler_framework_extension_point_duration_seconds_count"
    # One sample per cycle: four attempts ran PreFilter and Filter; the three that fit two nodes scored.
    assert e.value(point, extension_point="PreFilter", status="Success", profile=PROFILE) == 4
    assert e.value(point, extension_point="Filter", status="Success", profile=PROFILE) == 4
    assert e.value(point, extension_point="Score", status="Success", profile=PROFILE) == 3
    assert e.value(point, extension_point="Bind", status="Success", profile=PROFILE) == 3
    # The huge pod: PostFilter (DefaultPreemption) could not help.
    assert e.value(point, extension_point="PostFilter", status="Unschedulable", profile=PROFILE) == 1


def test_plugin_durations_are_recorded_only_in_sampled_cycles() -> None:
    from wasmsched.metrics.metrics import SchedulerMetrics

    _, every = run(three_fit_one_does_not(), SchedulerMetrics(plugin_metrics_sample_percent=100))
    _, never = run(three_fit_one_does_not(), SchedulerMetrics(plugin_metrics_sample_percent=0))
    assert every is not None and never is not None
    name = "scheduler_plugin_execution_duration_seconds_count"
    assert every.value(name, plugin="NodeResourcesFit", extension_point="PreFilter", status="Success") == 4
    assert every.value(name, plugin="DefaultBinder", extension_point="Bind", status="Success") == 3
    # The batch Filter reports the statuses it returned: the huge pod exceeds every node.
    assert every.value(name, plugin="NodeResourcesFit", extension_point="Filter",
                        status="UnschedulableAndUnresolvable")
    assert every.matching(name, extension_point="Score")
    assert not never.matching(name)
    # Extension points are not sampled.
    assert never.matching("scheduler_framework_extension_point_duration_seconds_count")


def test_kubes_sample_percent_is_the_default() -> None:
    from wasmsched.metrics.metrics import SchedulerMetrics

    m = SchedulerMetrics(rng=random.Random(1))
    sampled = sum(m.should_record_plugin_metrics() for _ in range(10_000))
    assert 800 < sampled < 1200


class ErrorOnce(FilterPlugin):
    """Fails the first attempt of every pod with an Error: the pod is retried after its backoff (1 s)."""

    name = "ErrorOnce"

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        if pod.metadata.name in self.seen:
            return None
        self.seen.add(pod.metadata.name)
        return Status.error("not yet")


def test_sli_runs_on_the_schedulers_clock_across_attempts() -> None:
    plugin = ErrorOnce()

    def factory(args: Any, handle: Any) -> Plugin:
        return plugin

    _, e = run({"Node": [make_node("n1").capacity(cpu="2", pods="10").obj()], "Pod": [make_pod("p").obj()]},
               plugins={"ErrorOnce": factory})
    assert e is not None
    assert e.value("scheduler_schedule_attempts_total", result="error", profile=PROFILE) == 1
    assert e.value("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 1
    assert e.value("scheduler_pod_scheduling_attempts_sum") == 2
    # From the pod's first entry into activeQ to bound: the simulated 1 s backoff (no CPU time counts).
    assert e.value("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="2") == 1
    assert e.value("scheduler_pod_scheduling_sli_duration_seconds_sum", attempts="2") == 1.0
    assert e.value("scheduler_queue_incoming_pods_total", queue="backoff", event="ScheduleAttemptFailure") == 1
    assert e.value("scheduler_queue_incoming_pods_total", queue="active", event="BackoffComplete") == 1


def test_a_preemption_counts_the_attempt_and_its_victims() -> None:
    objects: dict[str, list[Any]] = {
        "Node": [make_node("n1").capacity(cpu="2", pods="10").obj()],
        "PriorityClass": [make_priority_class("high", 1000)],
        "Pod": [make_pod("low-1").node("n1").req(cpu="1").obj(), make_pod("low-2").node("n1").req(cpu="1").obj(),
                make_pod("high").priority_class("high").req(cpu="2").obj()],
    }
    result, e = run(objects)
    assert e is not None
    assert {p.name: p.phase for p in result.pods} == {"high": "Scheduled", "low-1": "Preempted",
                                                       "low-2": "Preempted"}
    assert e.value("scheduler_preemption_attempts_total") == 1
    assert e.value("scheduler_preemption_victims_count") == 1
    assert e.value("scheduler_preemption_victims_sum") == 2
    assert e.value("scheduler_preemption_victims_bucket", le="2.0") == 1
    assert e.value("scheduler_preemption_victims_bucket", le="1.0") == 0
    assert e.value("scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == 1
    assert e.value("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 1


def test_metrics_do_not_change_the_placements() -> None:
    # The plugin sampling draws from its own random source, never the scheduler's tie-breaking one.
    from wasmsched.metrics.metrics import SchedulerMetrics

    def placements(metrics: Any) -> dict[str, str | None]:
        result, _ = run(generate(30, 120, 7), metrics, seed=3)
        return {p.name: p.node for p in result.pods}

    assert placements(SchedulerMetrics(plugin_metrics_sample_percent=50)) == placements(False)


def test_without_metrics_the_framework_runs_its_methods_unwrapped() -> None:
    # Metrics off must cost nothing: no timing wrapper is installed, and prometheus_client is not needed.
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.runtime.instrumented import InstrumentedFramework
    from wasmsched.metrics.metrics import SchedulerMetrics

    off = Simulation(config(), in_tree_registry())
    on = Simulation(config(), in_tree_registry(), metrics=SchedulerMetrics())
    try:
        fwk_off, fwk_on = off.scheduler.profiles[PROFILE], on.scheduler.profiles[PROFILE]
        assert fwk_off.scheduler_metrics() is None
        assert type(fwk_off) is Framework
        assert type(fwk_on) is InstrumentedFramework
        timed = {n for n in vars(InstrumentedFramework) if n.startswith("run_")}
        assert {"run_pre_filter_plugins", "run_score_plugins", "run_bind_plugins"} <= timed
    finally:
        off.scheduler.close()
        on.scheduler.close()


def test_sampled_cycles_on_the_node_table_time_each_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 100+ nodes the walk runs the columnar passes (framework/nodetable.py), also in a sampled cycle:
    each plugin's batch is observed, Score and NormalizeScore apart. Placements do not change."""
    from wasmsched.metrics.metrics import SchedulerMetrics
    from wasmsched.plugins.noderesources.fit import Fit
    from wasmsched.plugins.tainttoleration import TaintToleration

    passes = []
    columnar, taint_columnar = Fit._fits_columns, TaintToleration._score_columns

    def counted(*args: Any) -> Any:
        passes.append("Fit")
        return columnar(*args)

    def taint_counted(*args: Any) -> Any:
        passes.append("TaintToleration")
        return taint_columnar(*args)

    monkeypatch.setattr(Fit, "_fits_columns", staticmethod(counted))
    monkeypatch.setattr(TaintToleration, "_score_columns", staticmethod(taint_counted))

    def objects() -> dict[str, list[Any]]:
        return {"Node": [make_node(f"n{i:03d}").capacity(cpu="4", pods="10").obj() for i in range(120)],
                "Pod": [make_pod(f"p{i}").req(cpu="1").obj() for i in range(6)] + [make_pod("huge").req(cpu="8").obj()]}

    sampled, every = run(objects(), SchedulerMetrics(plugin_metrics_sample_percent=100), seed=1)
    assert {"Fit", "TaintToleration"} <= set(passes)  # the sampled cycles took the columnar passes
    plain, _ = run(objects(), False, seed=1)
    assert {p.name: p.node for p in sampled.pods} == {p.name: p.node for p in plain.pods}
    assert every is not None
    name = "scheduler_plugin_execution_duration_seconds_count"
    assert every.value(name, plugin="NodeResourcesFit", extension_point="Filter", status="Success")
    assert every.value(name, plugin="NodeResourcesFit", extension_point="Filter",
                       status="UnschedulableAndUnresolvable")
    assert every.value(name, plugin="NodeResourcesBalancedAllocation", extension_point="Score", status="Success")
    assert every.value(name, plugin="TaintToleration", extension_point="Score", status="Success")
    assert every.value(name, plugin="TaintToleration", extension_point="ScoreExtensionNormalize", status="Success")


def test_informer_store_gauge_reads_the_stores_when_scraped() -> None:
    from wasmsched.metrics.metrics import SchedulerMetrics

    class Stores:
        def __init__(self) -> None:
            self.sizes = {"Pod": 3, "Node": 2}

        def store_sizes(self) -> dict[str, int]:
            return dict(self.sizes)

    m = SchedulerMetrics()
    src = Stores()
    m.watch_informers(src)
    assert scrape(m).value("wasmsched_informer_store_objects", resource="Pod") == 3
    src.sizes = {"Pod": 0, "Node": 2}
    e = scrape(m)
    assert e.value("wasmsched_informer_store_objects", resource="Pod") == 0
    assert e.value("wasmsched_informer_store_objects", resource="Node") == 2
    assert e.types["wasmsched_informer_store_objects"] == "gauge"
