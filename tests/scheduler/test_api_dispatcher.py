"""The API dispatcher (kube 1.37's backend/api_dispatcher) and its calls (framework/api_calls): merging per
object, relevance, no-op skipping, per-object order, the bound, dropping a deleted pod's call, metrics."""

from __future__ import annotations

import threading
import time

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.interface import NominatingInfo, NominatingMode
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.scheduler.api_calls import (
    POD_BINDING,
    POD_STATUS_PATCH,
    RELEVANCES,
    PodBindingCall,
    PodCondition,
    PodStatusPatchCall,
)
from wasmsched.scheduler.api_dispatcher import (
    APIDispatcher,
    CallOverwritten,
    CallQueue,
    CallSkipped,
    OnFinish,
    is_unexpected_error,
)

NOW = "2026-12-04T00:00:00Z"


class Writer:
    """Records the writes; `gate` holds every write until set (to keep a call in flight)."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, object]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()
        self.fail: Exception | None = None
        self.lock = threading.Lock()
        self.threads: list[int] = []  # the thread of each write

    def _do(self, kind: str, name: str, what: object) -> None:
        self.started.set()
        assert self.gate.wait(5)
        if self.fail is not None:
            raise self.fail
        with self.lock:
            self.writes.append((kind, name, what))
            self.threads.append(threading.get_ident())

    def post_binding(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        self._do("bind", name, node_name)

    def patch_pod_status(self, namespace: str, name: str, uid: str, status: dict[str, object]) -> None:
        self._do("status", name, status)


def _pod(name: str = "p", *, nominated: str = "", scheduled: tuple[str, str, str] | None = None) -> Pod:
    pod = Pod()
    pod.metadata.name, pod.metadata.namespace, pod.metadata.uid = name, "ns", f"uid-{name}"
    pod.status.nominatedNodeName = nominated
    if scheduled is not None:
        c = pod.status.conditions.add()
        c.type, (c.status, c.reason, c.message) = "PodScheduled", scheduled
    return pod


def _unschedulable(w: Writer, pod: Pod, message: str = "0/3 nodes are available") -> PodStatusPatchCall:
    return PodStatusPatchCall(w, pod, [PodCondition("PodScheduled", "False", "Unschedulable", message)], None, NOW)


def _nominate(w: Writer, pod: Pod, node: str) -> PodStatusPatchCall:
    return PodStatusPatchCall(w, pod, [], NominatingInfo(node, NominatingMode.OVERRIDE), NOW)


def _drain(q: CallQueue) -> list[object]:
    """Runs every pending call in order, as one dispatcher worker would."""
    ran: list[object] = []
    while q.pending():
        item = q.pop()
        assert item is not None
        item.call.execute()
        q.finalize(item)
        item.send(None)
        ran.append(item.call)
    return ran


def test_a_condition_and_a_nomination_of_one_pod_are_one_write() -> None:
    w, q = Writer(), CallQueue(RELEVANCES)
    pod = _pod()
    first, second = OnFinish(), OnFinish()
    q.add(_unschedulable(w, pod), first)
    q.add(_nominate(w, pod, "node-1"), second)
    assert q.pending() == {POD_STATUS_PATCH: 1}
    _drain(q)
    assert w.writes == [("status", "p", {
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/3 nodes are available", "lastProbeTime": None, "lastTransitionTime": NOW}],
        "nominatedNodeName": "node-1"})]
    assert isinstance(first.wait(0), CallOverwritten) and second.wait(0) is None
    assert not is_unexpected_error(first.wait(0))


def test_a_binding_makes_a_pending_status_patch_obsolete_and_a_status_patch_cannot_replace_a_binding() -> None:
    w, q = Writer(), CallQueue(RELEVANCES)
    pod = _pod()
    patch_done = OnFinish()
    q.add(_unschedulable(w, pod), patch_done)
    q.add(PodBindingCall(w, pod, "node-1"))
    assert q.pending() == {POD_BINDING: 1}
    assert isinstance(patch_done.wait(0), CallOverwritten)
    late = OnFinish()
    with pytest.raises(CallSkipped):
        q.add(_unschedulable(w, pod), late)
    assert isinstance(late.wait(0), CallSkipped)
    _drain(q)
    assert w.writes == [("bind", "p", "node-1")]


def test_a_patch_that_changes_nothing_is_not_queued() -> None:
    w, q = Writer(), CallQueue(RELEVANCES)
    pod = _pod(nominated="node-1", scheduled=("False", "Unschedulable", "0/3 nodes are available"))
    with pytest.raises(CallSkipped):
        q.add(_unschedulable(w, pod))
    with pytest.raises(CallSkipped):
        q.add(_nominate(w, pod, "node-1"))
    assert q.pending() == {} and q.idle()
    # A new message is a change; lastTransitionTime stays, as the status is the same.
    q.add(_unschedulable(w, pod, "0/4 nodes are available"))
    _drain(q)
    (_, _, status), = w.writes
    assert isinstance(status, dict) and "lastTransitionTime" not in status["conditions"][0]


def test_calls_of_one_pod_run_one_at_a_time_in_order() -> None:
    w, q = Writer(), CallQueue(RELEVANCES)
    pod = _pod()
    q.add(_unschedulable(w, pod))
    in_flight = q.pop()
    assert in_flight is not None
    # Added while the first is in flight: it is not handed out until the first is finalized.
    q.add(_nominate(w, pod, "node-2"))
    other = _pod("other")
    q.add(_unschedulable(w, other))
    nxt = q.pop()
    assert nxt is not None and nxt.call.uid == "uid-other"
    q.finalize(nxt)
    assert q.pending() == {}
    q.finalize(in_flight)
    assert q.pending() == {POD_STATUS_PATCH: 1}
    last = q.pop()
    assert last is not None and isinstance(last.call, PodStatusPatchCall)
    # The later call took the in-flight one's condition too (it may not have been written).
    assert [c.type for c in last.call.conditions] == ["PodScheduled"]
    assert last.call.nominating == NominatingInfo("node-2", NominatingMode.OVERRIDE)


def test_a_deleted_pods_pending_call_is_dropped() -> None:
    w, q = Writer(), CallQueue(RELEVANCES)
    pod = _pod()
    done = OnFinish()
    q.add(_unschedulable(w, pod), done)
    assert q.remove_pending("uid-p")
    assert isinstance(done.wait(0), CallSkipped) and q.pending() == {} and q.idle()
    assert not q.remove_pending("uid-p")


def test_a_deleted_pods_pending_binding_is_kept_to_fail_as_kube_s_would() -> None:
    """Run drops only status patches of a deleted pod: the binding's 404 is what unreserves the pod."""
    w, q = Writer(), CallQueue(RELEVANCES)
    q.add(PodBindingCall(w, _pod(), "node-1"))
    assert not q.remove_pending("uid-p", POD_STATUS_PATCH)
    assert q.pending() == {POD_BINDING: 1}


