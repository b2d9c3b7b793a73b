"""The WASI preview 1 functions the host serves itself, shadowing wasmtime's.

`poll_oneoff` is the one WASI call that blocks (a guest's sleep: standard Go's time.Sleep, its idle
scheduler). wasmtime's version sleeps in native code where the epoch deadline cannot reach, so one
`time.Sleep(time.Hour)` would hold the scheduler for an hour. Here it sleeps at most until the
call's deadline and then fails the call with the same `timeout after <timeout>` a spinning guest
gets (docs/abi.md §9: time in imports counts). `clock_time_get` is served alongside so that absolute
deadlines in `poll_oneoff` are measured on the clocks the guest reads.

`fd_write` is served so that the guest's stdout and stderr land in the instance's capture buffer
(docs/abi.md §2) synchronously, on the calling thread. wasmtime's own custom-output streams call back into
Python from its tokio worker threads, and such a callback (or the stream's finalizer) running while
the interpreter shuts down aborts the whole process. No other descriptor is writable: stdin is
read-only and there are no preopened directories. Every other WASI function stays wasmtime's.

Layouts are WASI preview 1's (wasi_snapshot_preview1.witx): subscription 48 bytes, event 32 bytes.
"""

from __future__ import annotations

import struct
import time
from typing import TYPE_CHECKING, Any

from wasmsched.wasm import interrupt, native
from wasmsched.wasm.abi import WASI_MODULE as MODULE
from wasmsched.wasm.errors import MemoryFault

if TYPE_CHECKING:
    import wasmtime

    from wasmsched.wasm.host import Host
    from wasmsched.wasm.instance import GuestInstance

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
# Linux's IOV_MAX: bounds the work one fd_write makes the host do.
MAX_IOVECS = 1024
IOVEC_SIZE = 8
STDOUT, STDERR = 1, 2
# A 32-bit memory ends here at the latest.
MEMORY_END = 1 << 32
# docs/abi.md §2: the last 64 KiB of a guest's output are kept for error texts.
OUTPUT_LIMIT = 64 << 10

_CLOCKS = {
    CLOCK_REALTIME: time.time_ns,
    CLOCK_MONOTONIC: time.monotonic_ns,
    CLOCK_PROCESS_CPUTIME: time.process_time_ns,
    CLOCK_THREAD_CPUTIME: time.thread_time_ns,
}


class GuestTimeout(Exception):
    """The call's deadline passed while the guest slept in poll_oneoff; the text is the trap kind."""


def _event(userdata: int, errno: int, etype: int, nbytes: int = 0, flags: int = 0) -> bytes:
    # userdata u64, error u16, type u8, pad, fd_readwrite { nbytes u64, flags u16 }, pad
    return struct.pack("<QHBxxxxxQH6x", userdata, errno, etype, nbytes, flags)


class Wasi:
    def __init__(self, host: Host) -> None:
        self.host = host

    def define(self, linker: wasmtime.Linker) -> list[native.RawCallback]:
        """Shadows wasmtime's definitions (call after Linker.define_wasi)."""
        linker.allow_shadowing = True
        try:
            return [
                native.define_import(linker, MODULE, "clock_time_get", "iIi", True, self.clock_time_get,
                                     self.host.import_error(MODULE, "clock_time_get")),
                native.define_import(linker, MODULE, "poll_oneoff", 4, True, self.poll_oneoff,
                                     self.host.import_error(MODULE, "poll_oneoff")),
                native.define_import(linker, MODULE, "fd_write", 4, True, self.fd_write,
                                     self.host.import_error(MODULE, "fd_write")),
            ]
        finally:
            linker.allow_shadowing = False

    def clock_time_get(self, caller: Any, clock_id: int, precision: int, out: int) -> int:
        clock = _CLOCKS.get(clock_id & 0xFFFFFFFF)
        if clock is None:
            return ERRNO_INVAL
        inst = self.host.current()
        ok = self.host.write_memory(inst, caller, out, struct.pack("<Q", clock() & 0xFFFFFFFFFFFFFFFF))
        return ERRNO_SUCCESS if ok else ERRNO_FAULT

    def fd_write(self, caller: Any, fd: int, iovs: int, iovs_len: int, nwritten_ptr: int) -> int:
        """Appends the iovecs' bytes to the instance's output capture (fd 1 and 2 only).

        An iovec outside memory traps the call, as any host read outside memory does (docs/abi.md §4.2).
        """
        if fd & 0xFFFFFFFF not in (STDOUT, STDERR):
            return ERRNO_BADF
        n = iovs_len & 0xFFFFFFFF
        if n > MAX_IOVECS:
            return ERRNO_INVAL
        inst = self.host.current()
        table = self._read_or_trap(inst, caller, iovs, n * IOVEC_SIZE)
        bufs = [struct.unpack_from("<II", table, i * IOVEC_SIZE) for i in range(n)]
        total = sum(length for _, length in bufs)
        if total > 0xFFFFFFFF:
            return ERRNO_INVAL  # the count would not fit nwritten
        for ptr, length in bufs:
            if ptr + length > MEMORY_END:
                raise MemoryFault
            # Only the last OUTPUT_LIMIT bytes are ever kept; reading the tail still checks that the
            # whole buffer is inside memory, since both end at the same address.
            skip = max(length - OUTPUT_LIMIT, 0)
            inst.capture(self._read_or_trap(inst, caller, ptr + skip, length - skip))
        if not self.host.write_memory(inst, caller, nwritten_ptr, struct.pack("<I", total)):
            raise MemoryFault
        return ERRNO_SUCCESS

    def _read_or_trap(self, inst: GuestInstance, caller: Any, ptr: int, n: int) -> bytes:
        data = self.host.read_memory(inst, caller, ptr, n)
        if data is None:
            raise MemoryFault
        return data

    def poll_oneoff(self, caller: Any, in_ptr: int, out_ptr: int, nsubscriptions: int, nevents_ptr: int) -> int:
        n = nsubscriptions & 0xFFFFFFFF
        if n == 0 or n > MAX_SUBSCRIPTIONS:
            return ERRNO_INVAL
        inst = self.host.current()
        raw = self.host.read_memory(inst, caller, in_ptr, n * SUBSCRIPTION_SIZE)
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
        if not self.host.write_memory(inst, caller, out_ptr, b"".join(events)):
            return ERRNO_FAULT
        if not self.host.write_memory(inst, caller, nevents_ptr, struct.pack("<I", len(events))):
            return ERRNO_FAULT
        return ERRNO_SUCCESS
