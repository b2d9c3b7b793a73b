"""The guest ABI (../shared/ABI.md), section by section: module shape (§2), exports and result
packing (§3), host imports (§4) with the buf/buf_limit protocol (§5), status (§6), cluster
events (§7) and klog (§11). Nothing else in wasmsched knows import names or encodings.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import wasmtime

from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import Handle
from wasmsched.wasm import native
from wasmsched.wasm.errors import HostFunctionFailure, WasmLoadError
from wasmsched.wasm.interrupt import Interrupted
from wasmsched.wasm.wasi import GuestTimeout, Wasi

if TYPE_CHECKING:
    from wasmsched.api.types import Pod
    from wasmsched.framework.types import NodeInfo
    from wasmsched.wasm.instance import GuestInstance

log = logging.getLogger("wasmsched.wasm")

# ===== §2 Module shape and §3 Guest exports =======================================================

I32, I64 = "i32", "i64"
# Export name -> result type (None: no result). The order is the one signature errors follow.
EXPORTS: dict[str, str | None] = {
    "enqueue": None,
    "prefilter": I32,
    "filter": I32,
    "postfilter": I64,
    "prescore": I32,
    "score": I64,
    "normalizescore": I32,
    "reserve": I32,
    "unreserve": None,
    "permit": I64,
    "prebind": I32,
    "bind": I32,
    "postbind": None,
    "addpod": I32,
    "removepod": I32,
}
LIFECYCLE_EXPORTS = ("_initialize", "_start")  # () -> (), instantiation only
BINDING_EXPORTS = ("unreserve", "prebind", "bind", "postbind")


def _sig_text(result: str | None) -> str:
    return f"() -> ({result or ''})"


def _valtype_name(t: wasmtime.ValType) -> str:
    return str(t)


def check_module(module: wasmtime.Module) -> set[str]:
    """Validates exports and imports before any guest code runs; returns the plugin exports present."""
    exports = {e.name: e.type for e in module.exports}
    mem = exports.get("memory")
    if not isinstance(mem, wasmtime.MemoryType):
        raise WasmLoadError("wasm: guest doesn't export memory[memory]")
    present = [name for name in EXPORTS if name in exports]
    if not present:
        raise WasmLoadError("wasm: guest does not export any plugin functions")
    for name in present:
        want = EXPORTS[name]
        ty = exports[name]
        if not _func_sig_ok(ty, want):
            raise WasmLoadError(
                f"wasm: guest exports the wrong signature for func[{name}]. should be {_sig_text(want)}")
    for name in LIFECYCLE_EXPORTS:
        if name in exports and not _func_sig_ok(exports[name], None):
            raise WasmLoadError(
                f"wasm: guest exports the wrong signature for func[{name}]. should be {_sig_text(None)}")
    for imp in module.imports:
        _check_import(imp)
    return set(present)


def _func_sig_ok(ty: Any, result: str | None) -> bool:
    if not isinstance(ty, wasmtime.FuncType):
        return False
    results = [_valtype_name(t) for t in ty.results]
    return not ty.params and results == ([result] if result else [])


def _check_import(imp: wasmtime.ImportType) -> None:
    module, name, ty = imp.module, imp.name or "", imp.type
    if not isinstance(ty, wasmtime.FuncType):
        kind = {wasmtime.MemoryType: "memory", wasmtime.TableType: "table", wasmtime.GlobalType: "global"}.get(
            type(ty), "extern")
        raise WasmLoadError(f"wasm: guest imports unsupported {kind} {module}.{name}")
    if module == WASI_MODULE:
        if name not in WASI_FUNCTIONS:
            raise WasmLoadError(f"wasm: guest imports unknown function {module}.{name}")
        return  # wasmtime's linker checks WASI signatures; a mismatch fails linking with its text
    sig = IMPORTS.get((module, name))
    if sig is None:
        raise WasmLoadError(f"wasm: guest imports unknown function {module}.{name}")
    params = [_valtype_name(t) for t in ty.params]
    results = [_valtype_name(t) for t in ty.results]
    if params != [I32] * sig[0] or results != ([I32] if sig[1] else []):
        raise WasmLoadError(f"wasm: guest imports {module}.{name} with the wrong signature")


# Result unpacking (§3): u64 r -> (hi, lo) as signed int32 halves.
def _s32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def unpack_i64(r: int) -> tuple[int, int]:
    r &= 0xFFFFFFFFFFFFFFFF
    return _s32(r >> 32), _s32(r)


def unpack_score(r: int) -> tuple[int, int]:
    """score: hi = score, lo = status -> (score, status code)."""
    return unpack_i64(r)


def unpack_postfilter(r: int) -> tuple[int, int]:
    """postfilter: hi = NominatingMode, lo = status -> (mode, status code)."""
    return unpack_i64(r)


def unpack_permit(r: int) -> tuple[int, int]:
    """permit: hi = status, lo = timeout ms (u32) -> (status code, timeout ms). Reversed vs score."""
    hi, lo = unpack_i64(r)
    return hi, lo & 0xFFFFFFFF


# ===== §4 Host imports =============================================================================

API, SCHED, KLOG = "k8s.io/api", "k8s.io/scheduler", "k8s.io/klog"
WASI_MODULE = "wasi_snapshot_preview1"
# (module, name) -> (number of i32 params, returns an i32)
IMPORTS: dict[tuple[str, str], tuple[int, bool]] = {
    (API, "node"): (4, True),
    (API, "nodeList"): (2, True),
    (KLOG, "log"): (3, False),
    (KLOG, "logs"): (5, False),
    (KLOG, "severity"): (0, True),
    (SCHED, "get_config"): (2, True),
    (SCHED, "currentPod"): (2, True),
    (SCHED, "targetPod"): (2, True),
    (SCHED, "currentNodeName"): (2, True),
    (SCHED, "filteredNodeList"): (2, True),
    (SCHED, "nodeToStatusMap"): (2, True),
    (SCHED, "nodeScoreList"): (2, True),
    (SCHED, "nodeImageStates"): (4, True),
    (SCHED, "result.cluster_events"): (2, False),
    (SCHED, "result.node_names"): (2, False),
    (SCHED, "result.nominated_node_name"): (2, False),
    (SCHED, "result.status_reason"): (2, False),
    (SCHED, "result.normalized_score_list"): (2, False),
    (SCHED, "handle.eventrecorder.eventf"): (2, False),
    (SCHED, "handle.reject_waiting_pod"): (4, False),
    (SCHED, "handle.get_waiting_pod"): (4, False),
}
WASI_FUNCTIONS = frozenset((
    "args_get", "args_sizes_get", "environ_get", "environ_sizes_get", "clock_res_get", "clock_time_get",
    "fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags",
    "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size", "fd_filestat_set_times", "fd_pread",
    "fd_prestat_get", "fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber", "fd_seek",
    "fd_sync", "fd_tell", "fd_write", "path_create_directory", "path_filestat_get", "path_filestat_set_times",
    "path_link", "path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
    "path_unlink_file", "poll_oneoff", "proc_exit", "proc_raise", "sched_yield", "random_get", "sock_accept",
    "sock_recv", "sock_send", "sock_shutdown",
))

# §4.2: every export with a result reads result.status_reason.
STATUS_REASON_EXPORTS = frozenset(n for n, r in EXPORTS.items() if r is not None)


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


def _json(v: Any) -> bytes:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class PodEncoder:
    """Protobuf bytes of pods, serialized at most once per object (the framework never mutates a
    Pod it handed to plugins; an update is a new object)."""

    def __init__(self, capacity: int = 256) -> None:
        self._cache: OrderedDict[int, tuple[Pod, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity
        self.serialized = 0

    def encode(self, pod: Pod) -> bytes:
        k = id(pod)
        with self._lock:
            hit = self._cache.get(k)
            if hit is not None and hit[0] is pod:
                self._cache.move_to_end(k)
                return hit[1]
        data = pod.SerializeToString()
        with self._lock:
            self.serialized += 1
            self._cache[k] = (pod, data)
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        return data


def node_bytes(ni: NodeInfo) -> bytes:
    """A node's protobuf bytes, cached in the NodeInfo's memo (cleared when the Node object changes)."""
    memo = ni.memo()
    data: bytes | None = memo.get("wasm.node")
    if data is None or memo.get("wasm.node.obj") is not ni.node:
        data = ni.node.SerializeToString() if ni.node is not None else b""
        memo["wasm.node"] = data
        memo["wasm.node.obj"] = ni.node
    return data


def node_list_bytes(infos: Sequence[NodeInfo]) -> bytes:
    """`NodeList` wire bytes: field 2 (items) per node, built from the nodes' cached bytes."""
    parts = []
    for ni in infos:
        if ni.node is None:
            continue
        b = node_bytes(ni)
        parts.append(b"\x12" + _varint(len(b)) + b)
    return b"".join(parts)


