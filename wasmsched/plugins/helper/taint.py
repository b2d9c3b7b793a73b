"""DoNotScheduleTaintsFilterFunc (helper/taint.go)."""

from __future__ import annotations

from collections.abc import Callable

from wasmsched.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
)
from wasmsched.api.types import Taint

__all__ = [
    "TAINT_EFFECT_NO_EXECUTE",
    "TAINT_EFFECT_NO_SCHEDULE",
    "TAINT_EFFECT_PREFER_NO_SCHEDULE",
    "do_not_schedule_taints_filter_func",
]


def _do_not_schedule(t: Taint) -> bool:
    # Filter-time taint checks only care about NoSchedule and NoExecute taints.
    return t.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


def do_not_schedule_taints_filter_func() -> Callable[[Taint], bool]:
    """The taint filter selecting the taints that reject scheduling a pod on a node."""
    return _do_not_schedule
