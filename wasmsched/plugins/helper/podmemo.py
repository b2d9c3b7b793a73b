"""What plugins compute from the pod being scheduled, kept in its PodInfo's memo across the cycles of one
pod version (a retried pod does not recompute it, and neither do the plugins of one cycle that need the
same thing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.memo import MemoKey

T = TypeVar("T")


def pod_memoized(state: CycleState, pod: Pod, key: MemoKey[T], compute: Callable[[Pod], T]) -> T:
    """compute(pod), memoized under `key` when `pod` is the cycle's PodInfo's pod (pods are never
    modified, so a PodInfo's memo stays true). The value is shared: callers must not modify it."""
    pi = state.pod_info
    if pi is None or pi.pod is not pod:
        return compute(pod)
    memo = pi.memo()
    value = memo.get(key)
    if value is None:
        value = memo[key] = compute(pod)
    return value


def shape_memoized(state: CycleState, pod: Pod, key: MemoKey[T], compute: Callable[[Pod], T]) -> T:
    """compute(pod), memoized under `key` for every pod of the shape of the cycle's pod (its PodInfo's
    PodShape, framework/pod_shape.py): `compute` must read nothing of the pod but its spec and status,
    and `key` must be owned by what computes (one per plugin instance when its arguments matter).
    Otherwise as pod_memoized."""
    pi = state.pod_info
    if pi is None or pi.pod is not pod:
        return compute(pod)
    memo = pi.shape.memo
    value = memo.get(key)
    if value is None:
        value = memo[key] = compute(pod)
    return value
