"""Kubernetes wire formats to the project's generated protobuf types.

Lists and watches ask for `application/vnd.kubernetes.protobuf`: a body is the magic `k8s\\0` and a
runtime.Unknown whose `raw` is the object's own protobuf encoding, so the objects in the scheduler's
cache are decoded from the very bytes guests later get. A watch stream is length-delimited frames
(4 bytes, big endian) of metav1.WatchEvent, each carrying an object encoded as above. A server that
answers JSON instead (an aggregated API, a proxy) is decoded through the manifest converter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar

from google.protobuf.message import DecodeError as ProtoDecodeError
from google.protobuf.message import Message

from wasmsched.api.convert import ConversionError, dict_to_message
from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.gen.k8s_io.apimachinery.pkg.runtime import generated_pb2 as runtime_pb

PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON = "application/json"
# What lists, gets and watches ask for: protobuf, JSON if the server cannot.
ACCEPT = f"{PROTOBUF}, {JSON}"
ACCEPT_WATCH = f"{PROTOBUF};stream=watch, {JSON};stream=watch"
MAGIC = b"k8s\x00"
# A watch frame bigger than this is a broken stream, not an object (etcd's own limit is 1.5 MiB a value).
MAX_FRAME_BYTES = 64 << 20

M = TypeVar("M", bound=Message)


class CodecError(ValueError):
    """The server's bytes are not what the content type says."""


class WatchDecodeError(CodecError):
    """An event of a watch that cannot be decoded (client-go's StreamWatcher: "unable to decode an event from
    the watch stream", which ends the watch and makes the reflector list again). `object` names the object
    when its metadata could be read."""

    def __init__(self, message: str, object_name: str = "") -> None:
        super().__init__(f"unable to decode an event from the watch stream: {message}")
        self.object = object_name


@dataclass
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
    object: Any  # the decoded object; a meta Status for ERROR
    resource_version: str


