"""The InterPodAffinity plugin (interpodaffinity/plugin.go): construction and events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import InterPodAffinityArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import AffinityTerm, NodeInfo, PodInfo
from wasmsched.plugins.helper.prefilter_state import filter_nodes_with_state, filter_with_state
from wasmsched.plugins.interpodaffinity import filtering, scoring

NAME = "InterPodAffinity"


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        """`args` as `new` gives them: typed and validated (see config.args.get_args)."""
        self.handle = handle
        self.args = args
        self.hard_pod_affinity_weight = args.hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = args.ignore_preferred_terms_of_existing_pods

    # -- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        return None, filtering.pre_filter(self, state, pod, nodes)

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._update_state(state, pod_info_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update_state(state, pod_info_to_remove, node_info, -1)

    @staticmethod
    def _update_state(state: CycleState, pod_info: PodInfo, node_info: NodeInfo, multiplier: int) -> Status | None:
        s = filtering.get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info, node_info.node, multiplier)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return filter_with_state(filtering.get_pre_filter_state, filtering.filter_node, state, node_info)

    def filter_nodes(self, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]) -> list[Status | None]:
        return filter_nodes_with_state(filtering.get_pre_filter_state, filtering.filter_node, state, node_infos)

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return scoring.pre_score(self, state, pod, nodes)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return scoring.score_node(s, node_info), None

    def score_nodes(self, state: CycleState, pod: Pod,
                    node_infos: Sequence[NodeInfo]) -> tuple[list[int], Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return [], s
        f = scoring.score_node
        return [f(s, ni) for ni in node_infos], None

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return s
        scoring.normalize_score(s, scores)
        return None

    # -- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Node/UpdateNodeTaint is there because Node/Add may be missed for nodes that are added
        # not ready (kubernetes#110175).
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                self.is_schedulable_after_pod_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE,
                             ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original: Pod | None = old_obj
        modified: Pod | None = new_obj
        if (modified is not None and modified.spec.nodeName == "") or (
                original is not None and original.spec.nodeName == ""):
            return QueueingHint.QUEUE_SKIP
        pi = PodInfo(pod)
        terms, anti_terms = pi.required_affinity_terms, pi.required_anti_affinity_terms
        if modified is not None and original is not None:
            if not _matches_all(terms, original) and _matches_all(terms, modified):
                return QueueingHint.QUEUE
            if _matches_all(anti_terms, original) and not _matches_all(anti_terms, modified):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if modified is not None:
            return QueueingHint.QUEUE if _matches_all(terms, modified) else QueueingHint.QUEUE_SKIP
        if original is not None and _matches_all(anti_terms, original):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        modified: Node | None = new_obj
        if modified is None:
            return QueueingHint.QUEUE
        pi = PodInfo(pod)
        labels = modified.metadata.labels
        for t in pi.required_affinity_terms:
            if t.topology_key in labels:
                return QueueingHint.QUEUE
        for t in pi.required_anti_affinity_terms:
            if t.topology_key in labels:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    # kube matches the unmerged terms with nil namespace labels here: an empty namespaceSelector
    # matches every namespace, any other selector is evaluated against no labels.
    if not terms:
        return False
    return all(t.matches(pod, {}) for t in terms)
