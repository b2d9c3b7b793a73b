"""ValidateKubeSchedulerConfiguration of kube-scheduler's validation/validation.go, on the defaulted
configuration, with kube's field paths and messages."""

from __future__ import annotations

from typing import Any

from wasmsched.api.resources import is_extended_resource_name
from wasmsched.api.validation import is_qualified_name
from wasmsched.config.args import PluginArgs
from wasmsched.config.errors import OMIT, FieldError, GoStruct, child, duplicate, index, invalid, required
from wasmsched.config.types import (
    API_VERSION,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
)
from wasmsched.framework.interface import EXTENSION_POINTS, MAX_NODE_SCORE, MAX_TOTAL_SCORE

# Plugins removed from (or invalid in) kubescheduler.config.k8s.io/v1.
INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# The framework's interface names, in its "plugin %q already registered as %q" error.
_PLUGIN_TYPES = {
    "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin", "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin", "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
    "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin", "preBind": "PreBindPlugin",
    "bind": "BindPlugin", "postBind": "PostBindPlugin",
}  # fmt: skip
_INVALID_DETAIL = (
    f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
)


def validate_configuration(cc: KubeSchedulerConfiguration) -> list[FieldError]:
    errs: list[FieldError] = []
    le = cc.leader_election
    if le.get("leaderElect") and le.get("resourceLock", "leases") != "leases":
        errs.append(
            invalid(
                "leaderElection.resourceLock", le.get("resourceLock"), 'resourceLock value must be "leases"'
            )
        )
    if cc.parallelism <= 0:
        errs.append(invalid("parallelism", cc.parallelism, "should be an integer value greater than zero"))
    if not cc.profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, profile in enumerate(cc.profiles):
            path = index("profiles", i)
            errs.extend(validate_profile(profile, path))
            if profile.scheduler_name in seen:
                errs.append(duplicate(child(path, "schedulerName"), profile.scheduler_name))
            seen[profile.scheduler_name] = i
        errs.extend(_validate_common_queue_sort(cc.profiles))
    errs.extend(_validate_percentage("percentageOfNodesToScore", cc.percentage_of_nodes_to_score))
    if cc.pod_initial_backoff_seconds <= 0:
        errs.append(
            invalid("podInitialBackoffSeconds", cc.pod_initial_backoff_seconds, "must be greater than 0")
        )
    if cc.pod_max_backoff_seconds < cc.pod_initial_backoff_seconds:
        errs.append(
            invalid(
                "podMaxBackoffSeconds",
                cc.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    errs.extend(validate_extenders(cc.extenders))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def validate_profile(profile: KubeSchedulerProfile, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(required(child(path, "schedulerName")))
    errs.extend(
        _validate_percentage(child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score)
    )
    ppath = child(path, "plugins")
    for ep in EXTENSION_POINTS:
        attr, key = ep.attr, ep.key
        if attr == "multi_point":  # kube does not look at multiPoint here
            continue
        seen_at_point: set[str] = set()
        for i, plugin in enumerate(profile.plugins.get(attr).enabled):
            epath = index(child(child(ppath, key), "enabled"), i)
            if plugin.name in INVALID_PLUGINS:
                errs.append(invalid(epath, plugin.name, _INVALID_DETAIL))
            if plugin.name in seen_at_point:
                # kube-scheduler's framework refuses this when it builds the profile (updatePluginList);
                # reported here, at load, with the place it comes from
                errs.append(
                    invalid(epath, plugin.name, f'plugin "{plugin.name}" already registered as "{_PLUGIN_TYPES[key]}"')
                )
            seen_at_point.add(plugin.name)
    errs.extend(validate_score_weights(profile.plugins, ppath))
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        pcpath = index(child(path, "pluginConfig"), i)
        if pc.name in seen:
            errs.append(duplicate(pcpath, pc.name))
        seen.add(pc.name)
        if pc.name in INVALID_PLUGINS:
            errs.append(invalid(pcpath, pc.name, _INVALID_DETAIL))
        elif isinstance(pc.args, PluginArgs):
            errs.extend(pc.args.validate(child(pcpath, "args")))
    return errs


def validate_score_weights(plugins: Plugins, path: str) -> list[FieldError]:
    """The overflow check of the framework's getScoreWeights, done at load time.

    Weights come from `score` first, then `multiPoint` (a name counts once); 0 means 1. kube-scheduler
    does not restrict weights otherwise (negative weights are accepted). Every plugin enabled at those
    points is counted, as the config cannot know which ones implement Score.
    """
    total = 0
    seen: set[str] = set()
    for plugin in [*plugins.score.enabled, *plugins.multi_point.enabled]:
        if plugin.name in seen:
            continue
        seen.add(plugin.name)
        weight = plugin.weight or 1
        if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            return [invalid(path, OMIT, "total score of Score plugins could overflow")]
        total += weight * MAX_NODE_SCORE
    return []


def _validate_common_queue_sort(profiles: list[KubeSchedulerProfile]) -> list[FieldError]:
    errs: list[FieldError] = []
    canon = profiles[0].plugins.queue_sort
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    canon_args = next((pc.args for pc in profiles[0].plugin_config if name and pc.name == name), None)
    for i in range(1, len(profiles)):
        curr: PluginSet = profiles[i].plugins.queue_sort
        if curr != canon:
            errs.append(
                invalid(f"profiles[{i}].plugins.queueSort", _go_plugin_set(curr), "must be the same for all profiles")
            )
        errs.extend(
            invalid(
                f"profiles[{i}].pluginConfig.args",
                pc.args if isinstance(pc.args, dict) else OMIT,
                "queueSort must be the same for all profiles",
            )
            for pc in profiles[i].plugin_config
            if pc.name == name and pc.args != canon_args
        )
    return errs


def _go_plugins(plugins: list[Plugin]) -> list[GoStruct] | None:
    return [GoStruct((("Name", p.name), ("Weight", p.weight))) for p in plugins] or None


def _go_plugin_set(ps: PluginSet) -> GoStruct:
    """A PluginSet as kube prints the internal config type (json.Marshal, Go field names)."""
    return GoStruct((("Enabled", _go_plugins(ps.enabled)), ("Disabled", _go_plugins(ps.disabled))))


def validate_extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = index("extenders", i)
        weight = ext.get("weight") or 0
        if ext.get("prioritizeVerb") and weight <= 0:
            errs.append(invalid(child(path, "weight"), weight, "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or []):
            npath = child(index(child(path, "managedResources"), j), "name")
            name = res.get("name") or ""
            msgs = is_qualified_name(name)
            errs.extend(invalid(npath, name, m) for m in msgs)
            if not msgs and not is_extended_resource_name(name):
                errs.append(invalid(npath, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(npath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs
