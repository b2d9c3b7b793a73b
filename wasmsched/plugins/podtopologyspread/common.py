"""Constraint parsing and counting shared by filtering and scoring (podtopologyspread/common.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from wasmsched.api.labels import Selector, compile_label_selector
from wasmsched.api.taints import find_untolerated_taint
from wasmsched.api.types import Node, Pod, TopologySpreadConstraint
from wasmsched.framework.memo import MAX_MEMO_ENTRIES, MemoKey, token
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.helper.taint import do_not_schedule_taints_filter_func

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
POLICY_HONOR = "Honor"
POLICY_IGNORE = "Ignore"
_DO_NOT_SCHEDULE = do_not_schedule_taints_filter_func()


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """v1.TopologySpreadConstraint with its selector compiled (kube's topologySpreadConstraint).

    `selector_empty` mirrors labels.Selector.Empty(): a selector with no requirements, which
    matches everything but counts no pods (countPodsMatchSelector).
    """

    max_skew: int
    topology_key: str
    selector: Selector
    selector_empty: bool
    min_domains: int = 1
    node_affinity_policy: str = POLICY_HONOR
    node_taints_policy: str = POLICY_IGNORE


def _compile(constraint: TopologySpreadConstraint, pod_labels: Mapping[str, str]) -> Selector:
    if not constraint.HasField("labelSelector"):
        # LabelSelectorAsSelector(nil) is labels.Nothing(); matchLabelKeys cannot extend it.
        return compile_label_selector(None)
    ls = constraint.labelSelector
    match_labels = {k: pod_labels[k] for k in constraint.matchLabelKeys if k in pod_labels}
    if match_labels:
        # mergeLabelSetWithSelector: the pod's values of matchLabelKeys ANDed with the selector.
        merged = type(ls)()
        merged.CopyFrom(ls)
        for k, v in match_labels.items():
            req = merged.matchExpressions.add()
            req.key, req.operator = k, "In"
            req.values.append(v)
        ls = merged
    return compile_label_selector(ls)


def filter_topology_spread_constraints(constraints: Iterable[TopologySpreadConstraint],
                                       pod_labels: Mapping[str, str], action: str) -> list[SpreadConstraint]:
    """The constraints with whenUnsatisfiable == action, parsed (filterTopologySpreadConstraints)."""
    out = []
    for c in constraints:
        if c.whenUnsatisfiable != action:
            continue
        selector = _compile(c, pod_labels)
        out.append(SpreadConstraint(
            max_skew=c.maxSkew,
            topology_key=c.topologyKey,
            selector=selector,
            selector_empty=selector.empty(),
            min_domains=c.minDomains if c.HasField("minDomains") else 1,
            node_affinity_policy=c.nodeAffinityPolicy if c.HasField("nodeAffinityPolicy") else POLICY_HONOR,
            node_taints_policy=c.nodeTaintsPolicy if c.HasField("nodeTaintsPolicy") else POLICY_IGNORE,
        ))
    return out


def node_labels_match_spread_constraints(node_labels: Mapping[str, str],
                                         constraints: Sequence[SpreadConstraint]) -> bool:
    """Whether ALL topology keys of the constraints are node labels."""
    return all(c.topology_key in node_labels for c in constraints)


def count_pods_match_selector(pod_infos: Sequence[PodInfo], c: SpreadConstraint, ns: str) -> int:
    if c.selector_empty:
        return 0
    matches = c.selector.matches
    count = 0
    for pi in pod_infos:
        p = pi.pod
        # Terminating pods are bypassed (kubernetes#87621).
        if p.metadata.namespace != ns or p.metadata.HasField("deletionTimestamp"):
            continue
        if matches(p.metadata.labels):
            count += 1
    return count


# Counts are memoized per NodeInfo version (NodeInfo.generation changes with every pod added or
# removed) under a token for (namespace, selector), so hashing the selector happens once per
# cycle rather than once per node.
_COUNTS_MEMO_KEY: MemoKey[tuple[int, dict[int, int]]] = MemoKey("PodTopologySpread.counts")


def selector_token(c: SpreadConstraint, ns: str) -> int:
    """A token naming the pods count_pods_match_selector(_, c, ns) counts, for count_pods_memo."""
    return token(_COUNTS_MEMO_KEY, (ns, c.selector))


def count_pods_memo(ni: NodeInfo, c: SpreadConstraint, ns: str, tok: int) -> int:
    """count_pods_match_selector(ni.pods, c, ns), memoized per node version; tok is
    selector_token(c, ns)."""
    memo = ni.memo()
    entry = memo.get(_COUNTS_MEMO_KEY)
    generation = ni.generation
    if entry is None or entry[0] != generation:
        entry = (generation, {})
        memo[_COUNTS_MEMO_KEY] = entry
    counts: dict[int, int] = entry[1]
    n = counts.get(tok)
    if n is None:
        n = count_pods_match_selector(ni.pods, c, ns)
        if len(counts) >= MAX_MEMO_ENTRIES:
            counts.clear()
        counts[tok] = n
    return n


def pod_labels_match_spread_constraints(constraints: Sequence[SpreadConstraint],
                                        labels: Mapping[str, str]) -> bool:
    return any(c.selector.matches(labels) for c in constraints)


def match_node_inclusion_policies(c: SpreadConstraint, pod: Pod, node: Node,
                                  node_affinity_match: Callable[[Node], bool]) -> bool:
    """matchNodeInclusionPolicies: nodeAffinityPolicy/nodeTaintsPolicy Honor exclude the node."""
    if c.node_affinity_policy == POLICY_HONOR and not node_affinity_match(node):
        return False
    return not (c.node_taints_policy == POLICY_HONOR
                and find_untolerated_taint(node.spec.taints, pod.spec.tolerations, _DO_NOT_SCHEDULE) is not None)

