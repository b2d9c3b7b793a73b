"""EventBroadcaster's writes when the API server cannot be reached or refuses (client-go's recordToSink):
transport errors are tried again, EVENT_MAX_TRIES times in all; a server's error is not; a waiting event
does not hold up the others."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.kube.helpers import wait_for
from wasmsched.api.types import Pod
from wasmsched.kube import client_cluster
from wasmsched.kube.api import ApiError, TransportError
from wasmsched.kube.client_cluster import EVENT_MAX_TRIES, EVENT_SERIES_WINDOW, EventBroadcaster
from wasmsched.util.threadpool import ElasticPool


class FakeApi:
    """request_json raises, for an event whose note is in `failures`, the given exception the given number
    of times (None: every time), then writes it."""

    def __init__(self, failures: dict[str, tuple[Exception, int | None]]) -> None:
        self.failures = failures
        self.attempts: dict[str, int] = {}
        self.written: list[str] = []
        self.lock = threading.Lock()

    def create(self, path: str, obj: Any, api_version: str, kind: str) -> None:
        assert (api_version, kind) == ("events.k8s.io/v1", "Event")
        note = obj.note
        with self.lock:
            self.attempts[note] = self.attempts.get(note, 0) + 1
            if note in self.failures:
                error, times = self.failures[note]
                if times is None or self.attempts[note] <= times:
                    raise error
            self.written.append(note)


def _pod() -> Pod:
    pod = Pod()
    pod.metadata.name, pod.metadata.namespace, pod.metadata.uid = "p", "ns", "u-1"
    return pod


def _broadcaster(api: FakeApi) -> EventBroadcaster:
    b = EventBroadcaster(api, instance="test", retry_seconds=0.02)  # type: ignore[arg-type]
    b.start()
    return b


def test_an_event_is_written_once_the_server_is_back() -> None:
    api = FakeApi({"restart": (TransportError("connection refused"), 2)})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "restart")
    wait_for("the event written", lambda: api.written == ["restart"] or None, timeout=5)
    assert api.attempts["restart"] == 3 and b.written == 1 and b.dropped == 0
    b.stop()


def test_a_refused_event_is_not_tried_again() -> None:
    api = FakeApi({"bad": (ApiError(422, "Invalid", "Event is invalid"), 1)})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "bad")
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "fine")
    wait_for("the next event written", lambda: api.written == ["fine"] or None, timeout=5)
    time.sleep(0.1)
    assert api.attempts["bad"] == 1
    b.stop()


def test_a_writer_that_fails_unexpectedly_says_so_and_counts_the_event_dropped(
        caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi({"bug": (RuntimeError("a bug in the client"), 1)})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "bug")
    wait_for("the event counted dropped", lambda: b.dropped == 1 or None, timeout=5)
    assert any("Event writer failed" in r.getMessage() and r.exc_info for r in caplog.records)
    b.stop()


def test_a_series_patch_that_fails_unexpectedly_drops_no_event(caplog: pytest.LogCaptureFixture) -> None:
    """The second occurrence of an event patches its series' count; a bug there is logged, and no event
    was dropped: the Event itself was written."""

    class PatchBug(FakeApi):
        def request_json(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError("a bug in the patch")

    api = PatchBug({})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "twice")
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "twice")
    wait_for("the series patch failed", lambda: any(
        "series count is not updated" in r.getMessage() and r.exc_info for r in caplog.records) or None, timeout=5)
    assert api.written == ["twice"] and b.written == 1 and b.dropped == 0
    b.stop()


def test_tries_end_at_the_limit_and_other_events_are_not_held_up() -> None:
    api = FakeApi({"down": (TransportError("connection refused"), None)})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "down")
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "other")
    wait_for("the other event written", lambda: "other" in api.written or None, timeout=5)
    wait_for("the failing event given up", lambda: b.dropped == 1 or None, timeout=5)
    assert api.attempts["down"] == EVENT_MAX_TRIES and "down" not in api.written
    b.stop()


class SlowApi:
    """Holds every write until `gate` is set, counting how many are in flight at once; records patches."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.posts: list[str] = []
        self.patches: list[tuple[str, int]] = []

    def create(self, path: str, obj: Any, api_version: str, kind: str) -> None:
        self.request_json("POST", path, {"note": obj.note})

    def request_json(self, method: str, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            assert self.gate.wait(5)
            with self.lock:
                if method == "POST":
                    self.posts.append(body["note"])
                else:
                    self.patches.append((path.rsplit("/", 1)[1], body["series"]["count"]))
        finally:
            with self.lock:
                self.in_flight -= 1
        return body


def _pod_named(name: str) -> Pod:
    pod = Pod()
    pod.metadata.name, pod.metadata.namespace, pod.metadata.uid = name, "ns", f"u-{name}"
    return pod


@pytest.mark.parametrize("events", [10, 2000])
def test_events_are_written_many_at_a_time(events: int) -> None:
    """A few writes in flight while few events wait, many once the queue fills: the writer keeps up with
    bindings without taking the API server from them when it need not."""
    from wasmsched.kube.client_cluster import EVENT_WRITERS, EVENT_WRITERS_IDLE

    want = EVENT_WRITERS if events >= 2000 else EVENT_WRITERS_IDLE
    api = SlowApi()
    b = EventBroadcaster(api, instance="test")  # type: ignore[arg-type]
    b.start()
    try:
        for i in range(events):
            b.eventf(_pod_named(f"p{i}"), None, "Normal", "Scheduled", "Binding", f"assigned p{i}")
        wait_for("writes in flight", lambda: api.in_flight == want or None, timeout=5)
        time.sleep(0.2)
        assert api.in_flight == want
        api.gate.set()
        wait_for("every event written", lambda: len(api.posts) == events or None, timeout=10)
        assert api.most_in_flight == want and b.written == events and b.dropped == 0
    finally:
        api.gate.set()
        b.stop()


def test_a_series_is_patched_after_its_first_event_is_written() -> None:
    api = SlowApi()
    b = EventBroadcaster(api, instance="test")  # type: ignore[arg-type]
    b.start()
    try:
        pod = _pod_named("p")
        b.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available")
        b.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available")
        wait_for("the first event's write", lambda: api.in_flight >= 1 or None, timeout=5)
        time.sleep(0.1)
        assert api.patches == []  # the count waits for the event it counts
        api.gate.set()
        wait_for("the series patched", lambda: api.patches or None, timeout=5)
        assert len(api.posts) == 1 and api.patches[0][1] == 2
    finally:
        api.gate.set()
        b.stop()


def test_stop_waits_for_writes_in_flight() -> None:
    api = SlowApi()
    b = EventBroadcaster(api, instance="test")  # type: ignore[arg-type]
    b.start()
    b.eventf(_pod_named("p"), None, "Normal", "Scheduled", "Binding", "assigned p")
    wait_for("the write in flight", lambda: api.in_flight == 1 or None, timeout=5)
    threading.Timer(0.3, api.gate.set).start()
    b.stop(timeout=5)
    assert api.posts == ["assigned p"] and b.written == 1


def test_series_not_seen_for_the_window_are_forgotten_least_recently_seen_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from wasmsched.kube import client_cluster

    clock = [1000.0]
    monkeypatch.setattr(client_cluster, "time", SimpleNamespace(monotonic=lambda: clock[0], time_ns=time.time_ns,
                                                                sleep=time.sleep))
    api = FakeApi({})
    b = EventBroadcaster(api, instance="test")  # type: ignore[arg-type]
    b._pool = pool = ElasticPool(2, 10.0, "test-writer")  # the writers, without the broadcaster's thread

    def record(name: str) -> None:
        b.eventf(_pod_named(name), None, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available")
        ev = b._queue.get_nowait()
        assert ev is not None
        b._record(ev)

    try:
        record("keep")
        for i in range(100):
            clock[0] = 1000.0 + i * 0.5
            record(f"p{i}")
        clock[0] = 1200.0
        record("keep")  # seen again: counted, and now the most recently seen
        assert len(b._series) == 101
        clock[0] = 1000.0 + EVENT_SERIES_WINDOW + 60  # p0..p99 last seen over the window ago, keep 160 s ago
        record("new")
        assert sorted(s.name.split(".")[0] for s in b._series.values()) == ["keep", "new"]
        assert next(s for s in b._series.values() if s.name.startswith("keep")).count == 2
    finally:
        pool.shutdown(wait=True)


def test_stop_tries_events_again_until_the_server_is_back_or_its_time_is_up_and_counts_the_rest(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    # A lost lease while kube-apiserver restarts: the events that failed are not lost if it is back in time.
    monkeypatch.setattr(client_cluster, "STOP_RETRY_SECONDS", 0.15)
    api = FakeApi({"back": (TransportError("connection refused"), 4),
                   "down": (TransportError("connection refused"), None)})
    b = EventBroadcaster(api, instance="test", retry_seconds=60)  # type: ignore[arg-type]
    b.start()
    b.eventf(_pod_named("a"), None, "Normal", "Scheduled", "Binding", "back")
    b.eventf(_pod_named("b"), None, "Normal", "Scheduled", "Binding", "down")
    wait_for("both tried once", lambda: (api.attempts.get("back") == 1 and api.attempts.get("down") == 1) or None,
             timeout=5)
    t = time.monotonic()
    with caplog.at_level("WARNING", logger="wasmsched.kube"):
        b.stop(timeout=1.0)
    # not 60 s later: at stop, and again until written ("back", on its 5th try) or the 1 s was up ("down")
    assert time.monotonic() - t < 3
    assert api.written == ["back"] and api.attempts["back"] == 5
    assert 4 <= api.attempts["down"] < EVENT_MAX_TRIES
    assert b.unwritten == 1 and b.dropped == 0
    assert '"Events not written at shutdown" count=1 queued=0 retrying=1 writing=0' in caplog.text


def test_stop_returns_at_once_when_nothing_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi({})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "ok")
    t = time.monotonic()
    b.stop(timeout=20.0)
    assert time.monotonic() - t < 2 and api.written == ["ok"] and b.unwritten == 0


def test_a_series_of_a_scheduled_event_costs_under_400_bytes() -> None:
    """A backlog's 6-minute window holds tens of thousands of series, nearly all Scheduled events that never
    repeat: each keeps a digest of its key, not the strings (674 bytes each before, 1,938 before that)."""
    import gc
    import tracemalloc

    class NoApi:
        def create(self, *args: Any) -> None:
            pass

    b = EventBroadcaster(NoApi(), instance="test")  # type: ignore[arg-type]
    b._pool = pool = ElasticPool(2, 10.0, "test-writer")
    pods = [_pod_named(f"pod-{i:05d}-with-a-name-as-long-as-a-deployment's") for i in range(5000)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for pod in pods:
            b.eventf(pod, pods[0], "Normal", "Scheduled", "Binding",
                     f"Successfully assigned ns/{pod.metadata.name} to kwok-node-123")
            ev = b._queue.get_nowait()
            assert ev is not None
            b._record(ev)
        pool.shutdown(wait=True)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert len(b._series) == len(pods)
    per_series = sum(d.size_diff for d in after.compare_to(before, "filename")) / len(pods)
    assert per_series < 400, per_series

