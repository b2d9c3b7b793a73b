"""MostAllocated scoring strategy (noderesources/most_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import ResourceSpecLike, ScorerFn


def most_resource_scorer(resources: Sequence[ResourceSpecLike]) -> ScorerFn:
    """Favors nodes with most requested resources: the weighted mean of each resource's used share.

    (cpu(MaxNodeScore*requested*cpuWeight/capacity) + memory(...) + ...) / weightSum
    """
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            r = requested[i]
            if capacity > 0 and r >= 0:
                # Non-negative operands: floor division is Go's truncation.
                node_score += min(capacity, r) * MAX_NODE_SCORE // capacity * weight
            else:
                node_score += most_requested_score(r, capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return div_trunc(node_score, weight_sum)

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of capacity on a 0..MaxNodeScore scale."""
    if capacity == 0:
        return 0
    # Pods without requests count with the non-zero defaults, which may exceed capacity.
    requested = min(requested, capacity)
    return div_trunc(requested * MAX_NODE_SCORE, capacity)
