"""mergePlugins cases of kube-scheduler's v1/default_plugins_test.go (TestMergePlugins)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from wasmsched.config.defaults import KUBE_DEFAULT_MULTI_POINT, default_plugins, merge_plugins
from wasmsched.config.types import Plugin, Plugins, PluginSet
from wasmsched.plugins.registry import in_tree_registry


def ps(enabled: Sequence[str | tuple[str, int]] = (), disabled: Sequence[str] = ()) -> PluginSet:
    return PluginSet(
        enabled=[Plugin(e) if isinstance(e, str) else Plugin(*e) for e in enabled],
        disabled=[Plugin(d) for d in disabled],
    )


CASES = [
    (
        "AppendCustomPlugin",
        Plugins(filter=ps(["CustomPlugin"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "InsertAfterDefaultPlugins2",
        Plugins(filter=ps(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=ps(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])),
    ),
    (
        "InsertBeforeAllPlugins",
        Plugins(filter=ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
    ),
    (
        "ReorderDefaultPlugins",
        Plugins(filter=ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
    ),
    (
        "ApplyNilCustomPlugin",
        None,
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
    ),
    (
        "CustomPluginOverrideDefaultPlugin",
        Plugins(filter=ps([("Plugin1", 2), ("Plugin3", 3)])),
        Plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=ps([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])),
    ),
    (
        "OrderPreserveAfterOverride",
        Plugins(filter=ps([("Plugin2", 2), ("Plugin1", 1)])),
        Plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=ps([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])),
    ),
    (
        "RepeatedCustomPlugin",
        Plugins(filter=ps(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])),
        Plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=ps(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])),
    ),
    (
        "Append custom MultiPoint plugin",
        Plugins(multi_point=ps(["CustomPlugin"])),
        Plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "Append disabled Multipoint plugins",
        Plugins(
            multi_point=ps(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            score=ps([], ["CustomPlugin2"]),
        ),
        Plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(
            multi_point=ps(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            score=ps([], ["CustomPlugin2"]),
        ),
    ),
    (
        "override default MultiPoint plugins with custom value",
        Plugins(multi_point=ps([("DefaultPlugin", 5)])),
        Plugins(multi_point=ps(["DefaultPlugin"])),
        Plugins(multi_point=ps([("DefaultPlugin", 5)])),
    ),
    (
        "disabled MultiPoint plugin in default set",
        Plugins(multi_point=ps(["CustomPlugin"])),
        Plugins(multi_point=ps(["DefaultPlugin"], ["DefaultPlugin2"])),
        Plugins(multi_point=ps(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])),
    ),
    (
        "disabled MultiPoint plugin in default set for specific extension point",
        Plugins(multi_point=ps(["CustomPlugin"])),
        Plugins(multi_point=ps(["DefaultPlugin"]), score=ps([], ["DefaultPlugin2"])),
        Plugins(multi_point=ps(["DefaultPlugin", "CustomPlugin"]), score=ps([], ["DefaultPlugin2"])),
    ),
    (
        "multipoint with only disabled gets merged",
        Plugins(multi_point=ps([], ["DefaultPlugin"])),
        Plugins(multi_point=ps(["DefaultPlugin"])),
        Plugins(multi_point=ps([], ["DefaultPlugin"])),
    ),
]


@pytest.mark.parametrize(("custom", "default", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_merge_plugins(custom: Plugins | None, default: Plugins, expected: Plugins) -> None:
    assert merge_plugins(default, custom) == expected


def test_disabled_weights_are_dropped() -> None:
    merged = merge_plugins(Plugins(), Plugins(score=PluginSet(disabled=[Plugin("X", 7)])))
    assert merged.score.disabled == [Plugin("X", 0)]


def test_default_plugins_order_and_weights() -> None:
    got = [(p.name, p.weight) for p in default_plugins().multi_point.enabled]
    # kube 1.37.2's v1/default_plugins.go: getDefaultPlugins + applyFeatureGates at the default gates.
    assert got == [
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
    ]
    # Every call gives a fresh copy.
    a = default_plugins()
    a.multi_point.enabled.clear()
    assert default_plugins().multi_point.enabled


def test_default_plugins_are_kubes_that_wasmsched_has() -> None:
    """The default profile is kube's, restricted to the registry: a plugin that lands in the registry
    must be enabled by default too (the differential oracle keeps kube's plugins that the registry has)."""
    registry = in_tree_registry()
    got = [(p.name, p.weight) for p in default_plugins().multi_point.enabled]
    assert got == [(n, w) for n, w in KUBE_DEFAULT_MULTI_POINT if n in registry]
