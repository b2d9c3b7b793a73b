"""kube-scheduler's metrics (pkg/scheduler/metrics/metrics.go, profile_metrics.go) on prometheus-client.

One SchedulerMetrics per Scheduler owns its CollectorRegistry: nothing is registered process-wide, so two
schedulers (or two tests) never share a counter. Names, label names, help texts (with component-base's
"[STABLE] " prefix) and buckets are kube's. Metrics that mirror state (queue lengths, cache size, wasm
instances) are read from their owner when scraped (scrape.py), so the hot path pays nothing for them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.metrics_core import Metric

from wasmsched.framework.status import Code
from wasmsched.metrics.histogram import Histogram
from wasmsched.metrics.names import (
    ERROR_RESULT,
    GUEST_CALL_SAMPLE_PERCENT,
    MAX_ATTEMPTS_LABEL,
    PLUGIN_METRICS_SAMPLE_PERCENT,
    SCHEDULED_RESULT,
    SCHEDULER_SUBSYSTEM,
    UNSCHEDULABLE_RESULT,
)
from wasmsched.metrics.runtime import register_process_collectors
from wasmsched.metrics.scrape import (
    ApiCallSource,
    CacheSource,
    InformerSource,
    QueueSource,
    RequestSource,
    ScrapeCollector,
    WasmPoolSource,
)


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """prometheus.ExponentialBuckets: multiplied step by step, so the bounds are Go's to the last bit."""
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return out


def attempts_label(attempts: int) -> str:
    return f"{MAX_ATTEMPTS_LABEL}+" if attempts >= MAX_ATTEMPTS_LABEL else str(attempts)


class _Registry(CollectorRegistry):
    """A registry whose exposition has no `_created` series: kube's has none, and turning them off with
    prometheus_client.disable_created_metrics() would change every registry of the process."""

    def collect(self) -> Iterable[Metric]:
        for metric in super().collect():
            if metric.type in ("counter", "histogram", "summary") and any(
                    s.name.endswith("_created") for s in metric.samples):
                metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric


class _Children:
    """The children of a labelled metric by their label values. prometheus_client's labels() checks and
    copies the values on every call (microseconds); a dict lookup is what the hot path can afford.
    Values are kept as given (a Code, say) and turned into label strings with str() once."""

    __slots__ = ("_by_key", "_metric")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._by_key: dict[tuple[object, ...], Any] = {}

    def __call__(self, *key: object) -> Any:
        child = self._by_key.get(key)
        if child is None:
            child = self._by_key[key] = self._metric.labels(*(str(k) for k in key))
        return child


def _help(stability: str, text: str) -> str:
    # component-base prefixes every help text with its stability level.
    return f"[{stability}] {text}"


