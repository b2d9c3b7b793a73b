"""v1 defaulting of kube-scheduler: v1/default_plugins.go (default plugins, mergePlugins) and
v1/defaults.go (configuration, profile and pluginConfig defaults)."""

from __future__ import annotations

from wasmsched.config.args import IN_TREE_ARGS
from wasmsched.config.types import Plugin, PluginConfig, Plugins, PluginSet
from wasmsched.framework.interface import EXTENSION_POINTS

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10

# kube 1.37.2's getDefaultPlugins followed by applyFeatureGates with the default gates
# (DynamicResourceAllocation on: DynamicResources, weight 2, before DefaultPreemption;
# NodeDeclaredFeatures, GA, appended last; DeferredPodScheduling, GangScheduling and the
# topology-aware workload plugins are behind gates that are off by default).
KUBE_DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeName", 0),
    ("NodeUnschedulable", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),
)


def default_plugins() -> Plugins:
    """A fresh copy of the default plugin set: everything enabled through MultiPoint. wasmsched has every
    plugin of kube's default profile, so it is kube's (tests/config/test_config_merge.py checks each one
    is registered)."""
    return Plugins(multi_point=PluginSet(enabled=[Plugin(n, w) for n, w in KUBE_DEFAULT_MULTI_POINT]))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: apply a user's enabled/disabled lists to the defaults of one extension point.

    Disabled `*` drops every default; a disabled name drops that default; a user-enabled plugin with the
    name of a default replaces it in place (so its weight wins); other user plugins are appended in
    order. Duplicates in the user's list are kept (the framework rejects them later), as in kube.
    """
    disabled = [Plugin(p.name) for p in custom.disabled] + [Plugin(p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            if plugin.name in custom_by_name:
                i, replacement = custom_by_name[plugin.name]
                replaced.add(i)
                enabled.append(Plugin(replacement.name, replacement.weight))
            else:
                enabled.append(Plugin(plugin.name, plugin.weight))
    enabled.extend(Plugin(p.name, p.weight) for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """mergePlugins: the user's `plugins` merged into the defaults, extension point by extension point."""
    if custom is None:
        return default
    merged = Plugins()
    for ep in EXTENSION_POINTS:
        setattr(merged, ep.attr, merge_plugin_set(default.get(ep.attr), custom.get(ep.attr)))
    return merged


def default_plugin_config(plugins: Plugins, configs: list[PluginConfig]) -> list[PluginConfig]:
    """Append default args for every enabled in-tree plugin that has none, in sorted name order.

    User-given args are expected already decoded and defaulted (args.PluginArgs.from_dict).
    """
    existing = {pc.name for pc in configs}
    out = list(configs)
    for name in plugins.names():
        args_cls = IN_TREE_ARGS.get(name)
        if name in existing or args_cls is None:
            continue
        out.append(PluginConfig(name, args_cls.default()))
    return out
