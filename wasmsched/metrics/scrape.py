"""Gauges read from their owners when the registry is collected: the queue (pending_pods,
unschedulable_pods), the cache (cache_size), the informers' stores and the wasm instance pools; and the
API clients' retry counter.

kube keeps these gauges in step by adding and subtracting on every queue move (metric_recorder.go) and
copies the cache sizes on a timer; reading the owner's state at scrape time gives the same values with
no work on the scheduling path and no way to drift.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# The queue label values of pending_pods, in kube's order (pod groups' "incomplete"/"pending" do not exist here).
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")
# The states of a wasm instance the pool keeps (docs/architecture.md §3).
WASM_INSTANCE_STATES = ("idle", "scheduling", "binding")

PENDING_PODS_HELP = (
    "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
    "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler "
    "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
    "attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; "
    "'pending' means number of pods in pendingPodGroupPods."
)
UNSCHEDULABLE_PODS_HELP = (
    "[BETA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
    "plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin."
)
CACHE_SIZE_HELP = "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache."
PENDING_ASYNC_API_CALLS_HELP = "[ALPHA] Number of API calls currently pending in the async queue."
REQUESTS_HELP = "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host."
REQUEST_RETRIES_HELP = "[ALPHA] Number of request retries, partitioned by status code, verb, and host."
INFORMER_STORE_HELP = "[ALPHA] Objects in each informer's local store (what a watch has not yet deleted)."
WASM_INSTANCES_HELP = (
    "[ALPHA] Live wasm guest instances of a plugin by state: idle, scheduling (pinned to a pod in its scheduling "
    "cycle) or binding (handed to a pod's binding cycle)."
)


class QueueSource(Protocol):
    def pending_pods(self) -> Mapping[str, Sequence[Any]]:
        """Queued pods (QueuedPodInfo) by PENDING_QUEUES name."""
        ...


class CacheSource(Protocol):
    def node_count(self) -> int: ...

    def pod_count(self) -> int: ...

    def assumed_pod_count(self) -> int: ...


class ApiCallSource(Protocol):
    def pending(self) -> Mapping[str, int]:
        """Calls waiting to run, by call type."""
        ...


class WasmPoolSource(Protocol):
    def counters(self) -> Mapping[str, int]: ...


class InformerSource(Protocol):
    def store_sizes(self) -> Mapping[str, int]:
        """Objects in each informer's local store, by kind (or resource)."""
        ...


class RequestSource(Protocol):
    def counts(self) -> Mapping[tuple[str, str, str], int]:
        """Requests (all of them, or those sent again) by (code, verb, host)."""
        ...


class ScrapeCollector(Collector):
    def __init__(self) -> None:
        self.queue: QueueSource | None = None
        self.cache: CacheSource | None = None
        self.api_calls: ApiCallSource | None = None
        self.informers: InformerSource | None = None
        self.requests: RequestSource | None = None
        self.request_retries: RequestSource | None = None
        self._lock = threading.Lock()
        self._pools: list[tuple[str, WasmPoolSource]] = []

    def add_pool(self, plugin: str, pool: WasmPoolSource) -> None:
        with self._lock:
            self._pools.append((plugin, pool))

    def collect(self) -> Iterable[Metric]:
        if self.queue is not None:
            yield from self._queue_metrics(self.queue)
        if self.cache is not None:
            cache = self.cache
            size = GaugeMetricFamily("scheduler_cache_size", CACHE_SIZE_HELP, labels=["type"])
            size.add_metric(["assumed_pods"], cache.assumed_pod_count())
            size.add_metric(["pods"], cache.pod_count())
            size.add_metric(["nodes"], cache.node_count())
            yield size
        if self.api_calls is not None:
            pending = GaugeMetricFamily("scheduler_pending_async_api_calls", PENDING_ASYNC_API_CALLS_HELP,
                                        labels=["call_type"])
            for call_type, n in sorted(self.api_calls.pending().items()):
                pending.add_metric([call_type], n)
            yield pending
        if self.informers is not None:
            stores = GaugeMetricFamily("wasmsched_informer_store_objects", INFORMER_STORE_HELP, labels=["resource"])
            for kind, n in sorted(self.informers.store_sizes().items()):
                stores.add_metric([kind], n)
            yield stores
        if self.requests is not None:
            requests = CounterMetricFamily("rest_client_requests", REQUESTS_HELP, labels=["code", "host", "method"])
            for (code, verb, host), n in sorted(self.requests.counts().items()):
                requests.add_metric([code, host, verb], n)
            yield requests
        if self.request_retries is not None:
            retries = CounterMetricFamily("rest_client_request_retries", REQUEST_RETRIES_HELP,
                                          labels=["code", "verb", "host"])
            for (code, verb, host), n in sorted(self.request_retries.counts().items()):
                retries.add_metric([code, verb, host], n)
            yield retries
        with self._lock:
            pools = list(self._pools)
        if pools:
            yield from _wasm_metrics(pools)

    @staticmethod
    def _queue_metrics(queue: QueueSource) -> Iterable[Metric]:
        pending = queue.pending_pods()
        gauge = GaugeMetricFamily("scheduler_pending_pods", PENDING_PODS_HELP, labels=["queue"])
        for name in PENDING_QUEUES:
            gauge.add_metric([name], len(pending.get(name, ())))
        yield gauge
        # A pod counts once for every plugin that rejected it in its last attempt, while it waits in
        # the queue (kube adds on AddUnschedulableIfNotPresent and subtracts on Pop and Delete).
        reasons: dict[tuple[str, str], int] = {}
        for pods in pending.values():
            for qpi in pods:
                rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
                if not rejectors:
                    continue
                profile = qpi.pod.spec.schedulerName
                for plugin in rejectors:
                    reasons[(plugin, profile)] = reasons.get((plugin, profile), 0) + 1
        unschedulable = GaugeMetricFamily("scheduler_unschedulable_pods", UNSCHEDULABLE_PODS_HELP,
                                          labels=["plugin", "profile"])
        for (plugin, profile), n in sorted(reasons.items()):
            unschedulable.add_metric([plugin, profile], n)
        yield unschedulable


def _wasm_metrics(pools: list[tuple[str, WasmPoolSource]]) -> Iterable[Metric]:
    totals: dict[str, dict[str, int]] = {}
    for plugin, pool in pools:
        acc = totals.setdefault(plugin, {})
        for k, v in pool.counters().items():
            acc[k] = acc.get(k, 0) + v
    instances = GaugeMetricFamily("wasmsched_wasm_instances", WASM_INSTANCES_HELP, labels=["plugin", "state"])
    for plugin, c in totals.items():
        for state in WASM_INSTANCE_STATES:
            instances.add_metric([plugin, state], c.get(state, 0))
    yield instances
    created = CounterMetricFamily("wasmsched_wasm_instances_created", "[ALPHA] Wasm guest instances created.",
                                  labels=["plugin"])
    discarded = CounterMetricFamily("wasmsched_wasm_instances_discarded",
                                    "[ALPHA] Wasm guest instances discarded after a failed call.", labels=["plugin"])
    for plugin, c in totals.items():
        created.add_metric([plugin], c.get("created", 0))
        discarded.add_metric([plugin], c.get("discarded", 0))
    yield created
    yield discarded
