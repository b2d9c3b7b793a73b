"""Status and Code: the result of running a plugin, as in kube-scheduler's framework/interface.go."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Code(IntEnum):
    # Values are the wire values of the wasm ABI and of kube-scheduler; never renumber.
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def display(self) -> str:
        return _CODE_NAMES.get(int(self), f"Code({int(self)})")


_CODE_NAMES = {
    0: "Success",
    1: "Error",
    2: "Unschedulable",
    3: "UnschedulableAndUnresolvable",
    4: "Wait",
    5: "Skip",
    6: "Pending",
}


def code_name(code: int) -> str:
    return _CODE_NAMES.get(code, f"Code({code})")


@dataclass(slots=True)
class Status:
    """A plugin result. `None` is used for Success everywhere, as a nil *Status is in Go."""

    code: int = Code.SUCCESS
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

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def as_error(self) -> BaseException:
        if self.err is not None:
            return self.err
        return RuntimeError(self.message())

    def __str__(self) -> str:
        return f"{code_name(self.code)}: {self.message()}" if self.reasons else code_name(self.code)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def status_code(status: Status | None) -> int:
    return Code.SUCCESS if status is None else status.code


def as_status(err: BaseException) -> Status:
    return Status.error(err)
