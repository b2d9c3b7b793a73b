"""A plugin that claims an extension point must implement its required methods: refused when it is
instantiated and when the framework is built, with the plugin, the extension point and the method
named; not at the first call."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    EXTENSION_POINT_CLASSES,
    EXTENSION_POINTS,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    IncompletePluginError,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScorePlugin,
    check_extension_points,
    unimplemented_methods,
)
from wasmsched.framework.runtime import Framework, FrameworkError, PluginRef, ProfilePlugins
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.prioritysort import PrioritySort
from wasmsched.scheduler.queue import Nominator
from wasmsched.testing.batch import batch_scores, filter_statuses
from wasmsched.testing.fake_handle import RecordingClient, RecordingEvents
from wasmsched.util.clock import SimClock


class Binder(BindPlugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None


class NoFilter(FilterPlugin):
    name = "NoFilter"


class HalfReserve(ReservePlugin):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None


class NoFilterNoEvents(FilterPlugin, EnqueueExtensions):
    pass


class OnlyRequired(PreFilterPlugin, FilterPlugin, ScorePlugin):
    """Implements just the required methods; pre_filter_extensions, filter_batch, score_batch and
    score_extensions keep their defaults."""

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 1, None


def test_missing_required_method_fails_at_instantiation() -> None:
    with pytest.raises(IncompletePluginError) as e:
        NoFilter()  # type: ignore[abstract]
    assert str(e.value) == "NoFilter does not implement filter() of the Filter extension point (FilterPlugin)"
    assert e.value.missing == [(FilterPlugin, "filter")]
    assert isinstance(e.value, TypeError)  # what instantiating an abstract class raises


def test_reserve_needs_unreserve_too() -> None:
    with pytest.raises(IncompletePluginError, match=r"^HalfReserve does not implement unreserve\(\) of the "
                                                    r"Reserve extension point \(ReservePlugin\)$"):
        HalfReserve()  # type: ignore[abstract]


def test_every_missing_method_is_named() -> None:
    with pytest.raises(IncompletePluginError) as e:
        NoFilterNoEvents()  # type: ignore[abstract]
    assert str(e.value) == (
        "NoFilterNoEvents does not implement events_to_register() of the EnqueueExtensions extension point; "
        "filter() of the Filter extension point (FilterPlugin)"
    )


def test_optional_methods_keep_their_defaults() -> None:
    pl = OnlyRequired()
    assert unimplemented_methods(OnlyRequired) == []
    assert pl.pre_filter_extensions() is None and pl.score_extensions() is None
    assert filter_statuses(pl, CycleState(), Pod(), []) == []
    assert batch_scores(pl, CycleState(), Pod(), []) == ([], None)


@pytest.mark.parametrize("iface", EXTENSION_POINT_CLASSES, ids=lambda c: c.__name__)
def test_every_extension_point_has_required_methods(iface: type[Plugin]) -> None:
    cls = type(f"Bare{iface.__name__}", (iface,), {})
    with pytest.raises(IncompletePluginError) as e:
        cls()
    assert [m for _, m in e.value.missing] == sorted(iface.__abstractmethods__) != []


def _framework(plugin_factory: Any, point: str = "filter") -> Framework:
    cfg = ProfilePlugins(enabled={"queue_sort": [PluginRef("QS")], "bind": [PluginRef("Binder")],
                                  point: [PluginRef("Broken")]})
    registry = {
        "QS": lambda args, handle: PrioritySort(),
        "Binder": lambda args, handle: Binder(),
        "Broken": plugin_factory,
    }
    snap = new_snapshot([], [])
    return Framework("p", cfg, {}, registry, client=RecordingClient(), event_recorder=RecordingEvents(),
                     snapshot=lambda: snap, pod_nominator=Nominator(), clock=SimClock().now)


def test_framework_refuses_the_plugin_naming_it() -> None:
    with pytest.raises(FrameworkError) as e:
        _framework(lambda args, handle: NoFilter())  # type: ignore[abstract]
    assert str(e.value) == ('profile "p": initializing plugin "Broken": '
                            "NoFilter does not implement filter() of the Filter extension point (FilterPlugin)")


def test_framework_refuses_a_class_registered_with_an_extension_point() -> None:
    # An ABC's register() makes isinstance true without the methods; instantiation cannot see it.
    class Duck:
        name = "Broken"

    FilterPlugin.register(Duck)
    with pytest.raises(FrameworkError) as e:
        _framework(lambda args, handle: Duck())
    assert str(e.value).endswith(
        "Duck does not implement filter() of the Filter extension point (FilterPlugin)")
    with pytest.raises(IncompletePluginError):
        check_extension_points(Duck())


def test_framework_accepts_a_complete_plugin() -> None:
    fwk = _framework(lambda args, handle: OnlyRequired())
    assert [pl.name for pl in fwk.plugins.filter] == ["Broken"]


def test_extension_points_of_the_runner_are_the_abstract_classes() -> None:
    interfaces = {ep.interface for ep in EXTENSION_POINTS if ep.interface}
    assert interfaces | {EnqueueExtensions} == set(EXTENSION_POINT_CLASSES)


def test_wasm_plugin_classes_implement_whatever_they_export() -> None:
    """A wasm plugin's class is composed from the guest's exports; each composition is complete."""
    from wasmsched.wasm.plugin import _POINTS, WasmPlugin, plugin_class

    assert unimplemented_methods(WasmPlugin) == []
    exports = [names[0] for names, _ in _POINTS]
    for n in range(len(exports) + 1):
        for combo in itertools.combinations(exports, n):
            assert unimplemented_methods(plugin_class(frozenset(combo))) == [], combo
