"""NodeDeclaredFeatures (plugins/nodedeclaredfeatures/nodedeclaredfeatures.go): PreFilter, Filter and
EventsToRegister.

PreFilter infers the declared features the pod needs (component-helpers' framework, features.py);
Filter keeps the nodes whose status.declaredFeatures include them all. The NodeDeclaredFeatures gate
is GA and locked on in 1.37, so the plugin is always enabled; InPlacePodVerticalScalingSchedulerPreemption
is alpha and off, so a pod whose resize is deferred is filtered like any other. Both are kept as
fields, as in kube, for its tests. kube's SignPod (pod signatures for opportunistic batching) has no
counterpart here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState, NotFoundError
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
    FilterVerdicts,
    NodeBatch,
    PreFilterPlugin,
    PreFilterResult,
    verdicts_of,
)
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.objects import as_pair, as_update
from wasmsched.plugins.helper.podmemo import shape_memoized
from wasmsched.plugins.nodedeclaredfeatures import features
from wasmsched.plugins.nodedeclaredfeatures.featureset import FeatureSet
from wasmsched.plugins.nodedeclaredfeatures.framework import Framework, PodInfo
from wasmsched.plugins.nodedeclaredfeatures.version import Version, parse

NAME = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"

# The scheduler's own version (version.Get()), against which features' MaxVersions are compared.
COMPONENT_VERSION = "v1.37.2"
_COMPONENT_VERSION = parse(COMPONENT_VERSION)

# ndf.DefaultFramework: every feature registered in 1.37.
DEFAULT_FRAMEWORK = Framework(features.ALL_FEATURES)

# The node's declared features as a FeatureSet, kept in the NodeInfo's memo (kube computes it in
# NodeInfo.SetNode); the entry remembers the node object and framework it was made from.
_NODE_FEATURES_MEMO: MemoKey[tuple[Node, Framework, FeatureSet]] = MemoKey("NodeDeclaredFeatures.node")

POD_RESIZE_PENDING = "PodResizePending"
POD_REASON_DEFERRED = "Deferred"


def is_pod_resize_deferred(pod: Pod) -> bool:
    """resource.IsPodResizeDeferred: the first PodResizePending condition has reason Deferred."""
    for c in pod.status.conditions:
        if c.type == POD_RESIZE_PENDING:
            return c.reason == POD_REASON_DEFERRED
    return False


def node_declared_features(ni: NodeInfo, framework: Framework = DEFAULT_FRAMEWORK) -> FeatureSet:
    """NodeInfo.GetNodeDeclaredFeatures: the node's known declared features (unknown names are
    dropped, as TryMap does: only known features are ever required)."""
    node = ni.node
    if node is None:
        return framework.new_feature_set()
    memo = ni.memo()
    entry = memo.get(_NODE_FEATURES_MEMO)
    if entry is not None and entry[0] is node and entry[1] is framework:
        return entry[2]
    fs = framework.try_map(node.status.declaredFeatures)
    memo[_NODE_FEATURES_MEMO] = (node, framework, fs)
    return fs


class _PreFilterState:
    """The pod's feature requirements, computed at PreFilter."""

    __slots__ = ("reqs",)

    def __init__(self, reqs: FeatureSet) -> None:
        self.reqs = reqs

    def clone(self) -> _PreFilterState:
        # Adding or removing pods does not change it.
        return self


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, ndf_framework: Framework | None = DEFAULT_FRAMEWORK,
                 version: Version | None = _COMPONENT_VERSION, enabled: bool = True,
                 enable_in_place_pod_vertical_scaling_scheduler_preemption: bool = False) -> None:
        self.ndf_framework = ndf_framework
        self.version = version
        self.enabled = enabled
        self.enable_in_place_pod_vertical_scaling_scheduler_preemption = \
            enable_in_place_pod_vertical_scaling_scheduler_preemption
        # This instance's entry in PodShape memos (its framework and version decide what is inferred).
        self._infer_key: MemoKey[FeatureSet] = MemoKey(f"{NAME}.infer")

    def _framework(self) -> Framework:
        if self.ndf_framework is None:
            # kube's disabled plugin has no framework either; only an enabled one reaches here.
            raise RuntimeError("NodeDeclaredFeatures has no feature framework")
        return self.ndf_framework

    def _infer(self, pod: Pod) -> FeatureSet:
        # The pod's status is not looked at: only its spec is passed, as kube does.
        return self._framework().infer_for_pod_scheduling(PodInfo(pod.spec), self.version)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod):
            return None, Status.skip()
        if not self.enabled:
            return None, Status.skip()
        try:
            # Inferred from the spec only: once per shape of pod (a workload's replicas share it).
            reqs = shape_memoized(state, pod, self._infer_key, self._infer)
        except ValueError as e:
            return None, Status.error(e)
        if reqs.is_empty():
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None, None

    @staticmethod
    def _get_pre_filter_state(state: CycleState) -> _PreFilterState | Status:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        if not isinstance(s, _PreFilterState):
            return Status.error(f"invalid PreFilter state, got type {type(s).__name__}, "
                                "expected *nodedeclaredfeatures.preFilterState")
        return s

    def _filter(self, s: _PreFilterState, ni: NodeInfo) -> Status | None:
        try:
            ok = s.reqs.is_subset(node_declared_features(ni, self._framework()))
        except ValueError as e:
            return Status.error(e)
        return None if ok else Status.unresolvable(ERR_REASON_UNSATISFIED_REQUIREMENTS)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod):
            return None
        if not self.enabled:
            return None
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        return self._filter(s, node_info)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        if (self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod)) \
                or not self.enabled:
            return {}
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return dict.fromkeys(range(len(batch)), s)
        return verdicts_of(self._filter(s, ni) for ni in batch.node_infos)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
                self.is_schedulable_after_target_pod_update,
            ),
        ]

    def is_schedulable_after_target_pod_update(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when the pod's own update changed the features it needs.

        An inference error is raised: the queue then requeues the pod and logs it, as kube does with
        the error its hint returns."""
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old_pod, new_pod = typed
        if old_pod is None or new_pod is None:
            return QueueingHint.QUEUE
        old_reqs = self._infer(old_pod)
        new_reqs = self._infer(new_pod)
        if new_reqs.equal(old_reqs):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue for a new node, or a node whose declared features changed."""
        typed = as_update(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old_node, new_node = typed
        if old_node is not None and list(old_node.status.declaredFeatures) == list(new_node.status.declaredFeatures):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def new_default() -> NodeDeclaredFeatures:
    """The plugin as kube 1.37's New builds it: the default framework, the scheduler's version."""
    return NodeDeclaredFeatures(DEFAULT_FRAMEWORK, _COMPONENT_VERSION)
