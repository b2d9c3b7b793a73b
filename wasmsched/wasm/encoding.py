"""The encodings of the guest ABI (docs/abi.md): how values cross between the host and a guest.

Export results unpacked (§3); the values imports serve and read (§4.1: protobuf Pods and Nodes,
serialized at most once per object; compact JSON; NUL lists; eventf's JSON event), the
NormalizeScore result (§4.3), waiting pods (§4.4), cluster-event records (§7) and klog records
(§11). Pure functions of bytes and framework objects: no wasmtime here (wasm/host.py serves them).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from wasmsched.api.convert import message_to_dict
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.memo import MemoKey

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.api.types import Node, Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.types import ImageStateSummary, NodeInfo

log = logging.getLogger("wasmsched.wasm")

# ===== docs/abi.md §3 Result unpacking ===========================================================


def _s32(v: int) -> int:
    """The low 32 bits of v as a signed int32."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def unpack_i64(r: int) -> tuple[int, int]:
    """u64 r -> (hi, lo) as signed int32 halves."""
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


# ===== docs/abi.md §4.1 Encodings ================================================================

# ----- protobuf -----------------------------------------------------------------------------------


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


# NodeInfo memo entries: the node object and its bytes; the image states and their JSON.
_NODE_BYTES: MemoKey[tuple[Node | None, bytes]] = MemoKey("wasm.node_bytes")
_IMAGES_JSON: MemoKey[tuple[Mapping[str, ImageStateSummary], bytes]] = MemoKey("wasm.image_states_json")


def node_bytes(ni: NodeInfo) -> bytes:
    """A node's protobuf bytes, cached in the NodeInfo's memo (cleared when the Node object changes)."""
    memo = ni.memo()
    entry = memo.get(_NODE_BYTES)
    if entry is None or entry[0] is not ni.node:
        entry = memo[_NODE_BYTES] = (ni.node, ni.node.SerializeToString() if ni.node is not None else b"")
    return entry[1]


def node_list_bytes(infos: Sequence[NodeInfo]) -> bytes:
    """`NodeList` wire bytes: field 2 (items) per node, built from the nodes' cached bytes."""
    parts = []
    for ni in infos:
        if ni.node is None:
            continue
        b = node_bytes(ni)
        parts.append(b"\x12" + _varint(len(b)) + b)
    return b"".join(parts)


def object_bytes(obj: Any, pods: PodEncoder, as_json: bool = False) -> bytes | None:
    """A queueing hint's old or new object (docs/abi.md §14.3): protobuf for a Pod or a Node, JSON for any
    other kind (an API message, or a watched object's dict) and for every kind when as_json (an event
    registered for `*`, where the guest cannot tell the kind of protobuf bytes); None for no object."""
    if obj is None:
        return None
    if isinstance(obj, Message):
        name = obj.DESCRIPTOR.full_name
        if not as_json:
            if name == "k8s.io.api.core.v1.Pod":
                return pods.encode(obj)  # type: ignore[arg-type]
            if name == "k8s.io.api.core.v1.Node":
                return obj.SerializeToString()
        return json_bytes(message_to_dict(obj))
    return json_bytes(obj)


# ----- JSON ---------------------------------------------------------------------------------------


def json_bytes(v: Any) -> bytes:
    """Compact UTF-8 JSON."""
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def json_string_list(items: Sequence[str]) -> bytes:
    """json_bytes(list(items)), joined directly when no item needs escaping (node names never do:
    they are DNS subdomains), which for the hundreds of names of a filtered node list is several
    times faster than the encoder."""
    if not items:
        return b"[]"
    joined = "".join(items)
    if joined.isascii() and joined.isprintable() and '"' not in joined and "\\" not in joined:
        return ('["' + '","'.join(items) + '"]').encode()
    return json_bytes(list(items))


class FilteredNodes:
    """The names of a cycle's filtered nodes and their JSON (§4.2 filteredNodeList), made at most once per
    cycle: PreScore and Score are given the same nodes, and every guest plugin of the profile reads the same
    list, so the names are listed and encoded once for all of them (`filtered_nodes`)."""

    __slots__ = ("_json", "names", "nodes")

    def __init__(self, names: list[str], nodes: Sequence[NodeInfo] | None = None) -> None:
        self.names = names
        self.nodes = nodes  # what they were listed from, compared by identity
        self._json: bytes | None = None

    def json(self) -> bytes:
        if self._json is None:
            self._json = json_string_list(self.names)
        return self._json

    def clone(self) -> FilteredNodes:
        return self  # never changed once made: a cloned CycleState may share it


