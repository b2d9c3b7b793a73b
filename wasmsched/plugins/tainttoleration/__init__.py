"""TaintToleration: filters nodes by NoSchedule/NoExecute taints, scores by PreferNoSchedule taints."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_UNTOLERATED,
    NAME,
    PRE_SCORE_STATE_KEY,
    TaintToleration,
)

__all__ = ["ERR_REASON_UNTOLERATED", "NAME", "PRE_SCORE_STATE_KEY", "TaintToleration", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return TaintToleration(handle)
