"""LeastAllocated scoring strategy (noderesources/least_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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


def least_cpu_mem_columns(resources: Sequence[ResourceSpecLike]) -> CpuMemColumnsFn | None:
    """The columnar form of least_resource_scorer(resources) for (cpu, memory); None unless both weights
    are positive. Every operand of the divisions is non-negative, so floor division is Go's."""
    if len(resources) != 2:
        return None
    w_cpu, w_mem = resources[0].weight, resources[1].weight
    if w_cpu <= 0 or w_mem <= 0:
        return None

    def columns(a_cpu: NDArray[np.int64], a_mem: NDArray[np.int64], u_cpu: NDArray[np.int64],
                u_mem: NDArray[np.int64], pod_cpu: int, pod_mem: int) -> NDArray[np.int64]:
        import numpy as np

        s_cpu, has_cpu = _least_share(np, a_cpu, u_cpu + pod_cpu)
        s_mem, has_mem = _least_share(np, a_mem, u_mem + pod_mem)
        # A resource the node does not allocate is left out of the mean, weight included.
        weights = has_cpu * w_cpu + has_mem * w_mem
        return np.where(weights > 0, (s_cpu * w_cpu + s_mem * w_mem) // np.maximum(weights, 1), 0)

    return columns


def _least_share(np: Any, capacity: NDArray[np.int64],
                 requested: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """least_requested_score per node (0 where capacity is 0), and where capacity is not 0."""
    has = capacity > 0
    score = (capacity - requested) * MAX_NODE_SCORE // np.maximum(capacity, 1)
    return np.where(has & (requested <= capacity), score, 0), has
