"""PreScore/Score/NormalizeScore of InterPodAffinity (interpodaffinity/scoring.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, NodeScore
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.interpodaffinity.filtering import POD_INFO_KEY, has_pod_affinity
from wasmsched.plugins.interpodaffinity.terms import NamespaceLabelCache, ResolvedTerm, resolve_preferred

if TYPE_CHECKING:
    from wasmsched.plugins.interpodaffinity.plugin import InterPodAffinity

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

# topology key -> topology value -> score
ScoreMap = dict[str, dict[str, int]]


class PreScoreState:
    __slots__ = ("topology_score",)

    def __init__(self) -> None:
        self.topology_score: ScoreMap = {}

    def clone(self) -> PreScoreState:
        # Read-only after PreScore, as kube's Clone returns the same object.
        return self


def _add(m: ScoreMap, node: Node, tk: str, value: int) -> None:
    tv = node.metadata.labels.get(tk)
    if tv is not None:
        d = m.setdefault(tk, {})
        d[tv] = d.get(tv, 0) + value


def _has_preferred(pod: Pod, kind: str) -> bool:
    if not pod.spec.HasField("affinity") or not pod.spec.affinity.HasField(kind):
        return False
    return len(getattr(pod.spec.affinity, kind).preferredDuringSchedulingIgnoredDuringExecution) > 0


def _process_existing_pod(pl: InterPodAffinity, aff: Sequence[ResolvedTerm], anti: Sequence[ResolvedTerm],
                          ns_labels: Mapping[str, str], existing: PodInfo, node: Node, incoming: Pod,
                          m: ScoreMap) -> None:
    ep = existing.pod
    # The incoming pod's soft terms matched by the existing pod count for its node's topology.
    for t in aff:
        if t.matches(ep):
            _add(m, node, t.topology_key, t.weight)
    for t in anti:
        if t.matches(ep):
            _add(m, node, t.topology_key, -t.weight)
    # The existing pod's hard affinity terms matched by the incoming pod, with hardPodAffinityWeight.
    hard = pl.hard_pod_affinity_weight
    if hard > 0:
        for at in existing.required_affinity_terms:
            if at.matches(incoming, ns_labels):
                _add(m, node, at.topology_key, hard)
    for w in existing.preferred_affinity_terms:
        if w.term.matches(incoming, ns_labels):
            _add(m, node, w.term.topology_key, w.weight)
    for w in existing.preferred_anti_affinity_terms:
        if w.term.matches(incoming, ns_labels):
            _add(m, node, w.term.topology_key, -w.weight)


def pre_score(pl: InterPodAffinity, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
    has_constraints = _has_preferred(pod, "podAffinity") or _has_preferred(pod, "podAntiAffinity")
    # Optionally ignore the preferences of existing pods when the incoming pod has none.
    if pl.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return Status.skip()
    lister = pl.handle.snapshot_shared_lister()
    # Unless the incoming pod has preferred terms, only nodes hosting pods with affinity matter.
    all_nodes = lister.list() if has_constraints else lister.have_pods_with_affinity_list()

    if not all_nodes and not has_pod_affinity(pod):
        # No node to visit and no terms to parse: nothing to score.
        return Status.skip()
    cached = state.get(POD_INFO_KEY)
    if isinstance(cached, PodInfo) and cached.pod is pod:
        # PreFilter parsed the pod this cycle.
        pi = cached
    else:
        try:
            pi = PodInfo(pod)
        except ValueError as e:
            return Status.error(f"failed to parse pod: {e}")
    cache = NamespaceLabelCache(pl.handle.client())
    aff, anti = resolve_preferred(pi, cache)
    ns_labels = cache.get(pod.metadata.namespace) or {}

    s = PreScoreState()
    m = s.topology_score
    for ni in all_nodes:
        node = ni.node
        if node is None or len(node.metadata.labels) == 0:
            continue
        pods = ni.pods if has_constraints else ni.pods_with_affinity
        for ep in pods:
            _process_existing_pod(pl, aff, anti, ns_labels, ep, node, pod, m)
    if not m:
        return Status.skip()
    state.write(PRE_SCORE_STATE_KEY, s)
    return None


def get_pre_score_state(state: CycleState) -> PreScoreState | Status:
    s = state.get(PRE_SCORE_STATE_KEY)
    if s is None:
        return Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreScoreState):
        return Status.error(f"{s!r}  convert to interpodaffinity.preScoreState error")
    return s


def score_node(s: PreScoreState, node_info: NodeInfo) -> int:
    """Sum of the topology scores of the node's labels: positive for affinity, negative for anti."""
    node = node_info.node
    if node is None:
        return 0
    labels = node.metadata.labels
    score = 0
    for tk, values in s.topology_score.items():
        v = labels.get(tk)
        if v is not None:
            score += values.get(v, 0)
    return score


def normalize_score(s: PreScoreState, scores: list[NodeScore]) -> None:
    if not s.topology_score:
        return
    if not scores:
        return
    min_count = min(ns.score for ns in scores)
    max_count = max(ns.score for ns in scores)
    diff = max_count - min_count
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(ns.score - min_count) / float(diff))
        ns.score = int(f)
