"""One guest instance: its own Store (WASI sandbox, memory limit, epoch deadline) and Instance,
created from the plugin's InstancePre, with the guest's stdout/stderr captured for error texts
(by the native host's `fd_write`).

A GuestInstance runs one export call at a time; the pool (wasm/pool.py) serializes callers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import wasmtime

from wasmsched.wasm import interrupt, native
from wasmsched.wasm.abi import EXPORTS, V2_EXPORTS
from wasmsched.wasm.args import WASM_PAGE, WasmPluginArgs
from wasmsched.wasm.call_context import CallContext
from wasmsched.wasm.encoding import nul_list, unpack_scorenodes
from wasmsched.wasm.engine import Runtime, trap_text
from wasmsched.wasm.errors import GuestCallError, WasmLoadError
from wasmsched.wasm.host import Host
from wasmsched.wasm.snapshot_sync import Mirror

_ids = itertools.count(1)
# docs/abi.md §9: one table.grow of 2^31 funcrefs would otherwise allocate 16 GiB within a single call;
# real guests' tables hold their address-taken functions, thousands.
TABLE_ELEMENTS_LIMIT = 1 << 20
EXPORT_IDS = native.EXPORT_IDS
# Exports that read a result.* setter besides result.status_reason (GuestInstance._collect).
_OTHER_RESULTS = frozenset(("prefilter", "postfilter", "normalizescore", "enqueue"))


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
    """A guest's Store and Instance. While its call runs, the imports see it as the running instance
    (call_context.RunningInstance): its ctx, deadline, and the failure or interrupt they record."""

    __slots__ = ("__weakref__", "_pod_encoder", "_timeout_ns", "_timeout_text", "compiled", "ctx", "deadline_text",
                 "host_failure", "id", "interrupt", "mirror", "native", "store")

    def __init__(self, compiled: CompiledGuest) -> None:
        self.id = next(_ids)
        self.compiled = compiled
        self.ctx: CallContext | None = None
        self.host_failure: str | None = None
        self.deadline_text = ""
        # KeyboardInterrupt or SystemExit raised inside an import (SIGINT handled by the application):
        # the call raises it again instead of failing as a guest error.
        self.interrupt: BaseException | None = None
        self.mirror = Mirror()
        args = compiled.args
        host = compiled.host
        self._pod_encoder = host.pods.encode
        self._timeout_ns = _ns(args.timeout)
        self._timeout_text = args.timeout_text
        store = wasmtime.Store(compiled.runtime.engine)
        store.set_limits(memory_size=args.memory_limit_pages * WASM_PAGE, table_elements=TABLE_ELEMENTS_LIMIT)
        self.store = store
        # WASI's sandbox is the native host's (wasm/wasi.py): argv is `args` verbatim.
        argv = tuple(a.encode() for a in args.args)
        self.native = native.NativeInstance(native.address(store), native.address(compiled.pre), (store, compiled.pre),
                                            self, self._epoch_check, host.guest_config, host.log_severity, argv)
        for name, result in (*EXPORTS.items(), *V2_EXPORTS.items()):
            self.native.set_func_result(native.EXPORT_IDS[name], native.RESULT_KINDS[result])
        self._instantiate()

    @property
    def deadline(self) -> int | None:
        """The running call's deadline on time.monotonic_ns() (None: no limit), for imports that wait."""
        d: int = self.native.deadline_ns
        return d or None

    def _epoch_check(self) -> None:
        """Called every slice of guest execution: stops the guest when an interrupt is pending."""
        interrupt.check()

    def _raise_interrupt(self) -> None:
        """After guest code ran: KeyboardInterrupt (or what an import raised) if the user interrupted."""
        exc, self.interrupt = self.interrupt, None
        if exc is not None:
            raise exc
        interrupt.raise_pending()

    def _fault_text(self, e: native.GuestFault, timeout_text: str) -> str:
        native_failure, epoch_exc = self.native.take_failure()
        if epoch_exc is not None and not isinstance(epoch_exc, interrupt.Interrupted):
            self.interrupt = epoch_exc
        return trap_text(e, timeout_text, self.host_failure or native_failure)

    def output(self) -> str:
        out: bytes = self.native.output()
        return out.decode("utf-8", "replace")

    def _instantiate(self) -> None:
        c = self.compiled
        self.deadline_text = c.args.start_timeout_text
        try:
            self.native.instantiate(_ns(c.args.start_timeout))
            self._raise_interrupt()
        except native.GuestFault as e:
            text = self._fault_text(e, c.args.start_timeout_text)
            captured = self.output()
            detail = f"{captured}\n{text}" if captured else text
            self.store.close()
            self._raise_interrupt()
            raise WasmLoadError(f"failed to create a guest pool: wasm: instantiate error: {detail}") from e
        finally:
            self.native.clear_output()
            self.host_failure = None

    def call(self, ctx: CallContext, nodes: int = 0) -> Any:
        """Runs ctx.export; raises GuestCallError (with discard=True) when the guest fails. `nodes` > 0: the call
        does that many nodes' work (scorenodes, docs/abi.md §17), and its time limit is that many per-call
        limits, what as many calls of `score` would have had together."""
        self.ctx = ctx
        self.host_failure = None
        timeout_ns, self.deadline_text = self._timeout_ns, self._timeout_text
        if nodes > 0:
            timeout_ns *= nodes
            self.deadline_text = f"{self._timeout_text} per node for {nodes} nodes"
        enc = self._pod_encoder
        pod, target = ctx.pod, ctx.target_pod
        try:
            result, reason = self.native.call(EXPORT_IDS[ctx.export], None if pod is None else enc(pod),
                                              ctx.node_name or None, None if target is None else enc(target),
                                              timeout_ns)
        except native.GuestFault as e:
            raise self._call_error(ctx.export, e, self.deadline_text) from e
        finally:
            self.ctx = None
        if interrupt.state.pending or self.interrupt is not None:
            self._raise_interrupt()
        if reason is not None:
            ctx.status_reason = reason.decode("utf-8", "replace")
        if ctx.export in _OTHER_RESULTS:
            self._collect(ctx)
        elif ctx.export == "scorenodes" and result is not None:  # an i64 export always has one
            self._read_node_scores(ctx, result, nodes)
        return result

    def _read_node_scores(self, ctx: CallContext, result: int, nodes: int) -> None:
        """§17: a successful scorenodes leaves `nodes` int64 scores at the address in its result's high half; they
        are copied out before the instance serves another call. Outside the memory: none (the caller's Error)."""
        code, address = unpack_scorenodes(result)
        if code != 0:
            return
        try:
            ctx.node_scores_result = self.native.memory_read(address, 8 * nodes)
        except IndexError:
            ctx.node_scores_result = None

    def call_nodes(self, ctx: CallContext, node_names: list[str]
                   ) -> tuple[list[int] | None, list[tuple[int, int, bytes | None]], int, GuestCallError | None]:
        """Runs ctx.export (filter or score) for ctx.pod once per node name, in one crossing: the scores
        (score) of the calls that ran, (index, code, reason) of each call with a non-zero code or a reason,
        how many calls succeeded, and the error of the call that failed (nothing runs after it)."""
        export, pod = ctx.export, ctx.pod
        assert pod is not None
        self.ctx = ctx
        self.host_failure = None
        self.deadline_text = self._timeout_text
        try:
            values, notes, failed, fault = self.native.call_nodes(EXPORT_IDS[export], self._pod_encoder(pod),
                                                                  node_names, self._timeout_ns)
            error = self._call_error(export, fault, self._timeout_text) if fault is not None else None
        finally:
            self.ctx = None
        if interrupt.state.pending or self.interrupt is not None:
            self._raise_interrupt()
        return values, notes, (failed if error is not None else len(node_names)), error

    def _call_error(self, export: str, e: native.GuestFault, timeout_text: str) -> GuestCallError:
        text = self._fault_text(e, timeout_text)
        self._raise_interrupt()
        captured = self.output()
        msg = f"wasm: {export} error: {captured}\n{text}" if captured else f"wasm: {export} error: {text}"
        return GuestCallError(msg, discard=True)

    def _collect(self, ctx: CallContext) -> None:
        """The results the guest set during the call with the setters of §4.1 other than
        result.status_reason, into ctx."""
        n = self.native
        export = ctx.export
        if export == "prefilter":
            names = n.result(native.R_NODE_NAMES)
            if names is not None:
                ctx.node_names = nul_list(names, keep_empty=False)
        elif export == "postfilter":
            nominated = n.result(native.R_NOMINATED)
            if nominated is not None:
                ctx.nominated_node_name = nominated.decode("utf-8", "replace")
        elif export == "normalizescore":
            ctx.normalized_score_list = n.result(native.R_NORMALIZED)
        elif export == "enqueue":
            ctx.cluster_events = n.result(native.R_CLUSTER_EVENTS)  # with hints: Host sets ctx's own

    # ----- test hooks (docs/abi.md §8) ---------------------------------------------------------------

    def get_global(self, name: str) -> Any:
        return self.native.get_global(name)

    def set_global(self, name: str, value: Any) -> None:
        self.native.set_global(name, value)

    def read_memory(self, ptr: int, n: int) -> bytes:
        data: bytes = self.native.memory_read(ptr, n)
        return data

    def write_memory(self, ptr: int, data: bytes) -> None:
        self.native.memory_write(ptr, data)

    def memory_pages(self) -> int:
        pages: int = self.native.memory_pages()
        return pages

    def close(self) -> None:
        self.store.close()


def _ns(timeout: float | None) -> int:
    return 0 if timeout is None else max(1, int(timeout * 1e9))

