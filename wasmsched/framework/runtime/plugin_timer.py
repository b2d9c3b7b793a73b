"""plugin_execution_duration_seconds (kube's metricsRecorder.ObservePluginDurationAsync): the one place
plugin calls are timed. The runners call a plugin through the timer only in cycles whose plugin metrics are
sampled (CycleState.record_plugin_metrics), so the other cycles do no timing work."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from time import perf_counter
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from wasmsched.framework.interface import Plugin
from wasmsched.framework.status import Code, Status, code_of

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

P = ParamSpec("P")
R = TypeVar("R")
PL = TypeVar("PL", bound=Plugin)


class PluginTimer:
    """Observes plugin_execution_duration_seconds (kube's ObservePluginDurationAsync) when the scheduler
    records metrics; does nothing otherwise."""

    __slots__ = ("_metrics",)

    def __init__(self, metrics: SchedulerMetrics | None) -> None:
        self._metrics = metrics

    def status(self, point: str, run: Callable[Concatenate[PL, P], Status | None], pl: PL,
               *args: P.args, **kwargs: P.kwargs) -> Status | None:
        """`run(pl, ...)`, one of the runners' runXPlugin helpers, timed as one call of `pl` at `point`."""
        start = perf_counter()
        st = run(pl, *args, **kwargs)
        self.observe(pl.name, point, code_of(st), perf_counter() - start)
        return st

    def result(self, point: str, run: Callable[Concatenate[PL, P], tuple[R, Status | None]], pl: PL,
               *args: P.args, **kwargs: P.kwargs) -> tuple[R, Status | None]:
        """As `status`, for a helper that returns (result, status)."""
        start = perf_counter()
        out = run(pl, *args, **kwargs)
        self.observe(pl.name, point, code_of(out[1]), perf_counter() - start)
        return out

    def observe(self, plugin: str, point: str, code: Code, seconds: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_plugin(plugin, point, code, seconds)

    def observe_batch(self, plugin: str, point: str, codes: Iterable[Code], seconds: float, nodes: int) -> None:
        """A batch call over n nodes stands for n per-node calls: one sample per status code it returned, of
        the mean duration per node (observing it n times would cost more than the plugin)."""
        if nodes:
            for code in codes:
                self.observe(plugin, point, code, seconds / nodes)

    @staticmethod
    def timed(run: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> tuple[R, float]:
        """`run(...)` and the seconds it took: a batch pass, whose status codes are known only after it."""
        start = perf_counter()
        out = run(*args, **kwargs)
        return out, perf_counter() - start
