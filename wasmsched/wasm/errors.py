"""Errors of the wasm host. Their texts are docs/abi.md §10's."""

from __future__ import annotations


class WasmLoadError(Exception):
    """A guest that cannot be loaded: bad args, unreachable URL, bad module, failed instantiation."""


class GuestCallError(Exception):
    """A failed export call; the text is the whole Error message (`wasm: <export> error: ...`)."""

    def __init__(self, text: str, discard: bool) -> None:
        super().__init__(text)
        self.text = text
        # True when the instance must never be used again (trap, timeout, proc_exit, host failure).
        self.discard = discard


class HostFunctionFailure(Exception):
    """Raised inside a host import to trap the running call (`host function <m>.<n> failed: ...`)."""


class MemoryFault(Exception):
    """Raised inside a host import that reads or writes outside the guest's memory: the call traps
    with `host function <module>.<name> failed: out of bounds memory access` (docs/abi.md §4.2)."""

    def __init__(self) -> None:
        super().__init__("out of bounds memory access")


class GuestTimeout(Exception):
    """The call's deadline passed while the guest slept in poll_oneoff; the text is the trap kind."""
