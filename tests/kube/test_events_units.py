"""EventBroadcaster's writes when the API server cannot be reached or refuses (client-go's recordToSink):
transport errors are tried again, EVENT_MAX_TRIES times in all; a server's error is not; a waiting event
does not hold up the others."""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.kube.helpers import wait_for
from wasmsched.api.types import Pod
from wasmsched.kube.api import ApiError, TransportError
from wasmsched.kube.cluster import EVENT_MAX_TRIES, EventBroadcaster


class FakeApi:
    """request_json raises, for an event whose note is in `failures`, the given exception the given number
    of times (None: every time), then writes it."""

    def __init__(self, failures: dict[str, tuple[Exception, int | None]]) -> None:
        self.failures = failures
        self.attempts: dict[str, int] = {}
        self.written: list[str] = []
        self.lock = threading.Lock()

    def request_json(self, method: str, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        note = body["note"]
        with self.lock:
            self.attempts[note] = self.attempts.get(note, 0) + 1
            if note in self.failures:
                error, times = self.failures[note]
                if times is None or self.attempts[note] <= times:
                    raise error
            self.written.append(note)
        return body


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


def test_tries_end_at_the_limit_and_other_events_are_not_held_up() -> None:
    api = FakeApi({"down": (TransportError("connection refused"), None)})
    b = _broadcaster(api)
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "down")
    b.eventf(_pod(), None, "Normal", "Scheduled", "Binding", "other")
    wait_for("the other event written", lambda: "other" in api.written or None, timeout=5)
    wait_for("the failing event given up", lambda: b.dropped == 1 or None, timeout=5)
    assert api.attempts["down"] == EVENT_MAX_TRIES and "down" not in api.written
    b.stop()
