"""MostAllocated scoring strategy (noderesources/most_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import (
    ResourceSpecLike,
    ScorerFn,
    weighted_mean_scorer,
)


def most_resource_scorer(resources: Sequence[ResourceSpecLike]) -> ScorerFn:
    """Favors nodes with most requested resources: the weighted mean of each resource's used share.

    (cpu(MaxNodeScore*requested*cpuWeight/capacity) + memory(...) + ...) / weightSum
    """
    return weighted_mean_scorer(resources, most_requested_score)


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of capacity on a 0..MaxNodeScore scale."""
    if capacity == 0:
        return 0
    # Pods without requests count with the non-zero defaults, which may exceed capacity.
    requested = min(requested, capacity)
    if capacity > 0 and requested >= 0:
        # Non-negative operands: floor division is Go's truncation.
        return requested * MAX_NODE_SCORE // capacity
    return div_trunc(requested * MAX_NODE_SCORE, capacity)
