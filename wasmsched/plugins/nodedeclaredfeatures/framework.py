"""The node-declared-features framework: component-helpers nodedeclaredfeatures/framework.go and
types/types.go.

A Feature knows whether a node provides it (from the kubelet's configuration: Discover) and whether
a pod needs it to be scheduled (InferForScheduling) or updated (InferForUpdate). Kubelets publish
the features they provide in node.status.declaredFeatures; the scheduler keeps a pod off nodes that
lack one it needs. A feature with a MaxVersion stops being required once the target version is past
it (every supported node then has it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from wasmsched.api.types import Node, PodSpec
from wasmsched.plugins.nodedeclaredfeatures.featureset import FeatureMapper, FeatureSet
from wasmsched.plugins.nodedeclaredfeatures.version import Version


@dataclass(slots=True)
class PodInfo:
    """The pod as features see it (types.PodInfo): its spec, and its status when it exists (None for
    a pod being scheduled or created)."""

    spec: PodSpec
    status: Any = None  # a v1 PodStatus


class FeatureGate(Protocol):
    def enabled(self, key: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class FeatureGateMap:
    """A FeatureGate over a name -> enabled map (types.FeatureGateMap); unknown gates are off."""

    gates: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, key: str) -> bool:
        return bool(self.gates.get(key, False))


@dataclass(frozen=True, slots=True)
class RuntimeFeatures:
    """CRI runtime capabilities (types.RuntimeFeatures)."""

    user_namespaces_host_network: bool = False
    mount_options: bool = False


@dataclass(frozen=True, slots=True)
class FeatureRequirements:
    """What a feature depends on (types.FeatureRequirements): feature gates that must be on, and
    runtime capabilities (None: none needed)."""

    enabled_feature_gates: tuple[str, ...] = ()
    required_runtime_features: RuntimeFeatures | None = None


@dataclass(frozen=True, slots=True)
class NodeConfiguration:
    """A node's configuration as discovery sees it (types.NodeConfiguration). StaticConfiguration has
    no fields in 1.37, so it is not represented."""

    feature_gates: FeatureGate
    version: Version | None = None
    runtime_features: RuntimeFeatures = RuntimeFeatures()


class Feature(ABC):
    """One declared feature (types.Feature)."""

    @abstractmethod
    def name(self) -> str:
        """The feature's well-known name, as nodes declare it."""

    @abstractmethod
    def discover(self, cfg: NodeConfiguration) -> bool:
        """Whether a node with this configuration provides the feature."""

    @abstractmethod
    def requirements(self) -> FeatureRequirements:
        """The feature gates and runtime capabilities the feature depends on."""

    @abstractmethod
    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        """Whether scheduling the pod needs a node with the feature."""

    @abstractmethod
    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        """Whether the pod update needs the pod's node to have the feature."""

    @abstractmethod
    def max_version(self) -> Version | None:
        """The last version (inclusive) in which the feature matters; None: no bound."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """MatchResult: whether a node satisfies the requirements, and if not, the missing features."""

    is_match: bool
    unsatisfied_requirements: tuple[str, ...] = ()


class Framework(FeatureMapper):
    """Feature discovery and inference over a registry of features (Framework); the registry is sorted
    by name, so bit i of a FeatureSet is the i-th feature."""

    __slots__ = ("_scheduling_checks", "registry")

    def __init__(self, registry: Sequence[Feature]) -> None:
        self.registry: list[Feature] = sorted(registry, key=lambda f: f.name())
        super().__init__([f.name() for f in self.registry])
        # (target version, [(bit, feature)] the version still requires): PreFilter asks for every pod
        # with the scheduler's one version.
        self._scheduling_checks: tuple[Version, list[tuple[int, Feature]]] | None = None

    def discover_node_features(self, cfg: NodeConfiguration) -> list[str]:
        """The names of the registered features a node with this configuration provides, sorted;
        a feature past its MaxVersion at the node's version is not declared."""
        out: list[str] = []
        for f in self.registry:
            if f.discover(cfg):
                mv = f.max_version()
                if cfg.version is not None and mv is not None and cfg.version.greater_than(mv):
                    continue
                out.append(f.name())
        return out

    def infer_for_pod_scheduling(self, pod_info: PodInfo, target_version: Version | None) -> FeatureSet:
        """The features scheduling the pod requires at target_version (InferForPodScheduling)."""
        if target_version is None:
            raise ValueError("target version cannot be nil")
        cached = self._scheduling_checks
        if cached is None or cached[0] is not target_version:
            # Past a feature's max version every node has it: no need to require it.
            checks = [(i, f) for i, f in enumerate(self.registry)
                      if (mv := f.max_version()) is None or not target_version.greater_than(mv)]
            cached = self._scheduling_checks = (target_version, checks)
        reqs = self.new_feature_set()
        for i, f in cached[1]:
            if f.infer_for_scheduling(pod_info):
                reqs.set(i)
        return reqs

    def infer_for_pod_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo,
                             target_version: Version | None) -> FeatureSet:
        """The features the pod update requires at target_version (InferForPodUpdate)."""
        if target_version is None:
            raise ValueError("target version cannot be nil")
        reqs = self.new_feature_set()
        for i, f in enumerate(self.registry):
            mv = f.max_version()
            if mv is not None and target_version.greater_than(mv):
                continue
            if f.infer_for_update(old_pod_info, new_pod_info):
                reqs.set(i)
        return reqs

    def match_node(self, required_features: FeatureSet, node: Node | None) -> MatchResult:
        """Whether node.status.declaredFeatures satisfy the requirements (MatchNode)."""
        if node is None:
            raise ValueError("node cannot be nil")
        return self.match_node_feature_set(required_features, self.try_map(node.status.declaredFeatures))

    def match_node_feature_set(self, required_features: FeatureSet, node_features: FeatureSet) -> MatchResult:
        """Whether node_features include the requirements, and the missing ones (MatchNodeFeatureSet)."""
        if required_features.is_empty():
            return MatchResult(True)
        if required_features.is_subset(node_features):
            return MatchResult(True)
        diff = required_features.difference(node_features)
        return MatchResult(False, tuple(self.unmap(diff)))

    def get_feature_requirements(self, name: str) -> FeatureRequirements:
        """The requirements of the registered feature `name` (GetFeatureRequirements)."""
        for f in self.registry:
            if f.name() == name:
                return f.requirements()
        raise ValueError(f"feature '{name}' not registered")
