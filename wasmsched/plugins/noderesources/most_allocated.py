"""MostAllocated scoring strategy (noderesources/most_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import (
    CpuMemColumnsFn,
    ResourceSpecLike,
    ScorerFn,
    weighted_mean_scorer,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


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


def most_cpu_mem_columns(resources: Sequence[ResourceSpecLike]) -> CpuMemColumnsFn | None:
    """The columnar form of most_resource_scorer(resources) for (cpu, memory); None unless both weights
    are positive. Every operand of the divisions is non-negative, so floor division is Go's."""
    if len(resources) != 2:
        return None
    w_cpu, w_mem = resources[0].weight, resources[1].weight
    if w_cpu <= 0 or w_mem <= 0:
        return None

    def columns(a_cpu: NDArray[np.int64], a_mem: NDArray[np.int64], u_cpu: NDArray[np.int64],
                u_mem: NDArray[np.int64], pod_cpu: int, pod_mem: int) -> NDArray[np.int64]:
        import numpy as np

        has_cpu, has_mem = a_cpu > 0, a_mem > 0
        s_cpu = np.minimum(u_cpu + pod_cpu, a_cpu) * MAX_NODE_SCORE // np.maximum(a_cpu, 1)
        s_mem = np.minimum(u_mem + pod_mem, a_mem) * MAX_NODE_SCORE // np.maximum(a_mem, 1)
        # A resource the node does not allocate is left out of the mean (its share is 0 here), weight included.
        weights = has_cpu * w_cpu + has_mem * w_mem
        return np.where(weights > 0, (s_cpu * w_cpu + s_mem * w_mem) // np.maximum(weights, 1), 0)

    return columns
