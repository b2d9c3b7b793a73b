"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate."""

from wasmsched.config.args import IN_TREE_ARGS, PluginArgs
from wasmsched.config.errors import ConfigError, FieldError
from wasmsched.config.load import config_from_dict, load_config
from wasmsched.config.types import (
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)

__all__ = [
    "IN_TREE_ARGS",
    "ConfigError",
    "FieldError",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "Plugin",
    "PluginArgs",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "config_from_dict",
    "load_config",
]
