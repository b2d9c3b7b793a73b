"""The Kubernetes wire formats (kube/codec.py): protobuf bodies and watch frames, JSON fallback."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest

from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.gen.k8s_io.apimachinery.pkg.runtime import generated_pb2 as runtime_pb
from wasmsched.api.types import Pod, PodList
from wasmsched.kube import codec


def wrap(msg: object, api_version: str, kind: str) -> bytes:
    u = runtime_pb.Unknown()
    u.typeMeta.apiVersion, u.typeMeta.kind = api_version, kind
    u.raw = msg.SerializeToString()  # type: ignore[attr-defined]
    return codec.MAGIC + u.SerializeToString()


def pod(name: str, rv: str) -> Pod:
    p = Pod()
    p.metadata.name, p.metadata.namespace, p.metadata.resourceVersion = name, "default", rv
    p.spec.schedulerName = "default-scheduler"
    return p


def frame(etype: str, obj_bytes: bytes) -> bytes:
    ev = meta_pb.WatchEvent(type=etype)
    ev.object.raw = obj_bytes
    data = ev.SerializeToString()
    return len(data).to_bytes(4, "big") + data


def test_list_body_decodes_into_generated_types() -> None:
    lst = PodList()
    lst.metadata.resourceVersion = "42"
    lst.items.append(pod("a", "41"))
    out = codec.decode(wrap(lst, "v1", "PodList"), "application/vnd.kubernetes.protobuf", PodList)
    assert out.metadata.resourceVersion == "42"
    assert out.items[0].metadata.name == "a"
    assert out.items[0].SerializeToString() == pod("a", "41").SerializeToString()


def test_status_body_is_an_error_not_an_empty_object() -> None:
    st = meta_pb.Status(message="pods is forbidden", reason="Forbidden", code=403)
    with pytest.raises(codec.CodecError, match="pods is forbidden"):
        codec.decode(wrap(st, "v1", "Status"), codec.PROTOBUF, PodList)


def test_body_without_magic_is_refused() -> None:
    with pytest.raises(codec.CodecError, match="magic"):
        codec.decode(b"{}", codec.PROTOBUF, PodList)


def test_json_fallback() -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
                       "items": [{"metadata": {"name": "a", "namespace": "default"}}]}).encode()
    out = codec.decode(body, "application/json", PodList)
    assert out.metadata.resourceVersion == "7" and out.items[0].metadata.name == "a"


def test_protobuf_watch_frames() -> None:
    status = meta_pb.Status(code=410, reason="Expired", message="too old resource version")
    bookmark = Pod()
    bookmark.metadata.resourceVersion = "99"
    stream = io.BytesIO(
        frame("ADDED", wrap(pod("a", "5"), "v1", "Pod"))
        + frame("MODIFIED", pod("a", "6").SerializeToString())  # bare message, no envelope
        + frame("BOOKMARK", wrap(bookmark, "v1", "Pod"))
        + frame("ERROR", wrap(status, "v1", "Status"))
    )
    events = list(codec.protobuf_watch_events(stream, Pod))
    assert [(e.type, e.resource_version) for e in events] == [
        ("ADDED", "5"), ("MODIFIED", "6"), ("BOOKMARK", "99"), ("ERROR", "")]
    assert isinstance(events[3].object, meta_pb.Status) and events[3].object.code == 410


def test_truncated_watch_frame_is_an_error() -> None:
    data = frame("ADDED", wrap(pod("a", "5"), "v1", "Pod"))
    with pytest.raises(codec.CodecError, match="ended inside a frame"):
        list(codec.protobuf_watch_events(io.BytesIO(data[:-3]), Pod))


class _Arrivals(io.RawIOBase):
    """A watch body arriving in the given pieces, one per read1, as a socket hands them over."""

    def __init__(self, pieces: list[bytes], before_read: Callable[[int], None] = lambda i: None) -> None:
        self.pieces, self.reads, self.before_read = list(pieces), 0, before_read

    def read1(self, n: int = -1) -> bytes:
        self.before_read(self.reads)
        self.reads += 1
        return self.pieces.pop(0) if self.pieces else b""


def test_watch_frames_split_and_joined_across_reads() -> None:
    data = b"".join(frame("ADDED", wrap(pod(f"p{i}", str(i)), "v1", "Pod")) for i in range(1, 6))
    # A header split in two, a frame split in three, then the rest in one read.
    cuts = [0, 2, 9, 40, 41, len(data)]
    pieces = [data[cuts[i]:cuts[i + 1]] for i in range(len(cuts) - 1)]
    events = list(codec.protobuf_watch_events(_Arrivals(pieces), Pod))  # type: ignore[arg-type]
    assert [(e.type, e.resource_version) for e in events] == [("ADDED", str(i)) for i in range(1, 6)]


def test_watch_event_handed_on_before_the_next_read() -> None:
    got: list[str] = []

    def before_read(i: int) -> None:
        # The event whose bytes came in read 0 is out before read 1 blocks for more.
        assert i == 0 or got == ["1"]

    stream = _Arrivals([frame("ADDED", wrap(pod("a", "1"), "v1", "Pod"))], before_read)
    events = codec.protobuf_watch_events(stream, Pod)  # type: ignore[arg-type]
    got.append(next(events).resource_version)
    assert list(events) == [] and stream.reads == 2


def test_one_read_for_a_burst_of_events() -> None:
    data = b"".join(frame("MODIFIED", wrap(pod("a", str(i)), "v1", "Pod")) for i in range(200))
    stream = _Arrivals([data])
    assert len(list(codec.protobuf_watch_events(stream, Pod))) == 200  # type: ignore[arg-type]
    assert stream.reads == 2  # the burst, then the end of the stream


def test_json_watch_lines() -> None:
    lines = [
        json.dumps({"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "a", "resourceVersion": "3"}}}),
        "",
        json.dumps({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "9",
                    "annotations": {"k8s.io/initial-events-end": "true"}}, "spec": {"containers": None}}}),
        json.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}),
    ]
    events = list(codec.json_watch_events(iter(x.encode() for x in lines), Pod))
    assert [(e.type, e.resource_version) for e in events] == [("ADDED", "3"), ("BOOKMARK", "9"), ("ERROR", "")]
    assert events[2].object.code == 410
