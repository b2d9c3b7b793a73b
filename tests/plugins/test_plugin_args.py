"""Plugin args, one way: every in-tree plugin that has args in kube-scheduler takes them through
config.args.get_args (kube's getArgs + ValidateXArgs); the others ignore them, as kube's do."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.config.args import (
    IN_TREE_ARGS,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
    get_args,
)
from wasmsched.config.errors import ConfigError
from wasmsched.framework.interface import Plugin, check_extension_points
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.testing.fake_handle import FakeHandle

# plugin -> (YAML args with a value its validation refuses, the field path kube reports)
BAD_VALUES: dict[str, tuple[dict[str, Any], str]] = {
    "DefaultPreemption": ({"minCandidateNodesPercentage": 101}, "args.minCandidateNodesPercentage"),
    "InterPodAffinity": ({"hardPodAffinityWeight": 101}, "args.hardPodAffinityWeight"),
    "NodeAffinity": (
        {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "Bogus"}]}]}}},
        ("args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
         ".matchExpressions[0].operator"),
    ),
    "NodeResourcesFit": ({"scoringStrategy": {"type": "Bogus"}}, "args.scoringStrategy.type"),
    "NodeResourcesBalancedAllocation": ({"resources": [{"name": "cpu", "weight": 2}]}, "args.resources[0].weight"),
    "PodTopologySpread": ({"defaultingType": "Bogus"}, "args.defaultingType"),
    "VolumeBinding": ({"bindTimeoutSeconds": -1}, "args.bindTimeoutSeconds"),
    "DynamicResources": ({"bindingTimeout": "0s"}, "args.bindingTimeout"),
}

# plugin -> YAML args that are valid and not the defaults
GOOD_VALUES: dict[str, dict[str, Any]] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 5},
    "InterPodAffinity": {"hardPodAffinityWeight": 7, "ignorePreferredTermsOfExistingPods": True},
    "NodeAffinity": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    "NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}},
    "NodeResourcesBalancedAllocation": {"resources": [{"name": "cpu", "weight": 1}]},
    "PodTopologySpread": {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
    "VolumeBinding": {"bindTimeoutSeconds": 30, "shape": [{"utilization": 0, "score": 0},
                                                          {"utilization": 100, "score": 10}]},
    "DynamicResources": {"filterTimeout": "3s", "bindingTimeout": "2m0s"},
}

# In kube-scheduler 1.37 these in-tree plugins take args (validation_pluginargs.go).
PLUGINS_WITH_ARGS = sorted(IN_TREE_ARGS)


def _new(name: str, args: object) -> Plugin:
    return in_tree_registry()[name](args, FakeHandle())


def test_tables_cover_every_plugin_with_args() -> None:
    assert PLUGINS_WITH_ARGS == sorted(BAD_VALUES) == sorted(GOOD_VALUES) == [
        "DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
        "NodeResourcesFit", "PodTopologySpread", "VolumeBinding",
    ]


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_none_means_the_v1_defaults(name: str) -> None:
    pl = _new(name, None)
    assert pl.args == IN_TREE_ARGS[name].default()  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_typed_args_are_used_as_given(name: str) -> None:
    args = IN_TREE_ARGS[name].from_dict(GOOD_VALUES[name])
    assert args != IN_TREE_ARGS[name].default()
    assert _new(name, args).args is args  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_dict_is_decoded_by_the_args_class(name: str) -> None:
    pl = _new(name, GOOD_VALUES[name])
    assert pl.args == IN_TREE_ARGS[name].from_dict(GOOD_VALUES[name])  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_dict_with_invalid_value_fails_validation_naming_the_field(name: str) -> None:
    raw, path = BAD_VALUES[name]
    with pytest.raises(ConfigError) as e:
        _new(name, raw)
    assert path in str(e.value)


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_typed_args_with_invalid_value_fail_validation_naming_the_field(name: str) -> None:
    raw, path = BAD_VALUES[name]
    # Decoding does not validate; the factory does.
    args = IN_TREE_ARGS[name].from_dict(raw)
    with pytest.raises(ConfigError) as e:
        _new(name, args)
    assert path in str(e.value)


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
def test_dict_with_unknown_key_is_a_decoding_error(name: str) -> None:
    with pytest.raises(ConfigError) as e:
        _new(name, {"bogus": 1})
    assert str(e.value) == 'strict decoding error: unknown field "args.bogus"'


@pytest.mark.parametrize("name", PLUGINS_WITH_ARGS)
@pytest.mark.parametrize("wrong", ["another plugin's args", "text", 3, ["a"]])
def test_args_of_another_type_are_refused_as_kube_getargs(name: str, wrong: object) -> None:
    cls = IN_TREE_ARGS[name]
    value = wrong
    if wrong == "another plugin's args":
        value = next(other for other in IN_TREE_ARGS.values() if other is not cls).default()
    with pytest.raises(TypeError) as e:
        _new(name, value)
    assert str(e.value) == f"want args to be of type {cls.__name__}, got {type(value).__name__}"


def test_get_args_itself() -> None:
    assert get_args(InterPodAffinityArgs, None) == InterPodAffinityArgs(1, False)
    assert get_args(InterPodAffinityArgs, {"hardPodAffinityWeight": 3}) == InterPodAffinityArgs(3, False)
    with pytest.raises(ConfigError, match=r"^x\.hardPodAffinityWeight: Invalid value: 101"):
        get_args(InterPodAffinityArgs, InterPodAffinityArgs(101), path="x")
    with pytest.raises(TypeError, match=r"^want args to be of type PodTopologySpreadArgs, got DefaultPreemptionArgs$"):
        get_args(PodTopologySpreadArgs, DefaultPreemptionArgs())  # type: ignore[arg-type]


def test_every_factory_of_a_plugin_with_args_types_its_args() -> None:
    """The factories' signatures name their args class (what the config loader passes)."""
    import inspect

    want: dict[str, type[PluginArgs]] = {
        "DefaultPreemption": DefaultPreemptionArgs, "InterPodAffinity": InterPodAffinityArgs,
        "NodeAffinity": NodeAffinityArgs, "NodeResourcesFit": NodeResourcesFitArgs,
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
        "PodTopologySpread": PodTopologySpreadArgs, "VolumeBinding": VolumeBindingArgs,
        "DynamicResources": DynamicResourcesArgs,
    }
    registry = in_tree_registry()
    for name, cls in want.items():
        annotation = inspect.signature(registry[name]).parameters["args"].annotation
        assert str(annotation).startswith(cls.__name__ + " |"), (name, annotation)


ARGLESS = sorted(set(in_tree_registry()) - set(IN_TREE_ARGS))


@pytest.mark.parametrize("name", ARGLESS)
def test_plugins_without_args_ignore_them_as_kube_does(name: str) -> None:
    # kube-scheduler's argless factories take `_ runtime.Object`: whatever pluginConfig says is unused.
    for args in (None, {"anything": 1}, InterPodAffinityArgs()):
        pl = _new(name, args)
        assert pl.name == name


@pytest.mark.parametrize("name", sorted(in_tree_registry()))
def test_every_in_tree_plugin_implements_its_extension_points(name: str) -> None:
    check_extension_points(_new(name, None))
