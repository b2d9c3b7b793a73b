"""Random KubeSchedulerConfigurations (kubescheduler.config.k8s.io/v1): plugin weights, disabled plugins
and non-default args of the in-tree plugins, in one or two profiles; only what wasmsched's loader and
kube-scheduler's validation accept, and only plugins both have."""

from __future__ import annotations

from typing import Any

from tests.differential.context import (
    DISKS,
    GPU,
    HOSTNAME,
    RACK,
    SECOND_SCHEDULER,
    ZONE,
    ZONES,
    Ctx,
    pick_some,
)
from tests.differential.pods import node_selector_term

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

SCORE_PLUGINS = (
    "TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
    "NodeResourcesBalancedAllocation", "ImageLocality",
)  # fmt: skip
# Plugins a profile may drop without losing what every profile needs (queue sort, bind).
DISABLEABLE = (
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "NodeResourcesBalancedAllocation",
    "ImageLocality",
)  # fmt: skip


def generate_config(ctx: Ctx) -> dict[str, Any] | None:
    if not ctx.chance(ctx.knobs.config):
        return None
    ctx.tag("config")
    profiles = [_profile(ctx, "default-scheduler")]
    if ctx.chance(ctx.knobs.second_profile):
        ctx.tag("config.second_profile")
        ctx.second_profile = True
        profiles.append(_profile(ctx, SECOND_SCHEDULER))
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": profiles}


def _profile(ctx: Ctx, name: str) -> dict[str, Any]:
    rng = ctx.rng
    plugins: dict[str, Any] = {}
    enabled = []
    for plugin in SCORE_PLUGINS:
        if ctx.chance(0.25):
            ctx.tag("config.weights")
            entry: dict[str, Any] = {"name": plugin}
            if ctx.chance(0.85):
                entry["weight"] = rng.randint(1, 10)
            enabled.append(entry)
    disabled: list[str] = []
    if ctx.chance(0.25):
        ctx.tag("config.disabled")
        candidates = [p for p in DISABLEABLE if p not in {e["name"] for e in enabled}]
        disabled = pick_some(rng, candidates, 1, 2)
    multi_point: dict[str, Any] = {}
    if enabled:
        multi_point["enabled"] = enabled
    if disabled:
        multi_point["disabled"] = [{"name": p} for p in disabled]
    if multi_point:
        plugins["multiPoint"] = multi_point
    if ctx.chance(0.1):
        ctx.tag("config.no_score")
        plugins["score"] = {"disabled": [{"name": "*"}]}
    elif ctx.chance(0.1):
        ctx.tag("config.disabled")
        # not preScore alone: a Score plugin without its PreScore state errors (in kube too)
        point = rng.choice(("score", "filter"))
        plugins[point] = {"disabled": [{"name": rng.choice(SCORE_PLUGINS)}]}
    profile: dict[str, Any] = {"schedulerName": name}
    if plugins:
        profile["plugins"] = plugins
    plugin_config = _plugin_config(ctx, set(disabled))
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return profile


def _plugin_config(ctx: Ctx, disabled: set[str]) -> list[dict[str, Any]]:
    """Args for some of the profile's enabled plugins (kube ignores args of plugins it does not run,
    but keeping to enabled ones keeps both sides' defaulting identical)."""
    makers = (
        ("NodeResourcesFit", 0.45, _fit_args),
        ("NodeResourcesBalancedAllocation", 0.2, _balanced_args),
        ("NodeAffinity", 0.15, _node_affinity_args),
        ("PodTopologySpread", 0.25, _spread_args),
        ("InterPodAffinity", 0.2, _interpod_args),
        ("DefaultPreemption", 0.2, _preemption_args),
    )
    out = []
    for plugin, p, make in makers:
        if plugin not in disabled and ctx.chance(p):
            args = make(ctx)
            if ctx.chance(0.5):
                args = {"apiVersion": API_VERSION, "kind": f"{plugin}Args", **args}
            out.append({"name": plugin, "args": args})
    return out


def _resources(ctx: Ctx, with_weights: bool) -> list[dict[str, Any]]:
    names = pick_some(ctx.rng, ("cpu", "memory", GPU), 1, 3)
    if GPU in names:
        ctx.tag("config.fit.extended")
    out = []
    for n in names:
        entry: dict[str, Any] = {"name": n}
        if with_weights:
            entry["weight"] = ctx.rng.randint(1, 5)
        out.append(entry)
    return out


def _fit_args(ctx: Ctx) -> dict[str, Any]:
    rng = ctx.rng
    kind = rng.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
    ctx.tag(f"config.fit.{kind}")
    strategy: dict[str, Any] = {"type": kind}
    if ctx.chance(0.7):
        strategy["resources"] = _resources(ctx, with_weights=True)
    if kind == "RequestedToCapacityRatio":
        xs = sorted(rng.sample(range(0, 101, 10), rng.randint(1, 3)))
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": x, "score": rng.randint(0, 10)} for x in xs]
        }
    args: dict[str, Any] = {"scoringStrategy": strategy}
    if ctx.chance(0.2):
        ctx.tag("config.fit.ignored")
        if ctx.chance(0.5):
            args["ignoredResources"] = [GPU]
        else:
            args["ignoredResourceGroups"] = ["example.com"]
    return args


def _balanced_args(ctx: Ctx) -> dict[str, Any]:
    ctx.tag("config.balanced")
    return {"resources": _resources(ctx, with_weights=False)}


def _node_affinity_args(ctx: Ctx) -> dict[str, Any]:
    ctx.tag("config.added_affinity")
    rng = ctx.rng
    affinity: dict[str, Any] = {}
    if ctx.chance(0.6):
        # a broad requirement, so that most cases still have feasible nodes
        expr = rng.choice(
            (
                {"key": ZONE, "operator": "In", "values": sorted(pick_some(rng, ZONES, 2, 3))},
                {"key": "disk", "operator": "NotIn", "values": [rng.choice(DISKS)]},
                {"key": "gpu", "operator": "DoesNotExist"},
            )
        )
        required = {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    if not affinity or ctx.chance(0.5):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": node_selector_term(ctx)}
        ]
    return {"addedAffinity": affinity}


def _spread_args(ctx: Ctx) -> dict[str, Any]:
    rng = ctx.rng
    if ctx.chance(0.35):
        ctx.tag("config.spread.system")
        return {"defaultingType": "System"}
    ctx.tag("config.spread.list")
    constraints = []
    seen: set[tuple[str, str]] = set()
    for _ in range(rng.randint(0, 2)):
        key = rng.choice((ZONE, HOSTNAME, RACK))
        when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
        if (key, when) not in seen:
            seen.add((key, when))
            constraints.append({"maxSkew": rng.randint(1, 3), "topologyKey": key, "whenUnsatisfiable": when})
    args: dict[str, Any] = {"defaultingType": "List"}
    if constraints:
        args["defaultConstraints"] = constraints
    return args


def _interpod_args(ctx: Ctx) -> dict[str, Any]:
    ctx.tag("config.interpod")
    rng = ctx.rng
    args: dict[str, Any] = {"hardPodAffinityWeight": rng.choice((0, 1, 5, 100))}
    if ctx.chance(0.5):
        args["ignorePreferredTermsOfExistingPods"] = rng.choice((True, False))
    return args


def _preemption_args(ctx: Ctx) -> dict[str, Any]:
    ctx.tag("config.preemption")
    rng = ctx.rng
    pct, absolute = rng.choice((0, 10, 50, 100)), rng.choice((0, 1, 2, 100))
    if pct == 0 and absolute == 0:
        absolute = 1  # both zero is invalid
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}
