"""DefaultNormalizeScore (helper/normalize_score.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.interface import MAX_NODE_SCORE, NodeScore
from wasmsched.framework.status import Status
from wasmsched.plugins.helper.gomath import div_trunc

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def default_normalize_score(max_priority: int, reverse: bool, scores: Sequence[NodeScore]) -> Status | None:
    """Scale scores from [0, max(scores)] to [0, max_priority] in place; reverse subtracts from max_priority.

    Scores are assumed non-negative, as in kube. Always returns None (Success).
    """
    max_count = 0
    for s in scores:
        max_count = max(max_count, s.score)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return None
    for s in scores:
        score = div_trunc(max_priority * s.score, max_count)
        s.score = max_priority - score if reverse else score
    return None


def normalized(np: Any, scores: NDArray[np.int64], max_priority: int = MAX_NODE_SCORE) -> NDArray[np.int64]:
    """default_normalize_score(max_priority, False, ...) over an array of non-negative scores (values
    exact in int64 once multiplied by max_priority)."""
    max_count = int(scores.max()) if len(scores) else 0
    if max_count == 0:
        return scores
    # Non-negative operands: floor division is Go's truncation.
    return max_priority * scores // max_count


def reverse_normalized(np: Any, scores: NDArray[np.int64], max_priority: int = MAX_NODE_SCORE) -> NDArray[np.int64]:
    """default_normalize_score(max_priority, True, ...) over an array of non-negative scores."""
    max_count = int(scores.max()) if len(scores) else 0
    if max_count == 0:
        return np.full(len(scores), max_priority, dtype=np.int64)
    return max_priority - max_priority * scores // max_count
