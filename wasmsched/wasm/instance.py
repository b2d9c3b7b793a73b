"""One guest instance: its own Store (WASI sandbox, memory limit, epoch deadline) and Instance,
created from the plugin's InstancePre, with the guest's stdout/stderr captured for error texts
(by the host's own `fd_write`, wasm/wasi.py).

A GuestInstance runs one export call at a time; the pool (wasm/pool.py) serializes callers.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import wasmtime

from wasmsched.wasm import interrupt, native
from wasmsched.wasm.abi import EXPORTS
from wasmsched.wasm.args import WASM_PAGE, WasmPluginArgs
from wasmsched.wasm.errors import GuestCallError, WasmLoadError
from wasmsched.wasm.host import CallContext, Host
from wasmsched.wasm.runtime import Runtime, trap_text
from wasmsched.wasm.wasi import OUTPUT_LIMIT

_ids = itertools.count(1)


@dataclass
class CompiledGuest:
    """A plugin's module, linked once: everything instances of it share."""

    name: str
    runtime: Runtime
    module: wasmtime.Module
    pre: wasmtime.InstancePre
    host: Host
    args: WasmPluginArgs
    exports: frozenset[str]

    @classmethod
    def link(cls, name: str, runtime: Runtime, module: wasmtime.Module, host: Host, args: WasmPluginArgs,
             exports: set[str]) -> CompiledGuest:
        linker = wasmtime.Linker(runtime.engine)
        host.define(linker)
        try:
            pre = linker.instantiate_pre(module)
        except wasmtime.WasmtimeError as e:
            # The shape check names unknown imports; what is left is a WASI signature mismatch.
            raise WasmLoadError(f"wasm: error linking guest: {str(e).strip().splitlines()[0]}") from e
        return cls(name, runtime, module, pre, host, args, frozenset(exports))