def image_states_json(ni: NodeInfo | None) -> bytes:
    """A node's image states as JSON, memoized in its NodeInfo for as long as its image_states dict
    (replaced, never mutated, when the images or their spread change) stays the same object."""
    if ni is None or ni.node is None:
        return b"null"
    memo = ni.memo()
    states = ni.image_states
    entry: tuple[Any, bytes] | None = memo.get("wasm.images")
    if entry is None or entry[0] is not states:
        entry = (states, _json({name: {"Size": s.size, "NumNodes": s.num_nodes} for name, s in states.items()}))
        memo["wasm.images"] = entry
    return entry[1]


def nul_list(data: bytes, keep_empty: bool) -> list[str]:
    """Entries each followed by 0x00; bytes after the last 0x00 are ignored."""
    parts = data.split(b"\x00")[:-1]
    out = [p.decode("utf-8", "replace") for p in parts]
    return out if keep_empty else [p for p in out if p]


# §4.4 waiting pods
def waiting_pod_bytes(pod_bytes: bytes | None, out_limit: int) -> bytes:
    """What `get_waiting_pod` writes at `out` (never more than out_limit bytes)."""
    if pod_bytes is None:
        return b"\x00" * 8 if out_limit >= 8 else b""
    n = len(pod_bytes)
    if n <= out_limit:
        return pod_bytes + (b"\x00" if n < out_limit else b"")
    if out_limit >= 8:
        return b"\xff\xff\xff\xff" + n.to_bytes(4, "little")
    return b""


