"""DefaultNormalizeScore (helper/normalize_score.go)."""

from __future__ import annotations

from collections.abc import Sequence

from wasmsched.framework.interface import NodeScore
from wasmsched.framework.status import Status
from wasmsched.plugins.helper.gomath import div_trunc


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
