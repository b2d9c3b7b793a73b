"""DynamicResources (dynamicresources/dynamicresources.go, claims.go, dra_manager.go,
allocateddevices.go): pods' ResourceClaims, allocated with structured parameters.

The DRA manager of kube (assume cache, in-flight allocations, allocated-devices tracker) lives in the
plugin instance: claims are read through the handle's client; allocations made by Reserve stay
"in flight" (their devices taken for other pods, other pods of the claim told to wait) until PreBind
has written them, or Unreserve dropped them. With DRAConsumableCapacity the allocated state also
holds the shares of shared devices and the capacity they consume (GatherAllocatedState); with
DRADeviceBindingConditions PreBind waits, at most bindingTimeout, for the binding conditions of the
allocated devices (claim.status.devices), and Filter gives up claims whose binding failed or timed out.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.errors import is_conflict
from wasmsched.api.nodeaffinity import NodeSelectorMatcher
from wasmsched.api.types import DeviceClass, Pod, ResourceClaim, ResourceSlice
from wasmsched.config.args import DynamicResourcesArgs
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScorePlugin,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.dynamicresources import resourceclaim
from wasmsched.plugins.dynamicresources.allocator import (
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
    AllocationError,
    Allocator,
    DeviceID,
    FailedAllocationOnNodeError,
    Features,
    klog_kobj,
)
from wasmsched.plugins.dynamicresources.cel import Cache
from wasmsched.plugins.dynamicresources.consumable_capacity import AllocatedState, SharedDeviceID, q
from wasmsched.plugins.helper.columns import ZeroScoresFastPath
from wasmsched.plugins.helper.normalize_score import default_normalize_score
from wasmsched.plugins.helper.objects import as_pair

NAME = "DynamicResources"
STATE_KEY = NAME


class _ClaimError(Exception):
    pass


ERR_DEVICE_BINDING_TIMEOUT = "device binding timeout"
ERR_DEVICE_BINDING_FAILED = "device binding failed"
# wait.PollUntilContextTimeout's interval in PreBind.
BINDING_POLL_INTERVAL = 5.0


class DeviceBindingError(Exception):
    """ErrDeviceBindingFailed / ErrDeviceBindingTimeout, wrapped as kube wraps them."""


@dataclass(slots=True)
class _ClaimInfo:
    available_on_nodes: NodeSelectorMatcher | None = None
    allocation: Any = None  # AllocationResult set by Reserve


@dataclass(slots=True)
class _StateData:
    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    unavailable_claims: set[int] = field(default_factory=set)
    informations_for_claim: list[_ClaimInfo] = field(default_factory=list)
    node_allocations: dict[str, list[Any]] = field(default_factory=dict)

    def clone(self) -> _StateData:
        return self

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if not c.status.HasField("allocation")]


def _allocated(claim: ResourceClaim) -> bool:
    return claim.status.HasField("allocation")


def foreach_allocated_device(claim: ResourceClaim) -> list[DeviceID]:
    """foreachAllocatedDevice with DRAConsumableCapacity off: admin-access devices are not taken."""
    if not _allocated(claim):
        return []
    return [
        DeviceID(r.driver, r.pool, r.device)
        for r in claim.status.allocation.devices.results
        if not (r.HasField("adminAccess") and r.adminAccess)
    ]


def add_allocated_devices(claim: ResourceClaim, state: AllocatedState, consumable_capacity: bool) -> None:
    """foreachAllocatedDevice with its three callbacks: a result with a shareID is one share of a
    shared device (and its consumed capacity) when DRAConsumableCapacity is on, else a dedicated one."""
    if not _allocated(claim):
        return
    for r in claim.status.allocation.devices.results:
        if r.HasField("adminAccess") and r.adminAccess:
            continue
        device_id = DeviceID(r.driver, r.pool, r.device)
        if consumable_capacity and r.HasField("shareID"):
            state.allocated_shared_device_ids.add(SharedDeviceID(r.driver, r.pool, r.device, r.shareID))
            # A nil map in Go skips the callback; an empty one (not representable in proto) would not.
            if len(r.consumedCapacity) > 0:
                state.aggregated_capacity.insert(
                    device_id, {name: q(value).amount for name, value in r.consumedCapacity.items()}
                )
            continue
        state.allocated_devices.add(device_id)


class DynamicResources(
    ZeroScoresFastPath,
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    ScorePlugin,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    name = NAME

    def __init__(
        self,
        handle: Handle,
        filter_timeout: float = 10.0,
        binding_timeout: float = 600.0,
        features: Features | None = None,
    ) -> None:
        self.handle = handle
        # The args it was built from (new() sets them), as the other in-tree plugins keep theirs.
        self.args: DynamicResourcesArgs | None = None
        self.filter_timeout = filter_timeout
        self.binding_timeout = binding_timeout
        self.features = features or Features()
        self.cel_cache = Cache(10)
        # PreBind's wait for binding conditions; tests replace the clock.
        self.binding_poll_interval = BINDING_POLL_INTERVAL
        self.sleep: Callable[[float], None] = time.sleep
        self.monotonic: Callable[[], float] = time.monotonic
        self.now: Callable[[], float] = time.time
        # claim UID -> [claim with the pending allocation, number of pods sharing it]
        self._in_flight: dict[str, list[Any]] = {}
        self._in_flight_lock = threading.Lock()

    # --- the DRA manager ----------------------------------------------------------------------

    def _get_claim(self, namespace: str, claim_name: str) -> ResourceClaim:
        claim = self.handle.client().get_object("ResourceClaim", f"{namespace}/{claim_name}")
        if claim is None:
            raise _ClaimError(f'could not find ResourceClaim "{namespace}/{claim_name}"')
        return claim  # type: ignore[no-any-return]

    def _get_class(self, class_name: str) -> DeviceClass | None:
        return self.handle.client().get_object("DeviceClass", class_name)  # type: ignore[no-any-return]

    def get_pending_allocation(self, uid: str) -> Any:
        with self._in_flight_lock:
            entry = self._in_flight.get(uid)
            return None if entry is None else entry[0].status.allocation

    def _signal_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        with self._in_flight_lock:
            entry = self._in_flight.get(uid)
            if entry is not None:
                entry[1] += 1
                return
        current = self.handle.client().get_object("ResourceClaim", f"{claim.metadata.namespace}/{claim.metadata.name}")
        if current is None:
            raise RuntimeError(
                f"look up assumed claim {claim.metadata.namespace}/{claim.metadata.name}, UID={uid}: "
                f'could not find ResourceClaim "{claim.metadata.namespace}/{claim.metadata.name}"'
            )
        if current.metadata.uid == uid and _allocated(current):
            return
        with self._in_flight_lock:
            self._in_flight[uid] = [claim, 1]

    def _maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        with self._in_flight_lock:
            entry = self._in_flight.get(uid)
            if entry is None:
                return False
            if force or entry[1] == 1:
                del self._in_flight[uid]
                return True
            entry[1] -= 1
            return False

    def gather_allocated_state(self) -> AllocatedState:
        """claimTracker.GatherAllocatedState: allocated claims and in-flight allocations."""
        state = AllocatedState()
        for claim in self.handle.client().list_objects("ResourceClaim"):
            add_allocated_devices(claim, state, self.features.consumable_capacity)
        with self._in_flight_lock:
            in_flight = [e[0] for e in self._in_flight.values()]
        for claim in in_flight:
            add_allocated_devices(claim, state, self.features.consumable_capacity)
        return state

    def list_all_allocated_devices(self) -> set[DeviceID]:
        allocated: set[DeviceID] = set()
        for claim in self.handle.client().list_objects("ResourceClaim"):
            allocated.update(foreach_allocated_device(claim))
        with self._in_flight_lock:
            in_flight = [e[0] for e in self._in_flight.values()]
        for claim in in_flight:
            allocated.update(foreach_allocated_device(claim))
        return allocated

    # --- claims of a pod ----------------------------------------------------------------------

    def _foreach_pod_resource_claim(self, pod: Pod) -> list[ResourceClaim]:
        """foreachPodResourceClaim: raises _ClaimError (always "unschedulable") when one is missing."""
        out: list[ResourceClaim] = []
        for pod_claim in pod.spec.resourceClaims:
            try:
                claim_name, must_check_owner = resourceclaim.name(pod, pod_claim)
            except resourceclaim.ClaimNameError as e:
                raise _ClaimError(str(e)) from None
            if claim_name is None:
                continue
            claim = self._get_claim(pod.metadata.namespace, claim_name)
            if claim.metadata.HasField("deletionTimestamp"):
                raise _ClaimError(f'resourceclaim "{claim.metadata.name}" is being deleted')
            if must_check_owner:
                err = resourceclaim.is_for_pod(pod, claim)
                if err is not None:
                    raise _ClaimError(err)
            out.append(claim)
        return out

    # --- extension points ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A resource might depend on node labels for topology filtering.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE),
                self.is_schedulable_after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_target_pod_update,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(ResourceClaim, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        if modified is None:
            if original is None or not _allocated(original):
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        try:
            claims = self._foreach_pod_resource_claim(pod)
        except _ClaimError:
            return QueueingHint.QUEUE_SKIP
        uses_claim = any(c.metadata.uid == modified.metadata.uid for c in claims)
        if original is not None and _allocated(original) and not _allocated(modified):
            return QueueingHint.QUEUE
        if not uses_claim:
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        if original.status == modified.status:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_target_pod_update(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if not isinstance(new_obj, Pod):
            return QueueingHint.QUEUE
        try:
            self._foreach_pod_resource_claim(new_obj)
        except _ClaimError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_enqueue(self, pod: Pod) -> Status | None:
        try:
            self._foreach_pod_resource_claim(pod)
        except _ClaimError as e:
            return Status.unresolvable(str(e))
        return None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        s = _StateData()
        state.write(STATE_KEY, s)
        try:
            claims = self._foreach_pod_resource_claim(pod)
        except _ClaimError as e:
            return None, Status.unresolvable(str(e))
        if not claims:
            return None, Status.skip()
        s.informations_for_claim = [_ClaimInfo() for _ in claims]
        num_to_allocate = 0
        for index, claim in enumerate(claims):
            if (
                _allocated(claim)
                and not resourceclaim.can_be_reserved(claim)
                and not resourceclaim.is_reserved_for_pod(pod, claim)
            ):
                return None, Status.unresolvable("resourceclaim in use")
            if _allocated(claim):
                if claim.status.allocation.HasField("nodeSelector"):
                    matcher = NodeSelectorMatcher.compile(claim.status.allocation.nodeSelector)
                    if matcher.errors():
                        return None, Status.error("; ".join(matcher.errors()))
                    s.informations_for_claim[index].available_on_nodes = matcher
                continue
            num_to_allocate += 1
            if self.get_pending_allocation(claim.metadata.uid) is not None:
                return None, Status.unresolvable(
                    f"resource claim {klog_kobj(claim)} is in the process of being allocated"
                )
            for request in claim.spec.devices.requests:
                if request.HasField("exactly"):
                    st = self._validate_device_class(request.exactly.deviceClassName, request.name)
                    if st is not None:
                        return None, st
                elif len(request.firstAvailable) > 0:
                    if not self.features.prioritized_list:
                        return None, Status.unresolvable(
                            f"resource claim {klog_kobj(claim)}, request {request.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled"
                        )
                    for sub in request.firstAvailable:
                        st = self._validate_device_class(sub.deviceClassName, f"{request.name}/{sub.name}")
                        if st is not None:
                            return None, st
                else:
                    return None, Status.unresolvable(
                        f"resource claim {klog_kobj(claim)}, request {request.name}: unknown request type"
                    )
        if num_to_allocate > 0:
            if self.features.consumable_capacity:
                allocated: AllocatedState = self.gather_allocated_state()
            else:
                allocated = AllocatedState(allocated_devices=self.list_all_allocated_devices())
            slices: list[ResourceSlice] = self.handle.client().list_objects("ResourceSlice")
            s.allocator = Allocator(self.features, allocated, self._get_class, slices, self.cel_cache)
        s.claims = claims
        return None, None

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status.error(f"request {request_name}: unsupported request type")
        if self._get_class(class_name) is None:
            return Status.unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    @staticmethod
    def _get_state(state: CycleState) -> _StateData | Status:
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            # kube returns CycleState.Read's error as it is: fwk.ErrNotFound, "not found"
            return Status.error("not found")
        if not isinstance(s, _StateData):
            return Status.error("unable to convert state into stateData")
        return s

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._get_state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        node = node_info.node
        assert node is not None
        unavailable: list[int] = []
        for index, claim in enumerate(s.claims):
            sel = s.informations_for_claim[index].available_on_nodes
            if sel is not None and not sel.match(node):
                unavailable.append(index)
                continue
            if _allocated(claim) and any(
                len(r.skipNodeOperations) > 0 for r in claim.status.allocation.devices.results
            ):
                # DRAOptionalNodeOperations (alpha, off): no node declares the feature.
                unavailable.append(index)
                continue
            if _allocated(claim) and self.features.device_binding_and_status:
                # Failed or timed out binding: PostFilter may deallocate it to try other devices.
                try:
                    ready = is_claim_ready_for_binding(claim)
                except DeviceBindingError:
                    unavailable.append(index)
                else:
                    if not ready and self._is_claim_timeout(claim):
                        unavailable.append(index)
        allocations: list[Any] = []
        if s.allocator is not None:
            to_allocate = [c for _, c in s.to_allocate()]
            deadline = time.monotonic() + self.filter_timeout if self.filter_timeout > 0 else None

            def check() -> str | None:
                if deadline is not None and time.monotonic() > deadline:
                    return "context deadline exceeded"
                return None

            try:
                result = s.allocator.allocate(node, to_allocate, check)
            except FailedAllocationOnNodeError as e:
                return Status.unresolvable(str(e))
            except AllocationError as e:
                if str(e).startswith("filter operation aborted: context deadline exceeded"):
                    return Status.error(f"node {node.metadata.name}: timed out trying to allocate devices")
                return Status.error(str(e))
            if result is None or len(result) != len(to_allocate):
                return Status.unresolvable("cannot allocate all claims")
            allocations = result
        if unavailable:
            with s.lock:
                s.unavailable_claims.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if s.allocator is not None:
            with s.lock:
                s.node_allocations[node.metadata.name] = allocations
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        s = self._get_state(state)
        if isinstance(s, Status):
            return None, s
        if not s.claims:
            return None, Status.unschedulable()
        # Go iterates a set (random order); any unavailable claim that can be deallocated will do.
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            reserved = claim.status.reservedFor
            if len(reserved) == 0 or (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                c = ResourceClaim()
                c.CopyFrom(claim)
                c.status.ClearField("reservedFor")
                c.status.ClearField("allocation")
                c.status.ClearField("devices")
                try:
                    self.handle.client().update_object(c, "status")
                except Exception as e:  # noqa: BLE001 - any client failure is an Error status
                    return None, Status.error(e)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable()

    def scores_nothing(self, state: CycleState) -> bool:
        """Every node scores 0 (and stays 0 once normalized): the pod has no claim, or scoring is off."""
        if not self.features.prioritized_list:
            return True
        s = self._get_state(state)
        return not isinstance(s, Status) and not s.claims

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if not self.features.prioritized_list:
            return 0, None
        s = self._get_state(state)
        if isinstance(s, Status):
            return 0, s
        if not s.claims:
            return 0, None
        assert node_info.node is not None
        allocations = s.node_allocations.get(node_info.node.metadata.name)
        if allocations is None:
            return 0, None
        try:
            return compute_score(s.claims, allocations), None
        except ValueError as e:
            return 0, Status.error(e)

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._get_state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        to_allocate = s.to_allocate()
        if not to_allocate or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            return Status.error("claim allocation not found for node")
        if len(allocations) != len(to_allocate):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, {len(to_allocate)} claims to "
                f"allocate, want {len(to_allocate)} claims"
            )
        for (index, claim), allocation in zip(to_allocate, allocations, strict=True):
            s.informations_for_claim[index].allocation = allocation
            c = ResourceClaim()
            c.CopyFrom(claim)
            if resourceclaim.FINALIZER not in c.metadata.finalizers:
                c.metadata.finalizers.append(resourceclaim.FINALIZER)
            c.status.allocation.CopyFrom(allocation)
            try:
                self._signal_pending_allocation(claim.metadata.uid, c)
            except RuntimeError as e:
                return Status.error(f"internal error, couldn't signal allocation for claim {claim.metadata.name}: {e}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = self._get_state(state)
        if isinstance(s, Status) or not s.claims:
            return
        client = self.handle.client()
        for claim in s.claims:
            self._maybe_remove_pending_allocation(claim.metadata.uid, False)
            if _allocated(claim) and resourceclaim.is_reserved_for_pod(pod, claim):
                # kube removes the pod with a strategic-merge patch, which needs no fresh copy; here
                # the current claim is read and written back without the pod.
                current = client.get_object("ResourceClaim", f"{claim.metadata.namespace}/{claim.metadata.name}")
                if current is None or current.metadata.uid != claim.metadata.uid:
                    continue
                c = ResourceClaim()
                c.CopyFrom(current)
                keep = [r for r in c.status.reservedFor if r.uid != pod.metadata.uid]
                del c.status.reservedFor[:]
                c.status.reservedFor.extend(keep)
                # A failure is retried when the pod is scheduled again, as in kube.
                with contextlib.suppress(Exception):
                    client.update_object(c, "status")

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._get_state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        cleanups: list[str] = []
        for index, claim in enumerate(s.claims):
            if resourceclaim.is_reserved_for_pod(pod, claim):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod)
            except Exception as e:  # noqa: BLE001 - an Error status; Unreserve cleans up
                return Status.error(e)
            if s.informations_for_claim[index].allocation is not None:
                cleanups.append(claim.metadata.uid)
        st = self._wait_for_binding_conditions(s, pod, node_name)
        if st is not None:
            return st
        for uid in cleanups:
            self._maybe_remove_pending_allocation(uid, True)
        return None

    def _wait_for_binding_conditions(self, s: _StateData, pod: Pod, node_name: str) -> Status | None:
        """The end of PreBind: poll (every 5s, at most bindingTimeout) until every device with binding
        conditions has them true, none of its binding failure conditions true."""
        if not self.features.device_binding_and_status or not _has_binding_conditions(s.claims):
            return None
        self.handle.event_recorder().eventf(
            pod,
            None,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )
        deadline = self.monotonic() + self.binding_timeout
        try:
            while not self._is_pod_ready_for_binding(s):
                remaining = deadline - self.monotonic()
                if remaining <= 0 or self.handle.client().settles_synchronously:
                    # On the embedded cluster no driver sets device conditions after the writes: kube's
                    # outcome once bindingTimeout passed is this error.
                    return Status.error(f"{ERR_DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
                self.sleep(min(self.binding_poll_interval, remaining))
        except (DeviceBindingError, _ClaimError) as e:
            # Another scheduling attempt follows; its Filter finds the claim failed or timed out.
            return Status.error(str(e))
        return None

    def _is_pod_ready_for_binding(self, s: _StateData) -> bool:
        """isPodReadyForBinding; raises DeviceBindingError (failed or timed out) or _ClaimError."""
        for index, claim in enumerate(s.claims):
            current = self._get_claim(claim.metadata.namespace, claim.metadata.name)
            s.claims[index] = current
            if not is_claim_ready_for_binding(current):
                if self._is_claim_timeout(current):
                    raise DeviceBindingError(f"{ERR_DEVICE_BINDING_TIMEOUT}: claim={current.metadata.name}")
                return False
        return True

    def _is_claim_timeout(self, claim: ResourceClaim) -> bool:
        """isClaimTimeout: a device has binding conditions and allocationTimestamp + bindingTimeout passed."""
        if not self.features.device_binding_and_status:
            return False
        if not _allocated(claim) or not claim.status.allocation.HasField("allocationTimestamp"):
            return False
        ts = claim.status.allocation.allocationTimestamp
        allocated_at = ts.seconds + ts.nanos / 1e9
        return any(
            len(r.bindingConditions) > 0 and allocated_at + self.binding_timeout < self.now()
            for r in claim.status.allocation.devices.results
        )

    def _bind_claim(self, s: _StateData, index: int, pod: Pod) -> ResourceClaim:
        client = self.handle.client()
        claim = s.claims[index]
        allocation = s.informations_for_claim[index].allocation
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        last: Exception | None = None
        current: ResourceClaim = claim
        # retry.DefaultRetry: up to 5 attempts on conflicts, each after reading the claim again.
        for attempt in range(5):
            if attempt > 0:
                fresh = client.get_object("ResourceClaim", key)
                if fresh is None:
                    raise RuntimeError(
                        f"get updated claim {key} after conflict: resourceclaims.resource.k8s.io "
                        f'"{claim.metadata.name}" not found'
                    )
                current = fresh
            c = ResourceClaim()
            c.CopyFrom(current)
            if c.metadata.HasField("deletionTimestamp"):
                raise RuntimeError(f"claim {key} got deleted in the meantime")
            if allocation is not None:
                if _allocated(c):
                    raise RuntimeError(f"claim {key} got allocated elsewhere in the meantime")
                if resourceclaim.FINALIZER not in c.metadata.finalizers:
                    c.metadata.finalizers.append(resourceclaim.FINALIZER)
                    try:
                        updated = client.update_object(c)
                    except Exception as e:
                        if is_conflict(e):
                            last = e
                            continue
                        raise RuntimeError(f"add finalizer to claim {key}: {e}") from e
                    c = ResourceClaim()
                    c.CopyFrom(updated if updated is not None else c)
                c.status.allocation.CopyFrom(allocation)
            ref = c.status.reservedFor.add()
            ref.resource = "pods"
            ref.name = pod.metadata.name
            ref.uid = pod.metadata.uid
            # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on in 1.37.
            if not _allocated(c):
                raise RuntimeError(f"claim {key} got deallocated elsewhere in the meantime")
            if not c.status.allocation.HasField("allocationTimestamp"):
                c.status.allocation.allocationTimestamp.seconds = int(self.now())
            try:
                updated = client.update_object(c, "status")
            except Exception as e:
                if is_conflict(e):
                    last = e
                    continue
                what = (
                    "add allocation and reservation to claim" if allocation is not None else "add reservation to claim"
                )
                raise RuntimeError(f"{what} {key}: {e}") from e
            return updated if isinstance(updated, ResourceClaim) else c
        raise RuntimeError(str(last))


def _get_allocated_device_status(claim: ResourceClaim, result: Any) -> Any | None:
    for d in claim.status.devices:
        if (d.device, d.driver, d.pool) == (result.device, result.driver, result.pool):
            return d
    return None


def _find_condition(conditions: Sequence[Any], cond_type: str) -> Any | None:
    for c in conditions:
        if c.type == cond_type:
            return c
    return None


def _condition_true(conditions: Sequence[Any], cond_type: str) -> bool:
    c = _find_condition(conditions, cond_type)
    return c is not None and c.status == "True"


def is_claim_ready_for_binding(claim: ResourceClaim) -> bool:
    """isClaimReadyForBinding: all binding conditions true and no failure condition true; raises
    DeviceBindingError when a binding failure condition is true."""
    if not _allocated(claim):
        return False
    for r in claim.status.allocation.devices.results:
        if len(r.bindingConditions) == 0:
            continue
        status = _get_allocated_device_status(claim, r)
        if status is None:
            return False
        for cond in r.bindingFailureConditions:
            failed = _find_condition(status.conditions, cond)
            if failed is not None and failed.status == "True":
                raise DeviceBindingError(
                    f"{ERR_DEVICE_BINDING_FAILED}: claim={claim.metadata.name}, reason={failed.reason}, "
                    f"message={json.dumps(failed.message, ensure_ascii=False)}"
                )
        for cond in r.bindingConditions:
            if not _condition_true(status.conditions, cond):
                return False
    return True


def _has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    return any(
        len(r.bindingConditions) > 0 for c in claims if _allocated(c) for r in c.status.allocation.devices.results
    )


def compute_score(claims: Sequence[ResourceClaim], allocations: Sequence[Any]) -> int:
    """computeScore: the earlier a chosen firstAvailable subrequest, the higher the score."""
    score = 0
    unallocated = 0
    for claim in claims:
        if _allocated(claim):
            allocation = claim.status.allocation
        else:
            if unallocated >= len(allocations):
                raise ValueError(
                    f"number of allocations {len(allocations)} is smaller than number of claims needing allocation"
                )
            allocation = allocations[unallocated]
            unallocated += 1
        chosen = {r.request for r in allocation.devices.results if resourceclaim.is_sub_request_ref(r.request)}
        for req in claim.spec.devices.requests:
            if req.HasField("exactly"):
                continue
            for i, sub in enumerate(req.firstAvailable):
                if resourceclaim.create_sub_request_ref(req.name, sub.name) in chosen:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score
