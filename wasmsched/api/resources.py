"""Pod resource requests as k8s.io/component-helpers/resource.PodRequests computes them.

Quantities are summed exactly (in nano-units) and converted once at the end: cpu to
milli-units (MilliValue), everything else to units (Value), which is how kube-scheduler's
framework.Resource stores them. Status-based requests follow UseStatusResources=true
(InPlacePodVerticalScaling is GA); pod-level resources follow the PodLevelResources gate (on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from wasmsched.api.quantity import kube_milli_value, kube_value, nano_to_milli, nano_to_value, quantity_nano_value
from wasmsched.api.types import Container, Node, Pod
from wasmsched.api.validation import is_qualified_name

ResourceList = dict[str, int]
_NanoList = dict[str, int]

RESOURCE_CPU = "cpu"
RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_STORAGE = "storage"
RESOURCE_PODS = "pods"
RESOURCE_HUGEPAGES_PREFIX = "hugepages-"
RESOURCE_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what scoring assumes for a container
# that requests nothing.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NANO = 10**9
_DEFAULT_NON_ZERO: _NanoList = {
    RESOURCE_CPU: DEFAULT_MILLI_CPU_REQUEST * 10**6,
    RESOURCE_MEMORY: DEFAULT_MEMORY_REQUEST * _NANO,
}


def is_native_resource(name: str) -> bool:
    """Unprefixed names and *kubernetes.io/ names (v1helper.IsNativeResource)."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """Non-native, not "requests."-prefixed, qualified as a quota name (v1helper.IsExtendedResourceName)."""
    if is_native_resource(name) or name.startswith(DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(DEFAULT_RESOURCE_REQUESTS_PREFIX + name)


def is_hugepage_resource_name(name: str) -> bool:
    """Names starting with "hugepages-"."""
    return name.startswith(RESOURCE_HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    """Names starting with "attachable-volumes-"."""
    return name.startswith(RESOURCE_ATTACHABLE_VOLUMES_PREFIX)


def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, prefixed-native or attachable-volume names (v1helper.IsScalarResourceName)."""
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name
        or is_attachable_volume_resource_name(name)
    )


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* may be set at pod level."""
    return name in (RESOURCE_CPU, RESOURCE_MEMORY) or name.startswith(RESOURCE_HUGEPAGES_PREFIX)


def to_resource_list(nanos: Mapping[str, int]) -> ResourceList:
    """Nano-unit sums -> cpu in milli-units, everything else in units."""
    return {k: nano_to_milli(v) if k == RESOURCE_CPU else nano_to_value(v) for k, v in nanos.items()}


def _nanos(quantities: Mapping[str, object]) -> _NanoList:
    """A proto ResourceList (name -> Quantity message) in nano-units."""
    return {k: quantity_nano_value(q.string) for k, q in quantities.items()}  # type: ignore[attr-defined]


def _add(into: _NanoList, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: _NanoList, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _max(first: Mapping[str, int], *others: Mapping[str, int]) -> _NanoList:
    out = dict(first)
    for o in others:
        _max_into(out, o)
    return out


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """The PodResizePending condition says Infeasible."""
    for c in pod.status.conditions:
        if c.type == "PodResizePending":
            return c.reason == "Infeasible"
    return False


def _is_restartable_init_container(c: Container) -> bool:
    return c.HasField("restartPolicy") and c.restartPolicy == "Always"


class ContainerRequestInputs(NamedTuple):
    """What PodRequests reads of one container and its status, in nano-units."""

    spec: _NanoList  # resources.requests
    allocated: _NanoList | None  # status.allocatedResources, when the status has any
    actuated: _NanoList | None  # status.resources.requests, when the status has any
    restartable: bool  # an init container with restartPolicy Always (a sidecar)


class PodRequestInputs(NamedTuple):
    """What PodRequests reads of a pod, read from the object once (reading protobuf fields costs
    microseconds): every variant of the pod's requests is computed from it."""

    containers: tuple[ContainerRequestInputs, ...]
    init_containers: tuple[ContainerRequestInputs, ...]
    has_statuses: bool  # any container status
    infeasible: bool  # is_pod_resize_infeasible
    pod_level: _NanoList  # spec.resources.requests of the resources that may be set at pod level
    overhead: _NanoList  # spec.overhead


def _container_statuses(pod: Pod) -> dict[str, object]:
    """Container statuses by name; regular containers win over init containers, as findContainerStatus."""
    out: dict[str, object] = {}
    for cs in pod.status.initContainerStatuses:
        out[cs.name] = cs
    for cs in pod.status.containerStatuses:
        out[cs.name] = cs
    return out


