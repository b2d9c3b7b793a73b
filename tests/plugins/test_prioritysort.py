"""Port of queuesort/priority_sort_test.go."""

from __future__ import annotations

import pytest

from wasmsched.framework.types import PodInfo, QueuedPodInfo
from wasmsched.plugins import prioritysort
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle

LOW, HIGH = 10, 100
T1, T2 = 1000.0, 1001.0


def _qpi(priority: int | None, timestamp: float = T1) -> QueuedPodInfo:
    w = make_pod("p")
    if priority is not None:
        w.priority(priority)
    return QueuedPodInfo(PodInfo(w.obj()), timestamp=timestamp)


@pytest.mark.parametrize(
    ("name", "p1", "p2", "expected"),
    [
        ("p1.priority less than p2.priority", _qpi(LOW), _qpi(HIGH), False),
        ("p1.priority greater than p2.priority", _qpi(HIGH), _qpi(LOW), True),
        ("equal priority. p1 is added to schedulingQ earlier than p2", _qpi(HIGH, T1), _qpi(HIGH, T2), True),
        ("equal priority. p2 is added to schedulingQ earlier than p1", _qpi(HIGH, T2), _qpi(HIGH, T1), False),
        # Not in kube's table: an unset priority counts as 0, and equal entries are not less.
        ("unset priority is zero", _qpi(None), _qpi(1), False),
        ("same entry is not less than itself", _qpi(HIGH, T1), _qpi(HIGH, T1), False),
    ],
)
def test_less(name: str, p1: QueuedPodInfo, p2: QueuedPodInfo, expected: bool) -> None:
    pl = prioritysort.new(None, FakeHandle())
    assert pl.name == "PrioritySort"
    assert pl.less(p1, p2) is expected  # type: ignore[attr-defined]
