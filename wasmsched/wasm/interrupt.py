"""Ctrl-C (SIGINT) while guest code runs.

Python runs a signal's handler on the main thread at the next bytecode it executes. While a guest
runs, that is the entry of a ctypes callback (an import, or the epoch-deadline callback), before
any `try` in it: the default handler's KeyboardInterrupt would escape into ctypes, which prints it
as "Exception ignored" and drops it, and the guest would go on. A guest without a deadline
(`timeout`/`startTimeout` "0s") looping in wasm code would never see Python code at all.

So the host installs its own SIGINT handler (only over Python's default one): inside a guest
callback it just marks the interrupt pending; anywhere else it raises KeyboardInterrupt as the
default handler does. A pending interrupt stops guest code at its next check, on any thread:
stores without a deadline check every CHECK_SECONDS of guest execution (the epoch callback,
wasm/instance.py), `poll_oneoff` checks while it sleeps, and every guest call checks when it
returns; the call then raises KeyboardInterrupt, so `wasmsched` exits 130 as for any Ctrl-C.

SIGTERM keeps the default action (the process ends at once, wherever it is).
"""

from __future__ import annotations

import signal
import threading
import time
from types import CodeType, FrameType
from typing import Any

# How often guest code without a deadline looks for a pending interrupt.
CHECK_SECONDS = 0.1


class Interrupted(BaseException):
    """Unwinds a guest call (through a trap) after an interrupt; the call raises KeyboardInterrupt."""


class _State:
    pending = False
    installed = False  # our SIGINT handler is installed (set under _lock)


state = _State()
_guest_codes: set[CodeType] = set()
_lock = threading.Lock()


def register_callback(fn: Any) -> None:
    """Marks fn's code as a guest callback: a SIGINT arriving inside it only marks the interrupt pending."""
    _guest_codes.add(fn.__code__)


def install() -> None:
    """Installs the SIGINT handler if SIGINT still has Python's default handler (main thread only)."""
    with _lock:
        if state.installed or threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return  # the application manages SIGINT itself
        signal.signal(signal.SIGINT, _on_sigint)
        state.installed = True


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    # Pending for every thread: binding cycles run guests on worker threads, and they must stop too.
    state.pending = True
    f = frame
    while f is not None:
        if f.f_code in _guest_codes:
            return  # the guest call stops at its next check and raises KeyboardInterrupt
        f = f.f_back
    signal.default_int_handler(signum, frame)


def check() -> None:
    """Raises Interrupted if an interrupt is pending (called from guest callbacks)."""
    if state.pending:
        raise Interrupted


def raise_pending() -> None:
    """Raises KeyboardInterrupt if an interrupt is pending.

    The interrupt stays pending: other threads' guest calls must stop too, and the process is on its
    way out. An embedder that catches KeyboardInterrupt and goes on calls reset().
    """
    if state.pending:
        raise KeyboardInterrupt


def reset() -> None:
    state.pending = False


def sleep(seconds: float) -> None:
    """time.sleep that ends early (Interrupted) when an interrupt becomes pending."""
    end = time.monotonic() + seconds
    while True:
        check()
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, CHECK_SECONDS))
