"""The internal (defaulted) KubeSchedulerConfiguration, mirroring pkg/scheduler/apis/config/types.go."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wasmsched.framework.interface import EXTENSION_POINTS

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

# config.DefaultPercentageOfNodesToScore: 0 means adaptive (the scheduler picks 5%..50% by cluster size).
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
# config.MaxCustomPriorityScore: the max score a UtilizationShapePoint may give.
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass
class Plugin:
    """A plugin name and its weight. Weight is only used by Score; 0 means unset (the framework uses 1)."""

    name: str
    weight: int = 0


@dataclass
class PluginSet:
    """Plugins enabled and disabled at one extension point. Disabled `*` disables every default."""

    enabled: list[Plugin] = field(default_factory=list)
    disabled: list[Plugin] = field(default_factory=list)


@dataclass
class Plugins:
    """One PluginSet per extension point. After defaulting, the default plugins sit in `multi_point`."""

    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def get(self, attr: str) -> PluginSet:
        ps: PluginSet = getattr(self, attr)
        return ps

    def names(self) -> list[str]:
        """Sorted names of every enabled plugin at any extension point (pluginsNames in v1/defaults.go)."""
        return sorted({p.name for ep in EXTENSION_POINTS for p in self.get(ep.attr).enabled})


@dataclass
class PluginConfig:
    """Arguments for one plugin: an args dataclass for in-tree plugins (see args.IN_TREE_ARGS), else
    the raw decoded YAML value (a dict, or None when `args` was omitted)."""

    name: str
    args: object = None


@dataclass
class KubeSchedulerProfile:
    scheduler_name: str = ""
    # None: use the configuration-level value.
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = field(default_factory=Plugins)
    plugin_config: list[PluginConfig] = field(default_factory=list)

    def args_for(self, name: str) -> object:
        """The args configured for plugin `name`, or None."""
        for pc in self.plugin_config:
            if pc.name == name:
                return pc.args
        return None


@dataclass
class KubeSchedulerConfiguration:
    parallelism: int = 16
    # 0 (the v1 default) means adaptive; a profile's own value overrides it.
    percentage_of_nodes_to_score: int | None = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[KubeSchedulerProfile] = field(default_factory=list)
    # Kept as decoded YAML; not used by wasmsched (yet), but validated as kube-scheduler does.
    extenders: list[dict[str, Any]] = field(default_factory=list)
    leader_election: dict[str, Any] = field(default_factory=dict)
    client_connection: dict[str, Any] = field(default_factory=dict)
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    delay_cache_until_active: bool = False

    def profile(self, scheduler_name: str) -> KubeSchedulerProfile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None
