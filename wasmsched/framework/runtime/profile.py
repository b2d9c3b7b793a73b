"""A profile's plugins, built from its configuration: the plugin instances, one typed list per extension
point in kube's order (multiPoint expanded as kube's expandMultiPointPlugins does), the Score weights and
the plugins implementing the framework's own hooks (framework/runtime/framework.go, NewFramework).

The error texts are kube-scheduler's, as users and its tests know them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wasmsched.framework import interface as fw
from wasmsched.framework.interface import (
    BindingCycleObserver,
    BindPlugin,
    Closer,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PodDeletionObserver,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    SchedulingCycleObserver,
    ScorePlugin,
)
from wasmsched.util.suggest import did_you_mean


class FrameworkError(ValueError):
    """A profile that cannot be built (unknown plugin, plugin without the extension point, ...)."""


@dataclass
class PluginRef:
    name: str
    weight: int = 0


@dataclass
class ProfilePlugins:
    """Enabled/disabled plugins per extension point, after config defaulting (config.Plugins)."""

    enabled: dict[str, list[PluginRef]] = field(default_factory=dict)
    disabled: dict[str, list[str]] = field(default_factory=dict)
    multi_point: list[PluginRef] = field(default_factory=list)


@dataclass
class PluginLists:
    """The enabled plugins of each extension point, in the order they run (kube's frameworkImpl fields).
    Field names are the extension points' `attr` in interface.EXTENSION_POINTS."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    queue_sort: list[QueueSortPlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterPlugin] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    pre_score: list[PreScorePlugin] = field(default_factory=list)
    score: list[ScorePlugin] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)
    pre_bind: list[PreBindPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)

    def of(self, point: str) -> list[Plugin]:
        """The plugins of the extension point named by its `attr` (tests and tools; the runners use the
        fields)."""
        plugins: list[Plugin] = getattr(self, point)
        return plugins


@dataclass
class Hooks:
    """The plugins implementing each of the framework's own hooks (interface.py), found once, in the order
    they were configured: the wasm pool pins and releases guest instances by these."""

    scheduling_cycle_done: list[SchedulingCycleObserver] = field(default_factory=list)
    binding_cycle_done: list[BindingCycleObserver] = field(default_factory=list)
    pod_deleted: list[PodDeletionObserver] = field(default_factory=list)
    close: list[Closer] = field(default_factory=list)


@dataclass
class Profile:
    """What NewFramework builds from a profile's configuration."""

    plugins_map: dict[str, Plugin]
    plugins: PluginLists
    score_plugin_weight: dict[str, int]
    enqueue_extensions: list[fw.EnqueueExtensions]
    hooks: Hooks


def build_profile(profile_name: str, cfg: ProfilePlugins, args: Mapping[str, Any],
                  registry: Mapping[str, PluginFactory], handle: Handle) -> Profile:
    """Instantiates the profile's plugins with `handle` and sorts them into the extension points."""
    plugins_map = _instantiate(profile_name, cfg, args, registry, handle)
    score_plugin_weight: dict[str, int] = {}
    for ref in cfg.enabled.get("score", []):
        score_plugin_weight[ref.name] = ref.weight or 1
    for ref in cfg.multi_point:
        if ref.name not in score_plugin_weight:
            score_plugin_weight[ref.name] = ref.weight or 1

    plugins = PluginLists()
    for ep in fw.EXTENSION_POINTS:
        point, iface = ep.attr, ep.interface
        if iface is None:
            continue
        specific = [r.name for r in cfg.enabled.get(point, [])]
        for n in specific:
            if not isinstance(plugins_map[n], iface):
                raise FrameworkError(
                    f'profile "{profile_name}": plugin "{n}" does not extend {_point_title(point)}Plugin plugin'
                )
        disabled = set(cfg.disabled.get(point, []))
        # Only instances of the point's interface: checked above, and the expansion keeps no other.
        setattr(plugins, point, _expand_multi_point(profile_name, plugins_map, point, iface, specific, disabled,
                                                    cfg.multi_point))

    if len(plugins.queue_sort) != 1:
        raise FrameworkError(
            f'profile "{profile_name}": only one queue sort plugin required for profile with scheduler'
            f' name "{profile_name}", but got {len(plugins.queue_sort)}'
        )
    if not plugins.bind:
        raise FrameworkError(f'profile "{profile_name}": at least one bind plugin is needed for profile with'
                             f' scheduler name "{profile_name}"')
    # Filter/score weights only matter for score plugins; validate their range as kube does.
    for pl in plugins.score:
        if score_plugin_weight.get(pl.name, 1) <= 0:
            raise FrameworkError(f'profile "{profile_name}": score plugin "{pl.name}" weight must be positive')
    every = list(plugins_map.values())
    return Profile(
        plugins_map, plugins, score_plugin_weight,
        [p for p in every if isinstance(p, fw.EnqueueExtensions)],
        Hooks(
            [p for p in every if isinstance(p, SchedulingCycleObserver)],
            [p for p in every if isinstance(p, BindingCycleObserver)],
            [p for p in every if isinstance(p, PodDeletionObserver)],
            [p for p in every if isinstance(p, Closer)],
        ),
    )


def _instantiate(profile_name: str, cfg: ProfilePlugins, args: Mapping[str, Any],
                 registry: Mapping[str, PluginFactory], handle: Handle) -> dict[str, Plugin]:
    names = [ref.name for ref in cfg.multi_point]
    for refs in cfg.enabled.values():
        names.extend(r.name for r in refs)
    plugins_map: dict[str, Plugin] = {}
    for name in dict.fromkeys(names):
        factory = registry.get(name)
        if factory is None:
            raise FrameworkError(f'profile "{profile_name}": plugin "{name}" does not exist'
                                 f"{did_you_mean(name, registry)}")
        try:
            plugin = factory(args.get(name), handle)
            fw.check_extension_points(plugin)  # every method its extension points require
        except FrameworkError:
            raise
        except Exception as e:  # a plugin's own validation error names the plugin for the user
            raise FrameworkError(f'profile "{profile_name}": initializing plugin "{name}": {e}') from e
        if not plugin.name:
            plugin.name = name
        plugins_map[name] = plugin
    return plugins_map


def _expand_multi_point(profile_name: str, plugins_map: Mapping[str, Plugin], point: str, iface: type,
                        specific: list[str], disabled: set[str], multi_point: list[PluginRef]) -> list[Plugin]:
    if "*" in disabled:
        return [plugins_map[n] for n in specific]
    enabled_set = list(dict.fromkeys(specific))
    multi: list[str] = []
    overrides: set[str] = set()
    for ref in multi_point:
        pl = plugins_map[ref.name]
        if not isinstance(pl, iface) or ref.name in disabled:
            continue
        if ref.name in enabled_set:
            overrides.add(ref.name)
            continue
        if ref.name in multi:
            raise FrameworkError(
                f'profile "{profile_name}": plugin "{ref.name}" already registered as "{_point_title(point)}Plugin"'
            )
        multi.append(ref.name)
    # Order: overridden plugins as listed in the specific point, then multiPoint ones, then the rest.
    ordered = [n for n in enabled_set if n in overrides] + multi + [n for n in enabled_set if n not in overrides]
    return [plugins_map[n] for n in ordered]


def _point_title(point: str) -> str:
    return "".join(w.capitalize() for w in point.split("_"))
