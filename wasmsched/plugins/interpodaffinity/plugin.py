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
    BatchScores,
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdicts,
    Handle,
    NodeBatch,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import AffinityTerm, NodeInfo, PodInfo
from wasmsched.plugins.helper.objects import as_pair, as_update
from wasmsched.plugins.helper.prefilter_state import filter_batch_with_state, filter_with_state
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

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        return filter_batch_with_state(filtering.get_pre_filter_state, filtering.filter_node, state, batch)

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return scoring.pre_score(self, state, pod, nodes)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return scoring.score_node(s, node_info), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return [], s
        f = scoring.score_node
        return [f(s, ni) for ni in batch.node_infos], None

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
        return [
            # Add: an assigned pod may satisfy the pod's affinity; UpdatePodLabel: its new labels may
            # (or no longer conflict); Delete: an existing pod's anti-affinity conflict may be gone.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD,
                             ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_change),
            # The pod's own new labels may escape other pods' anti-affinity.
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
                self.is_schedulable_after_target_pod_update_label),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_assigned_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        # A pod neither bound nor nominated does not count for (anti-)affinity. (Node and nomination
        # changes come as Add/Delete events.)
        if (modified is not None and not modified.spec.nodeName and not modified.status.nominatedNodeName) or (
                original is not None and not original.spec.nodeName and not original.status.nominatedNodeName):
            return QueueingHint.QUEUE_SKIP
        pi = PodInfo(pod)
        terms, anti_terms = pi.required_affinity_terms, pi.required_anti_affinity_terms
        # One existing pod must satisfy all the affinity terms at once; matching any anti-affinity
        # term is a conflict.
        if modified is not None and original is not None:
            if not _matches_all(terms, original) and _matches_all(terms, modified):
                return QueueingHint.QUEUE
            if _matches_any(anti_terms, original) and not _matches_any(anti_terms, modified):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if modified is not None:
            return QueueingHint.QUEUE if _matches_all(terms, modified) else QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        if _matches_any(anti_terms, original):
            return QueueingHint.QUEUE
        # The deleted pod's own anti-affinity may have been what rejected this pod.
        if _matches_any(PodInfo(original).required_anti_affinity_terms, pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_target_pod_update_label(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        # Another pod's anti-affinity may match the old labels but not the new ones.
        return QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_update(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        pi = PodInfo(pod)
        for t in pi.required_affinity_terms:
            key = t.topology_key
            if original is None:
                # A new node with the affinity's topology key.
                if key in modified.metadata.labels:
                    return QueueingHint.QUEUE
                continue
            had, has = key in original.metadata.labels, key in modified.metadata.labels
            if has and (not had or original.metadata.labels[key] != modified.metadata.labels[key]):
                # The node gained the key, or moved to another domain.
                return QueueingHint.QUEUE
        for t in pi.required_anti_affinity_terms:
            if original is None:
                # A node without the key always admits the pod; one with it may join a domain free of
                # the pods it repels. Which, this hint does not check.
                return QueueingHint.QUEUE
            key = t.topology_key
            if key not in original.metadata.labels:
                # Gaining the key cannot help: a node without it admits pods with anti-affinity.
                continue
            if key not in modified.metadata.labels or original.metadata.labels[key] != modified.metadata.labels[key]:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms; False without terms.

    kube matches the unmerged terms with nil namespace labels here: an empty namespaceSelector
    matches every namespace, any other selector is evaluated against no labels.
    """
    if not terms:
        return False
    return all(t.matches(pod, {}) for t in terms)


def _matches_any(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAnyAffinityTerms (for anti-affinity), with the same namespace rule."""
    return any(t.matches(pod, {}) for t in terms)
