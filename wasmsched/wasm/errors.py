"""Errors of the wasm host. Their texts are ABI.md §10's."""

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
