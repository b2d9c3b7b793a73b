"""NodeUnschedulable: filters out cordoned nodes unless the pod tolerates the unschedulable taint."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNKNOWN_CONDITION,
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    NodeUnschedulable,
)

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NAME", "NodeUnschedulable", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return NodeUnschedulable()
