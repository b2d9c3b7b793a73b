"""Toleration/taint matching (core/v1 toleration_test.go, component-helpers helpers_test.go)."""

import pytest

from wasmsched.api.taints import (
    does_not_schedule,
    find_untolerated_taint,
    match_taint,
    taint_to_string,
    tolerates,
)
from wasmsched.api.types import Taint, Toleration


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Taint:
    return Taint(key=key, value=value, effect=effect)


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect)


@pytest.mark.parametrize(
    ("t", "tn", "want"),
    [
        # empty effect tolerates every effect
        (tol("foo", "Exists"), taint("foo", "bar", "NoExecute"), True),
        (tol("foo", "Exists", effect="NoSchedule"), taint("foo", "bar", "NoExecute"), False),
        # empty key with Exists tolerates every taint
        (tol(operator="Exists"), taint("foo", "bar"), True),
        (tol(operator="Exists", effect="NoSchedule"), taint("anything", "x"), True),
        # key mismatch
        (tol("foo", "Exists"), taint("bar"), False),
        # Equal (and the empty default) compare values
        (tol("foo", "Equal", "bar"), taint("foo", "bar"), True),
        (tol("foo", "Equal", "bar"), taint("foo", "baz"), False),
        (tol("foo", "", "bar"), taint("foo", "bar"), True),
        (tol("foo", "", ""), taint("foo", ""), True),
        (tol("foo", "Equal", ""), taint("foo", "bar"), False),
        # Exists ignores the value
        (tol("foo", "Exists"), taint("foo", "anything"), True),
        # unknown operator never tolerates
        (tol("foo", "Bogus", "bar"), taint("foo", "bar"), False),
        # numeric comparison operators
        (tol("gpu-count", "Gt", "2"), taint("gpu-count", "4"), True),
        (tol("gpu-count", "Gt", "4"), taint("gpu-count", "4"), False),
        (tol("gpu-count", "Lt", "4"), taint("gpu-count", "2"), True),
        (tol("gpu-count", "Lt", "4"), taint("gpu-count", "x"), False),
        (tol("gpu-count", "Lt", "x"), taint("gpu-count", "1"), False),
    ],
)
def test_tolerates(t: Toleration, tn: Taint, want: bool) -> None:
    assert tolerates(t, tn) is want


def test_comparison_operators_can_be_disabled() -> None:
    assert not tolerates(tol("n", "Gt", "1"), taint("n", "5"), comparison_operators=False)


def test_find_untolerated_taint() -> None:
    taints = [taint("a", effect="PreferNoSchedule"), taint("b", "1"), taint("c", effect="NoExecute")]
    tols = [tol("b", "Equal", "1")]
    found = find_untolerated_taint(taints, tols, does_not_schedule)
    assert found is not None and found.key == "c"
    first = find_untolerated_taint(taints, tols)
    assert first is not None and first.key == "a"
    assert find_untolerated_taint(taints, [tol(operator="Exists")], does_not_schedule) is None
    assert find_untolerated_taint([], []) is None


@pytest.mark.parametrize(
    ("tn", "text"),
    [
        (taint("foo", "bar", "NoSchedule"), "foo=bar:NoSchedule"),
        (taint("foo", "", "NoExecute"), "foo:NoExecute"),
        (
            taint("node.kubernetes.io/unreachable", "", "NoExecute"),
            "node.kubernetes.io/unreachable:NoExecute",
        ),
        (taint("foo", "bar", ""), "foo=bar:"),
    ],
)
def test_taint_to_string(tn: Taint, text: str) -> None:
    assert taint_to_string(tn) == text


def test_match_taint() -> None:
    assert match_taint(taint("a", "1"), taint("a", "2"))
    assert not match_taint(taint("a", effect="NoSchedule"), taint("a", effect="NoExecute"))
