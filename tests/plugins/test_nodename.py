"""Port of nodename/node_name_test.go."""

from __future__ import annotations

import pytest

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import nodename
from wasmsched.plugins.nodename import ERR_REASON, NodeName
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle


def _plugin() -> NodeName:
    pl = nodename.new(None, FakeHandle())
    assert isinstance(pl, NodeName)
    return pl


@pytest.mark.parametrize(
    ("name", "pod_node", "node", "want"),
    [
        ("no host specified", "", "foo", None),
        ("host matches", "foo", "foo", None),
        ("host doesn't match", "bar", "foo", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON])),
    ],
)
def test_node_name(name: str, pod_node: str, node: str, want: Status | None) -> None:
    pod = make_pod("p").node(pod_node).obj()
    ni = NodeInfo(make_node(node).obj())
    pl = _plugin()
    assert pl.filter(CycleState(), pod, ni) == want
    assert filter_statuses(pl, CycleState(), pod, [ni]) == [want]


def test_events_to_register() -> None:
    events = _plugin().events_to_register()
    assert [(e.event.resource, e.event.action_type, e.queueing_hint_fn) for e in events] == [
        (EventResource.NODE, ActionType.ADD, None)
    ]
