"""PreScore/Score/NormalizeScore of PodTopologySpread (podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.taints import find_untolerated_taint
from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, NodeScore
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.nodefacts import required_node_affinity_matches
from wasmsched.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    POLICY_HONOR,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    count_pods_memo,
    filter_topology_spread_constraints,
    selector_token,
)
from wasmsched.util.intbounds import INT64_MAX

if TYPE_CHECKING:
    from wasmsched.plugins.podtopologyspread.plugin import PodTopologySpread

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
INVALID_SCORE = -1


class PreScoreState:
    """Soft constraints, nodes to ignore, pod counts per topology value, and weights per constraint.

    Hostname constraints are counted per node in Score, so they have no entries in the counts.
    """

    __slots__ = ("constraints", "ignored_nodes", "topology_normalizing_weight", "topology_value_to_pod_counts")

    def __init__(self) -> None:
        self.constraints: list[SpreadConstraint] = []
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []

    def clone(self) -> PreScoreState:
        # Read-only after PreScore, as kube's Clone returns the same object.
        return self


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): smaller topologies are not watered down by bigger ones."""
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    return cnt * tp_weight + (max_skew - 1)


def _init_pre_score_state(pl: PodTopologySpread, s: PreScoreState, pod: Pod, filtered_nodes: Sequence[NodeInfo],
                          require_all_topologies: bool) -> None:
    if len(pod.spec.topologySpreadConstraints) > 0:
        s.constraints = filter_topology_spread_constraints(
            pod.spec.topologySpreadConstraints, pod.metadata.labels, SCHEDULE_ANYWAY)
    else:
        s.constraints = pl.build_default_constraints(pod, SCHEDULE_ANYWAY)
    if not s.constraints:
        return
    constraints = s.constraints
    s.topology_value_to_pod_counts = [{} for _ in constraints]
    # (index, key, counts) of the constraints counted per topology value (not hostname).
    keyed = [(i, c.topology_key, s.topology_value_to_pod_counts[i])
             for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    key_set = frozenset(c.topology_key for c in constraints)
    ignored_nodes = s.ignored_nodes
    for ni in filtered_nodes:
        node = ni.node
        if node is None:
            continue
        f = node_facts(ni, node)
        labels = f.labels
        if require_all_topologies and not key_set <= labels.keys():
            # Nodes without all the topology keys are ignored when scoring.
            ignored_nodes.add(node.metadata.name)
            continue
        for _, key, counts in keyed:
            value = labels.get(key, "")
            if value not in counts:
                counts[value] = 0
    # The number of distinct values seen is the size of the topology.
    topo_size = [len(m) for m in s.topology_value_to_pod_counts]
    for i, c in enumerate(constraints):
        sz = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            sz = len(filtered_nodes) - len(ignored_nodes)
        s.topology_normalizing_weight.append(topology_normalizing_weight(sz))


def pre_score(pl: PodTopologySpread, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]) -> Status | None:
    all_nodes = pl.handle.snapshot_shared_lister().list()
    if not all_nodes:
        return Status.skip()
    s = PreScoreState()
    # Only require all topology labels with non-system-default rules, so nodes without a zone
    # label still get hostname spreading.
    require_all = len(pod.spec.topologySpreadConstraints) > 0 or not pl.system_defaulted
    _init_pre_score_state(pl, s, pod, filtered_nodes, require_all)
    if not s.constraints:
        return Status.skip()
    # Constraints whose counts are gathered here: hostname counts are done in Score, an empty
    # selector counts no pods, and only values of candidate nodes are counted.
    work = [(c.topology_key, s.topology_value_to_pod_counts[i], c) for i, c in enumerate(s.constraints)
            if c.topology_key != LABEL_HOSTNAME and not c.selector_empty and s.topology_value_to_pod_counts[i]]
    if work:
        _count_matching_pods(pl, pod, all_nodes, s.constraints if require_all else (), work)
    state.write(PRE_SCORE_STATE_KEY, s)
    return None


def _count_matching_pods(pl: PodTopologySpread, pod: Pod, all_nodes: Sequence[NodeInfo],
                         required_keys: Sequence[SpreadConstraint],
                         work: Sequence[tuple[str, dict[str, int], SpreadConstraint]]) -> None:
    """Adds the pods matching each constraint on every node to the counts of the node's value.

    Nodes without pods add nothing, so they are passed over before any label or policy check;
    the inclusion policies (pure functions of the pod and node) are evaluated once per node.
    """
    ns = pod.metadata.namespace
    affinity = pl.required_node_affinity_or_none(pod)
    tolerations = list(pod.spec.tolerations)
    key_set = frozenset(c.topology_key for c in required_keys)
    # Per constraint: (key, counts, constraint, honor node affinity, honor taints).
    plan = [(key, counts, c, affinity is not None and c.node_affinity_policy == POLICY_HONOR,
             c.node_taints_policy == POLICY_HONOR, selector_token(c, ns)) for key, counts, c in work]
    for ni in all_nodes:
        pods = ni.pods
        if not pods:
            continue
        node = ni.node
        if node is None:
            continue
        f = node_facts(ni, node)
        labels = f.labels
        if not key_set <= labels.keys():
            continue
        affinity_ok: bool | None = None
        taints_ok: bool | None = None
        for key, counts, c, honor_affinity, honor_taints, token in plan:
            value = labels.get(key, "")
            if value not in counts:
                continue
            if honor_affinity:
                if affinity_ok is None:
                    affinity_ok = affinity is None or required_node_affinity_matches(affinity, f)
                if not affinity_ok:
                    continue
            if honor_taints:
                if taints_ok is None:
                    taints_ok = find_untolerated_taint(f.do_not_schedule_taints, tolerations) is None
                if not taints_ok:
                    continue
            counts[value] += count_pods_memo(ni, c, ns, token)


def get_pre_score_state(state: CycleState) -> PreScoreState | Status:
    s = state.get(PRE_SCORE_STATE_KEY)
    if s is None:
        return Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreScoreState):
        return Status.error(f"{s!r}  convert to podtopologyspread.preScoreState error")
    return s


def node_scorer(s: PreScoreState, pod: Pod) -> Callable[[NodeInfo], int]:
    """scoreNode for the pod's PreScore state: what the constraints need is read once, then one call per
    node (Score and its batch form alike). A hostname constraint counts the node's matching pods, memoized
    per node version."""
    ns = pod.metadata.namespace
    ignored = s.ignored_nodes
    # Per constraint: (topology key, counts per value or None for hostname, constraint, weight, selector token).
    plan = [(c.topology_key, None if c.topology_key == LABEL_HOSTNAME else s.topology_value_to_pod_counts[i],
             c, s.topology_normalizing_weight[i], selector_token(c, ns))
            for i, c in enumerate(s.constraints)]
    floor = math.floor

    def score_node(node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None or (ignored and node.metadata.name in ignored):
            return 0
        labels = node_facts(node_info, node).labels
        score = 0.0
        for key, counts, c, weight, token in plan:
            tp_val = labels.get(key)
            if tp_val is None:
                continue
            cnt = count_pods_memo(node_info, c, ns, token) if counts is None else counts[tp_val]
            score += score_for_count(cnt, c.max_skew, weight)
        # Go's math.Round rounds half away from zero; scores are never negative here.
        return floor(score + 0.5)

    return score_node


def normalize_score(s: PreScoreState, scores: list[NodeScore]) -> None:
    min_score = INT64_MAX
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = INVALID_SCORE
            continue
        min_score = min(min_score, ns.score)
        max_score = max(max_score, ns.score)
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        # Integer arithmetic as in Go: fewer matching pods give a higher score.
        ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
