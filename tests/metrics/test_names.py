"""The exposition text names, types, help texts, labels and buckets of the metrics as kube-scheduler 1.37's
(pkg/scheduler/metrics/metrics.go; component-base prefixes help texts with the stability level)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from wasmsched.framework.status import Code
from wasmsched.framework.types import PodInfo, QueuedPodInfo
from wasmsched.metrics.metrics import SchedulerMetrics, exponential_buckets
from wasmsched.testing.builders import make_pod

from .helpers import Exposition, scrape


def go_exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    # prometheus.ExponentialBuckets, transcribed: the next bound is the previous one times the factor.
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return out


@dataclass
class Kube:
    type: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: list[float] | None = None


KUBE = {
    "scheduler_schedule_attempts_total": Kube(
        "counter", "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
                   "not be scheduled, while 'error' means an internal scheduler problem.", ("result", "profile")),
    "scheduler_scheduling_attempt_duration_seconds": Kube(
        "histogram", "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
        ("result", "profile"),
        [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384]),
    "scheduler_preemption_victims": Kube(
        "histogram", "[STABLE] Number of selected preemption victims for preemption initiated by a single pod",
        (), [1, 2, 4, 8, 16, 32, 64]),
    "scheduler_preemption_attempts_total": Kube(
        "counter", "[STABLE] Total preemption attempts in the cluster till now"),
    "scheduler_pending_pods": Kube(
        "gauge", "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
                 "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
                 "unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number "
                 "of unschedulable pods that the scheduler never attempted to schedule because they are gated; "
                 "'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in "
                 "pendingPodGroupPods.", ("queue",)),
    "scheduler_pod_scheduling_sli_duration_seconds": Kube(
        "histogram", "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
                     "queue and might involve multiple scheduling attempts.",
        ("attempts",), go_exponential_buckets(0.01, 2, 20)),
    "scheduler_pod_scheduling_attempts": Kube(
        "histogram", "[STABLE] Number of attempts to successfully schedule a pod.", (), [1, 2, 4, 8, 16]),
    "scheduler_framework_extension_point_duration_seconds": Kube(
        "histogram", "[STABLE] Latency for running all plugins of a specific extension point.",
        ("extension_point", "status", "profile"), go_exponential_buckets(0.0001, 2, 12)),
    "scheduler_plugin_execution_duration_seconds": Kube(
        "histogram", "[BETA] Duration for running a plugin at a specific extension point.",
        ("plugin", "extension_point", "status"), go_exponential_buckets(0.00001, 1.5, 20)),
    "scheduler_queue_incoming_pods_total": Kube(
        "counter", "[STABLE] Number of pods added to scheduling queues by event and queue type.", ("queue", "event")),
    "scheduler_cache_size": Kube(
        "gauge", "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", ("type",)),
    "scheduler_unschedulable_pods": Kube(
        "gauge", "[BETA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge "
                 "for all plugins that caused it to not schedule and so this metric have meaning only when broken "
                 "down by plugin.", ("plugin", "profile")),
}


class Queue:
    def pending_pods(self) -> dict[str, list[object]]:
        rejected = QueuedPodInfo(PodInfo(make_pod("p").obj()), unschedulable_plugins={"NodeResourcesFit"})
        return {"unschedulable": [rejected]}


class Cache:
    def node_count(self) -> int:
        return 2

    def pod_count(self) -> int:
        return 3

    def assumed_pod_count(self) -> int:
        return 1


def every_metric_touched() -> str:
    """The exposition after one observation of each labelled metric, so every family has samples."""
    m = SchedulerMetrics()
    m.watch_queue(Queue())
    m.watch_cache(Cache())
    m.pod_scheduled("default-scheduler", 0.01)
    m.pod_bound(1, 0.5)
    m.observe_extension_point("Filter", Code.SUCCESS, "default-scheduler", 0.001)
    m.observe_plugin("NodeResourcesFit", "Filter", Code.SUCCESS, 0.00002)
    m.pod_incoming("active", "UnscheduledPodAdd")
    m.preemption_victims.observe(2)
    m.preemption_attempts.inc()
    return m.render().decode()


def families(text: str) -> dict[str, dict[str, str]]:
    """`# HELP` and `# TYPE` lines by metric name, as written."""
    out: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"# (HELP|TYPE) (\S+) (.*)", line)
        if match:
            out.setdefault(match[2], {})[match[1]] = match[3]
    return out


@pytest.mark.parametrize("name", sorted(KUBE))
def test_name_type_and_help_are_kubes(name: str) -> None:
    fams = families(every_metric_touched())
    assert name in fams, f"{name} is not exposed; exposed: {sorted(fams)}"
    assert fams[name] == {"HELP": KUBE[name].help, "TYPE": KUBE[name].type}


@pytest.mark.parametrize("name", sorted(KUBE))
def test_label_names_and_buckets_are_kubes(name: str) -> None:
    text = every_metric_touched()
    kube = KUBE[name]
    sample_name = f"{name}_bucket" if kube.buckets is not None else name
    label_sets = [set(re.findall(r'(\w+)="', line.split("{", 1)[1])) if "{" in line else set()
                  for line in text.splitlines() if line.split("{")[0].split(" ")[0] == sample_name]
    assert label_sets, f"no {sample_name} sample"
    for labels in label_sets:
        assert labels - {"le"} == set(kube.labels)
    if kube.buckets is not None:
        bounds = sorted({float(le) for le in re.findall(rf'^{sample_name}{{(?:.*,)?le="([^"]+)"', text, re.M)})
        assert bounds == sorted([*kube.buckets, float("inf")])


def test_no_created_series_unlike_prometheus_clients_default() -> None:
    # kube's exposition has no `_created` samples; prometheus_client adds them unless told otherwise.
    assert "_created" not in every_metric_touched()


def test_exponential_buckets_are_gos() -> None:
    assert exponential_buckets(0.001, 2, 15) == KUBE["scheduler_scheduling_attempt_duration_seconds"].buckets
    assert exponential_buckets(1, 2, 5) == [1, 2, 4, 8, 16]


def test_each_scheduler_has_its_own_registry() -> None:
    # No process-wide state: a second SchedulerMetrics starts from zero and registers without conflict.
    a, b = SchedulerMetrics(), SchedulerMetrics()
    a.pod_scheduled("p", 0.1)
    assert scrape(a).value("scheduler_schedule_attempts_total", result="scheduled", profile="p") == 1
    assert scrape(b).value("scheduler_schedule_attempts_total", result="scheduled", profile="p") is None


def test_sli_attempts_label_is_capped_as_kubes() -> None:
    m = SchedulerMetrics()
    m.pod_bound(3, 1.0)
    m.pod_bound(15, 1.0)
    m.pod_bound(40, 1.0)
    e = scrape(m)
    assert e.value("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="3") == 1
    assert e.value("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="15+") == 2


def test_cache_size_is_read_from_the_cache_when_scraped() -> None:
    e = scrape_touched()
    assert e.value("scheduler_cache_size", type="nodes") == 2
    assert e.value("scheduler_cache_size", type="pods") == 3
    assert e.value("scheduler_cache_size", type="assumed_pods") == 1


def scrape_touched() -> Exposition:
    m = SchedulerMetrics()
    m.watch_cache(Cache())
    return scrape(m)