def is_protobuf(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip() == PROTOBUF


def _unwrap(data: bytes) -> runtime_pb.Unknown:
    if not data.startswith(MAGIC):
        raise CodecError(f"protobuf body without the k8s magic prefix ({data[:8]!r})")
    unknown = runtime_pb.Unknown()
    try:
        unknown.ParseFromString(data[len(MAGIC):])
    except ProtoDecodeError as e:
        raise CodecError(f"cannot decode runtime.Unknown: {e}") from e
    return unknown


def encode_protobuf(msg: Message, api_version: str, kind: str) -> bytes:
    """A request body in the protobuf wire format: the magic and a runtime.Unknown naming the kind."""
    unknown = runtime_pb.Unknown()
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    unknown.raw = msg.SerializeToString()
    return MAGIC + unknown.SerializeToString()


def decode_protobuf(data: bytes, cls: type[M]) -> M:
    """A `k8s\\0`-prefixed body into a new `cls`; CodecError when the body holds another kind."""
    unknown = _unwrap(data)
    kind = unknown.typeMeta.kind
    if kind == "Status" and cls is not meta_pb.Status:
        status = meta_pb.Status()
        status.ParseFromString(unknown.raw)
        raise CodecError(f"server answered a Status instead of {cls.DESCRIPTOR.name}: {status.message}")
    msg = cls()
    try:
        msg.ParseFromString(unknown.raw)
    except ProtoDecodeError as e:
        raise CodecError(f"cannot decode {kind or cls.DESCRIPTOR.name}: {e}") from e
    return msg


def decode_json(data: bytes | dict[str, Any], cls: type[M]) -> M:
    obj = json.loads(data) if isinstance(data, bytes | str) else data
    if not isinstance(obj, dict):
        raise CodecError(f"expected a JSON object for {cls.DESCRIPTOR.name}")
    # TypeMeta is not part of the messages (protobuf carries it in the envelope).
    obj = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    try:
        return dict_to_message(obj, cls)
    except ConversionError as e:
        raise CodecError(f"cannot decode {cls.DESCRIPTOR.name} from JSON: {e}") from e


def is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip() == JSON


def not_an_api_answer(data: bytes, content_type: str | None) -> CodecError:
    """What a reply in neither wire format says (a login page, a proxy's error page): client-go gives
    `serializer for text/html doesn't exist`; this names the type and shows the start of the body."""
    text = " ".join(data[:120].decode(errors="replace").split())
    return CodecError(f"the server answered {content_type or 'no Content-Type'}, not a Kubernetes API object "
                      f"(is the kubeconfig's server an API server?): {text!r}")


def decode(data: bytes, content_type: str | None, cls: type[M]) -> M:
    if is_protobuf(content_type):
        return decode_protobuf(data, cls)
    if content_type and not is_json(content_type):
        raise not_an_api_answer(data, content_type)
    try:
        return decode_json(data, cls)
    except ValueError as e:  # json's own errors, which are not CodecErrors
        if isinstance(e, CodecError):
            raise
        raise CodecError(f"cannot decode {cls.DESCRIPTOR.name} from JSON: {e}") from e


def list_items(lst: Any) -> list[Any]:
    """A decoded List's items, each copied into a message of its own. A decoded item shares the arena of
    the page it came in, so one item kept (a node the store, the cache or a snapshot still holds while the
    others were replaced) keeps the whole page alive: ~7 MiB per 1,000 nodes, for as long as
    that one item lives. client-go's reflector copies a list's items for the same reason
    (meta.ExtractListWithAlloc)."""
    out = []
    for item in lst.items:
        own = type(item)()
        own.CopyFrom(item)
        out.append(own)
    return out


def _event_object(raw: bytes, cls: type[Message]) -> Any:
    """The object of a protobuf watch event: the full `k8s\\0` + Unknown encoding, or (from servers that
    embed it raw) the bare message. WatchDecodeError for an object of another kind (client-go's decoder:
    no such kind in its scheme) or bytes that are not the kind's message."""
    target: type[Message] = cls
    if raw.startswith(MAGIC):
        unknown = _unwrap(raw)
        kind = unknown.typeMeta.kind
        raw = unknown.raw
        if kind == "Status":
            target = meta_pb.Status
        elif kind and kind != cls.DESCRIPTOR.name:
            raise WatchDecodeError(f'an object of kind "{kind}" (apiVersion "{unknown.typeMeta.apiVersion}") '
                                   f"in a watch of {cls.DESCRIPTOR.name}", _object_name(raw))
    obj = target()
    try:
        obj.ParseFromString(raw)
    except ProtoDecodeError as e:
        raise WatchDecodeError(f"cannot decode {target.DESCRIPTOR.name}: {e}", _object_name(raw)) from e
    return obj


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _object_name(raw: bytes) -> str:
    """`namespace/name` of an object whose bytes do not decode as a whole, read from its metadata alone
    (field 1 of every kind): a bad spec still lets the log name the object. "" when that fails too."""
    pos = 0
    try:
        while pos < len(raw):
            key, pos = _varint(raw, pos)
            field, wire = key >> 3, key & 7
            if wire == 0:
                _, pos = _varint(raw, pos)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                size, pos = _varint(raw, pos)
                if field == 1:
                    meta = meta_pb.ObjectMeta()
                    meta.ParseFromString(raw[pos:pos + size])
                    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
                pos += size
            else:
                return ""
    except (IndexError, ProtoDecodeError):
        return ""
    return ""


def _resource_version(obj: Any) -> str:
    meta = getattr(obj, "metadata", None)
    return meta.resourceVersion if meta is not None else ""


# How much a watch read asks for at once: a burst of events (a KWOK status sweep, a backlog being bound)
# arrives in a few reads instead of two per event.
WATCH_READ_BYTES = 256 * 1024


def _frames(stream: BinaryIO) -> Iterator[bytes]:
    """The length-prefixed frames of a protobuf watch (a 4-byte big-endian size, then the frame).

    Reads with read1, which returns what has arrived (at least one byte) instead of waiting for the
    amount asked: each event is still handed on as soon as its last byte is in, and a burst costs one
    read (through urllib3, http.client's chunked decoding and TLS) per block rather than two per event."""
    read1 = stream.read1  # type: ignore[attr-defined]
    buf = bytearray()
    pos = 0
    while True:
        while len(buf) - pos >= 4:
            size = int.from_bytes(buf[pos:pos + 4], "big")
            if size > MAX_FRAME_BYTES:
                raise CodecError(f"watch frame of {size} bytes")
            end = pos + 4 + size
            if len(buf) < end:
                break
            yield bytes(buf[pos + 4:end])
            pos = end
        if pos:
            del buf[:pos]
            pos = 0
        chunk = read1(WATCH_READ_BYTES)
        if not chunk:
            if buf:
                want = 4 + int.from_bytes(buf[:4], "big") if len(buf) >= 4 else 4
                raise CodecError(f"watch stream ended inside a frame ({len(buf)} of {want} bytes)")
            return
        buf += chunk


def protobuf_watch_events(stream: BinaryIO, cls: type[Message]) -> Iterator[WatchEvent]:
    for frame in _frames(stream):
        ev = meta_pb.WatchEvent()
        try:
            ev.ParseFromString(frame)
        except ProtoDecodeError as e:
            raise WatchDecodeError(f"cannot decode a WatchEvent: {e}") from e
        obj = _event_object(ev.object.raw, cls)
        yield WatchEvent(ev.type, obj, _resource_version(obj))


def json_watch_events(lines: Iterator[bytes], cls: type[Message]) -> Iterator[WatchEvent]:
    for raw_line in lines:
        line = raw_line.strip()
        if not line:
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as e:
            raise WatchDecodeError(str(e)) from e
        if not isinstance(ev, dict) or not isinstance(ev.get("object") or {}, dict):
            raise WatchDecodeError("not an object with an object")
        etype = ev.get("type", "")
        raw = ev.get("object") or {}
        target: type[Message] = meta_pb.Status if raw.get("kind") == "Status" else cls
        if etype == "BOOKMARK":
            # A bookmark carries only metadata; strict conversion of the rest is pointless.
            raw = {"metadata": raw.get("metadata", {})}
        try:
            obj = decode_json(raw, target)
        except CodecError as e:
            meta = raw.get("metadata")
            name = meta.get("name", "") if isinstance(meta, dict) else ""
            ns = meta.get("namespace", "") if isinstance(meta, dict) else ""
            raise WatchDecodeError(str(e), f"{ns}/{name}" if ns else str(name)) from e
        yield WatchEvent(etype, obj, _resource_version(obj))


def json_object_watch_events(lines: Iterator[bytes]) -> Iterator[WatchEvent]:
    """A JSON watch stream of any resource (a dynamic informer's, kube/dynamic_informer.py): each event's
    object as parsed JSON (a dict; the Status of an ERROR event too), unconverted."""
    for raw_line in lines:
        line = raw_line.strip()
        if not line:
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as e:
            raise WatchDecodeError(str(e)) from e
        if not isinstance(ev, dict) or not isinstance(ev.get("object"), dict):
            raise WatchDecodeError("not an object with an object")
        obj = ev["object"]
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion", "") if isinstance(meta, dict) else ""
        yield WatchEvent(str(ev.get("type", "")), obj, rv if isinstance(rv, str) else "")
