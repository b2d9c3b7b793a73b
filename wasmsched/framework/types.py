"""PodInfo, NodeInfo, Resource and friends, as framework/types.go.

They precompute what plugins need from the protobuf objects (requests as integers, parsed affinity
terms, host ports, image states) once per object version, so plugins never re-parse per cycle.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api import resources as res
from wasmsched.api.labels import Selector, compile_label_selector
from wasmsched.api.types import Node, Pod, pod_key, pod_priority
from wasmsched.framework.memo import Memo, MemoKey, new_memo
from wasmsched.framework.pod_shape import DEFAULT_BIND_ALL_HOST_IP, DEFAULT_PROTOCOL, PodShape, read_pod_shape

RESOURCE_CPU = "cpu"
RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_PODS = "pods"

_generation = itertools.count(1)

# PodInfo.memo() entry: what api.resources.pod_requests(pod) gives (shared: read only).
POD_REQUESTS_MEMO: MemoKey[res.ResourceList] = MemoKey("api.resources.pod_requests")
# PodInfo.memo() entry: api.resources.pod_request_inputs(pod), what every variant of its requests is computed from.
POD_REQUEST_INPUTS_MEMO: MemoKey[res.PodRequestInputs] = MemoKey("api.resources.pod_request_inputs")


def next_generation() -> int:
    return next(_generation)


@dataclass(slots=True)
class Resource:
    """Compute resources in integers: cpu in milli-CPU, everything else in units."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, rl: Mapping[str, int]) -> Resource:
        r = cls()
        r.add_list(rl)
        return r

    def add_list(self, rl: Mapping[str, int]) -> None:
        for name, v in rl.items():
            if name == RESOURCE_CPU:
                self.milli_cpu += v
            elif name == RESOURCE_MEMORY:
                self.memory += v
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage += v
            elif name == RESOURCE_PODS:
                self.allowed_pod_number += v
            elif res.is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + v

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        for k, v in other.scalar_resources.items():
            self.scalar_resources[k] = self.scalar_resources.get(k, 0) + v

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        for k, v in other.scalar_resources.items():
            self.scalar_resources[k] = self.scalar_resources.get(k, 0) - v

    def get(self, name: str) -> int:
        if name == RESOURCE_CPU:
            return self.milli_cpu
        if name == RESOURCE_MEMORY:
            return self.memory
        if name == RESOURCE_EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == RESOURCE_PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
            dict(self.scalar_resources),
        )


@dataclass(slots=True)
class AffinityTerm:
    """A PodAffinityTerm with its selectors compiled (framework.AffinityTerm)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        if pod.metadata.namespace in self.namespaces or (
            ns_labels is not None and self.namespace_selector.matches(ns_labels)
        ):
            return self.selector.matches(pod.metadata.labels)
        return False


@dataclass(slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _affinity_term(pod: Pod, term: Any) -> AffinityTerm:
    if len(term.namespaces) == 0 and not term.HasField("namespaceSelector"):
        namespaces = frozenset([pod.metadata.namespace])
    else:
        namespaces = frozenset(term.namespaces)
    selector = compile_label_selector(term.labelSelector if term.HasField("labelSelector") else None)
    ns_selector = compile_label_selector(term.namespaceSelector if term.HasField("namespaceSelector") else None)
    return AffinityTerm(namespaces, selector, term.topologyKey, ns_selector)


class PodInfo:
    """A pod with what plugins need precomputed (framework.PodInfo)."""

    __slots__ = (
        "_cache",
        "host_ports",
        "key",
        "non_zero_requests",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "priority",
        "requests",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "shape",
    )

    def __init__(self, pod: Pod, shape: PodShape | None = None) -> None:
        """`shape`: the pod's PodShape when the caller has it (PodShapes.of(pod))."""
        self.pod = pod
        self.key = pod_key(pod)
        # What is read of the spec and status, shared with the pods of the same shape (the queue's PodShapes).
        if shape is None:
            shape = read_pod_shape(pod)
        self.shape = shape
        requests = shape.requests
        self.requests = Resource.from_list(requests)
        cpu0, mem0 = shape.non_zero_requests
        self.non_zero_requests = Resource(milli_cpu=cpu0, memory=mem0)
        self.priority = pod_priority(pod)
        self.host_ports = shape.host_ports
        # A per-object-version memo for plugins and the wasm host (e.g. serialized bytes).
        self._cache = new_memo((POD_REQUESTS_MEMO, requests), (POD_REQUEST_INPUTS_MEMO, shape.request_inputs))
        aff = pod.spec.affinity
        self.required_affinity_terms: list[AffinityTerm] = []
        self.required_anti_affinity_terms: list[AffinityTerm] = []
        self.preferred_affinity_terms: list[WeightedAffinityTerm] = []
        self.preferred_anti_affinity_terms: list[WeightedAffinityTerm] = []
        if pod.spec.HasField("affinity"):
            if aff.HasField("podAffinity"):
                pa = aff.podAffinity
                self.required_affinity_terms = [
                    _affinity_term(pod, t) for t in pa.requiredDuringSchedulingIgnoredDuringExecution
                ]
                self.preferred_affinity_terms = [
                    WeightedAffinityTerm(_affinity_term(pod, w.podAffinityTerm), w.weight)
                    for w in pa.preferredDuringSchedulingIgnoredDuringExecution
                ]
            if aff.HasField("podAntiAffinity"):
                paa = aff.podAntiAffinity
                self.required_anti_affinity_terms = [
                    _affinity_term(pod, t) for t in paa.requiredDuringSchedulingIgnoredDuringExecution
                ]
                self.preferred_anti_affinity_terms = [
                    WeightedAffinityTerm(_affinity_term(pod, w.podAffinityTerm), w.weight)
                    for w in paa.preferredDuringSchedulingIgnoredDuringExecution
                ]

    def with_pod(self, pod: Pod, *, same_shape: bool = False) -> PodInfo:
        """A PodInfo of `pod`, a copy of this one's pod differing only in fields nothing here is computed
        from (the assumed pod: spec.nodeName set), without computing it all again. Its memo is new.
        `same_shape`: the spec is equal too and the requests read the same (resources.same_request_inputs,
        a status update by the kubelet), so the plugins' shape memos hold as well."""
        c = PodInfo.__new__(PodInfo)
        c.pod = pod
        c.key = self.key
        c.requests = self.requests
        c.non_zero_requests = self.non_zero_requests
        c.priority = self.priority
        c.host_ports = self.host_ports
        # The assumed pod's spec differs (nodeName): what was read holds, plugins' values are its own.
        c.shape = self.shape if same_shape else dataclasses.replace(self.shape, memo=new_memo())
        c._cache = new_memo()
        c.required_affinity_terms = self.required_affinity_terms
        c.required_anti_affinity_terms = self.required_anti_affinity_terms
        c.preferred_affinity_terms = self.preferred_affinity_terms
        c.preferred_anti_affinity_terms = self.preferred_anti_affinity_terms
        return c

    @property
    def name(self) -> str:
        return self.pod.metadata.name

    @property
    def namespace(self) -> str:
        return self.pod.metadata.namespace

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid or self.key

    def has_affinity(self) -> bool:
        a = self.pod.spec.affinity
        return self.pod.spec.HasField("affinity") and (a.HasField("podAffinity") or a.HasField("podAntiAffinity"))

    def memo(self) -> Memo:
        return self._cache

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


