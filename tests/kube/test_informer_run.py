"""Informer.run in-process, against a scripted API (no server): client-go's reflector loop, i.e. list,
then watch from the list's version; back off on failures (800 ms doubling to 30 s, jittered, reset by a
watch that worked); relist on 410 Gone without backing off; deliver what the relist reveals."""

from __future__ import annotations

import builtins
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from wasmsched.api.errors import ApiError, TransportError
from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.kinds import RESOURCES
from wasmsched.api.types import Node, Pod
from wasmsched.kube.api import WatchStream
from wasmsched.kube.codec import WatchEvent
from wasmsched.kube.informer import INITIAL_BACKOFF, MAX_BACKOFF, Handler, Informer, InformerFactory


def node(name: str, rv: str) -> Node:
    n = Node()
    n.metadata.name, n.metadata.resourceVersion = name, rv
    return n


def gone() -> WatchEvent:
    st = meta_pb.Status(code=410, reason="Expired", message="too old resource version")
    return WatchEvent("ERROR", st, "")


class Stop(threading.Event):
    """The informer's stop event: its backoff waits are recorded and return at once."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is None:
            return super().wait()
        self.waits.append(timeout)
        return self.is_set()


class ScriptedApi:
    """Answers list and watch calls from scripts; each entry is a result or an exception to raise. The
    run ends (stop is set) when a script runs out."""

    host = "https://127.0.0.1:1"

    def __init__(self, stop: Stop, lists: list[Any], watches: list[Any]) -> None:
        self.stop, self.lists, self.watches = stop, lists, watches
        self.calls: list[tuple[str, str]] = []

    def list(self, resource: Any, *, field_selector: str = "") -> tuple[list[Node], str]:
        self.calls.append(("list", ""))
        return self._next(self.lists)  # type: ignore[no-any-return]

    @contextmanager
    def watch(self, resource: Any, resource_version: str, *, timeout_seconds: int,
              field_selector: str = "") -> Iterator[WatchStream]:
        self.calls.append(("watch", resource_version))
        events = self._next(self.watches)
        yield WatchStream(iter(events), None)

    def _next(self, script: builtins.list[Any]) -> Any:
        if not script:
            self.stop.set()
            raise TransportError("script ran out")
        step = script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step


def run(lists: list[Any], watches: list[Any]) -> tuple[Informer, ScriptedApi, Stop, list[tuple[str, str]]]:
    stop = Stop()
    api = ScriptedApi(stop, lists, watches)
    inf = Informer(api, RESOURCES["Node"], rng=random.Random(7))  # type: ignore[arg-type]
    seen: list[tuple[str, str]] = []
    inf.add_handler(Handler(lambda o: seen.append(("add", o.metadata.name)),
                            lambda old, new: seen.append(("update", new.metadata.name)),
                            lambda o: seen.append(("delete", o.metadata.name))))
    inf.run(stop)
    return inf, api, stop, seen


def test_failures_back_off_doubling_with_jitter_up_to_the_cap() -> None:
    refused = TransportError("connection refused")
    _, api, stop, _ = run([refused] * 8, [])
    assert [c for c, _ in api.calls] == ["list"] * 9  # 8 failures, then the script ran out
    assert len(stop.waits) == 8
    # Each wait lies within [b, 2b) of the doubling sequence 0.8, 1.6, ..., capped at 30 s.
    bases = [min(INITIAL_BACKOFF * 2**i, MAX_BACKOFF) for i in range(8)]
    assert all(b <= w < 2 * b for w, b in zip(stop.waits, bases, strict=True)), stop.waits
    assert bases[-1] == MAX_BACKOFF


def test_a_watch_that_worked_resets_the_backoff() -> None:
    refused = TransportError("connection refused")
    _, api, stop, _ = run([([node("a", "1")], "10")],
                          [refused, refused, [WatchEvent("MODIFIED", node("a", "11"), "11")], refused])
    bases = [INITIAL_BACKOFF, 2 * INITIAL_BACKOFF, INITIAL_BACKOFF]
    assert len(stop.waits) == 3
    assert all(b <= w < 2 * b for w, b in zip(stop.waits, bases, strict=True)), stop.waits
    assert api.calls[:5] == [("list", ""), ("watch", "10"), ("watch", "10"), ("watch", "10"), ("watch", "11")]


def test_gone_relists_at_once_and_delivers_what_the_relist_reveals() -> None:
    inf, api, stop, seen = run(
        [([node("a", "1"), node("b", "1")], "10"), ([node("a", "1"), node("c", "12")], "12")],
        [[WatchEvent("BOOKMARK", node("", "11"), "11"), gone()], []])
    # list, watch from the list's version, 410 from the bookmark's version, relist, watch from the relist's.
    assert api.calls[:4] == [("list", ""), ("watch", "10"), ("list", ""), ("watch", "12")]
    assert stop.waits == []  # no backoff before the relist (the run ended when the script did)
    assert inf.relists_after_gone == 1
    assert seen[:2] == [("add", "a"), ("add", "b")] and sorted(seen[2:]) == [("add", "c"), ("delete", "b")]
    assert sorted(n.metadata.name for n in inf.list()) == ["a", "c"]


def test_a_refused_list_is_reported_and_retried_not_relisted_forever() -> None:
    forbidden = ApiError(403, "Forbidden", 'nodes is forbidden: User "x" cannot list resource "nodes"',
                         "GET", "/api/v1/nodes")
    _, api, stop, _ = run([forbidden, ([node("a", "1")], "5")], [[]])
    assert api.calls[:3] == [("list", ""), ("list", ""), ("watch", "5")]
    assert len(stop.waits) >= 1 and INITIAL_BACKOFF <= stop.waits[0] < 2 * INITIAL_BACKOFF


def test_the_pod_informer_drops_managed_fields_as_kube_schedulers_does() -> None:
    def pod(name: str, rv: str) -> Pod:
        p = Pod()
        p.metadata.name, p.metadata.namespace, p.metadata.resourceVersion = name, "default", rv
        p.metadata.managedFields.add(manager="kubectl", operation="Update")
        p.spec.nodeName = ""
        return p

    stop = Stop()
    api = ScriptedApi(stop, [([pod("a", "1")], "10")], [[WatchEvent("ADDED", pod("b", "11"), "11"),
                                                         WatchEvent("MODIFIED", pod("a", "12"), "12")]])
    factory = InformerFactory(api)  # type: ignore[arg-type]
    pods = factory.informer("Pod")
    delivered: list[Pod] = []
    pods.add_handler(Handler(delivered.append, lambda _old, new: delivered.append(new), None))
    pods.run(stop)
    assert sorted(p.metadata.name for p in delivered) == ["a", "a", "b"]
    assert all(len(p.metadata.managedFields) == 0 for p in delivered + pods.list())
    assert pods.field_selector == "status.phase!=Succeeded,status.phase!=Failed"


def test_other_kinds_keep_their_managed_fields() -> None:
    n = node("a", "1")
    n.metadata.managedFields.add(manager="kubelet", operation="Update")
    inf, _, _, _ = run([([n], "10")], [])
    assert [len(x.metadata.managedFields) for x in inf.list()] == [1]
