"""Fluent builders for pods and nodes in tests (the counterpart of kube-scheduler's st.MakePod)."""

from __future__ import annotations

import itertools
from typing import Any

from wasmsched.api.types import Node, Pod, PriorityClass

_uid = itertools.count(1)


class PodWrapper:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self.pod = Pod()
        self.pod.metadata.name = name
        self.pod.metadata.namespace = namespace
        self.pod.metadata.uid = f"uid-{name}-{next(_uid)}"
        self.pod.spec.schedulerName = "default-scheduler"

    def obj(self) -> Pod:
        return self.pod

    def namespace(self, ns: str) -> PodWrapper:
        self.pod.metadata.namespace = ns
        return self

    def uid(self, uid: str) -> PodWrapper:
        self.pod.metadata.uid = uid
        return self

    def label(self, k: str, v: str) -> PodWrapper:
        self.pod.metadata.labels[k] = v
        return self

    def labels(self, labels: dict[str, str]) -> PodWrapper:
        self.pod.metadata.labels.update(labels)
        return self

    def node(self, name: str) -> PodWrapper:
        self.pod.spec.nodeName = name
        return self

    def node_selector(self, sel: dict[str, str]) -> PodWrapper:
        self.pod.spec.nodeSelector.update(sel)
        return self

    def priority(self, p: int) -> PodWrapper:
        """spec.priority itself: for objects given to the framework directly. A cluster's admission
        computes it from the pod's PriorityClass and refuses a different one (see priority_class)."""
        self.pod.spec.priority = p
        return self

    def priority_class(self, name: str) -> PodWrapper:
        self.pod.spec.priorityClassName = name
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self.pod.spec.schedulerName = name
        return self

    def owner_reference(self, name: str, api_version: str, kind: str) -> PodWrapper:
        """st's OwnerReference: the pod's only owner, its controller."""
        del self.pod.metadata.ownerReferences[:]
        ref = self.pod.metadata.ownerReferences.add()
        ref.apiVersion, ref.kind, ref.name, ref.controller = api_version, kind, name, True
        return self

    def scheduling_gates(self, *names: str) -> PodWrapper:
        for n in names:
            self.pod.spec.schedulingGates.add().name = n
        return self

    def container(self, image: str = "pause", name: str = "", **requests: str) -> PodWrapper:
        """Adds a container; requests as keyword args (cpu="100m", memory="1Gi")."""
        c = self.pod.spec.containers.add()
        c.name = name or f"c{len(self.pod.spec.containers)}"
        c.image = image
        for k, v in requests.items():
            c.resources.requests[k.replace("_", "-")].string = v
        return self

    def req(self, **requests: str) -> PodWrapper:
        """A container with these requests; resource names with '_' become '-' (ephemeral_storage)."""
        return self.container("pause", "", **requests)

    def res(self, requests: dict[str, str]) -> PodWrapper:
        c = self.pod.spec.containers.add()
        c.name = f"c{len(self.pod.spec.containers)}"
        c.image = "pause"
        for k, v in requests.items():
            c.resources.requests[k].string = v
        return self

    def init_req(self, requests: dict[str, str], sidecar: bool = False) -> PodWrapper:
        c = self.pod.spec.initContainers.add()
        c.name = f"init{len(self.pod.spec.initContainers)}"
        c.image = "pause"
        if sidecar:
            c.restartPolicy = "Always"
        for k, v in requests.items():
            c.resources.requests[k].string = v
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        if not self.pod.spec.containers:
            self.container()
        p = self.pod.spec.containers[0].ports.add()
        p.containerPort = port
        p.hostPort = port
        p.protocol = protocol
        if host_ip:
            p.hostIP = host_ip
        return self

    def toleration(self, key: str, value: str = "", effect: str = "", operator: str = "Equal") -> PodWrapper:
        t = self.pod.spec.tolerations.add()
        t.key, t.operator = key, operator
        if value:
            t.value = value
        if effect:
            t.effect = effect
        return self

    def node_affinity_in(self, key: str, values: list[str], operator: str = "In") -> PodWrapper:
        terms = self.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
        term = terms.nodeSelectorTerms[0] if terms.nodeSelectorTerms else terms.nodeSelectorTerms.add()
        r = term.matchExpressions.add()
        r.key, r.operator = key, operator
        r.values.extend(values)
        return self

    def preferred_node_affinity(self, weight: int, key: str, values: list[str],
                                operator: str = "In") -> PodWrapper:
        t = self.pod.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.add()
        t.weight = weight
        r = t.preference.matchExpressions.add()
        r.key, r.operator = key, operator
        r.values.extend(values)
        return self

    def _pod_term(self, kind: str, required: bool, weight: int, topology_key: str,
                  match_labels: dict[str, str], namespaces: list[str] | None) -> PodWrapper:
        aff = getattr(self.pod.spec.affinity, kind)
        if required:
            term = aff.requiredDuringSchedulingIgnoredDuringExecution.add()
        else:
            w = aff.preferredDuringSchedulingIgnoredDuringExecution.add()
            w.weight = weight
            term = w.podAffinityTerm
        term.topologyKey = topology_key
        term.labelSelector.matchLabels.update(match_labels)
        if namespaces:
            term.namespaces.extend(namespaces)
        return self

    def pod_affinity(self, topology_key: str, match_labels: dict[str, str],
                     namespaces: list[str] | None = None) -> PodWrapper:
        return self._pod_term("podAffinity", True, 0, topology_key, match_labels, namespaces)

    def pod_anti_affinity(self, topology_key: str, match_labels: dict[str, str],
                          namespaces: list[str] | None = None) -> PodWrapper:
        return self._pod_term("podAntiAffinity", True, 0, topology_key, match_labels, namespaces)

    def preferred_pod_affinity(self, weight: int, topology_key: str,
                               match_labels: dict[str, str]) -> PodWrapper:
        return self._pod_term("podAffinity", False, weight, topology_key, match_labels, None)

    def preferred_pod_anti_affinity(self, weight: int, topology_key: str,
                                    match_labels: dict[str, str]) -> PodWrapper:
        return self._pod_term("podAntiAffinity", False, weight, topology_key, match_labels, None)

    def spread_constraint(self, max_skew: int, topology_key: str, when_unsatisfiable: str,
                          match_labels: dict[str, str] | None, min_domains: int | None = None,
                          **fields: Any) -> PodWrapper:
        c = self.pod.spec.topologySpreadConstraints.add()
        c.maxSkew = max_skew
        c.topologyKey = topology_key
        c.whenUnsatisfiable = when_unsatisfiable
        if match_labels is not None:
            c.labelSelector.matchLabels.update(match_labels)
        if min_domains is not None:
            c.minDomains = min_domains
        for k, v in fields.items():
            if isinstance(v, list):
                getattr(c, k).extend(v)
            else:
                setattr(c, k, v)
        return self

    def nominated_node(self, name: str) -> PodWrapper:
        self.pod.status.nominatedNodeName = name
        return self

    def creation_timestamp(self, seconds: int) -> PodWrapper:
        self.pod.metadata.creationTimestamp.seconds = seconds
        return self

    def start_time(self, seconds: int) -> PodWrapper:
        self.pod.status.startTime.seconds = seconds
        return self

    def overhead(self, resources: dict[str, str]) -> PodWrapper:
        for k, v in resources.items():
            self.pod.spec.overhead[k].string = v
        return self

    def pvc(self, claim: str) -> PodWrapper:
        v = self.pod.spec.volumes.add()
        v.name = claim
        v.volumeSource.persistentVolumeClaim.claimName = claim
        return self


