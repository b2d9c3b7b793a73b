"""What the generator's parts share: the tunable probabilities, the feature tags, the value pools, the
random source and the facts about the cluster built so far."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

# The scheduler name of a config's second profile (pods sometimes ask for it, also without a config).
SECOND_SCHEDULER = "second-scheduler"
# A schedulerName no profile has: such pods are skipped by both sides.
UNKNOWN_SCHEDULER = "unknown-scheduler"

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
RACK = "example.com/rack"  # a custom topology key
ZONES = ("zone-a", "zone-b", "zone-c")
REGION_OF = {"zone-a": "region-1", "zone-b": "region-1", "zone-c": "region-2"}
DISKS = ("ssd", "hdd")
RACKS = ("rack-0", "rack-1", "rack-2")
TIERS = ("1", "2", "3", "4", "5")  # numeric node label values, for Gt/Lt

GPU = "example.com/gpu"
HUGEPAGES = "hugepages-2Mi"
EPHEMERAL = "ephemeral-storage"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"

APPS = ("web", "db", "cache", "batch")
TEMPLATE_HASH = "pod-template-hash"
# (key, possible values) of the taints nodes get and pods tolerate; "" is a taint without a value.
TAINT_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dedicated", ("gpu", "infra")),
    ("example.com/special", ("true", "")),
    ("team", ("a", "b")),
)
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# Small pools, so that equal values (ties) and exact fits are frequent. cpu in millicores, memory in Mi.
CPU_REQUESTS = (0, 100, 250, 500, 1000, 2000, 4000)
MEMORY_REQUESTS = (0, 64, 512, 1024, 4096)
NODE_CPU = (1000, 2000, 3500, 4000, 8000)
NODE_MEMORY = (1024, 2048, 4096, 8192, 16384)

# (name a pod uses, names the node reports, size in bytes). Sizes straddle ImageLocality's 23 MB floor
# and 1000 MB ceiling; "busybox" is untagged (normalized to busybox:latest).
IMAGES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("registry.k8s.io/pause:3.10", ("registry.k8s.io/pause:3.10",), 736_000),
    ("busybox", ("docker.io/library/busybox:latest", "busybox:latest"), 4_400_000),
    ("nginx:1.27", ("docker.io/library/nginx:1.27", "nginx:1.27"), 72_000_000),
    ("redis:7.2", ("redis:7.2",), 45_000_000),
    ("postgres:16", ("docker.io/library/postgres:16", "postgres:16"), 430_000_000),
    ("example.com/app:v1", ("example.com/app:v1",), 310_000_000),
    ("example.com/ml/trainer:v2", ("example.com/ml/trainer:v2",), 2_600_000_000),
)
NOT_ON_NODES_IMAGE = "example.com/never-pulled:v9"
LARGE_IMAGE_BYTES = 1000 * 1024 * 1024

# creationTimestamp of the first object; later ones one second more each, in output order.
BASE_TIME = 1_735_689_600  # 2025-01-01T00:00:00Z
_UID_NAMESPACE = uuid.UUID("0b0c6a7e-4f1d-4d8e-9c55-d1ff0a5e7c21")


@dataclass
class Knobs:
    """Probabilities (0..1) of each feature; per case unless they say per node or per pod."""

    config: float = 0.5
    second_profile: float = 0.25  # of a config
    pod_second_scheduler: float = 0.3  # per pending pod, with a second profile
    pod_unknown_scheduler: float = 0.02  # per pending pod
    extra_namespaces: float = 0.5
    priority_classes: float = 0.7
    global_default: float = 0.15
    preemption_policy_never: float = 0.2
    preemption_scenario: float = 0.35
    workloads: float = 0.45
    pdbs: float = 0.5
    # nodes
    node_taints: float = 0.25
    node_unschedulable: float = 0.06
    node_pods_limit: float = 0.2
    node_gpu: float = 0.3
    node_hugepages: float = 0.2
    node_ephemeral: float = 0.6
    node_images: float = 0.7
    node_zone: float = 0.85
    node_hostname: float = 0.95
    # pods
    cpu_request: float = 0.75
    memory_request: float = 0.6
    limits_only: float = 0.12
    limits_above_requests: float = 0.15
    extra_containers: float = 0.2
    gpu_request: float = 0.08
    hugepages_request: float = 0.04
    ephemeral_request: float = 0.06
    init_containers: float = 0.15
    sidecar: float = 0.5  # of an init container
    overhead: float = 0.08
    pod_level_resources: float = 0.06
    host_ports: float = 0.15
    tolerations: float = 0.3
    node_selector: float = 0.15
    node_affinity: float = 0.25
    spread: float = 0.25
    pod_affinity: float = 0.25
    running_pod_affinity: float = 0.2
    scheduling_gates: float = 0.08
    nominated_node: float = 0.1
    priority_class_name: float = 0.6
    stored_priority: float = 0.25  # spec.priority and preemptionPolicy given, as admission stores them
    quantity_variants: float = 0.3  # "0.5" for 500m, "1024Mi" for 1Gi, bytes for Mi
    # storage (volumes.py; drawn from the case's second random source)
    storage: float = 0.45
    pod_volumes: float = 0.5  # per pod, in a case with storage
    # devices (devices.py; drawn from the case's third random source)
    devices: float = 0.35
    pod_claims: float = 0.6  # per pending pod, in a case with devices
    running_pod_claims: float = 0.4  # per running pod on a node with devices


DEFAULT_KNOBS = Knobs()

# Every tag the generator can put in Case.features (the coverage test checks each one appears).
FEATURES: frozenset[str] = frozenset(
    {
        # resources
        "req.cpu", "req.memory", "req.none", "limits_only", "limits_above_requests", "multi_container",
        "extended.node", "extended.pod", "hugepages.node", "hugepages.pod", "ephemeral.node",
        "ephemeral.pod", "init_container", "sidecar", "overhead", "pod_level_resources", "pods_limit",
        # taints and tolerations
        "taint.NoSchedule", "taint.PreferNoSchedule", "taint.NoExecute", "toleration.Equal",
        "toleration.exists_key", "toleration.exists_all", "toleration.empty_effect", "toleration.seconds",
        "toleration.unschedulable", "node.unschedulable", "taint.unschedulable",
        # node labels and affinity
        "node.zone", "node.region", "node.rack", "node.no_hostname", "node_selector", "node_affinity.required",
        "node_affinity.preferred", "op.In", "op.NotIn", "op.Exists", "op.DoesNotExist", "op.Gt", "op.Lt",
        "match_fields",
        # host ports
        "host_port.pending", "host_port.running", "host_port.udp", "host_port.host_ip",
        # images
        "image.node", "image.untagged", "image.large", "image.not_on_nodes",
        # topology spread
        "spread.DoNotSchedule", "spread.ScheduleAnyway", "spread.zone", "spread.hostname", "spread.custom",
        "spread.min_domains", "spread.node_affinity_policy", "spread.node_taints_policy",
        "spread.match_label_keys", "spread.match_expressions", "spread.no_selector", "workload.service",
        "workload.replicaset", "workload.replicationcontroller", "workload.statefulset", "owner_reference",
        # inter-pod affinity
        "pod_affinity.required", "pod_affinity.preferred", "pod_anti_affinity.required",
        "pod_anti_affinity.preferred", "interpod.running", "interpod.namespaces", "interpod.namespace_selector",
        "interpod.namespace_selector_empty", "interpod.match_label_keys", "interpod.mismatch_label_keys",
        "interpod.zone", "interpod.hostname", "interpod.match_expressions",
        # priorities and disruption budgets
        "priority_class", "priority_class.global_default", "priority_class.never", "priority_class_name",
        "priority.stored",
        "pdb", "pdb.allowed_zero", "pdb.allowed_positive", "pdb.min_available", "pdb.max_unavailable",
        "pdb.percent", "preemption_scenario",
        # queueing
        "scheduling_gates", "nominated_node", "scheduler_name.second", "scheduler_name.unknown",
        "namespace.extra",
        # configuration
        "config", "config.fit.LeastAllocated", "config.fit.MostAllocated", "config.fit.RequestedToCapacityRatio",
        "config.fit.extended", "config.fit.ignored", "config.balanced", "config.added_affinity",
        "config.spread.list", "config.spread.system", "config.interpod", "config.preemption", "config.weights",
        "config.disabled", "config.no_score", "config.second_profile",
        # storage
        "volume.csidriver", "volume.csidriver.prevent_if_missing", "volume.storage_class", "volume.class.wffc",
        "volume.class.immediate", "volume.class.allowed_topologies", "volume.csinode",
        "volume.csinode.allocatable", "volume.csinode.migrated", "volume.pv.zone", "volume.pv.zone_beta",
        "volume.pv.multi_zone", "volume.pv.region", "volume.pv.node_affinity.hostname",
        "volume.pv.node_affinity.zone", "volume.rwop", "volume.pv.csi", "volume.pv.gce_pd", "volume.pv.aws_ebs",
        "volume.pv.local", "volume.pv.available", "volume.pvc.bound", "volume.pvc.missing_pv",
        "volume.pvc.unbound", "volume.pvc.no_class", "volume.pvc.missing_class", "volume.attachment",
        "volume.pod.pvc", "volume.pod.pvc_unbound", "volume.pod.pvc_missing", "volume.pod.gce_pd",
        "volume.pod.read_only",
        "volume.pod.aws_ebs", "volume.pod.csi_ephemeral",
        # devices
        "dra.class.driver", "dra.class.string_attribute", "dra.class.int_attribute", "dra.class.bool_attribute",
        "dra.class.two_selectors", "dra.slice.node", "dra.slice.all_nodes", "dra.slice.node_selector",
        "dra.claim.allocated", "dra.claim.missing_class", "dra.claim.all", "dra.claim.exact_count",
        "dra.claim.selector", "dra.claim.shared", "dra.claim.missing", "dra.claim.match_attribute",
        "dra.pod.claim", "dra.class.multi_driver", "dra.class.any", "dra.device.multi_allocation",
        "dra.device.policy_none", "dra.device.policy_default", "dra.device.policy_range", "dra.device.policy_values",
        "dra.device.taint", "dra.slice.outdated", "dra.slice.invalid", "dra.slice.incomplete", "dra.slice.several",
        "dra.slice.counters", "dra.slice.several_pools", "dra.claim.allocated_share", "dra.claim.capacity",
        "dra.claim.toleration", "dra.claim.first_available", "dra.claim.distinct_attribute",
    }
)  # fmt: skip


@dataclass
class NodeFacts:
    name: str
    labels: dict[str, str]
    cpu: int  # allocatable millicores
    memory: int  # allocatable Mi
    pods: int
    gpu: int
    taints: list[dict[str, str]]
    unschedulable: bool
    used_cpu: int = 0
    used_memory: int = 0
    used_pods: int = 0


@dataclass
class Workload:
    """A Service, ReplicaSet, ReplicationController or StatefulSet selecting the pods of one app."""

    kind: str
    namespace: str
    name: str
    app: str
    template_hash: str | None = None


@dataclass
class Ctx:
    seed: int
    rng: random.Random
    knobs: Knobs
    features: set[str] = field(default_factory=set)
    namespaces: list[str] = field(default_factory=lambda: ["default"])
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    priority_classes: dict[str, int] = field(default_factory=dict)
    preemption_policies: dict[str, str] = field(default_factory=dict)
    global_default: str | None = None
    nodes: list[NodeFacts] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    second_profile: bool = False

    def tag(self, feature: str) -> None:
        if feature not in FEATURES:
            raise KeyError(f"generator feature {feature!r} is not listed in FEATURES")
        self.features.add(feature)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def uid(self, kind: str, namespace: str, name: str) -> str:
        """Deterministic per seed and object, so owner references can name a controller's uid."""
        return str(uuid.uuid5(_UID_NAMESPACE, f"{self.seed}/{kind}/{namespace}/{name}"))

    def cpu(self, millis: int) -> str:
        if millis % 1000 == 0:
            return f"{millis // 1000}" if not self.chance(self.knobs.quantity_variants) else f"{millis}m"
        if millis % 100 == 0 and self.chance(self.knobs.quantity_variants):
            return f"{millis / 1000:g}"
        return f"{millis}m"

    def memory(self, mebibytes: int) -> str:
        if self.chance(self.knobs.quantity_variants):
            return str(mebibytes * 1024 * 1024)
        if mebibytes % 1024 == 0 and mebibytes and not self.chance(self.knobs.quantity_variants):
            return f"{mebibytes // 1024}Gi"
        return f"{mebibytes}Mi"


def pick_some(rng: random.Random, items: list[Any] | tuple[Any, ...], lo: int, hi: int) -> list[Any]:
    """lo..hi distinct items (fewer if there are not enough), in a random order."""
    n = min(len(items), rng.randint(lo, hi))
    return rng.sample(list(items), n)