def _container_inputs(c: Container, statuses: Mapping[str, object], restartable: bool) -> ContainerRequestInputs:
    spec = _nanos(c.resources.requests)
    cs = statuses.get(c.name) if statuses else None
    if cs is None:
        return ContainerRequestInputs(spec, None, None, restartable)
    allocated = _nanos(cs.allocatedResources) if cs.allocatedResources else None  # type: ignore[attr-defined]
    actuated = None
    if cs.HasField("resources") and cs.resources.requests:  # type: ignore[attr-defined]
        actuated = _nanos(cs.resources.requests)  # type: ignore[attr-defined]
    return ContainerRequestInputs(spec, allocated, actuated, restartable)


def pod_request_inputs(pod: Pod) -> PodRequestInputs:
    """The pod's PodRequestInputs."""
    spec = pod.spec
    statuses = _container_statuses(pod)
    pod_level: _NanoList = {}
    if spec.HasField("resources"):
        pod_level = {k: quantity_nano_value(q.string) for k, q in spec.resources.requests.items()
                     if is_supported_pod_level_resource(k)}
    return PodRequestInputs(
        tuple(_container_inputs(c, statuses, False) for c in spec.containers),
        tuple(_container_inputs(c, statuses, _is_restartable_init_container(c)) for c in spec.initContainers),
        bool(statuses),
        is_pod_resize_infeasible(pod),
        pod_level,
        _nanos(spec.overhead) if spec.overhead else {},
    )


def _status_resources(pod: Pod, infeasible: bool) -> list[tuple[str, bytes | None, list[tuple[str, str]]]]:
    # Unless a resize is infeasible, a status without resources reads as no status (its container's
    # allocated and actuated requests are the spec's), so the kubelet's first status changes nothing.
    return [(cs.name, cs.resources.SerializeToString(deterministic=True) if cs.HasField("resources") else None,
             sorted((k, q.string) for k, q in cs.allocatedResources.items()))
            for statuses in (pod.status.initContainerStatuses, pod.status.containerStatuses) for cs in statuses
            if infeasible or cs.HasField("resources") or cs.allocatedResources]


def same_request_inputs(a: Pod, b: Pod) -> bool:
    """True when the two pods' PodRequestInputs (and so their requests and everything PodInfo reads of
    the spec) cannot differ: the same spec, the same resources in their container statuses and the same
    resize verdict. Cheaper than reading either's inputs: a kubelet's status update (phase, readiness,
    IPs) of a bound pod changes none of them."""
    if a.spec != b.spec:
        return False
    infeasible = is_pod_resize_infeasible(a)
    return infeasible == is_pod_resize_infeasible(b) and \
        _status_resources(a, infeasible) == _status_resources(b, infeasible)


# (container, resize infeasible) -> its requests in nano-units, or None
_RequestsFn = Callable[[ContainerRequestInputs, bool], _NanoList | None]


def _spec_requests(c: ContainerRequestInputs, _infeasible: bool) -> _NanoList | None:
    return c.spec


def _allocated_requests(c: ContainerRequestInputs, infeasible: bool) -> _NanoList | None:
    if c.allocated is not None:
        return c.allocated
    return None if infeasible else c.spec


def _actuated_requests(c: ContainerRequestInputs, infeasible: bool) -> _NanoList | None:
    if c.actuated is not None:
        return c.actuated
    return _allocated_requests(c, infeasible)


def _apply_non_missing(reqs: _NanoList | None, non_missing: Mapping[str, int]) -> _NanoList:
    out = dict(reqs or {})
    for k, v in non_missing.items():
        if reqs is None or k not in reqs:
            out[k] = out.get(k, 0) + v
    return out


def _aggregate(inputs: PodRequestInputs, fn: _RequestsFn, non_missing: Mapping[str, int] | None) -> _NanoList:
    """aggregateContainerResourcesByFn: containers summed, init containers as a max, sidecars accumulated."""
    infeasible = inputs.infeasible

    def requests_of(c: ContainerRequestInputs) -> _NanoList:
        reqs = fn(c, infeasible)
        if non_missing:
            return _apply_non_missing(reqs, non_missing)
        return reqs or {}

    result: _NanoList = {}
    for c in inputs.containers:
        _add(result, requests_of(c))
    if not inputs.init_containers:
        return result
    restartable: _NanoList = {}
    init_max: _NanoList = {}
    for c in inputs.init_containers:
        reqs = requests_of(c)
        if c.restartable:
            # sidecars keep running: they add to the pod total and to every later init step
            _add(result, reqs)
            _add(restartable, reqs)
            reqs = restartable
        else:
            combined = dict(reqs)
            _add(combined, restartable)
            reqs = combined
        _max_into(init_max, reqs)
    _max_into(result, init_max)
    return result


