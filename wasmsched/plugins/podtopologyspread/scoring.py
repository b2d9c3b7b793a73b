"""PreScore/Score/NormalizeScore of PodTopologySpread (podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, NodeScore
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    count_pods_match_selector,
    filter_topology_spread_constraints,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
)

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
    s.topology_value_to_pod_counts = [{} for _ in s.constraints]
    topo_size = [0] * len(s.constraints)
    for ni in filtered_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, s.constraints):
            # Nodes without all the topology keys are ignored when scoring.
            s.ignored_nodes.add(node.metadata.name)
            continue
        for i, c in enumerate(s.constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue
            value = labels.get(c.topology_key, "")
            counts = s.topology_value_to_pod_counts[i]
            if value not in counts:
                counts[value] = 0
                topo_size[i] += 1
    for i, c in enumerate(s.constraints):
        sz = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            sz = len(filtered_nodes) - len(s.ignored_nodes)
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
    affinity_match = pl.required_node_affinity(pod)
    ns = pod.metadata.namespace
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all and not node_labels_match_spread_constraints(labels, s.constraints):
            continue
        for i, c in enumerate(s.constraints):
            if not match_node_inclusion_policies(c, pod, node, affinity_match):
                continue
            value = labels.get(c.topology_key, "")
            counts = s.topology_value_to_pod_counts[i]
            # Only values of candidate nodes are counted; hostname counts are done in Score.
            if value not in counts:
                continue
            counts[value] += count_pods_match_selector(ni.pods, c, ns)
    state.write(PRE_SCORE_STATE_KEY, s)
    return None


def get_pre_score_state(state: CycleState) -> PreScoreState | Status:
    s = state.get(PRE_SCORE_STATE_KEY)
    if s is None:
        return Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreScoreState):
        return Status.error(f"{s!r}  convert to podtopologyspread.preScoreState error")
    return s


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    node = node_info.node
    if node is None or node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    ns = pod.metadata.namespace
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c, ns)
        else:
            cnt = s.topology_value_to_pod_counts[i][tp_val]
        score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    # Go's math.Round rounds half away from zero; scores are never negative here.
    return math.floor(score + 0.5)


def normalize_score(s: PreScoreState, scores: list[NodeScore]) -> None:
    min_score = (1 << 63) - 1
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