FILTERED_NODES_KEY = "wasm/filteredNodeList"


def filtered_nodes(state: CycleState | None, nodes: Sequence[NodeInfo]) -> FilteredNodes:
    """The FilteredNodes of `nodes`, kept in the cycle's state for the next call given the same sequence (the
    same object: the framework hands PreScore's list to Score unchanged)."""
    memo = state.get(FILTERED_NODES_KEY) if state is not None else None
    if isinstance(memo, FilteredNodes) and memo.nodes is nodes:
        return memo
    memo = FilteredNodes([ni.name for ni in nodes], nodes)
    if state is not None:
        state.write(FILTERED_NODES_KEY, memo)
    return memo


def image_states_json(ni: NodeInfo | None) -> bytes:
    """A node's image states as JSON, memoized in its NodeInfo for as long as its image_states dict
    (replaced, never mutated, when the images or their spread change) stays the same object."""
    if ni is None or ni.node is None:
        return b"null"
    memo = ni.memo()
    states = ni.image_states
    entry = memo.get(_IMAGES_JSON)
    if entry is None or entry[0] is not states:
        entry = (states, json_bytes({name: {"Size": s.size, "NumNodes": s.num_nodes} for name, s in states.items()}))
        memo[_IMAGES_JSON] = entry
    return entry[1]


# ----- NUL list -----------------------------------------------------------------------------------


def nul_list(data: bytes, keep_empty: bool) -> list[str]:
    """Entries each followed by 0x00; bytes after the last 0x00 are ignored."""
    parts = data.split(b"\x00")[:-1]
    out = [p.decode("utf-8", "replace") for p in parts]
    return out if keep_empty else [p for p in out if p]


# ----- eventf -------------------------------------------------------------------------------------


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
        raise ValueError("event must be a JSON object")

    def ref(key: str) -> dict[str, str]:
        r = obj.get(key)
        if not isinstance(r, dict):
            return dict.fromkeys(_REF_KEYS, "")
        return {k: str(r.get(k, "") or "") for k in _REF_KEYS}

    def s(key: str) -> str:
        v = obj.get(key, "")
        return v if isinstance(v, str) else ""

    related = ref("RelatedReference")
    return GuestEvent(ref("RegardingReference"), related if any(related.values()) else None,
                      s("Eventtype"), s("Reason"), s("Action"), s("Note"))


# ===== docs/abi.md §4.3 NormalizeScore result ====================================================


def parse_normalized_scores(data: bytes | None, scores: list[Any]) -> None:
    """§4.3: applies the guest's name -> score object to the input list in place, by name."""
    if data is None:
        return
    obj = json.loads(data.decode("utf-8", "replace"))
    if obj is None:
        return
    if not isinstance(obj, dict):
        raise ValueError("normalized score list must be a JSON object")
    for v in obj.values():
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"normalized score {v!r} is not an integer")
    for ns in scores:
        if ns.name in obj:
            ns.score = obj[ns.name]


# ===== docs/abi.md §4.4 Waiting pods =============================================================


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


# ===== docs/abi.md §7 Cluster events =============================================================

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
        return default_events()
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


# ===== docs/abi.md §11 klog ======================================================================

_LEVELS = (logging.INFO, logging.WARNING, logging.ERROR, logging.ERROR)


def klog_level(severity: int) -> int:
    return _LEVELS[min(max(severity, 0), 3)]


# ===== docs/abi.md §17 [+] Score in one call per pod ==============================================


def unpack_scorenodes(r: int) -> tuple[int, int]:
    """scorenodes: hi = the scores' address in guest memory (u32), lo = status -> (status code, address)."""
    hi, lo = unpack_i64(r)
    return lo, hi & 0xFFFFFFFF


def parse_node_scores(data: bytes | None, nodes: int) -> NDArray[np.int64]:
    """The scores a successful scorenodes left in guest memory: one little-endian int64 per node of the call,
    in its order (None: their address was outside the memory)."""
    if data is None:
        raise ValueError(f"the address of {nodes} scores is outside the guest's memory")
    if len(data) != 8 * nodes:
        raise ValueError(f"{len(data)} bytes for {nodes} nodes, want 8 per node")
    import numpy as np  # loaded with the node table (framework/nodetable.py sets up its threads first)

    return np.frombuffer(data, dtype="<i8").astype(np.int64)
