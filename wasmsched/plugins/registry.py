"""The in-tree plugin registry (framework/plugins/registry.go): plugin name -> factory.

Factories are imported when a profile first uses them, so a CLI run pays only for its plugins.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from wasmsched.framework.interface import PluginFactory

_IN_TREE: dict[str, tuple[str, str]] = {
    "PrioritySort": ("wasmsched.plugins.prioritysort", "new"),
    "SchedulingGates": ("wasmsched.plugins.schedulinggates", "new"),
    "NodeUnschedulable": ("wasmsched.plugins.nodeunschedulable", "new"),
    "NodeName": ("wasmsched.plugins.nodename", "new"),
    "NodeDeclaredFeatures": ("wasmsched.plugins.nodedeclaredfeatures", "new"),
    "TaintToleration": ("wasmsched.plugins.tainttoleration", "new"),
    "NodeAffinity": ("wasmsched.plugins.nodeaffinity", "new"),
    "NodePorts": ("wasmsched.plugins.nodeports", "new"),
    "NodeResourcesFit": ("wasmsched.plugins.noderesources", "new_fit"),
    "NodeResourcesBalancedAllocation": ("wasmsched.plugins.noderesources", "new_balanced_allocation"),
    "ImageLocality": ("wasmsched.plugins.imagelocality", "new"),
    "PodTopologySpread": ("wasmsched.plugins.podtopologyspread", "new"),
    "InterPodAffinity": ("wasmsched.plugins.interpodaffinity", "new"),
    "VolumeRestrictions": ("wasmsched.plugins.volumerestrictions", "new"),
    "VolumeZone": ("wasmsched.plugins.volumezone", "new"),
    "NodeVolumeLimits": ("wasmsched.plugins.nodevolumelimits", "new"),
    "DefaultPreemption": ("wasmsched.plugins.defaultpreemption", "new"),
    "DefaultBinder": ("wasmsched.plugins.defaultbinder", "new"),
    "DynamicResources": ("wasmsched.plugins.dynamicresources", "new"),
    "VolumeBinding": ("wasmsched.plugins.volumebinding", "new"),
}


class Registry(Mapping[str, PluginFactory]):
    """Name -> factory; in-tree entries resolve lazily, out-of-tree ones are registered directly."""

    def __init__(self, extra: Mapping[str, PluginFactory] | None = None) -> None:
        self._resolved: dict[str, PluginFactory] = dict(extra or {})

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._resolved or name in _IN_TREE:
            raise ValueError(f'a plugin named "{name}" already exists')
        self._resolved[name] = factory

    def __getitem__(self, name: str) -> PluginFactory:
        f = self._resolved.get(name)
        if f is not None:
            return f
        mod, attr = _IN_TREE[name]
        factory: Any = getattr(importlib.import_module(mod), attr)
        self._resolved[name] = factory
        return factory  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        return name in self._resolved or name in _IN_TREE

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self._resolved) | set(_IN_TREE)))

    def __len__(self) -> int:
        return len(set(self._resolved) | set(_IN_TREE))


def in_tree_registry() -> Registry:
    return Registry()
