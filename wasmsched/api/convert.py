"""Conversion between parsed YAML/JSON (plain dicts) and the generated Kubernetes messages.

Field names of the generated protos are the Kubernetes JSON names, so the conversion walks the
message descriptor. A handful of apimachinery wire types have a JSON form different from their
protobuf layout (Quantity, Time, MicroTime, Duration, IntOrString, RawExtension, FieldsV1); they
are mapped explicitly. Per-descriptor decode/encode tables are built once and cached, because
manifests with thousands of pods are converted in one go.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from wasmsched.api.decoding import HugeNumber, describe_number, json_type_name, shorten
from wasmsched.api.quantity import canonical_quantity
from wasmsched.api.types import TYPE_META
from wasmsched.api.wellknown import format_go_duration, format_rfc3339, parse_go_duration, parse_rfc3339
from wasmsched.util.intbounds import INT32, INT64, UINT32, UINT64

M = TypeVar("M", bound=Message)

QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
TIME = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
DURATION = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
FIELDS_V1 = "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"

_TYPE_META_KEYS = frozenset({"apiVersion", "kind"})

# Go structs embedded anonymously (`json:""`): their fields appear inline in the parent's JSON
# object, while protobuf keeps them in a nested message. Taken from k8s.io/api core/v1 types.go.
INLINE_FIELDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("k8s.io.api.core.v1.Volume", "volumeSource"),
        ("k8s.io.api.core.v1.PersistentVolumeSpec", "persistentVolumeSource"),
        ("k8s.io.api.core.v1.SecretProjection", "localObjectReference"),
        ("k8s.io.api.core.v1.ConfigMapVolumeSource", "localObjectReference"),
        ("k8s.io.api.core.v1.ConfigMapProjection", "localObjectReference"),
        ("k8s.io.api.core.v1.ConfigMapKeySelector", "localObjectReference"),
        ("k8s.io.api.core.v1.SecretKeySelector", "localObjectReference"),
        ("k8s.io.api.core.v1.ConfigMapEnvSource", "localObjectReference"),
        ("k8s.io.api.core.v1.SecretEnvSource", "localObjectReference"),
        ("k8s.io.api.core.v1.Probe", "handler"),
        ("k8s.io.api.core.v1.EphemeralContainer", "ephemeralContainerCommon"),
    }
)


def _is_inline(f: FieldDescriptor) -> bool:
    return (cast(Descriptor, f.containing_type).full_name, f.name) in INLINE_FIELDS


# The protobuf stubs type these as optional (None for a scalar field, a field outside a message) and the
# message's DESCRIPTOR as either implementation's class; here they are always a message's descriptor.
def _message_type(f: FieldDescriptor) -> Descriptor:
    """The message type of a message or map field f."""
    return cast(Descriptor, f.message_type)


def _descriptor(msg: Message) -> Descriptor:
    return cast(Descriptor, msg.DESCRIPTOR)


class ConversionError(ValueError):
    """A conversion failure at a field path such as `spec.containers[0].image`."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message

    def prefixed(self, segment: str) -> ConversionError:
        """The same error one level up: `segment` joined in front of the path."""
        if not self.path:
            path = segment
        elif self.path.startswith("["):
            path = segment + self.path
        else:
            path = f"{segment}.{self.path}"
        return ConversionError(path, self.message)


def _wrong(expected: str, value: object) -> ConversionError:
    """A type mismatch in the words of Go's JSON decoder."""
    return ConversionError("", f"cannot unmarshal {json_type_name(value)} into a field of type {expected}")


# ---------------------------------------------------------------- dict -> message

Scalar = Callable[[Any], Any]
Filler = Callable[[Any, Any], None]
Setter = Callable[[Any, Any], None]


def _int_scalar(bounds: tuple[int, int], name: str) -> Scalar:
    """A checker for integer fields: ints (or integral floats) within bounds, never bools."""
    lo, hi = bounds

    def conv(v: Any) -> int:
        if isinstance(v, HugeNumber):
            raise ConversionError(
                "", f"cannot unmarshal number {describe_number(v)} into a field of type {name}: out of range"
            )
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _wrong(name, v)
        if isinstance(v, float):
            if not v.is_integer():
                raise ConversionError("", f"cannot unmarshal number {v} into a field of type {name}")
            v = int(v)
        if not lo <= v <= hi:
            raise ConversionError(
                "", f"cannot unmarshal number {v} into a field of type {name}: out of range"
            )
        return v

    return conv


