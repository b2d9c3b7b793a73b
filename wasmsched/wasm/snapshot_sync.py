"""docs/abi.md §14.1: a guest instance's mirror of the scheduler's snapshot, kept up to date by change
records the guest pulls (`handle.snapshot.changes`), and how a call's NodeInfo differs from the
snapshot's (`handle.node_info.overlay`).

The host remembers per instance what it has sent (`Mirror`): the node object, the sums and the pod
objects of every node. A sync compares that with the snapshot, only over the nodes the snapshot's
journal names since the last sync (a full comparison when the journal cannot say), so an instance
that never asks costs nothing, and a pod is sent to an instance once per version of it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wasmsched.framework.memo import MemoKey
from wasmsched.framework.types import get_pod_key
from wasmsched.wasm.encoding import json_bytes, node_bytes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from wasmsched.api.types import Node, Pod
    from wasmsched.framework.snapshot import Snapshot
    from wasmsched.framework.types import NodeInfo, PodInfo, Resource

# Record opcodes (§14.1).
NODE, NODE_GONE, POD, POD_GONE, RESET, SUMS = 1, 2, 3, 4, 5, 6
FLAG_AFFINITY, FLAG_REQUIRED_ANTI_AFFINITY = 1, 2
# A value is cut after the record that takes it past this size; the rest waits for the next call.
CHUNK_BYTES = 4 << 20

_SUMS: MemoKey[tuple[int, bytes]] = MemoKey("wasm.snapshot_sync.sums")


def framed(b: bytes) -> bytes:
    """§14's `str`/`bytes`: u32 LE length, then the bytes."""
    return len(b).to_bytes(4, "little") + b



def _resource(r: Resource) -> dict[str, object]:
    return {"milliCPU": r.milli_cpu, "memory": r.memory, "ephemeralStorage": r.ephemeral_storage,
            "allowedPodNumber": r.allowed_pod_number, "scalarResources": dict(r.scalar_resources)}


def sums_json(ni: NodeInfo) -> bytes:
    """kube's NodeInfo sums as §14.1's `resources` JSON, memoized per NodeInfo version (every change to
    a NodeInfo gives it a new generation)."""
    memo = ni.memo()
    entry = memo.get(_SUMS)
    if entry is None or entry[0] != ni.generation:
        data = json_bytes({"requested": _resource(ni.requested), "nonZeroRequested": _resource(ni.non_zero_requested),
                           "allocatable": _resource(ni.allocatable)})
        entry = memo[_SUMS] = (ni.generation, data)
    return entry[1]


def pod_flags(pi: PodInfo) -> int:
    return (FLAG_AFFINITY if pi.has_affinity() else 0) | (
        FLAG_REQUIRED_ANTI_AFFINITY if pi.required_anti_affinity_terms else 0)


@dataclass(slots=True)
class _SentNode:
    node: Node
    sums: bytes
    pods: dict[str, Pod] = field(default_factory=dict)


class Mirror:
    """What one instance has been sent; used only by calls on that instance, which never overlap."""

    __slots__ = ("_chunks", "_epoch", "_nodes", "_position", "_snapshot", "staged")

    def __init__(self) -> None:
        self._nodes: dict[str, _SentNode] = {}
        self._snapshot: Snapshot | None = None
        self._epoch = -1
        self._position = 0
        self._chunks: deque[bytes] = deque()
        # The value the last call that did not fit was given: served again, whole, until it fits.
        self.staged: bytes | None = None

    def next_value(self, snapshot: Snapshot | None, encode_pod: Callable[[Pod], bytes]) -> bytes:
        """The next value of the cursor: `more` and records. Syncs with the snapshot when nothing from an
        earlier sync is pending."""
        if self.staged is not None:
            return self.staged
        if not self._chunks and snapshot is not None:
            self._chunks.extend(self._sync(snapshot, encode_pod))
        if not self._chunks:
            return b""
        chunk = self._chunks.popleft()
        value = (b"\x01" if self._chunks else b"\x00") + chunk
        self.staged = value
        return value

    def consumed(self) -> None:
        """The staged value reached the guest."""
        self.staged = None

    def _changed_names(self, snapshot: Snapshot) -> Iterable[str]:
        journal = snapshot.journal
        if snapshot is self._snapshot and snapshot.journal_epoch == self._epoch:
            names: Iterable[str] = dict.fromkeys(journal[self._position:])
        else:
            # Every node, the snapshot's in its list order (a guest lists nodes in the order they came).
            names = dict.fromkeys([*(ni.name for ni in snapshot.node_info_list), *snapshot.node_info_map,
                                   *self._nodes])
        self._snapshot, self._epoch, self._position = snapshot, snapshot.journal_epoch, len(journal)
        return names

    def _sync(self, snapshot: Snapshot, encode_pod: Callable[[Pod], bytes]) -> list[bytes]:
        chunks: list[bytes] = []
        out = bytearray()
        for name in self._changed_names(snapshot):
            ni = snapshot.node_info_map.get(name)
            sent = self._nodes.get(name)
            if ni is None or ni.node is None:
                if sent is not None:
                    del self._nodes[name]
                    out += b"\x02" + framed(name.encode())
            else:
                self._node_records(out, name, ni, sent, encode_pod)
            if len(out) >= CHUNK_BYTES:
                chunks.append(bytes(out))
                out.clear()
        if out:
            chunks.append(bytes(out))
        return chunks

    def _node_records(self, out: bytearray, name: str, ni: NodeInfo, sent: _SentNode | None,
                      encode_pod: Callable[[Pod], bytes]) -> None:
        assert ni.node is not None
        bname = framed(name.encode())
        sums = sums_json(ni)
        if sent is None or sent.node is not ni.node or sent.sums != sums:
            out += b"\x01" + bname + framed(node_bytes(ni)) + framed(sums)
            if sent is None:
                sent = self._nodes[name] = _SentNode(ni.node, sums)
            else:
                sent.node, sent.sums = ni.node, sums
        pod_records(out, bname, sent.pods, ni.pods, encode_pod)


def pod_records(out: bytearray, bname: bytes, have: dict[str, Pod], pods: Iterable[PodInfo],
                encode_pod: Callable[[Pod], bytes], update: bool = True) -> None:
    """POD records for pods not in `have` (by key and object), POD_GONE for keys of `have` not among
    `pods`; `have` is brought up to date unless update is False."""
    seen: set[str] = set()
    had, kept = len(have), 0
    for pi in pods:
        key = get_pod_key(pi.pod)
        seen.add(key)
        old = have.get(key)
        kept += old is not None
        if old is not pi.pod:
            out += b"\x03" + bname + framed(key.encode()) + bytes((pod_flags(pi),)) + framed(encode_pod(pi.pod))
            if update:
                have[key] = pi.pod
    if kept != had:
        for key in [k for k in have if k not in seen]:
            out += b"\x04" + bname + framed(key.encode())
            if update:
                del have[key]


def overlay(ni: NodeInfo, base: NodeInfo | None, encode_pod: Callable[[Pod], bytes]) -> bytes:
    """How ni differs from the snapshot's NodeInfo of its node (base): POD and POD_GONE records, then
    the SUMS record; b"" when ni is the snapshot's."""
    if ni is base:
        return b""
    out = bytearray()
    have = {get_pod_key(pi.pod): pi.pod for pi in base.pods} if base is not None else {}
    pod_records(out, framed(ni.name.encode()), have, ni.pods, encode_pod, update=False)
    out += b"\x06" + framed(sums_json(ni))
    return bytes(out)