class NodeWrapper:
    def __init__(self, name: str) -> None:
        self.node = Node()
        self.node.metadata.name = name
        self.node.metadata.uid = f"node-uid-{name}"
        self.node.metadata.labels["kubernetes.io/hostname"] = name

    def obj(self) -> Node:
        return self.node

    def label(self, k: str, v: str) -> NodeWrapper:
        self.node.metadata.labels[k] = v
        return self

    def labels(self, labels: dict[str, str]) -> NodeWrapper:
        self.node.metadata.labels.update(labels)
        return self

    def capacity(self, **resources: str) -> NodeWrapper:
        """Sets capacity and allocatable; names with '_' become '-'."""
        for k, v in resources.items():
            name = k.replace("_", "-")
            self.node.status.capacity[name].string = v
            self.node.status.allocatable[name].string = v
        return self

    def res(self, resources: dict[str, str]) -> NodeWrapper:
        for k, v in resources.items():
            self.node.status.capacity[k].string = v
            self.node.status.allocatable[k].string = v
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeWrapper:
        t = self.node.spec.taints.add()
        t.key, t.effect = key, effect
        if value:
            t.value = value
        return self

    def unschedulable(self, v: bool = True) -> NodeWrapper:
        self.node.spec.unschedulable = v
        return self

    def image(self, size: int, *names: str) -> NodeWrapper:
        img = self.node.status.images.add()
        img.names.extend(names)
        img.sizeBytes = size
        return self


def make_pod(name: str, namespace: str = "default") -> PodWrapper:
    return PodWrapper(name, namespace)


def make_node(name: str) -> NodeWrapper:
    return NodeWrapper(name)


def make_priority_class(name: str, value: int, preemption_policy: str = "",
                        global_default: bool = False) -> PriorityClass:
    pc = PriorityClass()
    pc.metadata.name = name
    pc.value = value
    pc.globalDefault = global_default
    if preemption_policy:
        pc.preemptionPolicy = preemption_policy
    return pc
