"""The storage-capacity scorer of VolumeBinding (volumebinding/scorer.go)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.helper.shape_score import FunctionShape, build_broken_linear_function
from wasmsched.plugins.volumebinding.binder import StorageResource

MAX_UTILIZATION = 100

# storage class name -> the pod's requested storage of that class on a node, and the capacity there.
ClassResourceMap = Mapping[str, StorageResource]
VolumeCapacityScorer = Callable[[ClassResourceMap], int]


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def build_scorer_function(shape: FunctionShape) -> VolumeCapacityScorer:
    raw = build_broken_linear_function(shape)

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(div_trunc(requested * MAX_UTILIZATION, capacity))

    def score(class_resources: ClassResourceMap) -> int:
        # Every class weighs the same.
        if not class_resources:
            return 0
        total = sum(f(r.requested, r.capacity) for r in class_resources.values())
        return _go_round(total / len(class_resources))

    return score
