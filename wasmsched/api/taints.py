"""Taints and tolerations as in k8s.io/api core/v1 (ToleratesTaint, Taint.ToString) and
k8s.io/component-helpers/scheduling/corev1 (FindMatchingUntoleratedTaint)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from wasmsched.api.types import Taint, Toleration
from wasmsched.api.validation import parse_int64

TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"

TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"
TOLERATION_OP_LT = "Lt"
TOLERATION_OP_GT = "Gt"

TaintFilter = Callable[[Taint], bool]


def _compare_numeric(toleration_value: str, taint_value: str, op: str) -> bool:
    """Lt/Gt: both values must parse as int64; Lt tolerates taint < toleration, Gt taint > toleration."""
    tol = parse_int64(toleration_value)
    tnt = parse_int64(taint_value)
    if tol is None or tnt is None:
        return False
    return tnt < tol if op == TOLERATION_OP_LT else tnt > tol


def tolerates(toleration: Toleration, taint: Taint, comparison_operators: bool = True) -> bool:
    """Toleration.ToleratesTaint: effect/key wildcards when empty, Equal (default), Exists, Lt/Gt."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", TOLERATION_OP_EQUAL):
        return toleration.value == taint.value
    if op == TOLERATION_OP_EXISTS:
        return True
    if comparison_operators and op in (TOLERATION_OP_LT, TOLERATION_OP_GT):
        return _compare_numeric(toleration.value, taint.value, op)
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration], taint: Taint, comparison_operators: bool = True
) -> bool:
    """Whether any toleration tolerates the taint (TolerationsTolerateTaint)."""
    return any(tolerates(t, taint, comparison_operators) for t in tolerations)


def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration],
    filter_fn: TaintFilter | None = None,
    comparison_operators: bool = True,
) -> Taint | None:
    """The first taint passing filter_fn that no toleration tolerates (FindMatchingUntoleratedTaint)."""
    tols = list(tolerations)
    for taint in taints:
        if filter_fn is not None and not filter_fn(taint):
            continue
        if not tolerations_tolerate_taint(tols, taint, comparison_operators):
            return taint
    return None


def taint_to_string(taint: Taint) -> str:
    """Taint.ToString(): "key=value:Effect", or "key:Effect" without a value."""
    if not taint.value:
        return f"{taint.key}:{taint.effect}"
    return f"{taint.key}={taint.value}:{taint.effect}"


def match_taint(a: Taint, b: Taint) -> bool:
    """Taint.MatchTaint: same key and effect (taints are unique by key and effect)."""
    return a.key == b.key and a.effect == b.effect


def does_not_schedule(taint: Taint) -> bool:
    """Filter for the effects that block scheduling: NoSchedule and NoExecute."""
    return taint.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)
