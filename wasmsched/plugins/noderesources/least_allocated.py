"""LeastAllocated scoring strategy (noderesources/least_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import (
    ResourceSpecLike,
    ScorerFn,
    weighted_mean_scorer,
)


def least_resource_scorer(resources: Sequence[ResourceSpecLike]) -> ScorerFn:
    """Favors nodes with fewer requested resources: the weighted mean of each resource's free share.

    (cpu((capacity-requested)*MaxNodeScore*cpuWeight/capacity) + memory(...) + ...) / weightSum
    """
    return weighted_mean_scorer(resources, least_requested_score)


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of capacity on a 0..MaxNodeScore scale; 0 when over-requested."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    if capacity > 0:
        # Both operands are non-negative here, so floor division is Go's truncation.
        return (capacity - requested) * MAX_NODE_SCORE // capacity
    return div_trunc((capacity - requested) * MAX_NODE_SCORE, capacity)
