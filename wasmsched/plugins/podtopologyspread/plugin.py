"""The PodTopologySpread plugin (podtopologyspread/plugin.go): construction, defaults, events."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wasmsched.api.nodeaffinity import RequiredNodeAffinity
from wasmsched.api.types import Node, Pod, TopologySpreadConstraint
from wasmsched.config.args import SYSTEM_DEFAULTING, PodTopologySpreadArgs
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
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.helper.objects import as_pair
from wasmsched.plugins.helper.prefilter_state import filter_batch_with_state, filter_with_state
from wasmsched.plugins.helper.spread import default_selector
from wasmsched.plugins.podtopologyspread import filtering, scoring
from wasmsched.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    POLICY_HONOR,
    SpreadConstraint,
    filter_topology_spread_constraints,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)

NAME = "PodTopologySpread"


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        """`args` as `new` gives them: typed and validated (see config.args.get_args)."""
        self.handle = handle
        self.args = args
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        # For pods without constraints of their own: the system defaults, or the configured list.
        self.default_constraints: list[TopologySpreadConstraint] = args.effective_default_constraints()
        # The whenUnsatisfiable actions the default constraints have: build_default_constraints for
        # another action has nothing to build, without compiling or listing anything.
        self._default_actions = frozenset(c.whenUnsatisfiable for c in self.default_constraints)

    # -- constraints -------------------------------------------------------------------------

    def required_node_affinity(self, pod: Pod) -> Callable[[Node], bool]:
        # Parsing errors are ignored for backwards compatibility, as kube does.
        return RequiredNodeAffinity.from_pod(pod).match

    @staticmethod
    def required_node_affinity_or_none(pod: Pod) -> RequiredNodeAffinity | None:
        """What required_node_affinity matches, or None when the pod has no node selector or
        required node affinity (every node matches then)."""
        affinity = RequiredNodeAffinity.from_pod(pod)
        if affinity.label_selector is None and affinity.node_selector is None:
            return None
        return affinity

    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """Default constraints with the selector of the pod's Services/controllers; none if empty."""
        if action not in self._default_actions:
            return []
        # The selector first: without one (a pod no Service or controller selects) nothing is compiled.
        selector = default_selector(pod, self.handle)
        if selector.empty():
            return []
        constraints = filter_topology_spread_constraints(self.default_constraints, pod.metadata.labels, action)
        return [
            SpreadConstraint(c.max_skew, c.topology_key, selector, False, c.min_domains,
                             c.node_affinity_policy, c.node_taints_policy)
            for c in constraints
        ]

    def get_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        """The pod's hard constraints, or the hard default constraints when it has none."""
        if len(pod.spec.topologySpreadConstraints) > 0:
            return filter_topology_spread_constraints(
                pod.spec.topologySpreadConstraints, pod.metadata.labels, DO_NOT_SCHEDULE)
        return self.build_default_constraints(pod, DO_NOT_SCHEDULE)

    # -- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        try:
            s = filtering.cal_pre_filter_state(self, pod, nodes)
        except Exception as e:  # noqa: BLE001 - a bad selector is an error status, as in kube
            return None, Status.error(f"get constraints from pod: {e}")
        if not s.constraints:
            return None, Status.skip()
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._update_state(state, pod_to_schedule, pod_info_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update_state(state, pod_to_schedule, pod_info_to_remove, node_info, -1)

    def _update_state(self, state: CycleState, pod_to_schedule: Pod, pod_info: PodInfo, node_info: NodeInfo,
                      delta: int) -> Status | None:
        s = filtering.get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        filtering.update_with_pod(s, pod_info.pod, pod_to_schedule, node_info.node, delta,
                                  self.required_node_affinity(pod_to_schedule))
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return filter_with_state(filtering.get_pre_filter_state, filtering.filter_node, state, node_info)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        return filter_batch_with_state(filtering.get_pre_filter_state, filtering.filter_node, state, batch)

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            return scoring.pre_score(self, state, pod, nodes)
        except Exception as e:  # noqa: BLE001 - a bad selector is an error status, as in kube
            return Status.error(f"calculating preScoreState: {e}")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return scoring.node_scorer(s, pod)(node_info), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        s = scoring.get_pre_score_state(state)
        if isinstance(s, Status):
            return [], s
        return list(map(scoring.node_scorer(s, pod), batch.node_infos)), None

    def score_extensions(self) -> PodTopologySpread:
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
            # An assigned pod added, deleted or relabelled may change the counts of matching pods.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD,
                             ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_change),
            # The pod's own new labels, or a new toleration with nodeTaintsPolicy Honor.
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL),
                self.is_schedulable_after_target_pod_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                             | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_target_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        if original is None or modified is None:
            return QueueingHint.QUEUE
        constraints = self.get_constraints(pod)
        if (list(modified.spec.tolerations) != list(original.spec.tolerations)
                and any(c.node_taints_policy == POLICY_HONOR for c in constraints)):
            return QueueingHint.QUEUE
        return _after_pod_label_change(original, modified, constraints)

    def is_schedulable_after_assigned_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        if (modified is not None and not _involved_in_topology_spreading(modified, pod)) or (
                original is not None and not _involved_in_topology_spreading(original, pod)):
            return QueueingHint.QUEUE_SKIP
        constraints = self.get_constraints(pod)
        if modified is not None and original is not None:
            return _after_pod_label_change(original, modified, constraints)
        obj = modified if modified is not None else original
        if obj is not None and pod_labels_match_spread_constraints(constraints, obj.metadata.labels):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original: Node | None = old_obj
        modified: Node | None = new_obj
        constraints = self.get_constraints(pod)
        original_matching = original is not None and node_labels_match_spread_constraints(
            original.metadata.labels, constraints)
        modified_matching = modified is not None and node_labels_match_spread_constraints(
            modified.metadata.labels, constraints)
        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return QueueingHint.QUEUE
            if modified_matching and (
                    _topology_key_labels_changed(original.metadata.labels, modified.metadata.labels, constraints)
                    or list(original.spec.taints) != list(modified.spec.taints)):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if modified is not None:
            return QueueingHint.QUEUE if modified_matching else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if original_matching else QueueingHint.QUEUE_SKIP


def _involved_in_topology_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """Whether a bound or nominated pod counts for the spreading of a pod: in the same namespace."""
    if not incoming.spec.nodeName and not incoming.status.nominatedNodeName:
        return False
    return incoming.metadata.namespace == pod_with_spreading.metadata.namespace


def _after_pod_label_change(original: Pod, modified: Pod, constraints: Sequence[SpreadConstraint]) -> QueueingHint:
    """isSchedulableAfterPodLabelChange: Queue when the change makes the pod match, or stop matching,
    some constraint's selector."""
    if dict(modified.metadata.labels) == dict(original.metadata.labels):
        return QueueingHint.QUEUE_SKIP
    for c in constraints:
        if c.selector.matches(original.metadata.labels) != c.selector.matches(modified.metadata.labels):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _topology_key_labels_changed(original: Mapping[str, str], modified: Mapping[str, str],
                                 constraints: Sequence[SpreadConstraint]) -> bool:
    return any(original.get(c.topology_key, "") != modified.get(c.topology_key, "") for c in constraints)
