"""Args of the in-tree plugins: v1 decoding with kube-scheduler's defaults (v1/defaults.go) and the
checks of validation/validation_pluginargs.go, with kube's field paths and messages.

`from_dict(d, path)` decodes the YAML `args` of a pluginConfig entry strictly (unknown keys are errors)
and applies the v1 defaults; `validate(path)` returns the FieldErrors kube-scheduler would report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, TypeVar

from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core
from wasmsched.config.decode import Reader
from wasmsched.config.errors import (
    ConfigError,
    FieldError,
    GoStruct,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
)
from wasmsched.config.names import validate_label_name
from wasmsched.config.protoargs import decode_message, node_affinity_errors
from wasmsched.config.types import API_VERSION, MAX_CUSTOM_PRIORITY_SCORE

_GROUP = API_VERSION.split("/")[0]


class PluginArgs:
    """Base of the args dataclasses. `PLUGIN` is the plugin name; the YAML kind is `<PLUGIN>Args`."""

    PLUGIN: ClassVar[str]
    KEYS: ClassVar[tuple[str, ...]]

    @classmethod
    def from_dict(cls, d: Any, path: str = "args") -> Self:
        """Decode and default; raises ConfigError listing every decoding error under `path`."""
        errors: list[FieldError] = []
        r = Reader(d, path, errors, (*cls.KEYS, "apiVersion", "kind"))
        api_version = r.string("apiVersion")
        if api_version is not None and api_version != API_VERSION:
            errors.append(not_supported(r.at("apiVersion"), api_version, [API_VERSION]))
        kind = r.string("kind")
        if kind is not None and kind != cls.PLUGIN + "Args":
            errors.append(
                invalid(
                    r.at("kind"),
                    kind,
                    f"args for plugin {cls.PLUGIN} were not of type {cls.PLUGIN}Args.{_GROUP}",
                )
            )
        obj = cls._decode(r)
        r.close()
        return obj

    @classmethod
    def default(cls) -> Self:
        """The args kube-scheduler gives the plugin when none are configured."""
        return cls.from_dict({})

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        raise NotImplementedError

    def validate(self, path: str = "args") -> list[FieldError]:
        return []


A = TypeVar("A", bound=PluginArgs)


def get_args(cls: type[A], args: A | Mapping[str, Any] | None, path: str = "args") -> A:
    """The typed, validated args of an in-tree plugin: kube's `getArgs` + `ValidateXArgs`, the one way
    every factory of a plugin that has args in kube-scheduler takes them.

    - None: the v1 defaults (`cls.default()`), what kube-scheduler gives a plugin with no pluginConfig;
    - a Mapping: the YAML `args` of a pluginConfig entry, decoded strictly by `cls.from_dict` (unknown
      keys and wrong types are ConfigErrors, as when the configuration file is loaded);
    - an instance of `cls`: used as it is (the config loader decodes in-tree args into these);
    - anything else: TypeError `want args to be of type <cls>, got <type>`, as kube's type assertion.

    The args are then validated; ConfigError lists every field error, under `path`.
    """
    if args is None:
        typed = cls.default()
    elif isinstance(args, cls):
        typed = args
    elif isinstance(args, Mapping):
        typed = cls.from_dict(dict(args), path)
    else:
        raise TypeError(f"want args to be of type {cls.__name__}, got {type(args).__name__}")
    errs = typed.validate(path)
    if errs:
        raise ConfigError(errs)
    return typed


@dataclass
class DefaultPreemptionArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "DefaultPreemption"
    KEYS: ClassVar[tuple[str, ...]] = ("minCandidateNodesPercentage", "minCandidateNodesAbsolute")

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        return cls(r.int32("minCandidateNodesPercentage", 10), r.int32("minCandidateNodesAbsolute", 100))

    def validate(self, path: str = "args") -> list[FieldError]:
        errs: list[FieldError] = []
        ppath = child(path, "minCandidateNodesPercentage")
        apath = child(path, "minCandidateNodesAbsolute")
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not 0 <= pct <= 100:
            errs.append(invalid(ppath, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(invalid(apath, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(invalid(ppath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(
                invalid(apath, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")
            )
        return errs


@dataclass
class InterPodAffinityArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "InterPodAffinity"
    KEYS: ClassVar[tuple[str, ...]] = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        return cls(r.int32("hardPodAffinityWeight", 1), r.boolean("ignorePreferredTermsOfExistingPods"))

    def validate(self, path: str = "args") -> list[FieldError]:
        w = self.hard_pod_affinity_weight
        if not 0 <= w <= 100:
            return [invalid(child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
        return []


@dataclass
class NodeAffinityArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "NodeAffinity"
    KEYS: ClassVar[tuple[str, ...]] = ("addedAffinity",)

    # Applied to every pod in addition to its own node affinity; None matches all nodes.
    added_affinity: core.NodeAffinity | None = None

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        if not r.has("addedAffinity"):
            return cls()
        return cls(decode_message(core.NodeAffinity, r.raw("addedAffinity"), r.at("addedAffinity"), r.errors))

    def validate(self, path: str = "args") -> list[FieldError]:
        if self.added_affinity is None:
            return []
        return node_affinity_errors(self.added_affinity, child(path, "addedAffinity"))


# --- NodeResourcesFit / NodeResourcesBalancedAllocation -------------------------------------------

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)  # sorted


@dataclass
class ResourceSpec:
    name: str
    weight: int = 1


def default_resources() -> list[ResourceSpec]:
    """defaultResourceSpec of v1/defaults.go: cpu and memory, weight 1."""
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


def _decode_resources(r: Reader, name: str) -> list[ResourceSpec]:
    """Resources with weight 0 (or unset) defaulted to 1; [] when none are given."""
    out: list[ResourceSpec] = []
    for p, item in r.items(name):
        ir = Reader(item, p, r.errors, ("name", "weight"))
        weight = ir.int64("weight", 0)
        out.append(ResourceSpec(ir.string("name", "") or "", weight or 1))
    return out


@dataclass
class UtilizationShapePoint:
    utilization: int  # x: 0..100, a fully used node is 100
    score: int  # y: 0..MAX_CUSTOM_PRIORITY_SCORE


@dataclass
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = field(default_factory=default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @classmethod
    def decode(cls, r: Reader) -> ScoringStrategy:
        rtc: RequestedToCapacityRatioParam | None = None
        if r.has("requestedToCapacityRatio"):
            rr = Reader(
                r.raw("requestedToCapacityRatio"), r.at("requestedToCapacityRatio"), r.errors, ("shape",)
            )
            points = []
            for p, item in rr.items("shape"):
                pr = Reader(item, p, r.errors, ("utilization", "score"))
                points.append(UtilizationShapePoint(pr.int32("utilization", 0), pr.int32("score", 0)))
            rtc = RequestedToCapacityRatioParam(points)
        return cls(r.string("type", "") or "", _decode_resources(r, "resources") or default_resources(), rtc)


def validate_function_shape(shape: list[UtilizationShapePoint], path: str) -> list[FieldError]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid(
                    child(index(path, i), "utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                invalid(
                    child(index(path, i), "utilization"), point.utilization, "not in valid range [0, 100]"
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                invalid(
                    child(index(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _validate_resources(resources: list[ResourceSpec], path: str) -> list[FieldError]:
    return [
        invalid(
            child(index(path, i), "weight"),
            r.weight,
            f"resource weight of {r.name} not in valid range (0, 100]",
        )
        for i, r in enumerate(resources)
        if not 0 < r.weight <= 100
    ]


@dataclass
class NodeResourcesFitArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "NodeResourcesFit"
    KEYS: ClassVar[tuple[str, ...]] = ("ignoredResources", "ignoredResourceGroups", "scoringStrategy")

    ignored_resources: list[str] = field(default_factory=list)  # ignored by the filter, not by scoring
    ignored_resource_groups: list[str] = field(
        default_factory=list
    )  # prefixes: "example.com" ignores example.com/*
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        strategy = ScoringStrategy()
        if r.has("scoringStrategy"):
            sr = Reader(
                r.raw("scoringStrategy"),
                r.at("scoringStrategy"),
                r.errors,
                ("type", "resources", "requestedToCapacityRatio"),
            )
            strategy = ScoringStrategy.decode(sr)
        return cls(r.str_list("ignoredResources"), r.str_list("ignoredResourceGroups"), strategy)

    def validate(self, path: str = "args") -> list[FieldError]:
        errs: list[FieldError] = []
        for i, res in enumerate(self.ignored_resources):
            errs.extend(validate_label_name(res, index(child(path, "ignoredResources"), i)))
        for i, group in enumerate(self.ignored_resource_groups):
            p = index(child(path, "ignoredResourceGroups"), i)
            if "/" in group:
                errs.append(invalid(p, group, "resource group name can't contain '/'"))
            errs.extend(validate_label_name(group, p))
        s, spath = self.scoring_strategy, child(path, "scoringStrategy")
        if s.type not in _SCORING_STRATEGY_TYPES:
            errs.append(not_supported(child(spath, "type"), s.type, _SCORING_STRATEGY_TYPES))
        errs.extend(_validate_resources(s.resources, child(spath, "resources")))
        rpath = child(spath, "requestedToCapacityRatio")
        if s.type == REQUESTED_TO_CAPACITY_RATIO:
            if s.requested_to_capacity_ratio is None:
                errs.append(required(rpath, "must be specified when type is RequestedToCapacityRatio"))
            else:
                errs.extend(
                    validate_function_shape(s.requested_to_capacity_ratio.shape, child(rpath, "shape"))
                )
        elif s.requested_to_capacity_ratio is not None:
            errs.append(forbidden(rpath, "must be nil when type is not RequestedToCapacityRatio"))
        return errs


@dataclass
class NodeResourcesBalancedAllocationArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "NodeResourcesBalancedAllocation"
    KEYS: ClassVar[tuple[str, ...]] = ("resources",)

    resources: list[ResourceSpec] = field(default_factory=default_resources)

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        return cls(_decode_resources(r, "resources") or default_resources())

    def validate(self, path: str = "args") -> list[FieldError]:
        errs: list[FieldError] = []
        seen: set[str] = set()
        for i, res in enumerate(self.resources):
            p = index(child(path, "resources"), i)
            if res.name in seen:
                errs.append(duplicate(child(p, "name"), res.name))
            seen.add(res.name)
            if res.weight != 1:
                errs.append(invalid(child(p, "weight"), res.weight, "must be 1"))
        return errs


# --- PodTopologySpread ------------------------------------------------------------------------

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")  # sorted


def system_default_constraints() -> list[core.TopologySpreadConstraint]:
    """systemDefaultConstraints of the PodTopologySpread plugin (a fresh copy each call)."""
    return [
        core.TopologySpreadConstraint(
            topologyKey="kubernetes.io/hostname", whenUnsatisfiable="ScheduleAnyway", maxSkew=3
        ),
        core.TopologySpreadConstraint(
            topologyKey="topology.kubernetes.io/zone", whenUnsatisfiable="ScheduleAnyway", maxSkew=5
        ),
    ]


@dataclass
class PodTopologySpreadArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "PodTopologySpread"
    KEYS: ClassVar[tuple[str, ...]] = ("defaultConstraints", "defaultingType")

    # Used for pods without constraints of their own when defaulting_type is "List".
    default_constraints: list[core.TopologySpreadConstraint] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        constraints = []
        for p, item in r.items("defaultConstraints"):
            msg = decode_message(core.TopologySpreadConstraint, item, p, r.errors)
            if msg is not None:
                constraints.append(msg)
        return cls(constraints, r.string("defaultingType", "") or SYSTEM_DEFAULTING)

    def effective_default_constraints(self) -> list[core.TopologySpreadConstraint]:
        """The constraints the plugin applies to pods that define none."""
        if self.defaulting_type == SYSTEM_DEFAULTING:
            return system_default_constraints()
        return list(self.default_constraints)

    def validate(self, path: str = "args") -> list[FieldError]:
        errs: list[FieldError] = []
        tpath = child(path, "defaultingType")
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(not_supported(tpath, self.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(invalid(tpath, self.defaulting_type, "when .defaultConstraints are not empty"))
        cpath = child(path, "defaultConstraints")
        for i, c in enumerate(self.default_constraints):
            p = index(cpath, i)
            if c.maxSkew <= 0:
                errs.append(invalid(child(p, "maxSkew"), c.maxSkew, "not in valid range (0, inf)"))
            if not c.topologyKey:
                errs.append(required(child(p, "topologyKey"), "can not be empty"))
            else:
                errs.extend(validate_label_name(c.topologyKey, child(p, "topologyKey")))
            wpath = child(p, "whenUnsatisfiable")
            if not c.whenUnsatisfiable:
                errs.append(required(wpath, "can not be empty"))
            elif c.whenUnsatisfiable not in _WHEN_UNSATISFIABLE:
                errs.append(not_supported(wpath, c.whenUnsatisfiable, _WHEN_UNSATISFIABLE))
            if c.HasField("labelSelector"):
                errs.append(
                    forbidden(
                        child(p, "labelSelector"),
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            for other in self.default_constraints[:i]:
                if (c.topologyKey, c.whenUnsatisfiable) == (other.topologyKey, other.whenUnsatisfiable):
                    errs.append(duplicate(p, f"{{{c.topologyKey}, {c.whenUnsatisfiable}}}"))
                    break
        return errs


_DURATION_UNITS = {
    "ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}
_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """time.ParseDuration (metav1.Duration's JSON form), in seconds; ValueError as Go's message."""
    s = text
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _DURATION_RE.match(s, pos)
        if m is None:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def format_go_duration(seconds: float) -> str:
    """time.Duration.String() for the values args carry (whole milliseconds and up)."""
    if seconds == 0:
        return "0s"
    neg = seconds < 0
    ns = round(abs(seconds) * 1e9)
    out = ""
    if ns < 1_000_000_000:
        out = f"{ns / 1e6:g}ms" if ns >= 1_000_000 else (f"{ns / 1e3:g}\u00b5s" if ns >= 1000 else f"{ns}ns")
    else:
        h, rem = divmod(ns, 3_600_000_000_000)
        m, rem = divmod(rem, 60_000_000_000)
        sec = rem / 1e9
        if h:
            out += f"{h}h"
        if h or m:
            out += f"{m}m"
        out += f"{sec:g}s"
    return ("-" if neg else "") + out


@dataclass
class DynamicResourcesArgs(PluginArgs):
    """config.DynamicResourcesArgs; durations in seconds. With the 1.37 default feature gates
    (DRASchedulerFilterTimeout, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on) both
    are defaulted: filterTimeout 10s, bindingTimeout 600s."""

    PLUGIN: ClassVar[str] = "DynamicResources"
    KEYS: ClassVar[tuple[str, ...]] = ("filterTimeout", "bindingTimeout")

    filter_timeout: float = 10.0
    binding_timeout: float = 600.0

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        values = []
        for key, default in (("filterTimeout", 10.0), ("bindingTimeout", 600.0)):
            raw = r.string(key)
            if raw is None:
                values.append(default)
                continue
            try:
                values.append(parse_go_duration(raw))
            except ValueError as e:
                r.errors.append(invalid(r.at(key), raw, str(e)))
                values.append(default)
        return cls(values[0], values[1])

    def validate(self, path: str = "args") -> list[FieldError]:
        errs: list[FieldError] = []
        if self.filter_timeout < 0:
            errs.append(invalid(child(path, "filterTimeout"), format_go_duration(self.filter_timeout),
                                "must be zero or positive"))
        if self.binding_timeout < 1:
            errs.append(invalid(child(path, "bindingTimeout"), format_go_duration(self.binding_timeout),
                                "must be at least 1 second"))
        return errs


# --- VolumeBinding ----------------------------------------------------------------------------

# kube 1.37: the StorageCapacityScoring feature gate is Beta and on by default (pkg/features).
STORAGE_CAPACITY_SCORING = True


def default_volume_binding_shape() -> list[UtilizationShapePoint]:
    """SetDefaults_VolumeBindingArgs' shape: an empty node scores best (0 -> 10, 100 -> 0)."""
    return [UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), UtilizationShapePoint(100, 0)]


