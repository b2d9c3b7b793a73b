"""The per-call path through wasmtime's C API (the "unchecked" raw-value functions), via the
ctypes bindings the wasmtime package ships.

wasmtime-py's high-level `Func.__call__` and its host-function trampoline convert every value
through `Val` objects and look up the function type on each call: ~33 us per call with one
import. Set-up stays on the high-level API; only the hot path (calling an export, serving an
import, touching guest memory) uses these raw calls. The wasmtime version is pinned in
pyproject.toml, so the bindings used here are stable.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import wasmtime
from wasmtime import _bindings as raw
from wasmtime import _ffi as ffi

from wasmsched.wasm import interrupt

RawCallback = Any  # a ffi.wasmtime_func_unchecked_callback_t

_call_unchecked = raw._wasmtime_func_call_unchecked
_memory_data = raw._wasmtime_memory_data
_memory_data_size = raw._wasmtime_memory_data_size
_caller_context = raw._wasmtime_caller_context
_caller_export_get = raw._wasmtime_caller_export_get
_set_epoch_deadline = raw._wasmtime_context_set_epoch_deadline
_store_epoch_deadline_callback = raw._wasmtime_store_epoch_deadline_callback
_EpochDeadlineCallback = _store_epoch_deadline_callback.argtypes[1]
_NO_FINALIZER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(0)
UPDATE_DEADLINE_CONTINUE = 0
_MEMORY_NAME = b"memory"


class RawExport:
    """A `() -> ()`, `() -> i32` or `() -> i64` export called with raw values, each call under a
    fresh epoch deadline of `deadline_ticks`."""

    __slots__ = ("_buf", "_ctx", "_deadline", "_func", "_func_ref", "_result")

    def __init__(self, store: wasmtime.Store, func: wasmtime.Func, result: str | None, deadline_ticks: int) -> None:
        self._ctx = store._context()
        self._func = func  # keeps the function handle alive
        self._func_ref = ctypes.byref(func._func)
        self._buf = (ffi.wasmtime_val_raw_t * 1)()
        self._result = result
        self._deadline = deadline_ticks

    def __call__(self) -> int | None:
        _set_epoch_deadline(self._ctx, self._deadline)
        trap = ctypes.POINTER(ffi.wasm_trap_t)()
        err = _call_unchecked(self._ctx, self._func_ref, self._buf, 1, ctypes.byref(trap))
        if err:
            raise wasmtime.WasmtimeError._from_ptr(err)  # proc_exit arrives here as ExitTrap
        if trap:
            raise wasmtime.Trap._from_ptr(trap)
        if self._result == "i32":
            return int(self._buf[0].i32)
        if self._result == "i64":
            return int(self._buf[0].i64)
        return None


def caller_context(caller: Any) -> Any:
    return _caller_context(caller)


def caller_memory(caller: Any) -> tuple[Any, Any]:
    """(context, memory) of the calling instance's exported `memory`; memory None if absent."""
    ctx = _caller_context(caller)
    item = ffi.wasmtime_extern_t()
    if not _caller_export_get(caller, _MEMORY_NAME, len(_MEMORY_NAME), ctypes.byref(item)):
        return ctx, None
    if item.kind != ffi.WASMTIME_EXTERN_MEMORY.value:
        return ctx, None
    return ctx, ffi.wasmtime_memory_t.from_buffer_copy(item.of.memory)


def read(ctx: Any, mem: Any, ptr: int, n: int) -> bytes | None:
    """n bytes at ptr, or None when the range is outside memory."""
    ref = ctypes.byref(mem)
    if ptr + n > _memory_data_size(ctx, ref):
        return None
    base = ctypes.addressof(_memory_data(ctx, ref).contents)
    return ctypes.string_at(base + ptr, n)


def write(ctx: Any, mem: Any, ptr: int, data: bytes) -> bool:
    ref = ctypes.byref(mem)
    if ptr + len(data) > _memory_data_size(ctx, ref):
        return False
    base = ctypes.addressof(_memory_data(ctx, ref).contents)
    ctypes.memmove(base + ptr, data, len(data))
    return True


def define_import(linker: wasmtime.Linker, module: str, name: str, params: int | str, has_result: bool,
                  fn: Callable[..., int | None], on_error: Callable[[BaseException], str]) -> RawCallback:
    """Defines module.name as a host function served by fn(caller, *params) returning an i32 or nothing.

    params: a number of i32 parameters, or their types as a string of "i" (i32) and "I" (i64).
    An exception in fn becomes a trap whose message on_error returns; nothing escapes into C.
    Returns the callback object, which the caller must keep alive as long as the linker.
    """
    kinds = "i" * params if isinstance(params, int) else params
    types = {"i": wasmtime.ValType.i32, "I": wasmtime.ValType.i64}
    ty = wasmtime.FuncType([types[k]() for k in kinds], [wasmtime.ValType.i32()] if has_result else [])
    fields = [(i, "i32" if k == "i" else "i64") for i, k in enumerate(kinds)]

    def cb(env: Any, caller: Any, args: Any, nargs: int) -> int:
        try:
            r = fn(caller, *[getattr(args[i], f) for i, f in fields])
            if has_result:
                args[0].i32 = r
            return 0
        except BaseException as e:  # noqa: BLE001 - must become a trap, never unwind through C
            msg = on_error(e).encode()
            trap = ffi.wasmtime_trap_new(ctypes.create_string_buffer(msg, len(msg)), len(msg))
            return ctypes.cast(trap, ctypes.c_void_p).value or 0

    interrupt.register_callback(cb)
    raw = ffi.wasmtime_func_unchecked_callback_t(cb)
    m, n = module.encode(), name.encode()
    err = ffi.wasmtime_linker_define_func_unchecked(
        linker.ptr(), ctypes.create_string_buffer(m, len(m)), len(m), ctypes.create_string_buffer(n, len(n)),
        len(n), ty.ptr(), raw, None, ctypes.CFUNCTYPE(None, ctypes.c_void_p)(0))
    if err:
        raise wasmtime.WasmtimeError._from_ptr(err)
    return raw


def set_epoch_deadline_callback(store: wasmtime.Store, fn: Callable[[], int]) -> RawCallback:
    """From now on, reaching the store's epoch deadline calls fn (on the thread running the guest)
    instead of trapping: fn returns the ticks until the next deadline, or raises to fail the running
    call (its caller sees a WasmtimeError). Returns the callback object, which the caller must keep
    alive as long as the store.
    """

    def cb(ctx: Any, data: Any, delta: Any, kind: Any) -> int:
        try:
            delta[0] = fn()
            kind[0] = UPDATE_DEADLINE_CONTINUE
            return 0
        except BaseException:  # noqa: BLE001 - must become an error, never unwind through C
            msg = ctypes.create_string_buffer(b"guest stopped at its epoch deadline")
            return ctypes.cast(ffi.wasmtime_error_new(msg), ctypes.c_void_p).value or 0

    interrupt.register_callback(cb)
    raw_cb = _EpochDeadlineCallback(cb)
    _store_epoch_deadline_callback(store.ptr(), raw_cb, None, _NO_FINALIZER)
    return raw_cb
