"""PrioritySort (queuesort/priority_sort.go): higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import QueueSortPlugin
from wasmsched.framework.types import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort(QueueSortPlugin):
    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        # PodInfo.priority is corev1helpers.PodPriority: spec.priority, or 0 when unset.
        p1 = a.pod_info.priority
        p2 = b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    @staticmethod
    def sort_key(a: QueuedPodInfo) -> tuple[Any, ...]:
        """less(a, b) == sort_key(a) < sort_key(b)."""
        return (-a.pod_info.priority, a.timestamp)