def get_pod_key(pod: Pod) -> str:
    return pod.metadata.uid or pod_key(pod)


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue with its attempt bookkeeping (framework.QueuedPodInfo)."""

    pod_info: PodInfo
    timestamp: float = field(default_factory=time.monotonic)
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_message: str = ""  # the gating PreEnqueue plugin's status message (kube only logs it)
    consecutive_errors_count: int = 0

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    def gated(self) -> bool:
        return bool(self.gating_plugin)


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


class HostPortInfo:
    """Used host ports per IP, with 0.0.0.0 conflicting with every IP (framework.HostPortInfo).

    A set, as kube's: two pods of one node using the same host port (possible only for pods bound
    without the scheduler) hold it once, and removing either frees it. Preemption's dry run depends on
    this: kube finds room for a preemptor by evicting just one of them.
    """

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, set[tuple[str, int]]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        self._ports.setdefault(ip or DEFAULT_BIND_ALL_HOST_IP, set()).add((protocol or DEFAULT_PROTOCOL, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = ip or DEFAULT_BIND_ALL_HOST_IP, protocol or DEFAULT_PROTOCOL
        d = self._ports.get(ip)
        if not d:
            return
        d.discard((protocol, port))
        if not d:
            del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        key = (protocol or DEFAULT_PROTOCOL, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(key in d for d in self._ports.values())
        return key in self._ports.get(ip, {}) or key in self._ports.get(DEFAULT_BIND_ALL_HOST_IP, {})

    def __len__(self) -> int:
        return sum(len(d) for d in self._ports.values())

    def clone(self) -> HostPortInfo:
        c = HostPortInfo()
        if self._ports:
            c._ports = {ip: set(d) for ip, d in self._ports.items()}
        return c


class NodeInfo:
    """A node with the pods on it and their aggregate requests (framework.NodeInfo)."""

    __slots__ = (
        "_cache",
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: Node | None = None
        # The node's name as a plain attribute: it is read for every node in every cycle.
        self.name = ""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        self._cache = new_memo()
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod_info(p)

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = Resource.from_list(res.node_allocatable(node))
        self._cache = new_memo()
        self.generation = next_generation()

    def remove_node(self) -> None:
        self.node = None
        self.name = ""
        self._cache = new_memo()
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> PodInfo:
        pi = PodInfo(pod)
        self.add_pod_info(pi)
        return pi

    def add_pod_info(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity():
            self.pods_with_affinity.append(pi)
        if pi.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def remove_pod(self, pod: Pod) -> bool:
        key = get_pod_key(pod)
        for i, pi in enumerate(self.pods):
            if get_pod_key(pi.pod) == key:
                del self.pods[i]
                self.pods_with_affinity = [p for p in self.pods_with_affinity if p is not pi]
                self.pods_with_required_anti_affinity = [
                    p for p in self.pods_with_required_anti_affinity if p is not pi
                ]
                self._update(pi, -1)
                return True
        return False

    def _update(self, pi: PodInfo, sign: int) -> None:
        if sign > 0:
            self.requested.add(pi.requests)
            self.non_zero_requested.add(pi.non_zero_requests)
            for ip, proto, port in pi.host_ports:
                self.used_ports.add(ip, proto, port)
        else:
            self.requested.sub(pi.requests)
            self.non_zero_requested.sub(pi.non_zero_requests)
            for ip, proto, port in pi.host_ports:
                self.used_ports.remove(ip, proto, port)
        for v in pi.pod.spec.volumes:
            if v.volumeSource.HasField("persistentVolumeClaim"):
                k = f"{pi.namespace}/{v.volumeSource.persistentVolumeClaim.claimName}"
                n = self.pvc_ref_counts.get(k, 0) + sign
                if n <= 0:
                    self.pvc_ref_counts.pop(k, None)
                else:
                    self.pvc_ref_counts[k] = n
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable.clone()
        c.image_states = dict(self.image_states)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c._cache = self._cache
        return c

    def memo(self) -> Memo:
        """Per-node-version memo (cleared when the node object changes)."""
        return self._cache

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
