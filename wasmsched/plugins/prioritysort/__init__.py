"""PrioritySort: the default QueueSort plugin (kube package queuesort)."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.prioritysort.priority_sort import NAME, PrioritySort

__all__ = ["NAME", "PrioritySort", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return PrioritySort()
