"""NodeResourcesFit (noderesources/fit.go): PreFilter/Filter on requests vs. allocatable, and
PreScore/Score with the configured scoring strategy.

Feature gates are those of kube 1.37: SidecarContainers, PodLevelResources (through
api.resources.pod_requests), InPlacePodVerticalScaling and SchedulingQueueHint are on;
DRAExtendedResource is not modelled (there are no DeviceClasses here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.api import resources as res
from wasmsched.api.types import Node, Pod
from wasmsched.config.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
)
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
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    POD_REQUEST_INPUTS_MEMO,
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    NodeInfo,
    Resource,
)
from wasmsched.plugins.helper.columns import verdicts_of_rejected
from wasmsched.plugins.helper.objects import as_pair
from wasmsched.plugins.helper.podmemo import pod_memoized, shape_memoized
from wasmsched.plugins.noderesources.least_allocated import (
    least_cpu_mem_columns,
    least_resource_scorer,
)
from wasmsched.plugins.noderesources.most_allocated import most_cpu_mem_columns, most_resource_scorer
from wasmsched.plugins.noderesources.requested_to_capacity_ratio import requested_to_capacity_ratio_scorer
from wasmsched.plugins.noderesources.resource_allocation import ResourceAllocationScorer

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
_POD_REQUEST_MEMO: MemoKey[Resource] = MemoKey("NodeResourcesFit.request")
# NodeTable.memoized_rows key of the columnar Filter's verdicts (for a pod's cpu, memory, ephemeral-storage).
_FIT_FILTER_MEMO: MemoKey[bool] = MemoKey("NodeResourcesFit.filter")

ERR_REASON_TOO_MANY_PODS = "Too many pods"
ERR_REASON_SIDECAR_DISABLED = "Pod has a restartable init container and the SidecarContainers feature is disabled"


@dataclass(slots=True)
class InsufficientResource:
    """What kind of resource limit is hit and caused the pod not to fit the node."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    # The pod's request alone exceeds the node's allocatable: preemption cannot help.
    unresolvable: bool = False


def insufficient_reason(resource_name: str) -> str:
    return f"Insufficient {resource_name}"


def max_resource(rl: Mapping[str, int]) -> Resource:
    """framework.Resource{}.SetMaxResource(rl): cpu, memory, ephemeral-storage and scalar resources
    (kept even when 0); the pods count is not taken from a request list."""
    r = Resource()
    for name, v in rl.items():
        if name == RESOURCE_CPU:
            r.milli_cpu = max(r.milli_cpu, v)
        elif name == RESOURCE_MEMORY:
            r.memory = max(r.memory, v)
        elif name == RESOURCE_EPHEMERAL_STORAGE:
            r.ephemeral_storage = max(r.ephemeral_storage, v)
        elif res.is_scalar_resource_name(name):
            r.scalar_resources[name] = max(r.scalar_resources.get(name, 0), v)
    return r


def compute_pod_resource_request(pod: Pod) -> Resource:
    """The pod's effective request: containers summed, init containers as the max with sidecars
    counted, pod-level requests when set, plus the pod overhead (resource.PodRequests)."""
    # The pod is not scheduled yet, so its status resources do not matter.
    return max_resource(res.pod_requests(pod, use_status_resources=False))


def has_restartable_init_container(pod: Pod) -> bool:
    return any(c.restartPolicy == "Always" for c in pod.spec.initContainers)


class PreFilterState:
    """The pod's request, plus what the filter checks precomputed from it and the plugin's args."""

    __slots__ = ("ephemeral_storage", "memory", "milli_cpu", "request", "scalars")

    def __init__(self, request: Resource, ignored_resources: AbstractSet[str],
                 ignored_resource_groups: AbstractSet[str]) -> None:
        self.request = request
        self.milli_cpu = request.milli_cpu
        self.memory = request.memory
        self.ephemeral_storage = request.ephemeral_storage
        # Scalar requests to check: non-zero and not ignored (ignoring only applies to extended
        # resources; the group is the part of the name before the '/').
        scalars: list[tuple[str, int]] = []
        for name, q in request.scalar_resources.items():
            if q == 0:
                continue
            if res.is_extended_resource_name(name):
                prefix = name.split("/", 1)[0] if ignored_resource_groups else ""
                if name in ignored_resources or prefix in ignored_resource_groups:
                    continue
            scalars.append((name, q))
        self.scalars = tuple(scalars)

    def clone(self) -> PreFilterState:
        return self


