"""PreFilter/Filter and the preemption extensions of InterPodAffinity (interpodaffinity/filtering.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import AffinityTerm, NodeInfo, PodInfo
from wasmsched.plugins.interpodaffinity.terms import (
    NamespaceLabelCache,
    ResolvedTerm,
    pod_matches_all_affinity_terms,
    resolve_required,
)

if TYPE_CHECKING:
    from wasmsched.plugins.interpodaffinity.plugin import InterPodAffinity

# The incoming pod's PodInfo, built by PreFilter, for PreScore of the same cycle.
POD_INFO_KEY = "InterPodAffinity.podInfo"
PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

# topologyToMatchedTermCount: (topology key, topology value) -> count
TopologyCounts = dict[tuple[str, str], int]


def _update(m: TopologyCounts, node: Node, tk: str, value: int) -> None:
    tv = node.metadata.labels.get(tk)
    if tv is not None:
        pair = (tk, tv)
        n = m.get(pair, 0) + value
        # value may be negative: drop entries that fall to zero.
        if n == 0:
            m.pop(pair, None)
        else:
            m[pair] = n


def update_with_affinity_terms(m: TopologyCounts, terms: Sequence[ResolvedTerm], pod: Pod, node: Node,
                               value: int) -> None:
    """Counts each term's topology for the pod iff the pod matches ALL terms."""
    if pod_matches_all_affinity_terms(terms, pod):
        for t in terms:
            _update(m, node, t.topology_key, value)


def update_with_anti_affinity_terms(m: TopologyCounts, terms: Sequence[ResolvedTerm], pod: Pod, node: Node,
                                    value: int) -> None:
    for t in terms:
        if t.matches(pod):
            _update(m, node, t.topology_key, value)


def update_with_existing_anti_affinity_terms(m: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod,
                                             ns_labels: Mapping[str, str], node: Node, value: int) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(m, node, t.topology_key, value)


class PreFilterState:
    __slots__ = (
        "affinity_counts",
        "affinity_terms",
        "anti_affinity_counts",
        "anti_affinity_terms",
        "existing_anti_affinity_counts",
        "namespace_labels",
        "pod_info",
    )

    def __init__(self, pod_info: PodInfo, affinity_terms: list[ResolvedTerm],
                 anti_affinity_terms: list[ResolvedTerm], namespace_labels: Mapping[str, str]) -> None:
        # Existing pods with anti-affinity terms matching the incoming pod, per topology pair.
        self.existing_anti_affinity_counts: TopologyCounts = {}
        # Existing pods matching the incoming pod's affinity / anti-affinity terms.
        self.affinity_counts: TopologyCounts = {}
        self.anti_affinity_counts: TopologyCounts = {}
        self.pod_info = pod_info
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.pod_info, self.affinity_terms, self.anti_affinity_terms, self.namespace_labels)
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        return c

    def update_with_pod(self, pi: PodInfo, node: Node | None, multiplier: int) -> None:
        if node is None:
            return
        update_with_existing_anti_affinity_terms(
            self.existing_anti_affinity_counts, pi.required_anti_affinity_terms, self.pod_info.pod,
            self.namespace_labels, node, multiplier)
        update_with_affinity_terms(self.affinity_counts, self.affinity_terms, pi.pod, node, multiplier)
        update_with_anti_affinity_terms(self.anti_affinity_counts, self.anti_affinity_terms, pi.pod, node,
                                        multiplier)


def get_pre_filter_state(state: CycleState) -> PreFilterState | Status:
    s = state.get(PRE_FILTER_STATE_KEY)
    if s is None:
        return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreFilterState):
        return Status.error(f"{s!r}  convert to interpodaffinity.state error")
    return s


def has_pod_affinity(pod: Pod) -> bool:
    """Whether the pod has podAffinity or podAntiAffinity (PodInfo.has_affinity)."""
    spec = pod.spec
    if not spec.HasField("affinity"):
        return False
    a = spec.affinity
    return a.HasField("podAffinity") or a.HasField("podAntiAffinity")


def pre_filter(pl: InterPodAffinity, state: CycleState, pod: Pod,
               all_nodes: Sequence[NodeInfo]) -> Status | None:
    lister = pl.handle.snapshot_shared_lister()
    nodes_with_anti: Sequence[NodeInfo] = lister.have_pods_with_required_anti_affinity_list()
    if not nodes_with_anti and not has_pod_affinity(pod):
        # No existing pod has required anti-affinity and the pod has no terms (so nothing to
        # parse, either): Skip, without building the pod's PodInfo.
        return Status.skip()
    try:
        pi = PodInfo(pod)
    except ValueError as e:  # an invalid label selector in the pod's terms
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"parsing pod: {e}"])
    # PreScore of the same cycle reuses it (building a PodInfo computes the pod's requests too).
    state.write(POD_INFO_KEY, pi)
    cache = NamespaceLabelCache(pl.handle.client())
    aff, anti = resolve_required(pi, cache)
    if not nodes_with_anti and not aff and not anti:
        # No term to count: the result below would be Skip. The namespace lookup (a call into
        # the cluster client) is avoided.
        return Status.skip()
    ns_labels = cache.get(pod.metadata.namespace) or {}
    s = PreFilterState(pi, aff, anti, ns_labels)

    existing = s.existing_anti_affinity_counts
    for ni in nodes_with_anti:
        node = ni.node
        if node is None:
            continue
        for ep in ni.pods_with_required_anti_affinity:
            update_with_existing_anti_affinity_terms(existing, ep.required_anti_affinity_terms, pod, ns_labels,
                                                     node, 1)

    if aff or anti:
        for ni in all_nodes:
            node = ni.node
            if node is None:
                continue
            for ep in ni.pods:
                update_with_affinity_terms(s.affinity_counts, aff, ep.pod, node, 1)
                update_with_anti_affinity_terms(s.anti_affinity_counts, anti, ep.pod, node, 1)

    if not existing and not aff and not anti:
        return Status.skip()
    state.write(PRE_FILTER_STATE_KEY, s)
    return None


def _satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        for pair in labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def _satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for t in s.anti_affinity_terms:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def _satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    counts = s.affinity_counts
    for t in s.affinity_terms:
        tv = labels.get(t.topology_key)
        if tv is None:
            # All topology labels must exist on the node.
            return False
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself: allowed when no pod in the cluster
        # matches yet and the pod matches its own terms, so such groups can start.
        return not counts and pod_matches_all_affinity_terms(s.affinity_terms, s.pod_info.pod)
    return True


def filter_node(s: PreFilterState, node_info: NodeInfo) -> Status | None:
    node = node_info.node
    if node is None:
        return Status.error("node not found")
    labels = node.metadata.labels
    if not _satisfy_pod_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_AFFINITY_RULES_NOT_MATCH])
    if not _satisfy_pod_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, [ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH])
    if not _satisfy_existing_pods_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, [ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH])
    return None