@dataclass
class VolumeBindingArgs(PluginArgs):
    PLUGIN: ClassVar[str] = "VolumeBinding"
    KEYS: ClassVar[tuple[str, ...]] = ("bindTimeoutSeconds", "shape")

    # How long PreBind waits for the PV controller to bind the claims; 0 means no waiting.
    bind_timeout_seconds: int = 600
    # Score of a node by the utilization of the storage the pod's volumes would use there.
    shape: list[UtilizationShapePoint] = field(default_factory=default_volume_binding_shape)

    @classmethod
    def _decode(cls, r: Reader) -> Self:
        points = []
        for p, item in r.items("shape"):
            pr = Reader(item, p, r.errors, ("utilization", "score"))
            points.append(UtilizationShapePoint(pr.int32("utilization", 0), pr.int32("score", 0)))
        if not points and STORAGE_CAPACITY_SCORING:
            points = default_volume_binding_shape()
        return cls(r.int64("bindTimeoutSeconds", 600), points)

    def validate(self, path: str = "args", storage_capacity_scoring: bool = STORAGE_CAPACITY_SCORING
                 ) -> list[FieldError]:
        """ValidateVolumeBindingArgsWithOptions; `storage_capacity_scoring` is the feature gate."""
        errs: list[FieldError] = []
        if self.bind_timeout_seconds < 0:
            errs.append(invalid(child(path, "bindTimeoutSeconds"), self.bind_timeout_seconds,
                                "invalid BindTimeoutSeconds, should not be a negative value"))
        if storage_capacity_scoring:
            errs.extend(validate_function_shape(self.shape, child(path, "shape")))
        elif self.shape:
            shape = [GoStruct([("Utilization", pt.utilization), ("Score", pt.score)]) for pt in self.shape]
            errs.append(invalid(child(path, "shape"), shape, "unexpected field `shape`, remove it or turn on the "
                                "feature gate StorageCapacityScoring"))
        return errs


IN_TREE_ARGS: dict[str, type[PluginArgs]] = {
    cls.PLUGIN: cls
    for cls in (
        DefaultPreemptionArgs,
        DynamicResourcesArgs,
        InterPodAffinityArgs,
        NodeAffinityArgs,
        NodeResourcesBalancedAllocationArgs,
        NodeResourcesFitArgs,
        PodTopologySpreadArgs,
        VolumeBindingArgs,
    )
}
