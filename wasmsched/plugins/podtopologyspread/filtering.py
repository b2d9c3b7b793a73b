"""PreFilter/Filter and the preemption extensions of PodTopologySpread (podtopologyspread/filtering.go)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.taints import find_untolerated_taint
from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.nodefacts import required_node_affinity_matches
from wasmsched.plugins.podtopologyspread.common import (
    POLICY_HONOR,
    SpreadConstraint,
    count_pods_memo,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
    selector_token,
)
from wasmsched.util.intbounds import INT32_MAX

if TYPE_CHECKING:
    from wasmsched.plugins.podtopologyspread.plugin import PodTopologySpread

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


class CriticalPaths:
    """The two topology values with the fewest matching pods; [0] always holds the minimum.

    As in kube, [1] is not guaranteed to be the second minimum after AddPod/RemovePod; that is
    sound because preemption evaluates one node at a time on its own copy of the state.
    """

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: list[list[str | int]] = [["", INT32_MAX], ["", INT32_MAX]]

    def min_match_num(self) -> int:
        return int(self.paths[0][1])

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        i = 0 if tp_val == p[0][0] else 1 if tp_val == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if int(p[0][1]) > int(p[1][1]):
                p[0], p[1] = p[1], p[0]
        elif num < int(p[0][1]):
            p[1] = p[0]
            p[0] = [tp_val, num]
        elif num < int(p[1][1]):
            p[1] = [tp_val, num]

    def clone(self) -> CriticalPaths:
        c = CriticalPaths()
        c.paths = [list(self.paths[0]), list(self.paths[1])]
        return c

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths})"


class PreFilterState:
    """Per-constraint matching-pod counts per topology value and their critical paths.

    An empty state (no constraints) is legit: it tolerates every pod.
    `self_match[i]` caches whether the incoming pod matches constraint i (Filter's selfMatchNum).
    """

    __slots__ = ("constraints", "critical_paths", "self_match", "tp_value_to_match_num")

    def __init__(self, constraints: list[SpreadConstraint] | None = None) -> None:
        self.constraints: list[SpreadConstraint] = constraints or []
        self.critical_paths: list[CriticalPaths] = []
        self.tp_value_to_match_num: list[dict[str, int]] = []
        self.self_match: list[int] = []

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for the skew, 0 when fewer eligible domains than minDomains exist."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].min_match_num()

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.constraints)  # constraints never change: shared
        c.critical_paths = [p.clone() for p in self.critical_paths]
        c.tp_value_to_match_num = [dict(m) for m in self.tp_value_to_match_num]
        c.self_match = self.self_match
        return c


def get_pre_filter_state(state: CycleState) -> PreFilterState | Status:
    s = state.get(PRE_FILTER_STATE_KEY)
    if s is None:
        return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreFilterState):
        return Status.error(f"{s!r} convert to podtopologyspread.preFilterState error")
    return s


def cal_pre_filter_state(pl: PodTopologySpread, pod: Pod, all_nodes: Sequence[NodeInfo]) -> PreFilterState:
    constraints = pl.get_constraints(pod)
    s = PreFilterState(constraints)
    if not constraints:
        return s
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ns = pod.metadata.namespace
    # The inclusion policies are pure functions of the pod and node: evaluated at most once per
    # node, and not at all for a pod without node selector or required node affinity.
    affinity = pl.required_node_affinity_or_none(pod)
    tolerations = list(pod.spec.tolerations)
    key_set = frozenset(c.topology_key for c in constraints)
    # Per constraint: (key, counts, constraint, honor node affinity, honor taints, counts memo token).
    plan = [(c.topology_key, counts[i], c, affinity is not None and c.node_affinity_policy == POLICY_HONOR,
             c.node_taints_policy == POLICY_HONOR, selector_token(c, ns)) for i, c in enumerate(constraints)]
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        f = node_facts(ni, node)
        labels = f.labels
        if not key_set <= labels.keys():
            continue
        affinity_ok: bool | None = None
        taints_ok: bool | None = None
        pods = ni.pods
        for key, m, c, honor_affinity, honor_taints, token in plan:
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
            value = labels[key]
            # A node without pods (or an empty selector) counts 0 but still makes its domain eligible.
            n = count_pods_memo(ni, c, ns, token) if pods and not c.selector_empty else 0
            m[value] = m.get(value, 0) + n
    s.tp_value_to_match_num = counts
    for m in counts:
        paths = CriticalPaths()
        for value, num in m.items():
            paths.update(value, num)
        s.critical_paths.append(paths)
    pod_labels = pod.metadata.labels
    s.self_match = [1 if c.selector.matches(pod_labels) else 0 for c in constraints]
    return s


def update_with_pod(s: PreFilterState, updated_pod: Pod, preemptor_pod: Pod, node: Node | None, delta: int,
                    affinity_match: Callable[[Node], bool]) -> None:
    if updated_pod.metadata.namespace != preemptor_pod.metadata.namespace or node is None:
        return
    labels = node.metadata.labels
    if not node_labels_match_spread_constraints(labels, s.constraints):
        return
    pod_labels = updated_pod.metadata.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(pod_labels):
            continue
        if not match_node_inclusion_policies(c, preemptor_pod, node, affinity_match):
            continue
        v = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[v] = m.get(v, 0) + delta
        s.critical_paths[i].update(v, m[v])


def filter_node(s: PreFilterState, node_info: NodeInfo) -> Status | None:
    node = node_info.node
    if node is None:
        return Status.error("node not found")
    if not s.constraints:
        return None
    labels = node_facts(node_info, node).labels
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_NODE_LABEL_NOT_MATCH])
        # 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
        min_match_num = s.min_match_num(i, c.min_domains)
        match_num = s.tp_value_to_match_num[i].get(tp_val, 0)
        if match_num + s.self_match[i] - min_match_num > c.max_skew:
            return Status(Code.UNSCHEDULABLE, [ERR_REASON_CONSTRAINTS_NOT_MATCH])
    return None