def _aggregate_container_requests(
    inputs: PodRequestInputs, use_status_resources: bool, non_missing: Mapping[str, int] | None
) -> _NanoList:
    """AggregateContainerRequests (without DRA node-allocatable claims)."""
    spec = _aggregate(inputs, _spec_requests, non_missing)
    if not use_status_resources or (not inputs.has_statuses and not inputs.infeasible):
        # No container status (a pod not yet running): allocated and actuated requests are the spec's.
        return spec
    allocated = _aggregate(inputs, _allocated_requests, non_missing)
    actuated = _aggregate(inputs, _actuated_requests, non_missing)
    if inputs.infeasible:
        return _max(actuated, allocated)
    return _max(spec, actuated, allocated)


def pod_request_nanos(
    pod: Pod | PodRequestInputs,
    *,
    non_missing: Mapping[str, int] | None = None,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
    use_status_resources: bool = True,
) -> _NanoList:
    """PodRequests in nano-units; non_missing (nano-units) fills requests a container leaves unset. `pod`
    may be its PodRequestInputs, read before."""
    inputs = pod if isinstance(pod, PodRequestInputs) else pod_request_inputs(pod)
    reqs = _aggregate_container_requests(inputs, use_status_resources, non_missing)
    if not skip_pod_level and inputs.pod_level:
        reqs.update(inputs.pod_level)
    if not exclude_overhead and inputs.overhead:
        _add(reqs, inputs.overhead)
    return reqs


def pod_requests(
    pod: Pod | PodRequestInputs,
    *,
    non_missing: Mapping[str, int] | None = None,
    exclude_overhead: bool = False,
    skip_pod_level: bool = False,
    use_status_resources: bool = True,
) -> ResourceList:
    """resource.PodRequests as kube-scheduler calls it: cpu in milli-units, the rest in units."""
    return to_resource_list(
        pod_request_nanos(
            pod,
            non_missing=non_missing,
            exclude_overhead=exclude_overhead,
            skip_pod_level=skip_pod_level,
            use_status_resources=use_status_resources,
        )
    )


def non_missing_defaults(requests: Mapping[str, int], pod_level_set: bool) -> _NanoList:
    """getNonMissingContainerRequests: per-container cpu/memory defaults used for non-zero requests."""
    if not pod_level_set:
        return dict(_DEFAULT_NON_ZERO)
    return {k: v for k, v in _DEFAULT_NON_ZERO.items() if k not in requests}


def pod_nonzero_requests(pod: Pod | PodRequestInputs) -> tuple[int, int]:
    """(milli-cpu, memory) with the scheduler's defaults for unset container requests (calculateResource)."""
    inputs = pod if isinstance(pod, PodRequestInputs) else pod_request_inputs(pod)
    nanos = pod_request_nanos(inputs)
    defaults = non_missing_defaults(nanos, bool(inputs.pod_level))
    if defaults:
        nanos = pod_request_nanos(inputs, non_missing=defaults)
    return nano_to_milli(nanos.get(RESOURCE_CPU, 0)), nano_to_value(nanos.get(RESOURCE_MEMORY, 0))


def pod_requests_with_defaults(pod: Pod | PodRequestInputs, skip_pod_level: bool = False) -> ResourceList:
    """PodRequests with 100m cpu / 200Mi memory for every container missing them (scoring's non-zero view)."""
    return pod_requests(pod, non_missing=_DEFAULT_NON_ZERO, skip_pod_level=skip_pod_level)


def quantity_map_to_resource_list(quantities: Mapping[str, object]) -> ResourceList:
    """A proto map of Quantities (e.g. node.status.allocatable) as a ResourceList."""
    return to_resource_list(_nanos(quantities))


def node_allocatable(node: Node) -> ResourceList:
    """node.status.allocatable with cpu in milli-units and the rest in units: each quantity's MilliValue() or
    Value() as kube-scheduler's NodeInfo takes it, in kube's int64 arithmetic (a node reporting "1e30" cpu
    has 0 to kube-scheduler: quantity.kube_scaled_value)."""
    return {k: kube_milli_value(q.string) if k == RESOURCE_CPU else kube_value(q.string)
            for k, q in node.status.allocatable.items()}