def _str_scalar(v: Any) -> str:
    if not isinstance(v, str):
        raise _wrong("string", v)
    return v


def _bool_scalar(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _wrong("bool", v)
    return v


def _float_scalar(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _wrong("number", v)
    return float(v)


def _bytes_scalar(v: Any) -> bytes:
    # Go encodes []byte as standard base64
    if not isinstance(v, str):
        raise _wrong("[]byte", v)
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ConversionError("", f"illegal base64 data: {e}") from None


_SCALARS: dict[int, Scalar] = {
    FieldDescriptor.TYPE_STRING: _str_scalar,
    FieldDescriptor.TYPE_BOOL: _bool_scalar,
    FieldDescriptor.TYPE_INT32: _int_scalar(INT32, "int32"),
    FieldDescriptor.TYPE_SINT32: _int_scalar(INT32, "int32"),
    FieldDescriptor.TYPE_SFIXED32: _int_scalar(INT32, "int32"),
    FieldDescriptor.TYPE_INT64: _int_scalar(INT64, "int64"),
    FieldDescriptor.TYPE_SINT64: _int_scalar(INT64, "int64"),
    FieldDescriptor.TYPE_SFIXED64: _int_scalar(INT64, "int64"),
    FieldDescriptor.TYPE_UINT32: _int_scalar(UINT32, "uint32"),
    FieldDescriptor.TYPE_FIXED32: _int_scalar(UINT32, "uint32"),
    FieldDescriptor.TYPE_UINT64: _int_scalar(UINT64, "uint64"),
    FieldDescriptor.TYPE_FIXED64: _int_scalar(UINT64, "uint64"),
    FieldDescriptor.TYPE_DOUBLE: _float_scalar,
    FieldDescriptor.TYPE_FLOAT: _float_scalar,
    FieldDescriptor.TYPE_BYTES: _bytes_scalar,
}


def quantity_string(v: Any) -> str:
    """Validate a JSON quantity (string or number) and return the string Kubernetes would store."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise _wrong("resource.Quantity", v)
    text = v.strip() if isinstance(v, str) else repr(v)
    try:
        return canonical_quantity(text)
    except ValueError as e:
        raise ConversionError("", str(e)) from None


def _fill_quantity(msg: Any, v: Any) -> None:
    msg.string = quantity_string(v)


def _fill_time(msg: Any, v: Any) -> None:
    if not isinstance(v, str):
        raise _wrong("metav1.Time", v)
    try:
        msg.seconds, msg.nanos = parse_rfc3339(v)
    except ValueError as e:
        raise ConversionError("", str(e)) from None


def _fill_duration(msg: Any, v: Any) -> None:
    if not isinstance(v, str):
        raise _wrong("metav1.Duration", v)
    try:
        msg.duration = parse_go_duration(v)
    except ValueError as e:
        raise ConversionError("", str(e)) from None


def _fill_int_or_string(msg: Any, v: Any) -> None:
    if isinstance(v, str):
        msg.type = 1
        msg.strVal = v
        return
    if isinstance(v, bool) or not isinstance(v, int):
        raise _wrong("intstr.IntOrString", v)
    msg.type = 0
    msg.intVal = _SCALARS[FieldDescriptor.TYPE_INT32](v)


def _raw_json(v: Any) -> bytes:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def _fill_raw_extension(msg: Any, v: Any) -> None:
    msg.raw = _raw_json(v)


def _fill_fields_v1(msg: Any, v: Any) -> None:
    msg.Raw = _raw_json(v)


_SPECIAL_FILLERS: dict[str, Filler] = {
    QUANTITY: _fill_quantity,
    TIME: _fill_time,
    MICRO_TIME: _fill_time,
    DURATION: _fill_duration,
    INT_OR_STRING: _fill_int_or_string,
    RAW_EXTENSION: _fill_raw_extension,
    FIELDS_V1: _fill_fields_v1,
}

_DECODE_TABLES: dict[str, dict[str, Setter]] = {}


def _message_filler(desc: Descriptor) -> Filler:
    """The function that fills a message of type desc from a JSON value."""
    special = _SPECIAL_FILLERS.get(desc.full_name)
    if special is not None:
        return special
    name = desc.full_name
    allow_type_meta = name in TYPE_META

    def fill(msg: Any, data: Any) -> None:
        _fill_fields(msg, data, _DECODE_TABLES.get(name) or _decode_table(desc), allow_type_meta)

    return fill


def _fill_fields(msg: Any, data: Any, table: dict[str, Setter], allow_type_meta: bool) -> None:
    """Set every key of data on msg through the field table."""
    if not isinstance(data, Mapping):
        raise _wrong("object", data)
    for key, value in data.items():
        setter = table.get(key)
        if setter is None:
            if allow_type_meta and key in _TYPE_META_KEYS:
                continue
            name = shorten(str(key))  # keys come from the input: never put a huge one in a message
            raise ConversionError(name, f'unknown field "{name}"')
        if value is None:
            # JSON null leaves the Go field at its zero value
            continue
        try:
            setter(msg, value)
        except ConversionError as e:
            raise e.prefixed(shorten(key)) from None


def _map_setter(f: FieldDescriptor) -> Setter:
    """Setter for a proto map field (a JSON object with string keys)."""
    name = f.name
    value_field = _message_type(f).fields_by_name["value"]
    key_conv = _SCALARS[_message_type(f).fields_by_name["key"].type]
    if value_field.type == FieldDescriptor.TYPE_MESSAGE:
        fill = _message_filler(_message_type(value_field))
        # encoding/json hands a null map value to Quantity.UnmarshalJSON, which reads it as zero: the
        # entry exists and holds "0" (`cpu: null` in a ResourceList).
        null_value = "0" if _message_type(value_field).full_name == QUANTITY else None

        def set_message_map(msg: Any, data: Any) -> None:
            if not isinstance(data, Mapping):
                raise _wrong("map", data)
            target = getattr(msg, name)
            for k, v in data.items():
                try:
                    entry = target[key_conv(k)]
                    if v is not None:
                        fill(entry, v)
                    elif null_value is not None:
                        entry.string = null_value
                except ConversionError as e:
                    raise e.prefixed(shorten(str(k))) from None

        return set_message_map
    conv = _SCALARS[value_field.type]

    def set_scalar_map(msg: Any, data: Any) -> None:
        if not isinstance(data, Mapping):
            raise _wrong("map", data)
        target = getattr(msg, name)
        for k, v in data.items():
            try:
                target[key_conv(k)] = conv(v) if v is not None else value_field.default_value
            except ConversionError as e:
                raise e.prefixed(shorten(str(k))) from None

    return set_scalar_map


def _repeated_setter(f: FieldDescriptor) -> Setter:
    """Setter for a repeated field (a JSON array)."""
    name = f.name
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        fill = _message_filler(_message_type(f))

        def set_messages(msg: Any, data: Any) -> None:
            if not isinstance(data, list):
                raise _wrong("array", data)
            target = getattr(msg, name)
            for i, v in enumerate(data):
                item = target.add()
                if v is None:
                    continue
                try:
                    fill(item, v)
                except ConversionError as e:
                    raise e.prefixed(f"[{i}]") from None

        return set_messages
    conv = _SCALARS[f.type]

    def set_scalars(msg: Any, data: Any) -> None:
        if not isinstance(data, list):
            raise _wrong("array", data)
        out = []
        for i, v in enumerate(data):
            try:
                out.append(conv(v))
            except ConversionError as e:
                raise e.prefixed(f"[{i}]") from None
        getattr(msg, name).extend(out)

    return set_scalars


def _singular_setter(f: FieldDescriptor) -> Setter:
    """Setter for a singular scalar or message field."""
    name = f.name
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        fill = _message_filler(_message_type(f))

        def set_message(msg: Any, v: Any) -> None:
            sub = getattr(msg, name)
            # presence matters even for empty objects (`emptyDir: {}`)
            sub.SetInParent()
            fill(sub, v)

        return set_message
    conv = _SCALARS[f.type]

    def set_scalar(msg: Any, v: Any) -> None:
        setattr(msg, name, conv(v))

    return set_scalar


def _inline_setters(f: FieldDescriptor) -> dict[str, Setter]:
    """Setters for the fields of an inlined message, each reaching through the embedding field."""
    name = f.name
    out: dict[str, Setter] = {}
    for key, inner in _decode_table(_message_type(f)).items():

        def set_inline(msg: Any, v: Any, inner: Setter = inner) -> None:
            sub = getattr(msg, name)
            sub.SetInParent()
            inner(sub, v)

        out[key] = set_inline
    return out


def _is_map(f: FieldDescriptor) -> bool:
    return f.type == FieldDescriptor.TYPE_MESSAGE and _message_type(f).GetOptions().map_entry


def _decode_table(desc: Descriptor) -> dict[str, Setter]:
    """The JSON-name -> setter table of a message type (built once)."""
    table = _DECODE_TABLES.get(desc.full_name)
    if table is not None:
        return table
    table = {}
    # registered before filling so recursive types find it
    _DECODE_TABLES[desc.full_name] = table
    for f in desc.fields:
        if _is_inline(f):
            table.update(_inline_setters(f))
        elif _is_map(f):
            table[f.name] = _map_setter(f)
        elif f.is_repeated:
            table[f.name] = _repeated_setter(f)
        else:
            table[f.name] = _singular_setter(f)
    return table


def dict_to_message(data: Mapping[str, Any], cls: type[M]) -> M:
    """Convert a decoded JSON/YAML object into a new message of type cls; raises ConversionError."""
    msg = cls()
    fill_message(msg, data)
    return msg


def fill_message(msg: Message, data: Mapping[str, Any]) -> None:
    """Merge a decoded JSON/YAML object into msg; raises ConversionError with the field path."""
    _message_filler(_descriptor(msg))(msg, data)


# ---------------------------------------------------------------- message -> dict

Encoder = Callable[[Any], Any]


def _time_out(msg: Any) -> str:
    return format_rfc3339(msg.seconds, msg.nanos)


def _micro_time_out(msg: Any) -> str:
    return format_rfc3339(msg.seconds, msg.nanos, micro=True)


def _raw_out(raw: bytes) -> Any:
    return json.loads(raw) if raw else None


_SPECIAL_ENCODERS: dict[str, Encoder] = {
    QUANTITY: lambda m: m.string,
    TIME: _time_out,
    MICRO_TIME: _micro_time_out,
    DURATION: lambda m: format_go_duration(m.duration),
    INT_OR_STRING: lambda m: m.strVal if m.type == 1 else m.intVal,
    RAW_EXTENSION: lambda m: _raw_out(m.raw),
    FIELDS_V1: lambda m: _raw_out(m.Raw),
}

_ENCODE_TABLES: dict[str, dict[str, Encoder]] = {}


def _bytes_out(v: bytes) -> str:
    return base64.b64encode(v).decode()


def _value_encoder(f: FieldDescriptor) -> Encoder:
    """Encoder of one (non-repeated) value of field f."""
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        return _message_encoder(_message_type(f))
    if f.type == FieldDescriptor.TYPE_BYTES:
        return _bytes_out
    return _identity


def _identity(v: Any) -> Any:
    return v


def _message_encoder(desc: Descriptor) -> Encoder:
    """The function that renders a message of type desc as its JSON value."""
    special = _SPECIAL_ENCODERS.get(desc.full_name)
    if special is not None:
        return special
    name = desc.full_name
    inline = frozenset(f.name for f in desc.fields if _is_inline(f))

    def encode(msg: Any) -> Any:
        table = _ENCODE_TABLES.get(name) or _encode_table(desc)
        out: dict[str, Any] = {}
        for fd, v in msg.ListFields():
            value = table[fd.name](v)
            if fd.name in inline:
                out.update(value)
            else:
                out[fd.name] = value
        return out

    return encode


def _field_encoder(f: FieldDescriptor) -> Encoder:
    """Encoder of the whole value of field f (maps and lists included)."""
    if _is_map(f):
        enc = _value_encoder(_message_type(f).fields_by_name["value"])
        return lambda m: {k: enc(v) for k, v in m.items()}
    enc = _value_encoder(f)
    if f.is_repeated:
        if enc is _identity:
            return list
        return lambda items: [enc(v) for v in items]
    return enc


def _encode_table(desc: Descriptor) -> dict[str, Encoder]:
    """The field-name -> encoder table of a message type (built once)."""
    table: dict[str, Encoder] = {}
    _ENCODE_TABLES[desc.full_name] = table
    for f in desc.fields:
        table[f.name] = _field_encoder(f)
    return table


def message_to_dict(msg: Message, with_type_meta: bool = True) -> dict[str, Any]:
    """Render msg as its Kubernetes JSON object, omitting unset fields (apiVersion/kind for top-level kinds)."""
    body = _message_encoder(_descriptor(msg))(msg)
    if not isinstance(body, dict):
        raise TypeError(f"{msg.DESCRIPTOR.full_name} does not render as a JSON object")
    gvk = TYPE_META.get(msg.DESCRIPTOR.full_name) if with_type_meta else None
    if gvk is None:
        return body
    return {"apiVersion": gvk[0], "kind": gvk[1], **body}
