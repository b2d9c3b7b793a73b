"""Field errors formatted as k8s.io/apimachinery/pkg/util/validation/field does, and ConfigError."""

from __future__ import annotations

from collections.abc import Iterable

# One implementation of field.Error for the API validation and the scheduler configuration.
from wasmsched.api.validation.field import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    OMIT,
    REQUIRED,
    UNKNOWN_FIELD,
    FieldError,
    GoStruct,
    aggregate,
    child,
    duplicate,
    forbidden,
    go_value,
    index,
    invalid,
    key,
    not_supported,
    required,
    unknown_field,
)

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_SUPPORTED",
    "OMIT",
    "REQUIRED",
    "UNKNOWN_FIELD",
    "ConfigError",
    "FieldError",
    "GoStruct",
    "child",
    "duplicate",
    "forbidden",
    "go_value",
    "index",
    "invalid",
    "key",
    "not_supported",
    "required",
    "unknown_field",
]


class ConfigError(Exception):
    """A KubeSchedulerConfiguration could not be read, decoded or validated.

    `errors` holds every FieldError found (decoding stops at the first phase that fails, as in
    kube-scheduler: parse, then strict decoding, then validation). `str()` is one line: the file name
    when there is one, then the errors as kube aggregates them (`[a, b]` when there are several).
    """

    def __init__(self, errors: Iterable[FieldError | str], file: str | None = None) -> None:
        self.errors: list[FieldError | str] = list(errors)
        self.file = file
        super().__init__(str(self))

    def with_file(self, file: str) -> ConfigError:
        return ConfigError(self.errors, file)

    def __str__(self) -> str:
        prefix = f"{self.file}: " if self.file else ""
        return prefix + aggregate(self.errors)
