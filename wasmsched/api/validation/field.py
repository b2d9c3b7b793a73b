"""Field errors as k8s.io/apimachinery/pkg/util/validation/field formats them, and kube's aggregate
error text (`Pod "p1" is invalid: [a: ..., b: ...]`).

Paths are plain strings built the way field.Path prints them (`spec.containers[0].name`,
`metadata.labels`, `requests[cpu]`); validators build them only when they report an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from wasmsched.api.decoding import shorten
from wasmsched.util.suggest import did_you_mean


class _Omit:
    """Stands for field.OmitValueType: the bad value is not printed."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()

# field.ErrorType strings.
INVALID = "Invalid value"
REQUIRED = "Required value"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
NOT_FOUND = "Not found"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"
TOO_MANY = "Too many"
# Not a field.ErrorType: sigs.k8s.io/json's strict-decoding error, kept with the others so that one
# list holds every problem of a configuration file.
UNKNOWN_FIELD = "unknown field"

_NO_VALUE_TYPES = (REQUIRED, FORBIDDEN, TOO_LONG)

# Values longer than this are cut in messages: kube prints the whole value, but a multi-megabyte
# label or name would make a useless one-line error.
_MAX_STRING_VALUE = 256


class GoStruct:
    """A value that Go renders with json.Marshal as an object in a given field order (internal API
    types without json tags keep their Go field names, e.g. `{"Enabled":[...],"Disabled":null}`)."""

    def __init__(self, fields: Sequence[tuple[str, Any]]) -> None:
        self.fields = list(fields)

    def to_json(self) -> Any:
        return {k: _jsonable(v) for k, v in self.fields}


def _jsonable(value: Any) -> Any:
    if isinstance(value, GoStruct):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def go_value(value: Any) -> str:
    """A bad value as field.Error.ErrorBody prints it: %v for numbers and bools, %q for strings, JSON
    for everything else (lists, maps, structs, null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(shorten(value, _MAX_STRING_VALUE), ensure_ascii=False)
    try:
        text = json.dumps(_jsonable(value), separators=(",", ":"), ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError, RecursionError):
        text = "<value omitted>"
    return shorten(text, _MAX_STRING_VALUE)


@dataclass(frozen=True)
class FieldError:
    """One error at a field path, e.g. `spec.containers[0].name: Required value`."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """field.Error.ErrorBody."""
        body = self.type
        if self.type not in _NO_VALUE_TYPES and self.value is not OMIT:
            body += ": " + go_value(self.value)
        if self.detail:
            body += ": " + self.detail
        return body

    def __str__(self) -> str:
        if self.type == UNKNOWN_FIELD:
            return f'strict decoding error: unknown field "{self.field}"{self.detail}'
        return f"{self.field}: {self.body()}" if self.field else self.body()


ErrorList = list[FieldError]


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, OMIT, detail)


def too_long(path: str, max_length: int) -> FieldError:
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(TOO_LONG, path, OMIT, f"may not be more than {max_length} {unit}")


def not_supported(path: str, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
    return FieldError(NOT_SUPPORTED, path, value, detail)


def unknown_field(path: str, key: str = "", known: Iterable[str] = ()) -> FieldError:
    """kube's strict decoding error at path; `known`, the keys allowed beside `key`, adds "did you mean"."""
    return FieldError(UNKNOWN_FIELD, path, OMIT, did_you_mean(key, known) if key else "")


def child(path: str, name: str) -> str:
    """field.Path.Child: `a` + `b` -> `a.b` (a bare name at the root)."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """field.Path.Index: `a` + 0 -> `a[0]`."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """field.Path.Key: `a` + `k` -> `a[k]`."""
    return f"{path}[{k}]"


def aggregate(errors: Iterable[FieldError | str]) -> str:
    """ErrorList.ToAggregate().Error(): one message alone, several as `[a, b]`, duplicates dropped."""
    seen: dict[str, None] = {}
    for e in errors:
        seen.setdefault(str(e), None)
    msgs = list(seen)
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


def invalid_message(qualified_kind: str, name: str, errors: Iterable[FieldError]) -> str:
    """apierrors.NewInvalid's message: `Pod "p1" is invalid: ...`."""
    return f"{qualified_kind} {json.dumps(name, ensure_ascii=False)} is invalid: {aggregate(errors)}"
