"""Go integer arithmetic: int64 division truncates toward zero, Python's // floors."""

from __future__ import annotations


def div_trunc(a: int, b: int) -> int:
    """a / b as Go computes it for integers (rounding toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