@dataclass
class GuestEvent:
    """An event from `handle.eventrecorder.eventf` (§4.1)."""

    regarding: dict[str, str]
    related: dict[str, str] | None
    eventtype: str
    reason: str
    action: str
    note: str


_REF_KEYS = ("Kind", "APIVersion", "Name", "Namespace", "UID", "ResourceVersion")


def parse_eventf(data: bytes) -> GuestEvent:
    obj = json.loads(data.decode("utf-8", "replace"))
    if not isinstance(obj, dict):
        raise ValueError("event must be a JSON object")  # noqa: TRY004 - bad guest data, not a caller bug

    def ref(key: str) -> dict[str, str]:
        r = obj.get(key)
        if not isinstance(r, dict):
            return {k: "" for k in _REF_KEYS}
        return {k: str(r.get(k, "") or "") for k in _REF_KEYS}

    def s(key: str) -> str:
        v = obj.get(key, "")
        return v if isinstance(v, str) else ""

    related = ref("RelatedReference")
    return GuestEvent(ref("RegardingReference"), related if any(related.values()) else None,
                      s("Eventtype"), s("Reason"), s("Action"), s("Note"))


def parse_normalized_scores(data: bytes | None, scores: list[Any]) -> None:
    """§4.3: applies the guest's name -> score object to the input list in place, by name."""
    if data is None:
        return
    obj = json.loads(data.decode("utf-8", "replace"))
    if obj is None:
        return
    if not isinstance(obj, dict):
        raise ValueError("normalized score list must be a JSON object")  # noqa: TRY004 - bad guest data, not a caller bug
    for v in obj.values():
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"normalized score {v!r} is not an integer")  # noqa: TRY004 - bad guest data, not a caller bug
    for ns in scores:
        if ns.name in obj:
            ns.score = obj[ns.name]


