"""What a failing import does to the guest call: it traps, with the text of docs/abi.md §4.2 and §10,
and the running instance records what the call's error must say (the host failure's kind, or the
interrupt to raise again). Every import, the host's (wasm/host.py) and WASI's (wasm/wasi.py), is
defined with these."""

from __future__ import annotations

from collections.abc import Callable

from wasmsched.wasm.call_context import running
from wasmsched.wasm.errors import GuestTimeout, MemoryFault
from wasmsched.wasm.interrupt import Interrupted


def fault_text(module: str, name: str) -> str:
    """The trap text of an import reading or writing outside the guest's memory (§4.2)."""
    return f"host function {module}.{name} failed: {MemoryFault()}"


def import_error(module: str, name: str) -> Callable[[BaseException], str]:
    """The trap text for an exception in an import: any host-side failure traps the call."""

    def text(e: BaseException) -> str:
        inst = running()
        if not isinstance(e, Exception):
            # Ctrl-C (or an exit) inside the import: the call raises it again once the trap has
            # unwound the guest (interrupt.Interrupted: an interrupt is pending, same outcome).
            if inst is not None and not isinstance(e, Interrupted):
                inst.interrupt = e
            return f"host function {module}.{name} interrupted"
        if isinstance(e, GuestTimeout):
            if inst is not None:
                inst.host_failure = str(e)  # the trap kind, as for a guest stopped in wasm code
            return str(e)
        msg = f"host function {module}.{name} failed: {str(e) or type(e).__name__}"
        if inst is not None:
            inst.host_failure = msg  # the trap kind (docs/abi.md §10)
        return msg

    return text