def test_the_queue_is_bounded_and_add_waits_for_room() -> None:
    w, q = Writer(), CallQueue(RELEVANCES, max_pending=2)
    q.add(_unschedulable(w, _pod("a")))
    q.add(_unschedulable(w, _pod("b")))
    # A merge for a queued object needs no room.
    q.add(_nominate(w, _pod("a"), "node-1"))
    added = threading.Event()

    def third() -> None:
        q.add(_unschedulable(w, _pod("c")))
        added.set()

    t = threading.Thread(target=third, daemon=True)
    t.start()
    assert not added.wait(0.2)
    item = q.pop()
    assert item is not None
    q.finalize(item)
    assert added.wait(5)
    t.join(5)
    assert sorted(q.pending().items()) == [(POD_STATUS_PATCH, 2)]


def _bind(d: APIDispatcher, w: Writer, names: list[str]) -> list[OnFinish]:
    """Queues a binding of each pod to node-1; their outcomes, in order."""
    waits = []
    for name in names:
        done = OnFinish()
        d.add(PodBindingCall(w, _pod(name), "node-1"), done)
        waits.append(done)
    return waits


def test_the_dispatcher_keeps_many_writes_in_flight_and_reports_them() -> None:
    w = Writer()
    w.gate.clear()
    metrics = SchedulerMetrics()
    d = APIDispatcher(RELEVANCES, parallelism=8, metrics=metrics)
    d.run()
    try:
        waits = _bind(d, w, [f"p{i}" for i in range(8)])
        d.add(_unschedulable(w, _pod("x")))
        # Eight bindings are held in flight at once; the ninth call waits in the queue.
        deadline = time.monotonic() + 5
        while d.queue.pending() != {POD_STATUS_PATCH: 1} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert d.queue.pending() == {POD_STATUS_PATCH: 1}
        text = metrics.render().decode()
        assert 'scheduler_pending_async_api_calls{call_type="pod_status_patch"} 1.0' in text
        w.gate.set()
        assert all(done.wait(5) is None for done in waits)
        assert d.wait_idle(5)
        w.fail = RuntimeError("boom")
        failed = OnFinish()
        d.add(PodBindingCall(w, _pod("bad"), "node-1"), failed)
        assert isinstance(failed.wait(5), RuntimeError)
    finally:
        d.close()
    text = metrics.render().decode()
    assert 'scheduler_async_api_call_execution_total{call_type="pod_binding",result="success"} 8.0' in text
    assert 'scheduler_async_api_call_execution_total{call_type="pod_binding",result="error"} 1.0' in text
    assert 'scheduler_async_api_call_execution_total{call_type="pod_status_patch",result="success"} 1.0' in text
    assert 'scheduler_async_api_call_execution_duration_seconds_count{call_type="pod_binding",result="success"} 8.0' \
        in text
    assert sorted(name for kind, name, _ in w.writes if kind == "bind") == [f"p{i}" for i in range(8)]