# ===== §7 Cluster events ===========================================================================

_GVK_RESOURCES = {
    0: EventResource.POD,
    1: EventResource.NODE,
    2: EventResource.PERSISTENT_VOLUME,
    3: EventResource.PERSISTENT_VOLUME_CLAIM,
    4: "resource.k8s.io/PodSchedulingContext",
    5: EventResource.RESOURCE_CLAIM,
    6: EventResource.STORAGE_CLASS,
    7: EventResource.CSI_NODE,
    8: EventResource.CSI_DRIVER,
    9: EventResource.CSI_STORAGE_CAPACITY,
    10: EventResource.WILDCARD,
}
GUEST_UPDATE = 60
_ALL = int(ActionType.ALL)
DEFAULT_EVENTS = [
    ClusterEvent(EventResource.POD, _ALL),
    ClusterEvent(EventResource.NODE, _ALL),
    ClusterEvent(EventResource.CSI_NODE, _ALL),
    ClusterEvent(EventResource.PERSISTENT_VOLUME, _ALL),
    ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, _ALL),
    ClusterEvent(EventResource.STORAGE_CLASS, _ALL),
]


def map_action(a: int) -> int:
    if a & GUEST_UPDATE == GUEST_UPDATE:
        a = (a & ~GUEST_UPDATE) | int(ActionType.UPDATE)
    return a & _ALL


def decode_cluster_events(data: bytes | None, plugin: str, warned: set[int]) -> list[ClusterEventWithHint]:
    """8-byte records (u32 LE GVK, u32 LE action); fewer than 8 bytes -> the default list."""
    if data is None or len(data) < 8:
        return [ClusterEventWithHint(ev) for ev in DEFAULT_EVENTS]
    out = []
    for i in range(0, len(data) - 7, 8):
        gvk = int.from_bytes(data[i:i + 4], "little")
        action = int.from_bytes(data[i + 4:i + 8], "little")
        resource = _GVK_RESOURCES.get(gvk)
        if resource is None:
            if gvk not in warned:
                warned.add(gvk)
                log.warning('"Unknown GVK in cluster events; treated as wildcard" plugin="%s" gvk=%d', plugin, gvk)
            resource = EventResource.WILDCARD
        out.append(ClusterEventWithHint(ClusterEvent(resource, map_action(action))))
    return out


def default_events() -> list[ClusterEventWithHint]:
    return [ClusterEventWithHint(ev) for ev in DEFAULT_EVENTS]


# ===== §11 klog =====================================================================================

_LEVELS = (logging.INFO, logging.WARNING, logging.ERROR, logging.ERROR)


def klog_level(severity: int) -> int:
    return _LEVELS[min(max(severity, 0), 3)]


def klog_text(msg: str, kvs: Sequence[str]) -> str:
    pairs = list(kvs)
    if len(pairs) % 2:
        pairs.append("(MISSING)")
    text = json.dumps(msg, ensure_ascii=False)
    for i in range(0, len(pairs), 2):
        text += f" {pairs[i]}={json.dumps(pairs[i + 1], ensure_ascii=False)}"
    return text


