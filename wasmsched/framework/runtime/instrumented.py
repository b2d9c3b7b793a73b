"""The Framework with framework_extension_point_duration_seconds observed around each extension point's
runner (the deferred observations of kube's Run*Plugins). new_framework builds it only when the scheduler
records metrics, so a Framework without metrics runs its methods as written. Filter is timed by the
algorithm around the whole node walk, as kube does in findNodesThatPassFilters."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Any

from wasmsched.framework.runtime.framework import Framework
from wasmsched.framework.status import Code
from wasmsched.metrics import names as mn

# Where each timed runner's result holds its status.
_RESULT, _SECOND, _ALWAYS_SUCCESS = 0, 1, 2

# (runner, extension_point label, where its status is). PostBind and Unreserve report Success, as kube:
# their plugins cannot fail the pod.
_TIMED_EXTENSION_POINTS: tuple[tuple[str, str, int], ...] = (
    ("run_pre_filter_plugins", mn.PRE_FILTER, _SECOND),
    ("run_post_filter_plugins", mn.POST_FILTER, _SECOND),
    ("run_pre_score_plugins", mn.PRE_SCORE, _RESULT),
    ("run_score_plugins", mn.SCORE, _SECOND),
    ("run_reserve_plugins_reserve", mn.RESERVE, _RESULT),
    ("run_reserve_plugins_unreserve", mn.UNRESERVE, _ALWAYS_SUCCESS),
    ("run_permit_plugins", mn.PERMIT, _RESULT),
    ("run_pre_bind_plugins", mn.PRE_BIND, _RESULT),
    ("run_bind_plugins", mn.BIND, _RESULT),
    ("run_post_bind_plugins", mn.POST_BIND, _ALWAYS_SUCCESS),
)


class InstrumentedFramework(Framework):
    """A Framework whose extension points observe framework_extension_point_duration_seconds. Each runs
    once or twice per pod: the histogram children are kept by (point, code), so an observation costs a dict
    lookup besides prometheus_client's own work."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Per extension point, its histogram children by code.
        self._point_histograms: dict[str, dict[Code, Any]] = {point: {} for _, point, _ in _TIMED_EXTENSION_POINTS}

    def _new_point_histogram(self, point: str, code: Code) -> Any:
        metrics = self.scheduler_metrics()
        assert metrics is not None  # new_framework builds this class only with metrics
        child = self._point_histograms[point][code] = metrics.extension_point_histogram(point, code,
                                                                                          self.profile_name())
        return child


def _timed(method: Callable[..., Any], point: str, where: int) -> Callable[..., Any]:
    def run(self: InstrumentedFramework, *args: Any, **kwargs: Any) -> Any:
        start = perf_counter()
        result = method(self, *args, **kwargs)
        elapsed = perf_counter() - start
        st = result if where == _RESULT else result[1] if where == _SECOND else None
        code = Code.SUCCESS if st is None else st.code
        child = self._point_histograms[point].get(code)
        if child is None:
            child = self._new_point_histogram(point, code)
        child.observe(elapsed)
        return result

    run.__name__ = method.__name__
    run.__qualname__ = f"InstrumentedFramework.{method.__name__}"
    run.__doc__ = method.__doc__
    return run


for _method, _point, _where in _TIMED_EXTENSION_POINTS:
    setattr(InstrumentedFramework, _method, _timed(getattr(Framework, _method), _point, _where))
