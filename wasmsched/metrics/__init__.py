"""The scheduler's Prometheus metrics (kube-scheduler's pkg/scheduler/metrics).

`SchedulerMetrics` (metrics.py) owns a registry and the metrics; `names` holds the label values;
`scrape` reads the queue, cache and wasm pool gauges when the registry is collected. prometheus_client
is imported only when SchedulerMetrics is first used, so a scheduler without metrics never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics


def __getattr__(name: str) -> Any:
    if name == "SchedulerMetrics":
        from wasmsched.metrics.metrics import SchedulerMetrics

        return SchedulerMetrics
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SchedulerMetrics"]
