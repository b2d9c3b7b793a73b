"""Port of schedulinggates/scheduling_gates_test.go."""

from __future__ import annotations

import pytest

from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status
from wasmsched.plugins import schedulinggates
from wasmsched.plugins.schedulinggates import SchedulingGates
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle


def _plugin() -> SchedulingGates:
    pl = schedulinggates.new(None, FakeHandle())
    assert isinstance(pl, SchedulingGates)
    return pl


@pytest.mark.parametrize(
    ("name", "gates", "want"),
    [
        ("pod does not carry scheduling gates", [], None),
        (
            "pod carries scheduling gates",
            ["foo", "bar"],
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["waiting for scheduling gates: [foo bar]"]),
        ),
    ],
)
def test_pre_enqueue(name: str, gates: list[str], want: Status | None) -> None:
    pod = make_pod("p").scheduling_gates(*gates).obj()
    assert _plugin().pre_enqueue(pod) == want


def test_is_schedulable_after_update_target_pod_scheduling_gates_eliminated() -> None:
    pod = make_pod("p").uid("p").scheduling_gates("foo").obj()
    old = make_pod("p").uid("p").scheduling_gates("foo").obj()
    new = make_pod("p").uid("p").obj()
    hint = _plugin().is_schedulable_after_update_target_pod_scheduling_gates_eliminated(pod, old, new)
    assert hint == QueueingHint.QUEUE


def test_events_to_register() -> None:
    events = _plugin().events_to_register()
    assert len(events) == 1
    assert events[0].event.resource == EventResource.TARGET_POD
    assert events[0].event.action_type == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    assert events[0].queueing_hint_fn is not None