# ===== the host: all imports on one Linker per plugin ==============================================


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

    def _fail(self, inst: GuestInstance, module: str, name: str, detail: str) -> HostFunctionFailure:
        text = f"host function {module}.{name} failed: {detail}"
        inst.host_failure = text
        return HostFunctionFailure(text)

    def memory_fault(self, inst: GuestInstance, module: str, name: str) -> HostFunctionFailure:
        """The trap of an import that reads or writes outside the guest's memory (§4.2)."""
        return self._fail(inst, module, name, "out of bounds memory access")

    def _read_or_trap(self, caller: Any, module: str, name: str, ptr: int, n: int) -> bytes:
        inst = self.current()
        data = self.read_memory(inst, caller, ptr, n)
        if data is None:
            raise self.memory_fault(inst, module, name)
        return data

    def _write_or_trap(self, caller: Any, module: str, name: str, ptr: int, data: bytes) -> None:
        inst = self.current()
        if not self.write_memory(inst, caller, ptr, data):
            raise self.memory_fault(inst, module, name)

    def _serve(self, caller: Any, module: str, name: str, value: bytes, buf: int, limit: int) -> int:
        """§5: write value if it fits, return its full length either way."""
        n = len(value)
        if n and n <= (limit & 0xFFFFFFFF):
            self._write_or_trap(caller, module, name, buf, value)
        return n

    # ----- definitions --------------------------------------------------------------------------

    def define(self, linker: wasmtime.Linker) -> None:
        table: dict[tuple[str, str], Callable[..., Any]] = {
            (API, "node"): self.node,
            (API, "nodeList"): self.node_list,
            (KLOG, "log"): self.klog_log,
            (KLOG, "logs"): self.klog_logs,
            (KLOG, "severity"): self.klog_severity,
            (SCHED, "get_config"): self.get_config,
            (SCHED, "currentPod"): self.current_pod,
            (SCHED, "targetPod"): self.target_pod,
            (SCHED, "currentNodeName"): self.current_node_name,
            (SCHED, "filteredNodeList"): self.filtered_node_list,
            (SCHED, "nodeToStatusMap"): self.node_to_status_map,
            (SCHED, "nodeScoreList"): self.node_score_list,
            (SCHED, "nodeImageStates"): self.node_image_states,
            (SCHED, "result.cluster_events"): self.result_cluster_events,
            (SCHED, "result.node_names"): self.result_node_names,
            (SCHED, "result.nominated_node_name"): self.result_nominated_node_name,
            (SCHED, "result.status_reason"): self.result_status_reason,
            (SCHED, "result.normalized_score_list"): self.result_normalized_score_list,
            (SCHED, "handle.eventrecorder.eventf"): self.eventf,
            (SCHED, "handle.reject_waiting_pod"): self.reject_waiting_pod,
            (SCHED, "handle.get_waiting_pod"): self.get_waiting_pod,
        }
        assert table.keys() == IMPORTS.keys()
        for (module, name), fn in table.items():
            nparams, result = IMPORTS[(module, name)]
            self._callbacks.append(
                native.define_import(linker, module, name, nparams, result, fn, self.import_error(module, name)))
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
            detail = str(e) or type(e).__name__
            if inst is None:
                return f"host function {module}.{name} failed: {detail}"
            return str(self._fail(inst, module, name, detail))

        return text

    def _snapshot_node(self, name: str) -> NodeInfo | None:
        if self.handle is None:
            return None
        ni = self.handle.snapshot_shared_lister().get(name)
        return ni if ni is not None and ni.node is not None else None

    # k8s.io/api
    def node(self, caller: Any, name_ptr: int, name_len: int, buf: int, limit: int) -> int:
        name = self._read_or_trap(caller, API, "node", name_ptr, name_len).decode("utf-8", "replace")
        ni = self._snapshot_node(name)
        value = node_bytes(ni) if ni is not None else b""
        return self._serve(caller, API, "node", value, buf, limit)

    def node_list(self, caller: Any, buf: int, limit: int) -> int:
        inst = self.current()
        ctx = inst.ctx

        def make() -> bytes:
            if self.handle is None:
                return b""
            return node_list_bytes(self.handle.snapshot_shared_lister().list())

        value = ctx.encoded("nodeList", make) if ctx is not None else make()
        return self._serve(caller, API, "nodeList", value, buf, limit)

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
        return self._serve(caller, SCHED, "get_config", self.guest_config, buf, limit)

    def current_pod(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or ctx.pod is None:
            return 0
        return self._serve(caller, SCHED, "currentPod", self.pods.encode(ctx.pod), buf, limit)

    def target_pod(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or ctx.target_pod is None:
            return 0
        return self._serve(caller, SCHED, "targetPod", self.pods.encode(ctx.target_pod), buf, limit)

    def current_node_name(self, caller: Any, buf: int, limit: int) -> int:
        ctx = self.current().ctx
        if ctx is None or not ctx.node_name:
            return 0
        return self._serve(caller, SCHED, "currentNodeName", ctx.node_name.encode(), buf, limit)

    def _serve_json(self, caller: Any, name: str, make: Callable[[CallContext], Any], buf: int, limit: int) -> int:
        """A per-call JSON getter: encoded once per call (§5 stability), 0 outside a call."""
        ctx = self.current().ctx
        if ctx is None:
            return 0
        return self._serve(caller, SCHED, name, ctx.encoded(name, lambda: _json(make(ctx))), buf, limit)

    def filtered_node_list(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "filteredNodeList", lambda c: list(c.filtered_node_names or ()), buf, limit)

    def node_to_status_map(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeToStatusMap", lambda c: dict(c.node_statuses or {}), buf, limit)

    def node_score_list(self, caller: Any, buf: int, limit: int) -> int:
        return self._serve_json(caller, "nodeScoreList", lambda c: dict(c.node_scores or ()), buf, limit)

    def node_image_states(self, caller: Any, name_ptr: int, name_len: int, buf: int, limit: int) -> int:
        name = self._read_or_trap(caller, SCHED, "nodeImageStates", name_ptr, name_len).decode("utf-8", "replace")
        return self._serve(caller, SCHED, "nodeImageStates", image_states_json(self._snapshot_node(name)), buf, limit)

    # k8s.io/scheduler results (§4.1: the last setter call in a call wins)
    def _setter_ctx(self, export: str) -> CallContext | None:
        """The call's context if the running export consumes this setter; else the setter is ignored
        without reading guest memory (so it never traps outside a call)."""
        ctx = self.current().ctx
        return ctx if ctx is not None and ctx.export == export else None

    def result_cluster_events(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("enqueue")
        if ctx is not None:
            ctx.cluster_events = self._read_or_trap(caller, SCHED, "result.cluster_events", buf, n)

    def result_node_names(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("prefilter")
        if ctx is not None:
            data = self._read_or_trap(caller, SCHED, "result.node_names", buf, n)
            ctx.node_names = nul_list(data, keep_empty=False)

    def result_nominated_node_name(self, caller: Any, buf: int, n: int) -> None:
        ctx = self._setter_ctx("postfilter")
        if ctx is not None:
            data = self._read_or_trap(caller, SCHED, "result.nominated_node_name", buf, n)
            ctx.nominated_node_name = data.decode("utf-8", "replace")

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
            ctx.normalized_score_list = self._read_or_trap(caller, SCHED, "result.normalized_score_list", buf, n)

    # k8s.io/scheduler handle
    def eventf(self, caller: Any, buf: int, n: int) -> None:
        name = "handle.eventrecorder.eventf"
        inst = self.current()
        data = self._read_or_trap(caller, SCHED, name, buf, n)
        try:
            ev = parse_eventf(data)
        except ValueError as e:
            raise self._fail(inst, SCHED, name, f"invalid event JSON: {e}") from None
        if self.handle is None or inst.ctx is None:
            # Outside a call (instantiation) there is no cycle to attach the event to.
            self.dropped_events += 1
            return
        self.handle.event_recorder().eventf(ev.regarding, ev.related, ev.eventtype, ev.reason, ev.action, ev.note)

    def reject_waiting_pod(self, caller: Any, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        name = "handle.reject_waiting_pod"
        key = self._read_or_trap(caller, SCHED, name, uid, uid_len).decode("utf-8", "replace")
        rejected = self.handle is not None and self.handle.reject_waiting_pod(key)
        if (out_limit & 0xFFFFFFFF) >= 8:
            self._write_or_trap(caller, SCHED, name, out, (1 if rejected else 0).to_bytes(8, "little"))

    def get_waiting_pod(self, caller: Any, uid: int, uid_len: int, out: int, out_limit: int) -> None:
        name = "handle.get_waiting_pod"
        key = self._read_or_trap(caller, SCHED, name, uid, uid_len).decode("utf-8", "replace")
        wp = self.handle.get_waiting_pod(key) if self.handle is not None else None
        pod_bytes = self.pods.encode(wp.get_pod()) if wp is not None else None
        self._write_or_trap(caller, SCHED, name, out, waiting_pod_bytes(pod_bytes, out_limit & 0xFFFFFFFF))
