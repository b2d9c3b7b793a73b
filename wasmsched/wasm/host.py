"""The host side of the guest ABI: `Host` serves every import of docs/abi.md §4 on a plugin's
Linker, each defined from its one row of `abi.IMPORTS`, with the per-call values of §4.2
(`CallContext`) and the buf/buf_limit protocol of §5. Encodings are wasm/encoding.py's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import wasmtime

from wasmsched.framework.interface import Handle
from wasmsched.wasm import native
from wasmsched.wasm.abi import IMPORTS, STATUS_REASON_EXPORTS
from wasmsched.wasm.encoding import (
    PodEncoder,
    image_states_json,
    json_bytes,
    klog_level,
    klog_text,
    node_bytes,
    node_list_bytes,
    nul_list,
    parse_eventf,
    waiting_pod_bytes,
)
from wasmsched.wasm.errors import HostFunctionFailure, MemoryFault, WasmLoadError
from wasmsched.wasm.interrupt import Interrupted
from wasmsched.wasm.wasi import GuestTimeout, Wasi

if TYPE_CHECKING:
    from wasmsched.api.types import Pod
    from wasmsched.framework.types import NodeInfo
    from wasmsched.wasm.instance import GuestInstance

# ===== docs/abi.md §4.2 Per-call values ==========================================================


@dataclass(slots=True)
class CallContext:
    """The per-call values of §4.2, fixed at call start, and the results the guest sets."""

    export: str
    pod: Pod | None = None
    node_name: str = ""
    target_pod: Pod | None = None
    filtered_node_names: Sequence[str] | None = None
    node_statuses: Mapping[str, int] | None = None
    node_scores: Sequence[tuple[str, int]] | None = None
    # results
    status_reason: str = ""
    node_names: list[str] | None = None
    nominated_node_name: str = ""
    normalized_score_list: bytes | None = None
    cluster_events: bytes | None = None
    _encoded: dict[str, bytes] | None = None

    def encoded(self, key: str, make: Callable[[], bytes]) -> bytes:
        # §5 stability: a repeated getter in one call returns the same bytes.
        if self._encoded is None:
            self._encoded = {}
        v = self._encoded.get(key)
        if v is None:
            v = self._encoded[key] = make()
        return v


# ===== docs/abi.md §4.1 Functions: all imports on one Linker per plugin ==========================


class Host:
    """Defines every import of §4 on a plugin's Linker.

    Imports are shared by all instances of the plugin; the running instance is found through a
    thread-local set around each call (calls on one instance never overlap, and a thread runs one
    call at a time), so no import needs the Caller to find its data.
    """

    def __init__(self, plugin: str, guest_config: str, log_severity: int, handle: Handle | None,
                 pods: PodEncoder | None = None) -> None:
        self.plugin = plugin
        self.guest_config = guest_config.encode()
        self.log_severity = log_severity
        self.handle = handle
        self.pods = pods if pods is not None else PodEncoder()
        self.guest_log = logging.getLogger("wasmsched.wasm.guest")
        self._tls = threading.local()
        self.warned_gvks: set[int] = set()
        self.dropped_events = 0
        # The raw import callbacks must live as long as the Linker that holds them.
        self._callbacks: list[native.RawCallback] = []

    # ----- the running instance -----------------------------------------------------------------

    def enter(self, inst: GuestInstance) -> GuestInstance | None:
        prev: GuestInstance | None = getattr(self._tls, "inst", None)
        self._tls.inst = inst
        return prev

    def leave(self, prev: GuestInstance | None) -> None:
        self._tls.inst = prev

    def current(self) -> GuestInstance:
        """The instance whose call (or instantiation) is running on this thread."""
        inst: GuestInstance | None = getattr(self._tls, "inst", None)
        if inst is None:  # pragma: no cover - only guest code calls imports, always inside enter/leave
            raise HostFunctionFailure("import called outside a guest call")
        return inst

    # ----- memory (§4.2 memory faults) ----------------------------------------------------------

    @staticmethod
    def _memory(inst: GuestInstance, caller: Any) -> tuple[Any, Any]:
        if inst.raw_memory is not None:
            return native.caller_context(caller), inst.raw_memory
        # During instantiation (start section, _initialize, _start) the instance has no handle yet.
        return native.caller_memory(caller)

    @classmethod
    def read_memory(cls, inst: GuestInstance, caller: Any, ptr: int, n: int) -> bytes | None:
        ptr &= 0xFFFFFFFF
        n &= 0xFFFFFFFF
        if n == 0:
            return b""
        ctx, mem = cls._memory(inst, caller)
        return native.read(ctx, mem, ptr, n) if mem is not None else None

    @classmethod
    def write_memory(cls, inst: GuestInstance, caller: Any, ptr: int, data: bytes) -> bool:
        ptr &= 0xFFFFFFFF
        if not data:
            return True
        ctx, mem = cls._memory(inst, caller)
        return native.write(ctx, mem, ptr, data) if mem is not None else False

    # An import raises MemoryFault (or any exception): import_error, which knows the import's name,
    # turns it into the trap text.

    def _read_or_trap(self, caller: Any, ptr: int, n: int) -> bytes:
        data = self.read_memory(self.current(), caller, ptr, n)
        if data is None:
            raise MemoryFault
        return data

    def _write_or_trap(self, caller: Any, ptr: int, data: bytes) -> None:
        if not self.write_memory(self.current(), caller, ptr, data):
            raise MemoryFault

    def _serve(self, caller: Any, value: bytes, buf: int, limit: int) -> int:
        """§5: write value if it fits, return its full length either way."""
        n = len(value)
        if n and n <= (limit & 0xFFFFFFFF):
            self._write_or_trap(caller, buf, value)
        return n

    # ----- definitions --------------------------------------------------------------------------

    def define(self, linker: wasmtime.Linker) -> None:
        """Defines every import of `abi.IMPORTS`, each served by its `host_method`, then WASI."""
        for imp in IMPORTS:
            fn = getattr(self, imp.host_method, None)
            if fn is None:
                raise WasmLoadError(f"wasm: plugin {self.plugin}: no host function {imp.host_method} serves "
                                    f"import {imp.module}.{imp.name}")
            self._callbacks.append(native.define_import(linker, imp.module, imp.name, len(imp.params),
                                                        bool(imp.results), fn, self.import_error(imp.module, imp.name)))
        linker.define_wasi()
        self._callbacks.extend(Wasi(self).define(linker))

    def import_error(self, module: str, name: str) -> Callable[[BaseException], str]:
        """The trap text for an exception in an import: any host-side failure traps the call."""

        def text(e: BaseException) -> str:
            inst: GuestInstance | None = getattr(self._tls, "inst", None)
            if not isinstance(e, Exception):
                # Ctrl-C (or an exit) inside the import: the call raises it again once the trap has
                # unwound the guest (interrupt.Interrupted: an interrupt is pending, same outcome).
                if inst is not None and not isinstance(e, Interrupted):
                    inst.interrupt = e
                return f"host function {module}.{name} interrupted"
            if isinstance(e, HostFunctionFailure):
                return str(e)
            if isinstance(e, GuestTimeout):
                if inst is not None:
                    inst.host_failure = str(e)  # the trap kind, as for a guest stopped in wasm code
                return str(e)
            msg = f"host function {module}.{name} failed: {str(e) or type(e).__name__}"
            if inst is not None:
                inst.host_failure = msg  # the trap kind (docs/abi.md §10)
            return msg

        return text

    def _snapshot_node(self, name: str) -> NodeInfo | None:
        if self.handle is None:
            return None
        ni = self.handle.snapshot_shared_lister().get(name)
        return ni if ni is not None and ni.node is not None else None

    # k8s.io/api
    def node(self, caller: Any, name_ptr: int, name_len: int, buf: int, limit: int) -> int:
        name = self._read_or_trap(caller, name_ptr, name_len).decode("utf-8", "replace")
        ni = self._snapshot_node(name)
        return self._serve(caller, node_bytes(ni) if ni is not None else b"", buf, limit)

    def node_list(self, caller: Any, buf: int, limit: int) -> int:
        inst = self.current()
        ctx = inst.ctx

        def make() -> bytes:
            if self.handle is None:
                return b""
            return node_list_bytes(self.handle.snapshot_shared_lister().list())

        value = ctx.encoded("nodeList", make) if ctx is not None else make()
        return self._serve(caller, value, buf, limit)

    # k8s.io/klog
    def klog_log(self, caller: Any, severity: int, msg: int, msg_len: int) -> None:
        if severity < self.log_severity:
            return
        data = self.read_memory(self.current(), caller, msg, msg_len)
        if data is None:
            return  # §4.2: an unreadable klog message is dropped, never a trap
        text = data.decode("utf-8", "replace").removesuffix("\n")
        self.guest_log.log(klog_level(severity), "%s plugin=%s", klog_text(text, ()), json.dumps(self.plugin))

    def klog_logs(self, caller: Any, severity: int, msg: int, msg_len: int, kvs: int,
                  kvs_len: int) -> None:
        if severity < self.log_severity:
            return
        inst = self.current()
        data = self.read_memory(inst, caller, msg, msg_len)
        if data is None:
            return
        text = data.decode("utf-8", "replace")
        pairs: list[str] = []
        if kvs_len & 0xFFFFFFFF:
            raw = self.read_memory(inst, caller, kvs, kvs_len)
            if raw is None:
                return
            pairs = nul_list(raw, keep_empty=True)
        else:
            text = text.removesuffix("\n")  # kvs_len 0: exactly as `log`
        self.guest_log.log(klog_level(severity), "%s plugin=%s", klog_text(text, pairs), json.dumps(self.plugin))

    def klog_severity(self, caller: Any) -> int:
        return self.log_severity

    # k8s.io/scheduler getters
    def get_config(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve(caller, self.guest_config, buf, limit)

    def current_pod(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or ctx.pod is None:
            return 0
        return self._serve(caller, self.pods.encode(ctx.pod), buf, limit)

    def target_pod(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or ctx.target_pod is None:
            return 0
        return self._serve(caller, self.pods.encode(ctx.target_pod), buf, limit)

    def current_node_name(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or not ctx.node_name:
            return 0
        return self._serve(caller, ctx.node_name.encode(), buf, limit)

    def _serve_json(self, caller: Any, key: str, make: Callable[[CallContext], Any], buf: int, limit: int) -> int:
        """A per-call JSON getter: encoded once per call (§5 stability), 0 outside a call."""
        ctx = self.current().ctx
        if ctx is None:
            return 0
        return self._serve(caller, ctx.encoded(key, lambda: json_bytes(make(ctx))), buf, limit)

    def filtered_node_list(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "filteredNodeList", lambda c: list(c.filtered_node_names or ()), buf, limit)

    def node_to_status_map(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeToStatusMap", lambda c: dict(c.node_statuses or {}), buf, limit)

    def node_score_list(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeScoreList", lambda c: dict(c.node_scores or ()), buf, limit)

    def node_image_states(self, caller: Any, name_ptr: int, name_len: int, buf: int, limit: int) -> int:
        name = self._read_or_trap(caller, name_ptr, name_len).decode("utf-8", "replace")
        return self._serve(caller, image_states_json(self._snapshot_node(name)), buf, limit)

    # k8s.io/scheduler results (§4.1: the last setter call in a call wins)
    def _setter_ctx(self, export: str) -> CallContext | None:
        """The call's context if the running export consumes this setter; else the setter is ignored
        without reading guest memory (so it never traps outside a call)."""
        ctx = self.current().ctx
        return ctx if ctx is not None and ctx.export == export else None

    def result_cluster_events(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("enqueue")
        if ctx is not None:
            ctx.cluster_events = self._read_or_trap(caller, buf, n)

    def result_node_names(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("prefilter")
        if ctx is not None:
            ctx.node_names = nul_list(self._read_or_trap(caller, buf, n), keep_empty=False)

    def result_nominated_node_name(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("postfilter")
        if ctx is not None:
            ctx.nominated_node_name = self._read_or_trap(caller, buf, n).decode("utf-8", "replace")

    def result_status_reason(self, caller: Any, buf: int, n: int) -> None:
        inst = self.current()
        ctx = inst.ctx
        if ctx is None or ctx.export not in STATUS_REASON_EXPORTS:
            return
        data = self.read_memory(inst, caller, buf, n)
        ctx.status_reason = "BUG: out of memory reading message" if data is None else data.decode("utf-8", "replace")

    def result_normalized_score_list(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("normalizescore")
        if ctx is not None:
            ctx.normalized_score_list = self._read_or_trap(caller, buf, n)

    # k8s.io/scheduler handle
    def eventf(self, caller: Any, buf: int, n: int) -> None:
        data = self._read_or_trap(caller, buf, n)
        try:
            ev = parse_eventf(data)
        except ValueError as e:
            raise ValueError(f"invalid event JSON: {e}") from None
        if self.handle is None or self.current().ctx is None:
            # Outside a call (instantiation) there is no cycle to attach the event to.
            self.dropped_events += 1
            return
        self.handle.event_recorder().eventf(ev.regarding, ev.related, ev.eventtype, ev.reason, ev.action, ev.note)

    def reject_waiting_pod(self, caller: Any, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        key = self._read_or_trap(caller, uid, uid_len).decode("utf-8", "replace")
        rejected = self.handle is not None and self.handle.reject_waiting_pod(key)
        if (out_limit & 0xFFFFFFFF) >= 8:
            self._write_or_trap(caller, out, (1 if rejected else 0).to_bytes(8, "little"))

    def get_waiting_pod(self, caller: Any, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        key = self._read_or_trap(caller, uid, uid_len).decode("utf-8", "replace")
        wp = self.handle.get_waiting_pod(key) if self.handle is not None else None
        pod_bytes = self.pods.encode(wp.get_pod()) if wp is not None else None
        self._write_or_trap(caller, out, waiting_pod_bytes(pod_bytes, out_limit & 0xFFFFFFFF))