def test_run_keeps_many_binding_cycles_in_flight() -> None:
    """kube runs each binding cycle in a goroutine; `run` gives them BINDING_WORKERS threads, each waiting
    on its binding's outcome, so far more than a handful of bindings wait on the API server at once."""
    from wasmsched.kube.app import API_CALL_PARALLELISM, BINDING_WORKERS
    from wasmsched.scheduler.binding_workers import BindingWorkers

    assert BINDING_WORKERS >= API_CALL_PARALLELISM >= 32
    workers = BindingWorkers(BINDING_WORKERS)
    gate = threading.Event()
    lock = threading.Lock()
    running = [0]

    def job() -> None:
        with lock:
            running[0] += 1
        gate.wait(5)

    try:
        for _ in range(API_CALL_PARALLELISM):
            workers.reserve()
            workers.submit(job)
        deadline = time.monotonic() + 5
        while running[0] < API_CALL_PARALLELISM and time.monotonic() < deadline:
            time.sleep(0.01)
        assert running[0] == API_CALL_PARALLELISM
    finally:
        gate.set()
        workers.close()


def _wait_for(pred: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_dispatcher_threads_start_with_calls_and_end_when_idle() -> None:
    """Workers are started for queued calls (none before there is work, at most `parallelism`) and end
    after `idle_seconds` without a call, as goroutines end with their work."""
    w = Writer()
    w.gate.clear()
    d = APIDispatcher(RELEVANCES, parallelism=4, idle_seconds=0.3)
    d.run()
    try:
        assert d.threads() == 0
        waits = _bind(d, w, [f"p{i}" for i in range(6)])
        assert _wait_for(lambda: d.queue.pending() == {POD_BINDING: 2})
        assert d.threads() == 4
        w.gate.set()
        assert all(done.wait(5) is None for done in waits)
        assert _wait_for(lambda: d.threads() == 0)
        assert not [t for t in threading.enumerate() if t.name.startswith("api-dispatcher-")]
        # Work after the workers ended starts a new one.
        done = OnFinish()
        d.add(PodBindingCall(w, _pod("late"), "node-1"), done)
        assert done.wait(5) is None
        assert d.threads() == 1
    finally:
        d.close()
    assert sorted(name for _, name, _ in w.writes) == sorted([f"p{i}" for i in range(6)] + ["late"])


def test_no_call_is_stranded_while_workers_time_out() -> None:
    """Calls added at the moment workers give up waiting are all run: the queue counts live and idle
    workers under its lock, so a call never waits on a worker that is ending."""
    w = Writer()
    d = APIDispatcher(RELEVANCES, parallelism=2, idle_seconds=0.0005)
    d.run()
    try:
        waits = []
        for i in range(0, 2000, 7):
            waits += _bind(d, w, [f"p{j}" for j in range(i, min(i + 7, 2000))])
            time.sleep(0.0005)
        assert all(done.wait(10) is None for done in waits)
        assert d.wait_idle(5)
        assert _wait_for(lambda: d.threads() == 0)
    finally:
        d.close()
    assert len(w.writes) == 2000


def test_calls_queued_before_run_start_their_workers_at_run() -> None:
    w = Writer()
    d = APIDispatcher(RELEVANCES, parallelism=3, idle_seconds=5)
    try:
        done = OnFinish()
        d.add(PodBindingCall(w, _pod("early"), "node-1"), done)
        assert d.threads() == 0 and done.wait(0.1) is not None
        d.run()
        assert done.wait(5) is None
        assert d.threads() == 1
    finally:
        d.close()
    assert d.threads() == 0


def test_a_waiting_caller_runs_its_call_when_nothing_is_queued_for_its_object() -> None:
    """A binding cycle would only wait for a worker: its binding runs on its own thread, counted as the
    dispatcher's calls are, and no worker is started for it."""
    w, metrics = Writer(), SchedulerMetrics()
    d = APIDispatcher(RELEVANCES, parallelism=4, metrics=metrics)
    d.run()
    try:
        assert d.call(PodBindingCall(w, _pod("p"), "node-1")) is None
        assert (w.writes, w.threads, d.threads()) == ([("bind", "p", "node-1")], [threading.get_ident()], 0)
        w.fail = RuntimeError("boom")
        assert isinstance(d.call(PodBindingCall(w, _pod("q"), "node-1")), RuntimeError)
        assert d.wait_idle(5)
    finally:
        d.close()
    text = metrics.render().decode()
    assert 'scheduler_async_api_call_execution_total{call_type="pod_binding",result="success"} 1.0' in text
    assert 'scheduler_async_api_call_execution_total{call_type="pod_binding",result="error"} 1.0' in text


def test_a_waiting_callers_call_queues_behind_its_objects_call_in_flight() -> None:
    w = Writer()
    w.gate.clear()
    d = APIDispatcher(RELEVANCES, parallelism=4)
    d.run()
    pod = _pod("p")
    try:
        d.add(_unschedulable(w, pod))
        assert w.started.wait(5)  # the status patch is in flight on a worker
        outcome: list[BaseException | None] = []
        caller = threading.Thread(target=lambda: outcome.append(d.call(PodBindingCall(w, pod, "node-1"))))
        caller.start()
        # Queued behind the patch in flight (counted as pending once that one is finalized).
        assert _wait_for(lambda: isinstance(getattr(d.queue._calls.get(pod.metadata.uid), "call", None),
                                            PodBindingCall))
        w.gate.set()
        caller.join(5)
        assert outcome == [None]
        assert [kind for kind, _, _ in w.writes] == ["status", "bind"]
        assert w.threads[1] != caller.ident  # queued, so a worker ran it
        # Before run() nothing runs, on the caller's thread either.
        stopped = APIDispatcher(RELEVANCES)
        assert isinstance(stopped.call(PodBindingCall(w, _pod("r"), "node-1"), timeout=0.2), TimeoutError)
        assert stopped.queue.pending() == {POD_BINDING: 1}
        stopped.close()
    finally:
        d.close()
