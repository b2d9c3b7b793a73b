"""Ported from kube 1.37 eventhandlers.go (and eventhandlers_test.go's intent): which cluster events the
informer handlers send to the queue, with which objects, in which order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wasmsched.api.types import Pod
from wasmsched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    ActionType,
    ClusterEvent,
    EventResource,
)
from wasmsched.framework.pod_index import PodIndex
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.eventhandlers import EventHandlers
from wasmsched.testing.builders import make_node, make_pod

SCHED = "default-scheduler"


class RecordingQueue:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                            pre_check: Callable[[Pod], bool] | None = None) -> int:
        self.log.append(("move", event, old, new, pre_check))
        return 0

    def add(self, pod: Pod) -> None:
        self.log.append(("add", pod))

    def update(self, old: Pod, new: Pod) -> None:
        self.log.append(("update", old, new))

    def delete(self, pod: Pod) -> None:
        self.log.append(("delete", pod))


class FakeFramework:
    def __init__(self, log: list[Any], waiting: set[str] | None = None) -> None:
        self.log, self.waiting = log, waiting or set()

    def notify_pod_deleted(self, pod: Pod) -> None:
        pass

    def reject_waiting_pod(self, uid: str) -> bool:
        self.log.append(("reject", uid))
        return uid in self.waiting


class Handlers(EventHandlers):
    def __init__(self, waiting: set[str] | None = None) -> None:
        self.log: list[Any] = []
        self.cache = Cache()
        self.pods = PodIndex()
        self.queue = RecordingQueue(self.log)  # type: ignore[assignment]
        self.profiles = {SCHED: FakeFramework(self.log, waiting)}  # type: ignore[dict-item]

    def moves(self) -> list[tuple[ClusterEvent, Any, Any]]:
        return [(e[1], e[2], e[3]) for e in self.log if e[0] == "move"]


def copy_pod(p: Pod) -> Pod:
    q = Pod()
    q.CopyFrom(p)
    return q


def test_node_add_and_update_events_have_kube_labels() -> None:
    h = Handlers()
    old = make_node("n").obj()
    h.on_node_add(old)
    new = make_node("n").label("a", "b").taint("k").obj()
    h.on_node_update(old, new)
    assert [str(e) for e, _, _ in h.moves()] == ["NodeAdd", "NodeUpdateNodeLabel", "NodeUpdateNodeTaint"]


def test_node_delete_moves_pods_before_removing_the_node() -> None:
    h = Handlers()
    n = make_node("n").obj()
    h.cache.add_node(n)
    seen: list[bool] = []

    def record(event: ClusterEvent, old: Any = None, new: Any = None, pre_check: Any = None) -> int:
        seen.append("n" in h.cache.nodes and h.cache.nodes["n"].node is not None)
        h.log.append(("move", event, old, new, pre_check))
        return 0

    h.queue.move_all_to_active_or_backoff_queue = record  # type: ignore[method-assign]
    h.on_node_delete(n)
    assert h.moves() == [(ClusterEvent(EventResource.NODE, ActionType.DELETE), n, None)]
    assert seen == [True]


def test_assigned_pod_update_is_an_assigned_pod_event() -> None:
    h = Handlers()
    old = make_pod("p").node("n").obj()
    h.on_pod_add(old)
    new = copy_pod(old)
    new.metadata.labels["a"] = "b"
    h.on_pod_update(old, new)
    assert h.moves() == [(EVENT_ASSIGNED_POD_ADD, None, old),
                         (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL), old, new)]


def test_binding_adds_to_cache_then_removes_from_queue() -> None:
    h = Handlers()
    old = make_pod("p").obj()
    new = copy_pod(old)
    new.spec.nodeName = "n"
    h.on_pod_update(old, new)
    assert [e[0] for e in h.log] == ["move", "delete"]
    assert h.moves() == [(EVENT_ASSIGNED_POD_ADD, None, new)]


def _nominated(p: Pod, node: str, rv: str) -> Pod:
    q = copy_pod(p)
    q.status.nominatedNodeName = node
    q.metadata.resourceVersion = rv
    return q


def test_new_nomination_is_not_an_assigned_pod_delete() -> None:
    # hasNominatedNodeNameChanged: only a nomination that existed and changed frees space.
    h = Handlers()
    old = make_pod("p").priority(5).obj()
    old.metadata.resourceVersion = "1"
    h.on_pod_update(old, _nominated(old, "n1", "2"))
    assert h.moves() == []


def test_cleared_nomination_moves_lower_or_equal_priority_pods() -> None:
    h = Handlers()
    old = _nominated(make_pod("p").priority(5).obj(), "n1", "1")
    new = _nominated(old, "", "2")
    h.on_pod_update(old, new)
    [(event, o, n, pre_check)] = [e[1:] for e in h.log if e[0] == "move"]
    assert (event, o, n) == (EVENT_ASSIGNED_POD_DELETE, old, None)
    assert pre_check(make_pod("low").priority(5).obj()) and not pre_check(make_pod("high").priority(6).obj())


def test_deleted_nominated_pod_moves_lower_or_equal_priority_pods() -> None:
    h = Handlers()
    p = _nominated(make_pod("p").priority(5).obj(), "n1", "1")
    h.on_pod_delete(p)
    [(event, o, n, pre_check)] = [e[1:] for e in h.log if e[0] == "move"]
    assert (event, o, n) == (EVENT_ASSIGNED_POD_DELETE, p, None)
    assert pre_check(make_pod("low").priority(4).obj()) and not pre_check(make_pod("high").priority(6).obj())


def test_deleted_pending_pod_without_nomination_moves_nothing() -> None:
    h = Handlers()
    h.on_pod_delete(make_pod("p").obj())
    assert h.moves() == []


def test_deleted_assumed_pod_moves_pods_with_the_assumed_copy() -> None:
    # handleAssumedPodDeletion: the waiting pod is rejected, and the event carries the cache's copy
    # (with the node it was assumed on), whether or not it was waiting.
    for waiting in (True, False):
        p = make_pod("p").obj()
        h = Handlers({p.metadata.uid} if waiting else set())
        assumed = copy_pod(p)
        assumed.spec.nodeName = "n"
        h.cache.assume_pod(assumed)
        h.on_pod_delete(p)
        assert ("reject", p.metadata.uid) in h.log
        assert h.moves() == [(EVENT_ASSIGNED_POD_DELETE, assumed, None)]
