"""The bridge to the native host (wasm/_host.c): the guest call path, compiled.

wasmtime-py's high-level `Func.__call__` costs ~33 us per call with one import, and even its raw
ctypes functions ~2-3 us per crossing plus ~2 us per import served in Python. So Python keeps
wasmtime-py's public API for set-up (Engine, Module, Linker, Store), and hands the
native host the pointers (`.ptr()`): it instantiates, calls exports (one crossing for Filter or Score
over all nodes), serves the hot imports from bytes staged per call, and reports failures as
`GuestFault`s carrying plain data. Both sides use the one wasmtime library wasmtime-py loaded.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wasmtime

from wasmsched.wasm.abi import EXPORTS, I32, I64, LIFECYCLE_EXPORTS, STATUS_REASON_EXPORTS, V2_EXPORTS

try:
    import wasmsched.wasm._host as _host
except ImportError as e:  # pragma: no cover - a broken install
    raise ImportError(f"wasmsched's native wasm host (wasmsched/wasm/_host.c) is not built: {e}; "
                      "run `make setup` (it needs a C compiler and cargo for wasmtime's C API headers)") from e

GuestFault = _host.GuestFault
NativeInstance = _host.Instance
Caller = _host.Caller
current_owner = _host.current_owner

# Export ids, shared with the native host: abi.EXPORTS in order, the v2 exports, then the lifecycle ones.
EXPORT_IDS: dict[str, int] = {name: i for i, name in enumerate((*EXPORTS, *V2_EXPORTS, *LIFECYCLE_EXPORTS))}
RESULT_KINDS = {None: 0, I32: 1, I64: 2}

# How imports are served natively (Host.define maps each import of abi.IMPORTS to one of these).
H_PYTHON = _host.H_PYTHON
H_NODE = _host.H_NODE
H_KLOG = _host.H_KLOG
H_KLOG_SEVERITY = _host.H_KLOG_SEVERITY
H_GET_CONFIG = _host.H_GET_CONFIG
H_CURRENT_POD = _host.H_CURRENT_POD
H_TARGET_POD = _host.H_TARGET_POD
H_CURRENT_NODE_NAME = _host.H_CURRENT_NODE_NAME
H_RESULT = _host.H_RESULT
H_CLOCK_TIME_GET = _host.H_CLOCK_TIME_GET
H_FD_WRITE = _host.H_FD_WRITE
H_WASI = _host.H_WASI
R_STATUS_REASON = _host.R_STATUS_REASON
R_NODE_NAMES = _host.R_NODE_NAMES
R_NOMINATED = _host.R_NOMINATED
R_NORMALIZED = _host.R_NORMALIZED
R_CLUSTER_EVENTS = _host.R_CLUSTER_EVENTS


def library_path() -> str:
    """The wasmtime C library the wasmtime package ships and has loaded."""
    found = sorted(Path(wasmtime.__file__).parent.glob("*/_libwasmtime.*"))
    if not found:
        raise ImportError(f"no _libwasmtime library in {Path(wasmtime.__file__).parent}")
    return str(found[0])


def address(obj: Any) -> int:
    """The C pointer behind a wasmtime-py object (its public `ptr()`)."""
    value = ctypes.cast(obj.ptr(), ctypes.c_void_p).value
    if not value:
        raise ValueError(f"{type(obj).__name__} has no native pointer (closed?)")
    return value


_initialized = False


def init(tick_seconds: float, slice_ticks: int) -> None:
    """Resolves wasmtime's functions and tells the native host the export table (once)."""
    global _initialized  # noqa: PLW0603 - set once, by the one Engine's creation (runtime._ProcessEngine)
    if _initialized:
        return
    ids = list(EXPORT_IDS)
    mask = 0
    for name in STATUS_REASON_EXPORTS:
        mask |= 1 << EXPORT_IDS[name]
    _host.init(library_path(), ids, mask, int(tick_seconds * 1e9), slice_ticks)
    _initialized = True


def start_epoch_ticker(engine: wasmtime.Engine, tick_seconds: float) -> None:
    """Advances the Engine's epoch every tick on a native thread (guest code holds the GIL)."""
    _host.start_epoch_ticker(address(engine), int(tick_seconds * 1e9))


def define_import(linker: wasmtime.Linker, module: str, name: str, params: str, has_result: bool, handler: int,
                  fn: Callable[..., Any] | None, on_error: Callable[[BaseException], str], fault_text: str,
                  slot: int = 0, export: str | None = None, aux: bytes | None = None) -> None:
    """Defines module.name on the linker, served by `handler`.

    params: the parameter types as a string of "i" (i32) and "I" (i64). H_PYTHON handlers are called
    as fn(caller, *params) with a `Caller` (read/write guest memory during the import) and return the
    i32 result or None; H_NODE's fn maps a node name (bytes) to the node's bytes. An exception in fn
    becomes a trap with on_error's text; fault_text is the trap text of an access outside memory.
    H_RESULT stores the setter's bytes in `slot` when `export` (None: every export with a status) runs.
    H_KLOG's aux is b"<line tail>\0<source>": what a natively written guest line ends with and the
    `file:line` it names (Host.klog_aux).
    """
    types = {"i": wasmtime.ValType.i32, "I": wasmtime.ValType.i64}
    ty = wasmtime.FuncType([types[k]() for k in params], [wasmtime.ValType.i32()] if has_result else [])
    export_id = EXPORT_IDS[export] if export is not None else -1
    _host.define_import(address(linker), module.encode(), name.encode(), address(ty), handler, params, has_result, fn,
                        on_error, fault_text.encode(), slot, export_id, aux)


def set_log_sink(fd: int, letters: bytes) -> None:
    """Guest klog lines passing the plugin's logSeverity are formatted natively, as util/klog.py's
    KlogFormatter formats the record Host.guest_record makes of them, and written to fd; -1: through
    Python (Host.klog_log). letters[s]: the severity letter of severity s in 0..3 (lower ones are 0's,
    higher 3's)."""
    _host.set_log_sink(fd, os.getpid(), letters)


def klog_line(severity: int, msg: bytes, kvs: bytes | None, time_ns: int, aux: bytes) -> bytes | None:
    """The line the native host writes for a guest's klog call at time_ns (aux: Host.klog_aux()), None
    when Python must format it: for tests comparing the two formatters."""
    line: bytes | None = _host.klog_line(severity, msg, kvs, time_ns, aux)
    return line