class SchedulerMetrics:
    """The metrics of one scheduler. Pass it to the Scheduler (`new_scheduler(..., metrics=m)`); None
    there turns metrics off.

    `plugin_metrics_sample_percent` and `guest_call_sample_percent` are the shares of scheduling cycles
    and of guest calls whose durations are observed; `rng` draws the samples (its own source, so turning
    metrics on never changes the scheduler's tie-breaking).
    """

    def __init__(self, *, plugin_metrics_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
                 guest_call_sample_percent: int = GUEST_CALL_SAMPLE_PERCENT,
                 rng: random.Random | None = None) -> None:
        self.registry: CollectorRegistry = _Registry()
        self.plugin_metrics_sample_percent = plugin_metrics_sample_percent
        self.guest_call_sample_fraction = guest_call_sample_percent / 100.0
        self._rng = rng or random.Random()
        r = self.registry
        s = SCHEDULER_SUBSYSTEM

        self.schedule_attempts = Counter(
            "schedule_attempts_total",
            _help("STABLE", "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
                            "not be scheduled, while 'error' means an internal scheduler problem."),
            ["result", "profile"], subsystem=s, registry=r)
        self.scheduling_attempt_duration = Histogram(
            "scheduling_attempt_duration_seconds",
            _help("STABLE", "Scheduling attempt latency in seconds (scheduling algorithm + binding)"),
            ["result", "profile"], subsystem=s, registry=r, buckets=exponential_buckets(0.001, 2, 15))
        self.preemption_victims = Histogram(
            "preemption_victims",
            _help("STABLE", "Number of selected preemption victims for preemption initiated by a single pod"),
            subsystem=s, registry=r, buckets=exponential_buckets(1, 2, 7))
        self.preemption_attempts = Counter(
            "preemption_attempts_total", _help("STABLE", "Total preemption attempts in the cluster till now"),
            subsystem=s, registry=r)
        self.pod_scheduling_sli_duration = Histogram(
            "pod_scheduling_sli_duration_seconds",
            _help("BETA", "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
                          "queue and might involve multiple scheduling attempts."),
            ["attempts"], subsystem=s, registry=r, buckets=exponential_buckets(0.01, 2, 20))
        self.pod_scheduling_attempts = Histogram(
            "pod_scheduling_attempts", _help("STABLE", "Number of attempts to successfully schedule a pod."),
            subsystem=s, registry=r, buckets=exponential_buckets(1, 2, 5))
        self.framework_extension_point_duration = Histogram(
            "framework_extension_point_duration_seconds",
            _help("STABLE", "Latency for running all plugins of a specific extension point."),
            ["extension_point", "status", "profile"], subsystem=s, registry=r,
            buckets=exponential_buckets(0.0001, 2, 12))
        self.plugin_execution_duration = Histogram(
            "plugin_execution_duration_seconds",
            _help("BETA", "Duration for running a plugin at a specific extension point."),
            ["plugin", "extension_point", "status"], subsystem=s, registry=r,
            buckets=exponential_buckets(0.00001, 1.5, 20))
        self.queue_incoming_pods = Counter(
            "queue_incoming_pods_total",
            _help("STABLE", "Number of pods added to scheduling queues by event and queue type."),
            ["queue", "event"], subsystem=s, registry=r)

        # The API dispatcher's (kube: SchedulerAsyncAPICalls), recorded by `run` only.
        self.async_api_calls = Counter(
            "async_api_call_execution_total",
            _help("ALPHA", "Total number of API calls executed by the async dispatcher."),
            ["call_type", "result"], subsystem=s, registry=r)
        self.async_api_call_duration = Histogram(
            "async_api_call_execution_duration_seconds",
            _help("ALPHA", "Duration in seconds for executing API call in the async dispatcher."),
            ["call_type", "result"], subsystem=s, registry=r, buckets=exponential_buckets(0.001, 2, 15))

        # wasmsched's own, for the wasm host.
        self.wasm_guest_call_duration = Histogram(
            "wasmsched_wasm_guest_call_duration_seconds",
            _help("ALPHA", "Duration of one call into a wasm guest's exported function, sampled on a share of "
                           "the calls."),
            ["plugin", "function"], registry=r, buckets=exponential_buckets(0.00001, 1.5, 20))
        self.wasm_traps = Counter(
            "wasmsched_wasm_traps_total",
            _help("ALPHA", "Guest calls that failed (trap, timeout, proc_exit, failed host function); each "
                           "discards its instance."),
            ["plugin"], registry=r)
        self.wasm_guest_faults = Counter(
            "wasmsched_wasm_guest_faults_total",
            _help("ALPHA", "Guest faults (trap, timeout, failed host function, no instance, malformed answer) by "
                           "the extension point they hit and the plugin's failurePolicy: under Ignore each one "
                           "answered \"no opinion\"."),
            ["plugin", "extension_point", "policy"], registry=r)
        self.wasm_circuit_breaker_opened = Counter(
            "wasmsched_wasm_circuit_breaker_opened_total",
            _help("ALPHA", "Times a wasm plugin's circuit breaker opened after maxConsecutiveFaults faults."),
            ["plugin"], registry=r)
        self.wasm_reloads = Counter(
            "wasmsched_wasm_reloads_total",
            _help("ALPHA", "Attempts to replace a running wasm plugin's module with a changed guestURL, by result "
                           "(success, or failure: the running module is kept)."),
            ["plugin", "result"], registry=r)

        # Gauges mirroring the queue, the cache and the wasm instance pools, read when scraped.
        self._scrape = ScrapeCollector()
        r.register(self._scrape)

        self._attempts = _Children(self.schedule_attempts)
        self._attempt_duration = _Children(self.scheduling_attempt_duration)
        self._sli = _Children(self.pod_scheduling_sli_duration)
        self._extension_point = _Children(self.framework_extension_point_duration)
        self._plugin = _Children(self.plugin_execution_duration)
        self._incoming = _Children(self.queue_incoming_pods)
        self._guest_call = _Children(self.wasm_guest_call_duration)
        self._async_calls = _Children(self.async_api_calls)
        self._async_call_duration = _Children(self.async_api_call_duration)

    # ----- sources read when scraped --------------------------------------------------------------

    def watch_queue(self, queue: QueueSource) -> None:
        """scheduler_pending_pods{queue} and scheduler_unschedulable_pods{plugin,profile} from this queue."""
        self._scrape.queue = queue

    def watch_cache(self, cache: CacheSource) -> None:
        """scheduler_cache_size{type} from this cache."""
        self._scrape.cache = cache

    def watch_api_dispatcher(self, calls: ApiCallSource) -> None:
        """scheduler_pending_async_api_calls{call_type} from the API dispatcher's queue."""
        self._scrape.api_calls = calls

    def watch_informers(self, informers: InformerSource) -> None:
        """wasmsched_informer_store_objects{resource} from the informers' stores (a soak's leak check)."""
        self._scrape.informers = informers

    def watch_requests(self, requests: RequestSource, retries: RequestSource) -> None:
        """rest_client_requests_total{code,host,method} and rest_client_request_retries_total{code,verb,host}
        from the API clients' counters."""
        self._scrape.requests = requests
        self._scrape.request_retries = retries

    def watch_process(self) -> None:
        """process_*, python_gc_*, python_info and the heap and thread gauges (metrics/runtime.py), as a
        Kubernetes component's /metrics serves them: for the one scheduler of a process (`run`)."""
        register_process_collectors(self.registry)

    def watch_wasm_pool(self, plugin: str, pool: WasmPoolSource) -> None:
        """wasmsched_wasm_instances{plugin,state} from a wasm plugin's instance pool (one per profile
        enabling it; the values are summed per plugin name)."""
        self._scrape.add_pool(plugin, pool)

    # ----- scheduling attempts (profile_metrics.go) ------------------------------------------------

    def pod_scheduled(self, profile: str, seconds: float) -> None:
        self._observe_attempt(SCHEDULED_RESULT, profile, seconds)

    def pod_unschedulable(self, profile: str, seconds: float) -> None:
        self._observe_attempt(UNSCHEDULABLE_RESULT, profile, seconds)

    def pod_schedule_error(self, profile: str, seconds: float) -> None:
        self._observe_attempt(ERROR_RESULT, profile, seconds)

    def _observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        self._attempt_duration(result, profile).observe(seconds)
        self._attempts(result, profile).inc()

    def pod_bound(self, attempts: int, sli_seconds: float | None) -> None:
        """A pod was bound after `attempts` attempts, `sli_seconds` after it first entered activeQ."""
        self.pod_scheduling_attempts.observe(attempts)
        if sli_seconds is not None:
            self._sli(attempts_label(attempts)).observe(sli_seconds)

    # ----- the framework ---------------------------------------------------------------------------

    def observe_extension_point(self, point: str, code: Code, profile: str, seconds: float) -> None:
        self._extension_point(point, code, profile).observe(seconds)

    def extension_point_histogram(self, point: str, code: Code, profile: str) -> Any:
        """The framework_extension_point_duration_seconds child, for a caller that keeps it."""
        return self._extension_point(point, code, profile)

    def should_record_plugin_metrics(self) -> bool:
        """Whether this scheduling cycle observes plugin durations (rand.Intn(100) < percent, as kube)."""
        return self._rng.random() * 100 < self.plugin_metrics_sample_percent

    def observe_plugin(self, plugin: str, point: str, code: Code, seconds: float) -> None:
        self._plugin(plugin, point, code).observe(seconds)

    # ----- the queue -------------------------------------------------------------------------------

    def pod_incoming(self, queue: str, event: str) -> None:
        self._incoming(queue, event).inc()

    # ----- the API dispatcher ----------------------------------------------------------------------

    def async_api_call(self, call_type: str, result: str, seconds: float) -> None:
        self._async_calls(call_type, result).inc()
        self._async_call_duration(call_type, result).observe(seconds)

    # ----- wasm ------------------------------------------------------------------------------------

    def should_sample_guest_call(self) -> bool:
        return self._rng.random() < self.guest_call_sample_fraction

    def observe_guest_call(self, plugin: str, function: str, seconds: float) -> None:
        self._guest_call(plugin, function).observe(seconds)

    def guest_call_failed(self, plugin: str) -> None:
        self.wasm_traps.labels(plugin).inc()

    def guest_fault(self, plugin: str, extension_point: str, policy: str) -> None:
        self.wasm_guest_faults.labels(plugin, extension_point, policy).inc()

    def circuit_breaker_opened(self, plugin: str) -> None:
        self.wasm_circuit_breaker_opened.labels(plugin).inc()

    def wasm_reload(self, plugin: str, result: str) -> None:
        self.wasm_reloads.labels(plugin, result).inc()

    # ----- exposition ------------------------------------------------------------------------------

    def render(self) -> bytes:
        """The Prometheus text exposition (format 0.0.4) of every metric, as /metrics serves it."""
        return generate_latest(self.registry)
