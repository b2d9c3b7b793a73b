"""Port of nodeunschedulable/node_unschedulable_test.go."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import nodeunschedulable
from wasmsched.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

UNSCHEDULABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSCHEDULABLE])


def _plugin() -> NodeUnschedulable:
    pl = nodeunschedulable.new(None, FakeHandle())
    assert isinstance(pl, NodeUnschedulable)
    return pl


def _tolerating_pod(name: str = "p", effect: str = "NoSchedule", uid: str = "") -> Pod:
    w = make_pod(name).toleration("node.kubernetes.io/unschedulable", effect=effect, operator="Exists")
    if uid:
        w.uid(uid)
    return w.obj()


@pytest.mark.parametrize(
    ("name", "pod", "node", "want"),
    [
        ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
         make_pod("p").obj(), make_node("n").unschedulable(True).obj(), UNSCHEDULABLE),
        ("Schedule pod to normal node", make_pod("p").obj(), make_node("n").unschedulable(False).obj(), None),
        ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
         _tolerating_pod(), make_node("n").unschedulable(True).obj(), None),
        # Not in kube's table: an empty-effect toleration covers NoSchedule; a NoExecute one does not.
        ("empty-effect toleration", _tolerating_pod(effect=""), make_node("n").unschedulable(True).obj(), None),
        ("NoExecute toleration does not cover it", _tolerating_pod(effect="NoExecute"),
         make_node("n").unschedulable(True).obj(), UNSCHEDULABLE),
    ],
)
def test_node_unschedulable(name: str, pod: Pod, node: Node, want: Status | None) -> None:
    pl = _plugin()
    ni = NodeInfo(node)
    assert pl.filter(CycleState(), pod, ni) == want
    assert filter_statuses(pl, CycleState(), pod, [ni]) == [want]


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("backoff-wrong-new-object", None, "not-a-node", QueueingHint.QUEUE),
        ("backoff-wrong-old-object", "not-a-node", make_node("n").obj(), QueueingHint.QUEUE),
        ("skip-queue-on-unschedulable-node-added", None, make_node("n").unschedulable(True).obj(),
         QueueingHint.QUEUE_SKIP),
        ("queue-on-schedulable-node-added", None, make_node("n").obj(), QueueingHint.QUEUE),
        ("skip-unrelated-change", make_node("n").unschedulable(True).obj(),
         make_node("n").unschedulable(True).taint("k", "v").obj(), QueueingHint.QUEUE_SKIP),
        ("queue-on-unschedulable-field-change", make_node("n").unschedulable(True).obj(),
         make_node("n").unschedulable(False).obj(), QueueingHint.QUEUE),
    ],
)
def test_is_schedulable_after_node_change(name: str, old: object, new: object, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_node_change(make_pod("p").obj(), old, new) == want


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("error-wrong-new-object", None, "not-a-pod", QueueingHint.QUEUE),
        ("error-wrong-old-object", "not-a-pod", make_pod("p").uid("p").obj(), QueueingHint.QUEUE),
        ("queue-when-the-unsched-pod-gets-toleration", make_pod("p").uid("p").obj(),
         _tolerating_pod(uid="p"), QueueingHint.QUEUE),
        ("skip-when-the-unsched-pod-gets-unrelated-toleration", make_pod("p").uid("p").obj(),
         make_pod("p").uid("p").toleration("unrelated-key", operator="Exists").obj(), QueueingHint.QUEUE_SKIP),
    ],
)
def test_is_schedulable_after_target_pod_toleration_change(name: str, old: object, new: object,
                                                           want: QueueingHint) -> None:
    pod = make_pod("p").uid("p").obj()
    assert _plugin().is_schedulable_after_target_pod_toleration_change(pod, old, new) == want


def test_events_to_register() -> None:
    events = [(e.event.resource, e.event.action_type) for e in _plugin().events_to_register()]
    assert events == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
    ]
