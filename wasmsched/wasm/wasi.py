"""WASI preview 1 as the host serves it: the sandbox of docs/abi.md §2, without a WASI context.

The native host (wasm/_host.c) serves every function but one: argv is the plugin's `args`, there
is no environment and there are no preopened directories (`fd_prestat_get` is `EBADF`), stdin reads
as EOF, stdout and stderr (`fd_write`) land in the instance's capture buffer (docs/abi.md §2, the
last OUTPUT_LIMIT bytes), clocks are the host's, `random_get` the OS CSPRNG, `proc_exit` ends the
call with the guest's exit code, and what needs a file, directory or socket is `EBADF` (`ENOTSUP`
on stdio). wasmtime's own WASI is not linked: it would start runtime threads, and its custom-output
streams call back from them.

`poll_oneoff` is served here: it is the one WASI call that blocks (a guest's sleep: standard Go's
time.Sleep, its idle scheduler). It sleeps at most until the call's deadline and then fails the
call with the same `timeout after <timeout>` a spinning guest gets (docs/abi.md §9: time in imports
counts), and Ctrl-C ends the sleep. Absolute deadlines are measured on the clocks the guest reads.

Layouts are WASI preview 1's (wasi_snapshot_preview1.witx): subscription 48 bytes, event 32 bytes.
"""

from __future__ import annotations

import struct
import time
from typing import TYPE_CHECKING

from wasmsched.wasm import interrupt, native
from wasmsched.wasm.abi import WASI_FUNCTIONS, WASI_NO_RESULT
from wasmsched.wasm.abi import WASI_MODULE as MODULE
from wasmsched.wasm.call_context import current
from wasmsched.wasm.errors import GuestTimeout
from wasmsched.wasm.import_traps import fault_text, import_error

if TYPE_CHECKING:
    import wasmtime

ERRNO_SUCCESS = 0
ERRNO_BADF = 8
ERRNO_FAULT = 21
ERRNO_INVAL = 28

CLOCK_REALTIME = 0
CLOCK_MONOTONIC = 1
CLOCK_PROCESS_CPUTIME = 2
CLOCK_THREAD_CPUTIME = 3

EVENTTYPE_CLOCK = 0
EVENTTYPE_FD_READ = 1
EVENTTYPE_FD_WRITE = 2
SUBCLOCKFLAGS_ABSTIME = 1
EVENTRWFLAGS_HANGUP = 1

SUBSCRIPTION_SIZE = 48
EVENT_SIZE = 32
# Enough for any real poll (Go's netpoll asks for a handful); bounds what a guest makes us read.
MAX_SUBSCRIPTIONS = 4096
# docs/abi.md §2: the last 64 KiB of a guest's output are kept for error texts (OUTPUT_LIMIT in _host.c).
OUTPUT_LIMIT = 64 << 10

_CLOCKS = {
    CLOCK_REALTIME: time.time_ns,
    CLOCK_MONOTONIC: time.monotonic_ns,
    CLOCK_PROCESS_CPUTIME: time.process_time_ns,
    CLOCK_THREAD_CPUTIME: time.thread_time_ns,
}


def _event(userdata: int, errno: int, etype: int, nbytes: int = 0, flags: int = 0) -> bytes:
    # userdata u64, error u16, type u8, pad, fd_readwrite { nbytes u64, flags u16 }, pad
    return struct.pack("<QHBxxxxxQH6x", userdata, errno, etype, nbytes, flags)


def define(linker: wasmtime.Linker) -> None:
    """Defines every WASI preview 1 function (abi.WASI_FUNCTIONS): natively, but poll_oneoff here."""
    special = {"clock_time_get": native.H_CLOCK_TIME_GET, "fd_write": native.H_FD_WRITE,
               "poll_oneoff": native.H_PYTHON}
    for name, params in WASI_FUNCTIONS.items():
        handler = special.get(name, native.H_WASI)
        native.define_import(linker, MODULE, name, params, name not in WASI_NO_RESULT, handler,
                             poll_oneoff if handler == native.H_PYTHON else None,
                             import_error(MODULE, name), fault_text(MODULE, name))


def poll_oneoff(caller: native.Caller, in_ptr: int, out_ptr: int, nsubscriptions: int, nevents_ptr: int) -> int:
    n = nsubscriptions & 0xFFFFFFFF
    if n == 0 or n > MAX_SUBSCRIPTIONS:
        return ERRNO_INVAL
    inst = current()
    raw = caller.read(in_ptr, n * SUBSCRIPTION_SIZE)
    if raw is None:
        return ERRNO_FAULT
    start = time.monotonic_ns()
    events: list[bytes] = []
    clocks: list[tuple[int, int]] = []  # (wake-up on the monotonic clock, userdata)
    for i in range(n):
        sub = raw[i * SUBSCRIPTION_SIZE:(i + 1) * SUBSCRIPTION_SIZE]
        userdata, tag = struct.unpack_from("<QB", sub, 0)
        if tag == EVENTTYPE_CLOCK:
            clock_id, timeout, _precision, flags = struct.unpack_from("<I4xQQH", sub, 16)
            if clock_id not in (CLOCK_REALTIME, CLOCK_MONOTONIC):
                events.append(_event(userdata, ERRNO_INVAL, tag))
                continue
            delay = timeout - _CLOCKS[clock_id]() if flags & SUBCLOCKFLAGS_ABSTIME else timeout
            clocks.append((start + max(delay, 0), userdata))
        elif tag in (EVENTTYPE_FD_READ, EVENTTYPE_FD_WRITE):
            (fd,) = struct.unpack_from("<I", sub, 16)
            if tag == EVENTTYPE_FD_READ and fd == 0:
                events.append(_event(userdata, ERRNO_SUCCESS, tag, 0, EVENTRWFLAGS_HANGUP))  # stdin at EOF
            elif tag == EVENTTYPE_FD_WRITE and fd in (1, 2):
                events.append(_event(userdata, ERRNO_SUCCESS, tag))  # captured output never blocks
            else:
                events.append(_event(userdata, ERRNO_BADF, tag))  # no other descriptors exist
        else:
            return ERRNO_INVAL
    if not events and clocks:
        wake = min(at for at, _ in clocks)
        deadline = inst.deadline
        if deadline is not None and wake > deadline:
            interrupt.sleep(max(deadline - time.monotonic_ns(), 0) / 1e9)
            raise GuestTimeout(f"timeout after {inst.deadline_text}")
        # Ctrl-C ends the sleep (wasm/interrupt.py), also with no deadline and on any thread.
        interrupt.sleep(max(wake - time.monotonic_ns(), 0) / 1e9)
    now = time.monotonic_ns()
    events.extend(_event(userdata, ERRNO_SUCCESS, EVENTTYPE_CLOCK) for at, userdata in clocks if at <= now)
    if not caller.write(out_ptr, b"".join(events)):
        return ERRNO_FAULT
    if not caller.write(nevents_ptr, struct.pack("<I", len(events))):
        return ERRNO_FAULT
    return ERRNO_SUCCESS