class PreScoreState:
    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        # Same order as the scoring strategy's resources.
        self.pod_requests = pod_requests

    def clone(self) -> PreScoreState:
        return self


def _filter_each(s: PreFilterState, node_infos: Sequence[NodeInfo]) -> dict[int, Status]:
    """Fit's Filter node by node."""
    out: dict[int, Status] = {}
    cpu, mem, eph, scalars = s.milli_cpu, s.memory, s.ephemeral_storage, s.scalars
    # Most nodes fit: a cheap yes/no first, the reasons only for the others.
    for i, ni in enumerate(node_infos):
        if _insufficient_fast(cpu, mem, eph, ni) or (scalars and _insufficient_scalars(s, ni)):
            out[i] = _status_for(fits_request(s, ni))
    return out


def fits_request(s: PreFilterState, node_info: NodeInfo) -> list[InsufficientResource]:
    """Every resource the node lacks for the pod, in kube's order (pods, cpu, memory, ephemeral
    storage, scalar resources)."""
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    n = len(node_info.pods)
    if n + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource(RESOURCE_PODS, ERR_REASON_TOO_MANY_PODS, 1, n, alloc.allowed_pod_number))
    cpu = s.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource(RESOURCE_CPU, "Insufficient cpu", cpu, used.milli_cpu, alloc.milli_cpu,
                                        cpu > alloc.milli_cpu))
    mem = s.memory
    if mem > 0 and mem > alloc.memory - used.memory:
        out.append(InsufficientResource(RESOURCE_MEMORY, "Insufficient memory", mem, used.memory, alloc.memory,
                                        mem > alloc.memory))
    eph = s.ephemeral_storage
    if eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource(RESOURCE_EPHEMERAL_STORAGE, "Insufficient ephemeral-storage", eph,
                                        used.ephemeral_storage, alloc.ephemeral_storage,
                                        eph > alloc.ephemeral_storage))
    for name, q in s.scalars:
        a = alloc.scalar_resources.get(name, 0)
        u = used.scalar_resources.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, insufficient_reason(name), q, u, a, q > a))
    return out


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Whether the node has enough resources for the pod, no resources ignored (noderesources.Fits)."""
    return fits_request(PreFilterState(compute_pod_resource_request(pod), frozenset(), frozenset()), node_info)


def _status_for(insufficient: list[InsufficientResource]) -> Status:
    # All reasons are kept; any request exceeding the node's allocatable outright makes it unresolvable.
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in insufficient) else Code.UNSCHEDULABLE
    return Status(code, [r.reason for r in insufficient])


def _insufficient_fast(cpu: int, mem: int, eph: int, ni: NodeInfo) -> bool:
    """Whether the node lacks a pod slot, or the cpu, memory or ephemeral-storage asked (fits_request's
    checks of those, yes or no)."""
    alloc = ni.allocatable
    used = ni.requested
    return (len(ni.pods) + 1 > alloc.allowed_pod_number
            or (cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu)
            or (mem > 0 and mem > alloc.memory - used.memory)
            or (eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage))


def _insufficient_scalars(s: PreFilterState, ni: NodeInfo) -> bool:
    """Whether the node lacks an extended resource asked (fits_request's checks of those, yes or no)."""
    alloc = ni.allocatable
    used = ni.requested
    return any(q > alloc.scalar_resources.get(name, 0) - used.scalar_resources.get(name, 0) for name, q in s.scalars)


def _scorer_for(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    strategy = args.scoring_strategy
    resources = strategy.resources
    columns = None
    if strategy.type == LEAST_ALLOCATED:
        fn = least_resource_scorer(resources)
        columns = least_cpu_mem_columns(resources)
    elif strategy.type == MOST_ALLOCATED:
        fn = most_resource_scorer(resources)
        columns = most_cpu_mem_columns(resources)
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        rtc = strategy.requested_to_capacity_ratio
        fn = requested_to_capacity_ratio_scorer(resources, rtc.shape if rtc is not None else [])
    else:
        raise ValueError(f"scoring strategy {strategy.type} is not supported")
    return ResourceAllocationScorer(strategy.type, fn, resources, enable_pod_level_resources=False,
                                    cpu_mem_columns_fn=columns)


class Fit(PreFilterPlugin, FilterPlugin, EnqueueExtensions, PreScorePlugin, ScorePlugin):
    name = NAME

    def __init__(self, args: NodeResourcesFitArgs, handle: Handle | None = None, *,
                 enable_sidecar_containers: bool = True,
                 enable_in_place_pod_vertical_scaling: bool = True) -> None:
        self.handle = handle
        self.args = args
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self.enable_sidecar_containers = enable_sidecar_containers
        self.enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self.scorer = _scorer_for(args)

    # --- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enable_sidecar_containers and has_restartable_init_container(pod):
            # Kubelets before 1.28 would account such pods differently; refuse them outright.
            return None, Status.unresolvable(ERR_REASON_SIDECAR_DISABLED)
        def compute(p: Pod) -> Resource:
            # compute_pod_resource_request, from what the PodInfo read of the pod.
            inputs = pod_memoized(state, p, POD_REQUEST_INPUTS_MEMO, res.pod_request_inputs)
            return max_resource(res.pod_requests(inputs, use_status_resources=False))

        request = shape_memoized(state, pod, _POD_REQUEST_MEMO, compute)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(request, self.ignored_resources, self.ignored_resource_groups))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    @staticmethod
    def _get_pre_filter_state(state: CycleState) -> PreFilterState | Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, PreFilterState):
            return Status.error(f"{s!r}  convert to NodeResourcesFit.preFilterState error")
        return s

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        insufficient = fits_request(s, node_info)
        if insufficient:
            return _status_for(insufficient)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return dict.fromkeys(range(len(batch)), s)
        ok = self._fits_columns(s, batch.columns) if batch.columns is not None else None
        if ok is None:
            return _filter_each(s, batch.node_infos)
        return verdicts_of_rejected(ok, batch, lambda node_infos: _filter_each(s, node_infos))

    @staticmethod
    def _fits_columns(s: PreFilterState, columns: NodeColumns) -> NDArray[np.bool_] | None:
        """Whether each node fits, from the node table; None where the columns do not say (extended
        resources, values beyond the table's exact range)."""
        if s.scalars:
            return None
        from wasmsched.framework import nodetable as nt

        table = columns.table
        cpu, mem, eph = s.milli_cpu, s.memory, s.ephemeral_storage
        if not table.regular() or not (0 <= cpu < nt.EXACT_LIMIT and 0 <= mem < nt.EXACT_LIMIT
                                       and 0 <= eph < nt.EXACT_LIMIT):
            return None

        def compute(rows: NDArray[np.intp]) -> NDArray[np.bool_]:
            v = table.values[rows]
            # fits_request's checks, in its order (each rejects on its own, so the order does not matter here).
            ok = v[:, nt.NUM_PODS] + 1 <= v[:, nt.ALLOC_PODS]
            if cpu > 0:
                ok &= cpu <= v[:, nt.ALLOC_CPU] - v[:, nt.REQ_CPU]
            if mem > 0:
                ok &= mem <= v[:, nt.ALLOC_MEMORY] - v[:, nt.REQ_MEMORY]
            if eph > 0:
                ok &= eph <= v[:, nt.ALLOC_EPHEMERAL] - v[:, nt.REQ_EPHEMERAL]
            return ok

        def compute_row(ni: NodeInfo) -> bool:
            return not _insufficient_fast(cpu, mem, eph, ni)

        # The verdict depends on the node's row and the pod's (cpu, memory, ephemeral-storage) only: kept per
        # shape of pod and recomputed for the rows changed since (see NodeTable.memoized_rows).
        return table.memoized_rows(_FIT_FILTER_MEMO, (cpu, mem, eph), columns.rows, compute, compute_row)

    # --- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(self.scorer.pod_resource_request_list(state, pod)))
        return None

    def _pod_requests(self, state: CycleState, pod: Pod) -> list[int]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, PreScoreState):
            return s.pod_requests
        # PreScore did not run: compute the requests now, as kube does.
        return self.scorer.calculate_pod_resource_request_list(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self.scorer.score(node_info, self._pod_requests(state, pod))

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        return self.scorer.score_batch(batch, self._pod_requests(state, pod))

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # --- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # kube 1.37 registers DeviceClass events too (DRAExtendedResource); wasmsched has no DeviceClass.
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_delete),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.is_schedulable_after_node_change),
        ]
        if self.enable_in_place_pod_vertical_scaling:
            # A scaled-down pod frees resources; the pod's own scale-down asks for less.
            events += [
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                     self.is_schedulable_after_assigned_pod_scale_down),
                ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                     self.is_schedulable_after_target_pod_scale_down),
            ]
        return events

    def is_schedulable_after_assigned_pod_delete(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None or typed[0] is None:
            return QueueingHint.QUEUE
        deleted = typed[0]
        # Deleting a pod that was neither bound nor nominated frees nothing.
        if not deleted.spec.nodeName and not deleted.status.nominatedNodeName:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_target_pod_scale_down(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        return QueueingHint.QUEUE

    def is_schedulable_after_assigned_pod_scale_down(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None or typed[0] is None or typed[1] is None:
            return QueueingHint.QUEUE
        if not self._have_enough_relevant_resources_decreased(pod, typed[0], typed[1]):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _have_enough_relevant_resources_decreased(self, target: Pod, original: Pod, modified: Pod) -> bool:
        """Whether a bound pod lowered a request the target has (haveEnoughRelevantResourcesDecreased)."""
        if not modified.spec.nodeName:
            # An unscheduled pod's update frees nothing.
            return False
        status = self.enable_in_place_pod_vertical_scaling
        orig = max_resource(res.pod_requests(original, use_status_resources=status))
        mod = max_resource(res.pod_requests(modified, use_status_resources=status))
        for name, v in res.pod_requests(target, use_status_resources=status).items():
            if v == 0:
                continue
            if name == RESOURCE_CPU:
                if orig.milli_cpu > mod.milli_cpu:
                    return True
            elif name == RESOURCE_MEMORY:
                if orig.memory > mod.memory:
                    return True
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                if orig.ephemeral_storage > mod.ephemeral_storage:
                    return True
            elif res.is_scalar_resource_name(name) and (
                orig.scalar_resources.get(name, 0) > mod.scalar_resources.get(name, 0)
            ):
                return True
        return False

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        if modified is None or not is_fit(pod, modified):
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        if not have_any_requested_resources_increased(pod, original, modified):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def is_fit(pod: Pod, node: Node | None) -> bool:
    """Whether the pod fits the node when nothing runs on it; False for no node."""
    if node is None:
        return False
    return not fits(pod, NodeInfo(node))


def have_any_requested_resources_increased(pod: Pod, original: Node, modified: Node) -> bool:
    """Whether the node's allowed pod count, or the allocatable of a resource the pod requests, grew."""
    request = compute_pod_resource_request(pod)
    before = NodeInfo(original).allocatable
    after = NodeInfo(modified).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (request.milli_cpu == 0 and request.memory == 0 and request.ephemeral_storage == 0
            and not request.scalar_resources):
        return False
    if ((request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
            or (request.memory > 0 and after.memory > before.memory)
            or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)):
        return True
    for name, q in request.scalar_resources.items():
        if q == 0:
            continue
        if after.scalar_resources.get(name, 0) > before.scalar_resources.get(name, 0):
            return True
    return False
