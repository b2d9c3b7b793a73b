"""Build a Scheduler from a KubeSchedulerConfiguration (scheduler.New)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from wasmsched.config.types import KubeSchedulerConfiguration, KubeSchedulerProfile
from wasmsched.framework.interface import EXTENSION_POINTS, ClusterClient, EventRecorder, PluginFactory
from wasmsched.framework.runtime import PluginRef, ProfilePlugins
from wasmsched.scheduler.scheduler import ProfileSpec, Scheduler, SchedulerOptions

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics


def profile_spec(profile: KubeSchedulerProfile) -> ProfileSpec:
    plugins = ProfilePlugins()
    for ep in EXTENSION_POINTS:
        attr = ep.attr
        ps = profile.plugins.get(attr)
        refs = [PluginRef(p.name, p.weight) for p in ps.enabled]
        if attr == "multi_point":
            plugins.multi_point = refs
        else:
            plugins.enabled[attr] = refs
            plugins.disabled[attr] = [p.name for p in ps.disabled]
    args = {pc.name: pc.args for pc in profile.plugin_config}
    return ProfileSpec(profile.scheduler_name, plugins, args, profile.percentage_of_nodes_to_score)


def new_scheduler(
    cfg: KubeSchedulerConfiguration,
    registry: Mapping[str, PluginFactory],
    client: ClusterClient,
    recorder: EventRecorder,
    clock: Callable[[], float],
    *,
    seed: int = 0,
    explain: bool = False,
    explain_summary: bool = False,
    max_consecutive_errors: int | None = None,
    binding_workers: int = SchedulerOptions.binding_workers,
    metrics: SchedulerMetrics | None = None,
    lowest_name_tie_break: bool = False,
) -> Scheduler:
    opts = SchedulerOptions(
        percentage_of_nodes_to_score=cfg.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=float(cfg.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=float(cfg.pod_max_backoff_seconds),
        seed=seed,
        explain=explain,
        explain_summary=explain_summary,
        max_consecutive_errors=max_consecutive_errors,
        binding_workers=binding_workers,
        lowest_name_tie_break=lowest_name_tie_break,
    )
    return Scheduler([profile_spec(p) for p in cfg.profiles], registry, client, recorder, clock, opts, metrics)
