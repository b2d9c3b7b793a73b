"""Field errors formatted as k8s.io/apimachinery/pkg/util/validation/field does, and ConfigError."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


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
FORBIDDEN = "Forbidden"
UNKNOWN_FIELD = "unknown field"

_NO_VALUE_TYPES = (REQUIRED, FORBIDDEN)


def go_value(value: Any) -> str:
    """Render a bad value roughly as field.Error.ErrorBody does (%v for numbers, %q for strings)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "}"
    return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One error at a field path, e.g. `profiles[0].schedulerName: Required value`."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def __str__(self) -> str:
        if self.type == UNKNOWN_FIELD:
            return f'strict decoding error: unknown field "{self.field}"'
        body = self.type
        if self.type not in _NO_VALUE_TYPES and self.value is not OMIT:
            body += ": " + go_value(self.value)
        if self.detail:
            body += ": " + self.detail
        return f"{self.field}: {body}" if self.field else body


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, OMIT, detail)


def not_supported(path: str, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
    return FieldError(NOT_SUPPORTED, path, value, detail)


def unknown_field(path: str) -> FieldError:
    return FieldError(UNKNOWN_FIELD, path)


def child(path: str, name: str) -> str:
    """field.Path.Child: `a` + `b` -> `a.b` (a bare name at the root)."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """field.Path.Index: `a` + 0 -> `a[0]`."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """field.Path.Key: `a` + `k` -> `a[k]`."""
    return f"{path}[{k}]"


class ConfigError(Exception):
    """A KubeSchedulerConfiguration could not be read, decoded or validated.

    `errors` holds every FieldError found (decoding stops at the first phase that fails, as in
    kube-scheduler: parse, then strict decoding, then validation). `str()` gives one line per error,
    each prefixed with the file name when there is one.
    """

    def __init__(self, errors: Iterable[FieldError | str], file: str | None = None) -> None:
        self.errors: list[FieldError | str] = list(errors)
        self.file = file
        super().__init__(str(self))

    def with_file(self, file: str) -> ConfigError:
        return ConfigError(self.errors, file)

    def __str__(self) -> str:
        prefix = f"{self.file}: " if self.file else ""
        return "\n".join(prefix + str(e) for e in self.errors)
