"""LeastAllocated scoring strategy (noderesources/least_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import ResourceSpecLike, ScorerFn


def least_resource_scorer(resources: Sequence[ResourceSpecLike]) -> ScorerFn:
    """Favors nodes with fewer requested resources: the weighted mean of each resource's free share.

    (cpu((capacity-requested)*MaxNodeScore*cpuWeight/capacity) + memory(...) + ...) / weightSum
    """
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            r = requested[i]
            if r > capacity:
                pass  # scores 0
            elif capacity > 0:
                # Both operands are non-negative here, so floor division is Go's truncation.
                node_score += (capacity - r) * MAX_NODE_SCORE // capacity * weight
            else:
                node_score += least_requested_score(r, capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return div_trunc(node_score, weight_sum)

    return scorer


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of capacity on a 0..MaxNodeScore scale; 0 when over-requested."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return div_trunc((capacity - requested) * MAX_NODE_SCORE, capacity)
