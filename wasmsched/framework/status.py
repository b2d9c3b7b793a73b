"""Status and Code: the result of running a plugin, as in kube-scheduler's framework/interface.go."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypeGuard


class Code(IntEnum):
    """A status code. Values are the wire values of the wasm ABI and of kube-scheduler; never renumber.

    A guest may return a code outside these; it is kept verbatim (as kube-scheduler-wasm-extension's
    host keeps it), shows as `Code(7)`, and acts as Error wherever the framework tests for the codes below.
    """

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @classmethod
    def _missing_(cls, value: object) -> Code | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        pseudo = int.__new__(cls, value)
        pseudo._name_ = f"Code({value})"
        pseudo._value_ = value
        return pseudo

    def __str__(self) -> str:
        """kube's Code.String(): "Success", "UnschedulableAndUnresolvable", ..."""
        return _CODE_NAMES.get(self.value, self.name)


_CODE_NAMES = {
    0: "Success",
    1: "Error",
    2: "Unschedulable",
    3: "UnschedulableAndUnresolvable",
    4: "Wait",
    5: "Skip",
    6: "Pending",
}


@dataclass(slots=True)
class Status:
    """A plugin result.

    `None` means Success everywhere, as a nil *Status does in Go: plugins return None, and a value
    typed `Status | None` is tested with the nil-safe functions below (`is_success(st)`, ...), never
    by hand.
    """

    code: Code = Code.SUCCESS
    reasons: list[str] = field(default_factory=list)
    err: BaseException | None = None
    plugin: str = ""

    @classmethod
    def error(cls, err: BaseException | str, plugin: str = "") -> Status:
        e = err if isinstance(err, BaseException) else RuntimeError(err)
        return cls(Code.ERROR, [str(e)], e, plugin)

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE, list(reasons), None, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons), None, plugin)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def as_error(self) -> BaseException:
        if self.err is not None:
            return self.err
        return RuntimeError(self.message())

    def __str__(self) -> str:
        return f"{self.code}: {self.message()}" if self.reasons else str(self.code)


def is_success(st: Status | None) -> bool:
    """None or Success (Go's IsSuccess on a possibly nil *Status)."""
    return st is None or st.code == Code.SUCCESS


def not_success(st: Status | None) -> TypeGuard[Status]:
    """Any status but Success: an error, a rejection, Wait or Skip."""
    return st is not None and st.code != Code.SUCCESS


_REJECTED = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


def is_rejected(st: Status | None) -> TypeGuard[Status]:
    """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod does not fit, no error."""
    return st is not None and st.code in _REJECTED


def is_wait(st: Status | None) -> TypeGuard[Status]:
    return st is not None and st.code == Code.WAIT


def is_skip(st: Status | None) -> TypeGuard[Status]:
    return st is not None and st.code == Code.SKIP


def code_of(st: Status | None) -> Code:
    return Code.SUCCESS if st is None else st.code
