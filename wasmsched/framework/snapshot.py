"""Snapshot: the cluster view one scheduling cycle works on (internal/cache/snapshot.go)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING

from wasmsched.framework.types import ImageStateSummary, NodeInfo

if TYPE_CHECKING:
    from wasmsched.framework.nodetable import NodeTable


# How many more journal entries than twice the nodes a snapshot keeps before it starts a new epoch.
JOURNAL_SLACK = 4096


class Snapshot:
    """NodeInfos in a stable order plus the lists plugins iterate often.

    The cache refreshes it incrementally at the start of every cycle; plugins must not mutate it.
    """

    __slots__ = (
        "_table",
        "generation",
        "have_pods_with_affinity_node_info_list",
        "have_pods_with_required_anti_affinity_node_info_list",
        "journal",
        "journal_epoch",
        "node_info_list",
        "node_info_map",
        "order_version",
        "positions",
        "used_pvc_set",
    )

    def __init__(self, node_infos: Iterable[NodeInfo] = ()) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: list[NodeInfo] = []
        # "namespace/name" of every claim a pod on a listed node uses (kube's usedPVCSet).
        self.used_pvc_set: frozenset[str] = frozenset()
        self.generation = 0
        # Names of the nodes each update changed or removed, in order (docs/abi.md §14.1: a wasm guest's
        # mirror catches up from its position in it). Cleared, with a new epoch, when it grows long.
        self.journal: list[str] = []
        self.journal_epoch = 0
        # The cache's node-order version this snapshot's lists were built from (-1: never).
        self.order_version = -1
        self.positions: dict[str, int] = {}
        # The nodes as columns (framework/nodetable.py), built when first asked for.
        self._table: NodeTable | None = None
        infos = list(node_infos)
        if infos:
            self.node_info_map = {ni.name: ni for ni in infos}
            self.rebuild_lists([ni for ni in infos if ni.node is not None])

    def rebuild_lists(self, ordered: list[NodeInfo]) -> None:
        """A new node list (order or membership changed): the derived lists are rebuilt, the node table
        dropped."""
        self.node_info_list = ordered
        self.positions = {ni.name: i for i, ni in enumerate(ordered)}
        self._table = None
        self.rebuild_affinity_lists()

    def rebuild_affinity_lists(self) -> None:
        """The lists of nodes with affinity pods and the set of claims in use, after NodeInfos were replaced
        in place."""
        ordered = self.node_info_list
        self.have_pods_with_affinity_node_info_list = [ni for ni in ordered if ni.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_node_info_list = [
            ni for ni in ordered if ni.pods_with_required_anti_affinity
        ]
        self.used_pvc_set = frozenset(k for ni in ordered if ni.pvc_ref_counts for k in ni.pvc_ref_counts)

    def record_changes(self, names: Iterable[str]) -> None:
        """Appends the names of nodes an update changed or removed to the journal."""
        journal = self.journal
        journal.extend(names)
        if len(journal) > JOURNAL_SLACK + 2 * len(self.node_info_map):
            journal.clear()
            self.journal_epoch += 1

    def replace(self, node_info: NodeInfo) -> None:
        """Puts a newer NodeInfo of a listed node in its place (the map is the caller's), keeping the
        node table's row in step."""
        row = self.positions[node_info.name]
        self.node_info_list[row] = node_info
        if self._table is not None:
            self._table.set_row(row, node_info)

    def node_table(self) -> NodeTable:
        """The listed nodes as columns, row i being list()[i]."""
        table = self._table
        if table is None or table.infos is not self.node_info_list:
            from wasmsched.framework.nodetable import NodeTable  # numpy: imported on first use

            table = self._table = NodeTable(self.node_info_list)
        return table

    def index_of(self, node_name: str) -> int:
        return self.positions[node_name]

    # NodeInfoLister
    def list(self) -> list[NodeInfo]:
        return self.node_info_list

    def get(self, node_name: str) -> NodeInfo | None:
        return self.node_info_map.get(node_name)

    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    # StorageInfoLister
    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on some node uses the claim "namespace/name"."""
        return key in self.used_pvc_set


def image_states_for(ni: NodeInfo, summaries: dict[str, ImageStateSummary]) -> dict[str, ImageStateSummary]:
    return {name: summaries[name] for name in _image_names(ni) if name in summaries}


def _image_names(ni: NodeInfo) -> list[str]:
    if ni.node is None:
        return []
    return [n for img in ni.node.status.images for n in img.names]


def new_snapshot(pods: Iterable[object], nodes: Iterable[object]) -> Snapshot:
    """A snapshot from plain objects (cache.NewSnapshot): pods are placed by spec.nodeName."""
    from wasmsched.framework.types import PodInfo

    infos: dict[str, NodeInfo] = {}
    order: list[NodeInfo] = []
    for node in nodes:
        ni = NodeInfo(node)  # type: ignore[arg-type]
        infos[ni.name] = ni
        order.append(ni)
    for pod in pods:
        name = pod.spec.nodeName  # type: ignore[attr-defined]
        if name in infos:
            infos[name].add_pod_info(PodInfo(pod))  # type: ignore[arg-type]
    summaries = image_state_summaries(order)
    for ni in order:
        ni.image_states = image_states_for(ni, summaries)
    snap = Snapshot()
    snap.node_info_map = infos
    snap.rebuild_lists(order)
    return snap


def image_state_summaries(node_infos: Iterable[NodeInfo]) -> dict[str, ImageStateSummary]:
    """Image name -> (size, number of nodes that have it), as the cache's imageStates."""
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for ni in node_infos:
        if ni.node is None:
            continue
        for img in ni.node.status.images:
            for n in img.names:
                sizes[n] = img.sizeBytes
                counts[n] = counts.get(n, 0) + 1
    return {n: ImageStateSummary(sizes[n], counts[n]) for n in sizes}