class GuestInstance:
    __slots__ = ("_epoch_callback", "_epoch_timeout", "_exports", "_output", "compiled", "ctx", "deadline",
                 "deadline_text", "host_failure", "id", "instance", "interrupt", "memory", "raw_memory", "store")

    def __init__(self, compiled: CompiledGuest) -> None:
        self.id = next(_ids)
        self.compiled = compiled
        self.ctx: CallContext | None = None
        self.host_failure: str | None = None
        self._output = bytearray()
        self.raw_memory: Any = None
        # The running call's deadline on time.monotonic_ns() (None: no limit), for imports that wait.
        self.deadline: int | None = None
        self.deadline_text = ""
        # KeyboardInterrupt or SystemExit raised inside an import (SIGINT handled by the application):
        # the call raises it again instead of failing as a guest error.
        self.interrupt: BaseException | None = None
        self._epoch_timeout = False
        args = compiled.args
        store = wasmtime.Store(compiled.runtime.engine)
        wasi = wasmtime.WasiConfig()
        # Sandbox: argv verbatim, no environment, no preopened directories, stdin at EOF. stdout and
        # stderr are left unset: the host's fd_write captures them (never wasmtime's custom outputs,
        # whose callbacks run on wasmtime's own threads).
        wasi.argv = list(args.args)
        store.set_wasi(wasi)
        store.set_limits(memory_size=args.memory_limit_pages * WASM_PAGE)
        self.store = store
        self._epoch_callback: native.RawCallback = None
        if args.timeout is None or args.start_timeout is None:
            # Without a deadline guest code would run on in native code where Ctrl-C cannot reach it:
            # it looks for a pending interrupt every interrupt.CHECK_SECONDS instead (zero cost for a
            # store whose calls all have a deadline: those stay pure epoch traps).
            self._epoch_callback = native.set_epoch_deadline_callback(store, self._epoch_deadline_reached)
        self.instance = self._instantiate()
        exports = self.instance.exports(store)
        mem = exports["memory"]
        assert isinstance(mem, wasmtime.Memory)
        self.memory = mem
        self.raw_memory = mem._memory
        self._exports: dict[str, native.RawExport] = {}
        ticks = compiled.runtime.deadline_ticks(args.timeout)
        for name in compiled.exports:
            fn = exports[name]
            assert isinstance(fn, wasmtime.Func)
            self._exports[name] = native.RawExport(store, fn, EXPORTS[name], ticks)

    def _epoch_deadline_reached(self) -> int:
        """The store's epoch callback: the ticks until the next check, or raises to stop the guest."""
        if self.deadline is not None:
            # A phase with a limit (the store's other phase has none, hence the callback): its
            # deadline passed. Fail the call with the text wasmtime's own epoch trap gets.
            self.host_failure = f"timeout after {self.deadline_text}"
            self._epoch_timeout = True
            raise interrupt.Interrupted
        interrupt.check()
        return self.compiled.runtime.deadline_ticks(None)

    def _raise_interrupt(self) -> None:
        """After guest code ran: KeyboardInterrupt (or what an import raised) if the user interrupted."""
        exc, self.interrupt = self.interrupt, None
        if exc is not None:
            raise exc
        interrupt.raise_pending()

    def _trap_text(self, e: BaseException, timeout_text: str) -> str:
        return trap_text(e, timeout_text, self.host_failure, error_frames=self._epoch_timeout)

    def capture(self, data: bytes) -> None:
        """Appends guest output (fd_write on stdout or stderr), keeping the last OUTPUT_LIMIT bytes."""
        out = self._output
        out += data
        if len(out) > OUTPUT_LIMIT:
            del out[: len(out) - OUTPUT_LIMIT]

    def output(self) -> str:
        return self._output.decode("utf-8", "replace")

    def _instantiate(self) -> wasmtime.Instance:
        c = self.compiled
        host = c.host
        prev = host.enter(self)
        self._set_deadline(c.args.start_timeout, c.args.start_timeout_text)
        self.store.set_epoch_deadline(c.runtime.deadline_ticks(c.args.start_timeout))
        try:
            instance = c.pre.instantiate(self.store)
            exports = instance.exports(self.store)
            # A WASI reactor (standard Go c-shared) initializes in _initialize; a command runs _start.
            for name in ("_initialize", "_start"):
                if name in exports:
                    fn = exports[name]
                    assert isinstance(fn, wasmtime.Func)
                    try:
                        fn(self.store)
                    except wasmtime.ExitTrap as e:
                        if e.code != 0:
                            raise
            self._raise_interrupt()
            return instance
        except Exception as e:
            text = self._trap_text(e, c.args.start_timeout_text)
            captured = self.output()
            detail = f"{captured}\n{text}" if captured else text
            self.store.close()
            self._raise_interrupt()
            raise WasmLoadError(f"failed to create a guest pool: wasm: instantiate error: {detail}") from e
        finally:
            host.leave(prev)
            self._output.clear()
            self.host_failure = None
            self._epoch_timeout = False

    def _set_deadline(self, timeout: float | None, text: str) -> None:
        self.deadline = None if timeout is None else time.monotonic_ns() + int(timeout * 1e9)
        self.deadline_text = text

    def call(self, ctx: CallContext) -> Any:
        """Runs ctx.export; raises GuestCallError (with discard=True) when the guest fails."""
        c = self.compiled
        host = c.host
        self.ctx = ctx
        self.host_failure = None
        self._output.clear()
        self._set_deadline(c.args.timeout, c.args.timeout_text)
        prev = host.enter(self)
        try:
            result = self._exports[ctx.export]()
        except Exception as e:
            self._raise_interrupt()
            text = self._trap_text(e, c.args.timeout_text)
            captured = self.output()
            msg = f"wasm: {ctx.export} error: {captured}\n{text}" if captured else f"wasm: {ctx.export} error: {text}"
            raise GuestCallError(msg, discard=True) from e
        finally:
            host.leave(prev)
            self.ctx = None
            self._output.clear()
            self._epoch_timeout = False
        if interrupt.state.pending:
            self._raise_interrupt()
        return result

    # ----- test hooks (docs/abi.md §8) ---------------------------------------------------------------

    def get_global(self, name: str) -> Any:
        g = self.instance.exports(self.store)[name]
        assert isinstance(g, wasmtime.Global)
        return g.value(self.store)

    def set_global(self, name: str, value: Any) -> None:
        g = self.instance.exports(self.store)[name]
        assert isinstance(g, wasmtime.Global)
        g.set_value(self.store, value)

    def close(self) -> None:
        self._exports.clear()
        self.raw_memory = None
        self.store.close()

