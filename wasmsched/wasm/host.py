"""The host side of the guest ABI: `Host` defines every import of docs/abi.md §4 on a plugin's
Linker, each from its one row of `abi.IMPORTS`, with the per-call values of §4.2 (wasm/call_context.py)
and the buf/buf_limit protocol of §5. Encodings are wasm/encoding.py's.

The hot imports are served by the native host (wasm/_host.c) from the bytes staged for the call
(`NATIVE`); the rest by the methods here, which read and write guest memory through the native
`Caller` they are given.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import wasmtime

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.labels import SelectorError, parse_selector
from wasmsched.api.types import object_key
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import Handle
from wasmsched.framework.status import Code, Status
from wasmsched.framework.watched import ResourceNotWatchedError, WatchedObjects
from wasmsched.util import klog
from wasmsched.wasm import guest_log, native, snapshot_sync, wasi
from wasmsched.wasm.abi import IMPORTS
from wasmsched.wasm.call_context import CallContext, current
from wasmsched.wasm.encoding import (
    PodEncoder,
    image_states_json,
    json_bytes,
    klog_level,
    node_bytes,
    node_list_bytes,
    nul_list,
    parse_eventf,
    waiting_pod_bytes,
)
from wasmsched.wasm.errors import HostFunctionFailure, MemoryFault, WasmLoadError
from wasmsched.wasm.import_traps import fault_text, import_error

if TYPE_CHECKING:
    from wasmsched.framework.snapshot import Snapshot
    from wasmsched.framework.types import NodeInfo

# ===== docs/abi.md §4.1 Functions: all imports on one Linker per plugin ==========================

# Imports served natively: host_method -> (handler, result slot, the export reading the result; None:
# every export with a status). klog's two functions are filtered by severity natively, then formatted
# by the method of that name; `node` asks the method for the node's bytes.
NATIVE: dict[str, tuple[int, int, str | None]] = {
    "node": (native.H_NODE, 0, None),
    "klog_log": (native.H_KLOG, 0, None),
    "klog_logs": (native.H_KLOG, 0, None),
    "klog_severity": (native.H_KLOG_SEVERITY, 0, None),
    "get_config": (native.H_GET_CONFIG, 0, None),
    "current_pod": (native.H_CURRENT_POD, 0, None),
    "target_pod": (native.H_TARGET_POD, 0, None),
    "current_node_name": (native.H_CURRENT_NODE_NAME, 0, None),
    "result_cluster_events": (native.H_RESULT, native.R_CLUSTER_EVENTS, "enqueue"),
    "result_node_names": (native.H_RESULT, native.R_NODE_NAMES, "prefilter"),
    "result_nominated_node_name": (native.H_RESULT, native.R_NOMINATED, "postfilter"),
    "result_status_reason": (native.H_RESULT, native.R_STATUS_REASON, None),
    "result_normalized_score_list": (native.H_RESULT, native.R_NORMALIZED, "normalizescore"),
}


def guest_line_text(msg: bytes, kvs: bytes | None) -> str:
    """klog's structured text of a guest's klog.log (kvs None) or klog.logs message (§11): entries of kvs
    each end in NUL, empty ones kept; without pairs, as `log`, one trailing newline is dropped."""
    text = msg.decode("utf-8", "replace")
    if not kvs:
        return klog.structured(text.removesuffix("\n"), ())
    return klog.structured(text, nul_list(kvs, keep_empty=True))


class Host:
    """Defines every import of §4 on a plugin's Linker.

    Imports are shared by all instances of the plugin; the running instance is the native host's
    (per thread: calls on one instance never overlap, and a thread runs one call at a time).
    """

    def __init__(self, plugin: str, guest_config: str, log_severity: int, handle: Handle | None,
                 pods: PodEncoder | None = None, objects: WatchedObjects | None = None) -> None:
        self.plugin = plugin
        self.guest_config = guest_config.encode()
        self.log_severity = log_severity
        self.handle = handle
        self.pods = pods if pods is not None else PodEncoder()
        # The resources the plugin's args.watch declared (§14.2); None: it declared none.
        self.objects = objects
        self.guest_log = logging.getLogger(guest_log.LOGGER)
        self._plugin_json = json.dumps(plugin)
        self.warned_gvks: set[int] = set()
        self.dropped_events = 0
        # Set on the thread running `handle.run_filter_plugins_with_nominated_pods` for this plugin's guest,
        # whose own Filter is then skipped: its instance is busy with the call that asked (§14.5).
        self._nested = threading.local()
        # §15.5: the scheduler's clock as Unix time; a simulation's clock starts at the wall time it is loaded.
        self._unix_offset = time.time() - handle.clock() if handle is not None else 0.0

    def unix_ns(self, t: float) -> int:
        """A time on the scheduler's clock as Unix nanoseconds (§15.5)."""
        return round((t + self._unix_offset) * 1e9)

    def in_nested_filters(self) -> bool:
        return getattr(self._nested, "active", False)

    # ----- memory (§4.2 memory faults) ----------------------------------------------------------
    # An import raises MemoryFault (or any exception): import_traps.import_error, which knows the
    # import's name, turns it into the trap text.

    @staticmethod
    def _read_or_trap(caller: native.Caller, ptr: int, n: int) -> bytes:
        data: bytes | None = caller.read(ptr, n)
        if data is None:
            raise MemoryFault
        return data

    @staticmethod
    def _write_or_trap(caller: native.Caller, ptr: int, data: bytes) -> None:
        if not caller.write(ptr, data):
            raise MemoryFault

    def _serve(self, caller: native.Caller, value: bytes, buf: int, limit: int) -> int:
        """§5: write value if it fits, return its full length either way."""
        n = len(value)
        if n and n <= (limit & 0xFFFFFFFF):
            self._write_or_trap(caller, buf, value)
        return n

    # ----- definitions --------------------------------------------------------------------------

    def define(self, linker: wasmtime.Linker) -> None:
        """Defines every import of `abi.IMPORTS`, natively where NATIVE says so, else served by its
        `host_method`; then WASI."""
        for imp in IMPORTS:
            handler, slot, export = NATIVE.get(imp.host_method, (native.H_PYTHON, 0, None))
            fn: Callable[..., Any] | None = None
            if handler in (native.H_PYTHON, native.H_KLOG, native.H_NODE):
                fn = getattr(self, imp.host_method, None)
                if fn is None:
                    raise WasmLoadError(f"wasm: plugin {self.plugin}: no host function {imp.host_method} serves "
                                        f"import {imp.module}.{imp.name}")
            aux = self.klog_aux() if handler == native.H_KLOG else None
            native.define_import(linker, imp.module, imp.name, "i" * len(imp.params), bool(imp.results), handler, fn,
                                 import_error(imp.module, imp.name), fault_text(imp.module, imp.name),
                                 slot, export, aux)
        wasi.define(linker)

    def klog_aux(self) -> bytes:
        """What a natively written guest line ends with and the source it names, as guest_record's
        record does: b"<tail>\\0<file:line>"."""
        return f" plugin={self._plugin_json}".encode() + b"\0" + GUEST_LINE_SOURCE.encode()

    def _snapshot_node(self, name: str) -> NodeInfo | None:
        if self.handle is None:
            return None
        ni = self.handle.snapshot_shared_lister().get(name)
        return ni if ni is not None and ni.node is not None else None

    # k8s.io/api
    def node(self, name: bytes) -> bytes:
        """The node's bytes for the native `node` import (b"" when the snapshot has no such node)."""
        ni = self._snapshot_node(name.decode("utf-8", "replace"))
        return node_bytes(ni) if ni is not None else b""

    def node_list(self, caller: native.Caller, buf: int, limit: int) -> int:
        def make() -> bytes:
            if self.handle is None:
                return b""
            return node_list_bytes(self.handle.snapshot_shared_lister().list())

        return self._serve(caller, _once_per_call("nodeList", make), buf, limit)

    # k8s.io/klog: what the native host does not write itself (no sink with a file descriptor, or text that
    # is not valid UTF-8); it calls these only for severities at or above log_severity.
    def klog_log(self, caller: native.Caller, severity: int, msg: int, msg_len: int) -> None:
        sink = guest_log.sink()
        if sink is None and not self.guest_log.isEnabledFor(klog_level(severity)):
            return  # nothing formatted for a line no handler emits
        data = caller.read(msg, msg_len)
        if data is None:
            return  # §4.2: an unreadable klog message is dropped, never a trap
        record = self.guest_record(severity, data, None)
        (self.guest_log if sink is None else sink).handle(record)

    def klog_logs(self, caller: native.Caller, severity: int, msg: int, msg_len: int, kvs: int,
                  kvs_len: int) -> None:
        sink = guest_log.sink()
        if sink is None and not self.guest_log.isEnabledFor(klog_level(severity)):
            return
        data = caller.read(msg, msg_len)
        if data is None:
            return
        raw = None
        if kvs_len & 0xFFFFFFFF:
            raw = caller.read(kvs, kvs_len)
            if raw is None:
                return
        record = self.guest_record(severity, data, raw)
        (self.guest_log if sink is None else sink).handle(record)

    def guest_record(self, severity: int, msg: bytes, kvs: bytes | None) -> logging.LogRecord:
        """The record of a guest's klog line, naming GUEST_LINE_SOURCE as a line natively written does."""
        return self.guest_log.makeRecord(self.guest_log.name, klog_level(severity), __file__, _GUEST_RECORD_LINE,
                                         "%s plugin=%s", (guest_line_text(msg, kvs), self._plugin_json), None,
                                         "guest_record")

    def _serve_json(self, caller: native.Caller, key: str, make: Callable[[CallContext], Any], buf: int,
                    limit: int, encode: Callable[[Any], bytes] = json_bytes) -> int:
        """A per-call JSON getter: encoded once per call (§5 stability), 0 outside a call."""
        ctx = current().ctx
        if ctx is None:
            return 0
        return self._serve(caller, ctx.encoded(key, lambda: encode(make(ctx))), buf, limit)

    def filtered_node_list(self, caller: native.Caller, buf: int, limit: int) -> int:
        ctx = current().ctx
        if ctx is None:
            return 0
        nodes = ctx.filtered_nodes
        # One bytes object per cycle (wasm/encoding.py FilteredNodes), so §5's stability holds as well.
        return self._serve(caller, nodes.json() if nodes is not None else b"[]", buf, limit)

    def node_to_status_map(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeToStatusMap", lambda c: dict(c.node_statuses or {}), buf, limit)

    def node_score_list(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeScoreList", lambda c: dict(c.node_scores or ()), buf, limit)

    def node_image_states(self, caller: native.Caller, name_ptr: int, name_len: int, buf: int, limit: int) -> int:
        name = self._read_or_trap(caller, name_ptr, name_len).decode("utf-8", "replace")
        return self._serve(caller, image_states_json(self._snapshot_node(name)), buf, limit)

    # k8s.io/scheduler handle
    def eventf(self, caller: native.Caller, buf: int, n: int) -> None:
        data = self._read_or_trap(caller, buf, n)
        try:
            ev = parse_eventf(data)
        except ValueError as e:
            raise ValueError(f"invalid event JSON: {e}") from None
        if self.handle is None or current().ctx is None:
            # Outside a call (instantiation) there is no cycle to attach the event to.
            self.dropped_events += 1
            return
        self.handle.event_recorder().eventf(ev.regarding, ev.related, ev.eventtype, ev.reason, ev.action, ev.note)

    def reject_waiting_pod(self, caller: native.Caller, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        key = self._read_or_trap(caller, uid, uid_len).decode("utf-8", "replace")
        rejected = self.handle is not None and self.handle.reject_waiting_pod(key)
        if (out_limit & 0xFFFFFFFF) >= 8:
            self._write_or_trap(caller, out, (1 if rejected else 0).to_bytes(8, "little"))

    def get_waiting_pod(self, caller: native.Caller, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        key = self._read_or_trap(caller, uid, uid_len).decode("utf-8", "replace")
        wp = self.handle.get_waiting_pod(key) if self.handle is not None else None
        pod_bytes = self.pods.encode(wp.get_pod()) if wp is not None else None
        self._write_or_trap(caller, out, waiting_pod_bytes(pod_bytes, out_limit & 0xFFFFFFFF))


    # ----- §14 [+] ABI v2 --------------------------------------------------------------------------

    def _snapshot(self) -> Snapshot | None:
        return self.handle.snapshot_shared_lister() if self.handle is not None else None

    def snapshot_changes(self, caller: native.Caller, buf: int, limit: int) -> int:
        """§14.1: a cursor; a value that reached the guest is consumed."""
        mirror = current().mirror
        value = mirror.next_value(self._snapshot(), self.pods.encode)
        n = self._serve(caller, value, buf, limit)
        if n and n <= (limit & 0xFFFFFFFF):
            mirror.consumed()
        return n

    def node_info_overlay(self, caller: native.Caller, buf: int, limit: int) -> int:
        ctx = current().ctx
        if ctx is None or ctx.node_info is None:
            return 0
        ni = ctx.node_info

        def make() -> bytes:
            snap = self._snapshot()
            return snapshot_sync.overlay(ni, snap.get(ni.name) if snap is not None else None, self.pods.encode)

        return self._serve(caller, ctx.encoded("overlay", make), buf, limit)

    def _object_query(self, caller: native.Caller, query: int, query_len: int, keys: tuple[str, ...]
                      ) -> tuple[bytes, GroupVersionResource, dict[str, str]]:
        """§14.2's JSON query: its bytes, the resource and the other string fields named by keys."""
        raw = self._read_or_trap(caller, query, query_len)
        q = _json_query(raw)
        fields: dict[str, str] = {}
        for key in ("group", "version", "resource", *keys):
            v = q.get(key, "")
            if not isinstance(v, str):
                raise HostFunctionFailure(f"invalid query: {key} must be a string")
            fields[key] = v
        if not fields["version"] or not fields["resource"]:
            raise HostFunctionFailure("invalid query: version and resource are required")
        gvr = GroupVersionResource(fields.pop("group"), fields.pop("version"), fields.pop("resource"))
        if self.objects is None:
            raise ResourceNotWatchedError(gvr)
        return raw, gvr, fields

    def objects_list(self, caller: native.Caller, query: int, query_len: int, buf: int, limit: int) -> int:
        raw, gvr, f = self._object_query(caller, query, query_len, ("namespace", "labelSelector"))
        objects = self.objects
        assert objects is not None

        def make() -> bytes:
            try:
                items = objects.list(gvr, f["namespace"], f["labelSelector"])
            except SelectorError as e:
                raise HostFunctionFailure(f"invalid labelSelector: {e}") from None
            return b"".join(snapshot_sync.framed(o) for o in items)

        return self._serve(caller, _once_per_call("objects.list" + raw.decode("utf-8", "replace"), make), buf, limit)

    def objects_get(self, caller: native.Caller, query: int, query_len: int, buf: int, limit: int) -> int:
        raw, gvr, f = self._object_query(caller, query, query_len, ("namespace", "name"))
        objects = self.objects
        assert objects is not None

        def make() -> bytes:
            return objects.get(gvr, f["namespace"], f["name"]) or b""

        return self._serve(caller, _once_per_call("objects.get" + raw.decode("utf-8", "replace"), make), buf, limit)

    def result_cluster_events_with_hints(self, caller: native.Caller, buf: int, n: int) -> None:
        ctx = current().ctx
        if ctx is None or ctx.export != "enqueue":
            return  # §4.2: a setter the running export does not consume is not read
        ctx.cluster_events_with_hints = self._read_or_trap(caller, buf, n)

    def _per_call(self, caller: native.Caller, buf: int, limit: int, value: Callable[[CallContext], bytes | None]
                  ) -> int:
        ctx = current().ctx
        if ctx is None:
            return 0
        return self._serve(caller, value(ctx) or b"", buf, limit)

    def queueing_hint_event(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: _u32(c.hint_event) if c.export == "queueinghint" else None)

    def queueing_hint_old_object(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: c.old_object)

    def queueing_hint_new_object(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: c.new_object)

    def cycle_state_id(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: _u32(c.cycle_state_id))

    def cycle_state_released(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: b"".join(_u32(i) for i in c.released_states))

    def nominated_pods_for_node(self, caller: native.Caller, name: int, name_len: int, buf: int, limit: int) -> int:
        node = self._read_or_trap(caller, name, name_len).decode("utf-8", "replace")

        def make() -> bytes:
            if self.handle is None:
                return b""
            pods = self.handle.pod_nominator().nominated_pods_for_node(node)
            return b"".join(snapshot_sync.framed(self.pods.encode(pi.pod)) for pi in pods)

        return self._serve(caller, _once_per_call("nominated/" + node, make), buf, limit)

    def run_filter_plugins_with_nominated_pods(self, caller: native.Caller, name: int, name_len: int, buf: int,
                                               limit: int) -> int:
        node = self._read_or_trap(caller, name, name_len).decode("utf-8", "replace")
        ctx = current().ctx
        if ctx is None or ctx.pod is None or self.handle is None:
            return 0
        handle, pod = self.handle, ctx.pod
        state = ctx.cycle_state if ctx.cycle_state is not None else CycleState()

        def make() -> bytes:
            snap = handle.snapshot_shared_lister()
            ni = snap.get(node)
            if ni is None or ni.node is None:
                st: Status | None = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f'node "{node}" not found'])
            else:
                self._nested.active = True
                try:
                    st = handle.run_filter_plugins_with_nominated_pods(state, pod, ni)
                finally:
                    self._nested.active = False
            code = int(st.code) if st is not None else 0
            reason = st.message() if st is not None else ""
            return code.to_bytes(4, "little", signed=True) + snapshot_sync.framed(reason.encode())

        return self._serve(caller, ctx.encoded("rfpwnp/" + node, make), buf, limit)

    # ----- §15 [+] the queue and gangs ---------------------------------------------------------------

    def queued_pod_info(self, caller: native.Caller, buf: int, limit: int) -> int:
        return self._per_call(caller, buf, limit, lambda c: c.queued_pod_info)

    def result_sort_key(self, caller: native.Caller, buf: int, n: int) -> None:
        ctx = current().ctx
        if ctx is None or ctx.export != "queuesort":
            return  # §4.2: a setter the running export does not consume is not read
        ctx.sort_key = self._read_or_trap(caller, buf, n)

    def waiting_pods(self, caller: native.Caller, buf: int, limit: int) -> int:
        def make() -> bytes:
            if self.handle is None:
                return b""
            pods: list[Any] = []
            self.handle.iterate_over_waiting_pods(pods.append)
            pods.sort(key=lambda wp: object_key(wp.get_pod()))
            return b"".join(snapshot_sync.framed(self.pods.encode(wp.get_pod()))
                            + snapshot_sync.framed(json.dumps(wp.get_pending_plugins()).encode()) for wp in pods)

        return self._serve(caller, _once_per_call("waiting_pods", make), buf, limit)

    def _waiting_pod_query(self, caller: native.Caller, query: int, query_len: int, keys: tuple[str, ...]
                           ) -> dict[str, str]:
        q = _json_query(self._read_or_trap(caller, query, query_len))
        out: dict[str, str] = {}
        for key in ("uid", "plugin", *keys):
            v = q.get(key, "")
            if not isinstance(v, str):
                raise HostFunctionFailure(f"invalid query: {key} must be a string")
            out[key] = v
        if not out["uid"]:
            raise HostFunctionFailure("invalid query: uid is required")
        out["plugin"] = out["plugin"] or self.plugin
        return out

    def waiting_pod_allow(self, caller: native.Caller, query: int, query_len: int) -> int:
        q = self._waiting_pod_query(caller, query, query_len, ())
        wp = self.handle.get_waiting_pod(q["uid"]) if self.handle is not None else None
        if wp is None:
            return 0
        wp.allow(q["plugin"])
        return 1

    def waiting_pod_reject(self, caller: native.Caller, query: int, query_len: int) -> int:
        q = self._waiting_pod_query(caller, query, query_len, ("message",))
        wp = self.handle.get_waiting_pod(q["uid"]) if self.handle is not None else None
        if wp is None:
            return 0
        wp.reject(q["plugin"], q["message"])
        return 1

    def pods_list(self, caller: native.Caller, query: int, query_len: int, buf: int, limit: int) -> int:
        raw = self._read_or_trap(caller, query, query_len)
        q = _json_query(raw) if raw else {}
        namespace, selector_text = q.get("namespace", ""), q.get("labelSelector", "")
        if not isinstance(namespace, str) or not isinstance(selector_text, str):
            raise HostFunctionFailure("invalid query: namespace and labelSelector must be strings")
        try:
            selector = parse_selector(selector_text)
        except SelectorError as e:
            raise HostFunctionFailure(f"invalid labelSelector: {e}") from None

        def make() -> bytes:
            if self.handle is None:
                return b""
            pods = self.handle.pod_lister().list(namespace, selector)
            return b"".join(snapshot_sync.framed(self.pods.encode(p)) for p in pods)

        return self._serve(caller, _once_per_call("pods.list" + raw.decode("utf-8", "replace"), make), buf, limit)

    def activate(self, caller: native.Caller, buf: int, n: int) -> None:
        data = self._read_or_trap(caller, buf, n)
        try:
            keys = json.loads(data)
        except ValueError as e:
            raise HostFunctionFailure(f"invalid pod keys JSON: {e}") from None
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise HostFunctionFailure("invalid pod keys: want a JSON array of \"namespace/name\" strings")
        ctx = current().ctx
        if ctx is None:
            return
        # Activated once the call returns: the activated pods' queue entry may call this very guest (§15.2).
        if ctx.pods_to_activate is None:
            ctx.pods_to_activate = []
        ctx.pods_to_activate.extend(keys)

    def clock(self, caller: native.Caller, buf: int, limit: int) -> int:
        now = self.unix_ns(self.handle.clock()) if self.handle is not None else time.time_ns()
        return self._serve(caller, now.to_bytes(8, "little"), buf, limit)


def _json_query(raw: bytes) -> dict[str, Any]:
    try:
        q = json.loads(raw)
    except ValueError as e:
        raise HostFunctionFailure(f"invalid query JSON: {e}") from None
    if not isinstance(q, dict):
        raise HostFunctionFailure("invalid query: not a JSON object")
    return q


def _once_per_call(key: str, make: Callable[[], bytes]) -> bytes:
    """A getter's value, made once per call (§5 stability); made afresh outside a call."""
    ctx = current().ctx
    return ctx.encoded(key, make) if ctx is not None else make()


def _u32(v: int) -> bytes:
    return (v & 0xFFFFFFFF).to_bytes(4, "little")


# Guest lines name where the host makes their record, whichever way they are written.
_GUEST_RECORD_LINE = Host.guest_record.__code__.co_firstlineno
GUEST_LINE_SOURCE = f"{os.path.basename(__file__)}:{_GUEST_RECORD_LINE}"

# klog severities 0..3 as the letters their lines start with (util/klog.py's, for encoding.klog_level's levels).
_SEVERITY_LETTERS = "".join(klog.level_char(klog_level(s)) for s in range(4)).encode()


def _follow_sink(sink: klog.KlogHandler | None) -> None:
    """The native host writes guest lines to the sink's file descriptor when it has one (one write per call)."""
    native.set_log_sink(sink.fileno() if sink is not None else -1, _SEVERITY_LETTERS)


guest_log.watch(_follow_sink)
