"""Strict decoding of YAML/JSON values into typed fields, as kube-scheduler's strict codec does.

Unknown keys are errors; a null value is the same as an absent key (Go leaves the zero value or a nil
pointer); numbers must be integers in range of the Go field's type. Errors are collected, and
`Reader.close()` (or `raise_if_errors`) raises one ConfigError with all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wasmsched.api.decoding import HugeNumber, describe_number, json_type_name
from wasmsched.config.errors import OMIT, ConfigError, FieldError, child, index, invalid, unknown_field
from wasmsched.util.intbounds import INT32, INT64


def type_error(path: str, value: Any, want: str) -> FieldError:
    """The equivalent of Go's `json: cannot unmarshal X into Go struct field ... of type T`."""
    return invalid(path, value, f"cannot unmarshal {json_type_name(value)} into a field of type {want}")


class Reader:
    """Reads the keys of one JSON object at `path`, recording errors in the shared `errors` list."""

    def __init__(self, obj: Any, path: str, errors: list[FieldError], allowed: Iterable[str]) -> None:
        self.path = path
        self.errors = errors
        self.obj: dict[str, Any] = {}
        if obj is None:
            return
        if not isinstance(obj, dict):
            errors.append(type_error(path, obj, "object"))
            return
        allowed_set = set(allowed)
        for k, v in obj.items():
            if not isinstance(k, str):
                errors.append(unknown_field(child(path, str(k))))
            elif k not in allowed_set:
                errors.append(unknown_field(child(path, k), k, allowed_set))
            else:
                self.obj[k] = v

    def at(self, name: str) -> str:
        return child(self.path, name)

    def has(self, name: str) -> bool:
        return self.obj.get(name) is not None

    def raw(self, name: str) -> Any:
        return self.obj.get(name)

    def opt_int(self, name: str, bounds: tuple[int, int] = INT32) -> int | None:
        return read_int(self.obj.get(name), self.at(name), self.errors, None, bounds)

    def int32(self, name: str, default: int) -> int:
        v = self.opt_int(name, INT32)
        return default if v is None else v

    def int64(self, name: str, default: int) -> int:
        v = self.opt_int(name, INT64)
        return default if v is None else v

    def boolean(self, name: str, default: bool = False) -> bool:
        v = self.obj.get(name)
        if v is None:
            return default
        if not isinstance(v, bool):
            self.errors.append(type_error(self.at(name), v, "bool"))
            return default
        return v

    def string(self, name: str, default: str | None = None) -> str | None:
        v = self.obj.get(name)
        if v is None:
            return default
        if not isinstance(v, str):
            self.errors.append(type_error(self.at(name), v, "string"))
            return default
        return v

    def items(self, name: str) -> list[tuple[str, Any]]:
        """The items of a list field with their paths; [] when absent or null."""
        v = self.obj.get(name)
        if v is None:
            return []
        if not isinstance(v, list):
            self.errors.append(type_error(self.at(name), v, "array"))
            return []
        return [(index(self.at(name), i), item) for i, item in enumerate(v)]

    def str_list(self, name: str) -> list[str]:
        out: list[str] = []
        for p, item in self.items(name):
            if isinstance(item, str):
                out.append(item)
            else:
                self.errors.append(type_error(p, item, "string"))
        return out

    def close(self) -> None:
        raise_if_errors(self.errors)


def read_int(
    v: Any, path: str, errors: list[FieldError], default: int | None, bounds: tuple[int, int]
) -> int | None:
    want = "int32" if bounds == INT32 else "int64"
    if v is None:
        return default
    if isinstance(v, HugeNumber):
        errors.append(
            invalid(path, OMIT, f"cannot unmarshal number {describe_number(v)} into a field of type {want}")
        )
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        errors.append(type_error(path, v, want))
        return default
    if not bounds[0] <= v <= bounds[1]:
        errors.append(invalid(path, v, f"cannot unmarshal number {v} into a field of type {want}"))
        return default
    return v


def raise_if_errors(errors: list[FieldError]) -> None:
    if errors:
        raise ConfigError(errors)
