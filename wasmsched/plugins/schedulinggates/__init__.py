"""SchedulingGates: keeps pods with .spec.schedulingGates out of the active queue."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.schedulinggates.scheduling_gates import NAME, SchedulingGates

__all__ = ["NAME", "SchedulingGates", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return SchedulingGates()
