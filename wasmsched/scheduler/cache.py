"""The scheduler cache: NodeInfos with bound and assumed pods, and the per-cycle snapshot
(internal/cache/cache.go, node_tree.go)."""

from __future__ import annotations

import builtins
import logging
import threading

from wasmsched.api.resources import same_request_inputs
from wasmsched.api.types import Node, Pod, pod_key
from wasmsched.framework.snapshot import Snapshot, image_state_summaries, image_states_for
from wasmsched.framework.types import NodeInfo, PodInfo, get_pod_key, next_generation

log = logging.getLogger("wasmsched.cache")

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


class CacheError(RuntimeError):
    pass


def zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: region and zone joined, '' when neither is set."""
    labels = node.metadata.labels
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class _NodeTree:
    """Nodes grouped by zone; listing interleaves zones so the scheduler spreads its search."""

    def __init__(self) -> None:
        self.zones: list[str] = []
        self.tree: dict[str, list[str]] = {}
        self._listed: list[str] | None = None

    def add(self, node: Node) -> None:
        self._listed = None
        z = zone_key(node)
        names = self.tree.setdefault(z, [])
        if not names and z not in self.zones:
            self.zones.append(z)
        if node.metadata.name not in names:
            names.append(node.metadata.name)

    def remove(self, node: Node) -> None:
        self._listed = None
        z = zone_key(node)
        names = self.tree.get(z, [])
        if node.metadata.name in names:
            names.remove(node.metadata.name)
        if not names and z in self.tree:
            del self.tree[z]
            self.zones.remove(z)

    def update(self, old: Node, new: Node) -> None:
        if zone_key(old) != zone_key(new):
            self.remove(old)
            self.add(new)

    def list(self) -> list[str]:
        if self._listed is None:
            self._listed = self._interleave()
        return self._listed

    def _interleave(self) -> builtins.list[str]:
        out: list[str] = []
        idx = dict.fromkeys(self.zones, 0)
        total = sum(len(v) for v in self.tree.values())
        while len(out) < total:
            for z in self.zones:
                names = self.tree[z]
                if idx[z] < len(names):
                    out.append(names[idx[z]])
                    idx[z] += 1
        return out


class Cache:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.nodes: dict[str, NodeInfo] = {}
        self._tree = _NodeTree()
        self._pod_states: dict[str, tuple[Pod, PodInfo]] = {}
        self._assumed: set[str] = set()
        self._order_version = 0
        self._images_changed = True
        # Node names in order of their last change (newest last), as cache.go's generation-ordered
        # list: a snapshot update walks back only over what changed since the snapshot's generation.
        self._recent: dict[str, None] = {}
        self._live = 0

    def _touch(self, name: str) -> None:
        self._recent.pop(name, None)
        self._recent[name] = None

    # ----- pods -------------------------------------------------------------------------------

    def _node_info(self, name: str) -> NodeInfo:
        ni = self.nodes.get(name)
        if ni is None:
            ni = NodeInfo()
            self.nodes[name] = ni
        return ni

    def _add_pod(self, pod: Pod, pi: PodInfo | None = None) -> None:
        pi = pi or PodInfo(pod)
        self._node_info(pod.spec.nodeName).add_pod_info(pi)
        self._touch(pod.spec.nodeName)
        self._pod_states[get_pod_key(pod)] = (pod, pi)

    def _remove_pod(self, pod: Pod) -> None:
        ni = self.nodes.get(pod.spec.nodeName)
        if ni is not None:
            ni.remove_pod(pod)
            self._touch(pod.spec.nodeName)
            if ni.node is None and not ni.pods:
                del self.nodes[pod.spec.nodeName]
                self._order_version += 1
        self._pod_states.pop(get_pod_key(pod), None)

    def assume_pod(self, pod: Pod, pi: PodInfo | None = None) -> None:
        with self._lock:
            key = get_pod_key(pod)
            if key in self._pod_states:
                raise CacheError(f"pod {pod_key(pod)} is in the cache, so can't be assumed")
            self._add_pod(pod, pi)
            self._assumed.add(key)

    def finish_binding(self, pod: Pod) -> None:
        # Assumed pods never expire here: the binding result always arrives (bound or forgotten).
        return None

    def forget_pod(self, pod: Pod) -> None:
        with self._lock:
            key = get_pod_key(pod)
            state = self._pod_states.get(key)
            if state is not None and state[0].spec.nodeName != pod.spec.nodeName:
                raise CacheError(
                    f"pod {pod.metadata.name} was assumed on {pod.spec.nodeName} "
                    f"but assigned to {state[0].spec.nodeName}"
                )
            if key not in self._assumed:
                raise CacheError(f"pod {pod_key(pod)} wasn't assumed so cannot be forgotten")
            self._remove_pod(pod)
            self._assumed.discard(key)

    def is_assumed_pod(self, pod: Pod) -> bool:
        with self._lock:
            return get_pod_key(pod) in self._assumed

    def add_pod(self, pod: Pod) -> None:
        """A bound pod seen by the informer; confirms an assumed pod."""
        with self._lock:
            key = get_pod_key(pod)
            state = self._pod_states.get(key)
            if state is not None and key in self._assumed:
                assumed, pi = state
                if assumed.spec.nodeName != pod.spec.nodeName:
                    log.error("pod %s was assumed to be on %s but got added to %s",
                              key, assumed.spec.nodeName, pod.spec.nodeName)
                    self._remove_pod(assumed)
                    self._add_pod(pod)
                else:
                    # The binding only set nodeName and status: the accounting of the assumed PodInfo
                    # stands; it now refers to the API server's object.
                    pi.pod = pod
                    self._pod_states[key] = (pod, pi)
                self._assumed.discard(key)
            elif state is None:
                self._add_pod(pod)
            else:
                log.error("pod %s was already in added state", key)

    def update_pod(self, old: Pod, new: Pod) -> None:
        with self._lock:
            key = get_pod_key(old)
            state = self._pod_states.get(key)
            if state is None or key in self._assumed:
                return
            cur, pi = state
            # A status update that changes nothing PodInfo reads (the kubelet's phase, readiness, IPs)
            # keeps what was computed; the node is still touched, as its pod object is a new one.
            self._remove_pod(cur)
            self._add_pod(new, pi.with_pod(new, same_shape=True) if same_request_inputs(new, cur) else None)

    def remove_pod(self, pod: Pod) -> None:
        with self._lock:
            key = get_pod_key(pod)
            state = self._pod_states.get(key)
            if state is None:
                return
            self._remove_pod(state[0])
            self._assumed.discard(key)

    def pod_count(self) -> int:
        with self._lock:
            return len(self._pod_states)

    def assumed_pod_count(self) -> int:
        with self._lock:
            return len(self._assumed)

    def get_pod(self, pod: Pod) -> Pod | None:
        with self._lock:
            state = self._pod_states.get(get_pod_key(pod))
            return state[0] if state else None

    # ----- nodes ------------------------------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        with self._lock:
            ni = self._node_info(node.metadata.name)
            if ni.node is not None:
                self._tree.update(ni.node, node)
            else:
                self._tree.add(node)
                self._live += 1
            ni.set_node(node)
            self._touch(node.metadata.name)
            self._order_version += 1
            self._images_changed = True
            return ni

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        with self._lock:
            ni = self._node_info(new.metadata.name)
            if ni.node is None:
                self._tree.add(new)
                self._live += 1
                self._order_version += 1
            else:
                self._tree.update(ni.node, new)
                if old.metadata.labels != new.metadata.labels:
                    self._order_version += 1
            if list(old.status.images) != list(new.status.images):
                self._images_changed = True
            ni.set_node(new)
            self._touch(new.metadata.name)
            return ni

    def remove_node(self, node: Node) -> None:
        with self._lock:
            ni = self.nodes.get(node.metadata.name)
            if ni is None:
                return
            self._tree.remove(node)
            if ni.node is not None:
                self._live -= 1
            self._touch(node.metadata.name)
            if ni.pods:
                # Pods still point at the node: keep their accounting until they are deleted.
                ni.remove_node()
            else:
                del self.nodes[node.metadata.name]
            self._order_version += 1
            self._images_changed = True

    def _is_gone(self, name: str) -> bool:
        ni = self.nodes.get(name)
        return ni is None or ni.node is None

    def node_count(self) -> int:
        with self._lock:
            return self._live

    # ----- snapshot ---------------------------------------------------------------------------

    def update_snapshot(self, snap: Snapshot) -> None:
        """Brings `snap` up to date, cloning only NodeInfos newer than the snapshot's generation.

        As cache.go: every change bumps a NodeInfo's generation, so any snapshot, new or old,
        catches up from its own generation.
        """
        with self._lock:
            if self._images_changed:
                summaries = image_state_summaries(ni for ni in self.nodes.values() if ni.node is not None)
                for name, ni in self.nodes.items():
                    states = image_states_for(ni, summaries)
                    if states != ni.image_states:
                        ni.image_states = states
                        ni.generation = next_generation()
                        self._touch(name)
                self._images_changed = False
            changed: list[str] = []
            newest = snap.generation
            for name in reversed(self._recent):
                ni_or_none = self.nodes.get(name)
                if ni_or_none is None:
                    continue  # gone from the cache; the size check below drops it
                if ni_or_none.generation <= snap.generation:
                    break
                newest = max(newest, ni_or_none.generation)
                changed.append(name)
            structural = snap.order_version != self._order_version
            lists_dirty = False
            for name in changed:
                ni = self.nodes[name]
                old = snap.node_info_map.get(name)
                if ni.node is None:
                    if old is not None:
                        del snap.node_info_map[name]
                        structural = True
                    continue
                if old is None:
                    structural = True
                clone = ni.clone()
                snap.node_info_map[name] = clone
                if not structural:
                    snap.replace(clone)
                    lists_dirty = lists_dirty or _in_lists(old) or _in_lists(clone)
            gone: list[str] = []
            if len(snap.node_info_map) > self._live:
                gone = [n for n in snap.node_info_map if self._is_gone(n)]
                for name in gone:
                    del snap.node_info_map[name]
                structural = True
            snap.record_changes(changed)
            snap.record_changes(gone)
            if structural:
                order = self._tree.list()
                snap.rebuild_lists([snap.node_info_map[n] for n in order if n in snap.node_info_map])
                snap.order_version = self._order_version
            elif lists_dirty:
                snap.rebuild_affinity_lists()
            snap.generation = newest


def _in_lists(ni: NodeInfo | None) -> bool:
    """Whether a NodeInfo contributes to the snapshot's derived lists (affinity pods, PVCs)."""
    return ni is not None and bool(ni.pods_with_affinity or ni.pods_with_required_anti_affinity
                                   or ni.pvc_ref_counts)
