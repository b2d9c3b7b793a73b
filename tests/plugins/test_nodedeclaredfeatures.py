"""Port of nodedeclaredfeatures/nodedeclaredfeatures_test.go, and of component-helpers'
nodedeclaredfeatures tests (framework_test.go, bitmap_test.go, featureset_test.go,
features/registry_test.go and each registered feature's test)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod, PodSpec
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status, is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import nodedeclaredfeatures
from wasmsched.plugins.nodedeclaredfeatures import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    PRE_FILTER_STATE_KEY,
    NodeDeclaredFeatures,
    node_declared_features,
)
from wasmsched.plugins.nodedeclaredfeatures import features as ndf_features
from wasmsched.plugins.nodedeclaredfeatures.featureset import FeatureMapper, FeatureSet
from wasmsched.plugins.nodedeclaredfeatures.framework import (
    Feature,
    FeatureGateMap,
    FeatureRequirements,
    Framework,
    NodeConfiguration,
    PodInfo,
    RuntimeFeatures,
)
from wasmsched.plugins.nodedeclaredfeatures.node_declared_features import _PreFilterState
from wasmsched.plugins.nodedeclaredfeatures.version import Version, parse, parse_generic, parse_semantic
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

UNSATISFIED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSATISFIED_REQUIREMENTS])


# ---------------------------------------------------------------- helpers (ndftesting's mocks)


@dataclass(eq=False)
class MockFeature(Feature):
    """ndftesting.MockFeature / framework_test.go's mockFeature."""

    feature_name: str
    infer: Callable[[PodInfo], bool] = lambda _: False
    infer_update: Callable[[PodInfo, PodInfo], bool] = lambda _o, _n: False
    discover_fn: Callable[[NodeConfiguration], bool] = lambda _: True
    max_ver: Version | None = None
    reqs: FeatureRequirements = field(default_factory=FeatureRequirements)

    def name(self) -> str:
        return self.feature_name

    def discover(self, cfg: NodeConfiguration) -> bool:
        return self.discover_fn(cfg)

    def requirements(self) -> FeatureRequirements:
        return self.reqs

    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        return self.infer(pod_info)

    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        return self.infer_update(old_pod_info, new_pod_info)

    def max_version(self) -> Version | None:
        return self.max_ver


def mock_feature(name: str, infer: bool, max_version: str = "") -> MockFeature:
    """createMockFeature."""
    return MockFeature(name, lambda _: infer, max_ver=parse_semantic(max_version) if max_version else None)


def mock_framework(*names: str) -> Framework:
    """ndftesting.NewMockFramework."""
    return Framework([MockFeature(n) for n in sorted(names)])


def declared_node(name: str, declared: Sequence[str] | None = None) -> Node:
    """st.MakeNode().Name(name).DeclaredFeatures(declared)."""
    n = make_node(name).obj()
    if declared is not None:
        n.status.declaredFeatures.extend(declared)
    return n


def labeled_declared_node(name: str, declared: Sequence[str]) -> Node:
    n = declared_node(name, declared)
    n.metadata.labels["a"] = "b"
    return n


def plain_pod(name: str = "test-pod", uid: str = "") -> Pod:
    w = make_pod(name)
    if uid:
        w.uid(uid)
    return w.obj()


# ---------------------------------------------------------------- TestPreFilter

FEATURE1, FEATURE2 = "TestFeature1", "TestFeature2"
_PF_MAPPER = FeatureMapper([FEATURE1, FEATURE2])

PRE_FILTER_CASES = [
    ("plugin disabled", False, "1.35.0", [mock_feature(FEATURE1, True), mock_feature(FEATURE2, False)],
     Status.skip(), None),
    ("Pod with feature requirements", True, "1.35.0",
     [mock_feature(FEATURE1, True), mock_feature(FEATURE2, False)], None, [FEATURE1]),
    ("Pod with multiple feature requirements", True, "1.35.0",
     [mock_feature(FEATURE1, True, "1.38.0"), mock_feature(FEATURE2, True, "1.38.0")], None, [FEATURE1, FEATURE2]),
    ("Pod with no requirements", True, "1.35.0", [mock_feature(FEATURE1, False), mock_feature(FEATURE2, False)],
     Status.skip(), None),
    ("Feature not required, version > MaxVersion", True, "1.34.0",
     [mock_feature(FEATURE1, True, "1.33.0"), mock_feature(FEATURE2, False)], Status.skip(), None),
]


@pytest.mark.parametrize(("name", "enabled", "component_version", "feats", "want_status", "want_reqs"),
                         PRE_FILTER_CASES, ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(name: str, enabled: bool, component_version: str, feats: list[Feature],
                    want_status: Status | None, want_reqs: list[str] | None) -> None:
    pl = NodeDeclaredFeatures(Framework(feats), parse_semantic(component_version), enabled)
    state = CycleState()
    result, status = pl.pre_filter(state, plain_pod(), [])
    assert result is None
    assert status == want_status
    stored = state.get(PRE_FILTER_STATE_KEY)
    if want_reqs is None:
        assert stored is None
    else:
        assert stored.reqs.equal(_PF_MAPPER.must_map_sorted(want_reqs))


# ---------------------------------------------------------------- TestFilter

FEATURE_A, FEATURE_B, FEATURE_C = "FeatureA", "FeatureB", "FeatureC"

FILTER_CASES = [
    ("plugin disabled", False, declared_node("node-1", [FEATURE_A, FEATURE_B]), None, None),
    ("Node matches requirements", True, declared_node("node-1", [FEATURE_A, FEATURE_B]), [FEATURE_A], None),
    ("Node does not match requirements", True, declared_node("node-1", [FEATURE_B]), [FEATURE_A], UNSATISFIED),
    # pluginEnabled is unset (false) in kube's table too.
    ("Node with multiple features, pod requires subset", False,
     declared_node("node-multi", [FEATURE_A, FEATURE_B, FEATURE_C]), [FEATURE_A, FEATURE_C], None),
    ("Node has no declared features", True, declared_node("node-1"), [FEATURE_A], UNSATISFIED),
    ("Node with some but not all required features", True, declared_node("node-1", [FEATURE_A]),
     [FEATURE_A, FEATURE_B], UNSATISFIED),
    ("Error getting pre-filter state", True, declared_node("node-1"), None,
     Status.error('error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found')),
]


@pytest.mark.parametrize(("name", "enabled", "node", "pre_filter_reqs", "want"), FILTER_CASES,
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(name: str, enabled: bool, node: Node, pre_filter_reqs: list[str] | None,
                want: Status | None) -> None:
    fw = mock_framework(FEATURE_A, FEATURE_B, FEATURE_C)
    pl = NodeDeclaredFeatures(fw, parse_semantic("1.35.0"), enabled)
    state = CycleState()
    if pre_filter_reqs is not None:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(fw.must_map_sorted(pre_filter_reqs)))
    ni = NodeInfo(node)
    got = pl.filter(state, plain_pod(), ni)
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert (got.code, got.message()) == (want.code, want.message())
    batch = filter_statuses(pl, state, plain_pod(), [ni, ni])
    assert [(st.code, st.message()) if st else None for st in batch] == [(got.code, got.message()) if got else None] * 2


def test_filter_with_wrong_state_type() -> None:
    state = CycleState()
    state.write(PRE_FILTER_STATE_KEY, object())
    got = NodeDeclaredFeatures().filter(state, plain_pod(), NodeInfo(declared_node("n")))
    assert got is not None and got.code == Code.ERROR
    assert got.message() == ("invalid PreFilter state, got type object, "
                             "expected *nodedeclaredfeatures.preFilterState")


# ---------------------------------------------------------------- queueing hints

NODE_HINT_CASES = [
    ("Node Add with feature", None, declared_node("node-1", ["FeatureA"]), QueueingHint.QUEUE),
    ("Node Update (Features Added)", declared_node("node-1"), declared_node("node-1", ["FeatureA"]),
     QueueingHint.QUEUE),
    ("Node Update (Features Unchanged)", declared_node("node-1", ["FeatureA"]),
     declared_node("node-1", ["FeatureA"]), QueueingHint.QUEUE_SKIP),
    # Beyond kube's table: a removal or a reordering is a change too (kube compares the slices).
    ("Node Update (Features Removed)", declared_node("node-1", ["FeatureA"]), declared_node("node-1"),
     QueueingHint.QUEUE),
    ("Node Update (Features Reordered)", declared_node("node-1", ["FeatureA", "FeatureB"]),
     declared_node("node-1", ["FeatureB", "FeatureA"]), QueueingHint.QUEUE),
    ("Node Update (labels only)", declared_node("node-1", ["FeatureA"]),
     labeled_declared_node("node-1", ["FeatureA"]), QueueingHint.QUEUE_SKIP),
    ("not a node", None, plain_pod(), QueueingHint.QUEUE),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), NODE_HINT_CASES, ids=[c[0] for c in NODE_HINT_CASES])
def test_is_schedulable_after_node_change(name: str, old: Node | None, new: object, want: QueueingHint) -> None:
    pl = NodeDeclaredFeatures(Framework([]), parse_semantic("1.35.0"))
    assert pl.is_schedulable_after_node_change(plain_pod(), old, new) == want


def _counting_infer(results: list[bool]) -> Callable[[PodInfo], bool]:
    calls = iter(results)

    def infer(_: PodInfo) -> bool:
        try:
            return next(calls)
        except StopIteration:
            raise AssertionError("unexpected calls to InferForScheduling") from None

    return infer


TARGET_POD_CASES = [
    ("Pod Update adds requirement", plain_pod(uid="123"), make_pod("test-pod").uid("123").label("foo", "bar").obj(),
     _counting_infer([False, True]), "1.35.0", QueueingHint.QUEUE),
    ("Pod Update removes requirement", make_pod("test-pod").uid("123").label("foo", "bar").obj(),
     plain_pod(uid="123"), _counting_infer([True, False]), "1.35.0", QueueingHint.QUEUE),
    ("Pod Update with no change in requirements", plain_pod(uid="123"), plain_pod(uid="123"),
     lambda _: False, "1.35.0", QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize(("name", "old", "new", "infer", "version", "want"), TARGET_POD_CASES,
                         ids=[c[0] for c in TARGET_POD_CASES])
def test_is_schedulable_after_target_pod_update(name: str, old: Pod, new: Pod, infer: Callable[[PodInfo], bool],
                                                version: str, want: QueueingHint) -> None:
    pl = NodeDeclaredFeatures(Framework([MockFeature("TestFeature", infer)]), parse_semantic(version))
    assert pl.is_schedulable_after_target_pod_update(plain_pod(uid="123"), old, new) == want


def test_is_schedulable_after_target_pod_update_infer_error() -> None:
    """"Infer returns error": kube returns Queue with the error; here the hint raises it, and the
    queue requeues a pod whose hint raised (queue.py), logging the error."""
    pl = NodeDeclaredFeatures(Framework([MockFeature("TestFeature", lambda _: True)]), None)
    with pytest.raises(ValueError, match="target version cannot be nil"):
        pl.is_schedulable_after_target_pod_update(
            plain_pod(uid="123"), plain_pod(uid="123"), make_pod("test-pod").uid("123").label("foo", "bar").obj())


def test_is_schedulable_after_target_pod_update_with_real_features() -> None:
    """With the registered features: gaining a RestartAllContainers rule (which the API server would
    refuse, restart rules being immutable) changes the requirements, a label does not."""
    pl = nodedeclaredfeatures.new_default()
    old = plain_pod(uid="123")
    relabeled = make_pod("test-pod").uid("123").label("foo", "bar").obj()
    assert pl.is_schedulable_after_target_pod_update(old, old, relabeled) == QueueingHint.QUEUE_SKIP
    assert pl.is_schedulable_after_target_pod_update(old, old, restart_all_pod()) == QueueingHint.QUEUE


@pytest.mark.parametrize(("name", "enabled", "length"), [("plugin disabled", False, 0), ("plugin enabled", True, 2)])
def test_events_to_register(name: str, enabled: bool, length: int) -> None:
    assert len(NodeDeclaredFeatures(None, None, enabled).events_to_register()) == length


def test_events_to_register_events() -> None:
    pl = nodedeclaredfeatures.new_default()
    evs = pl.events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
    ]
    assert [e.queueing_hint_fn for e in evs] == [pl.is_schedulable_after_node_change,
                                                 pl.is_schedulable_after_target_pod_update]
    # A declared-features update matches the node registration; a label-only update does not.
    assert evs[0].event.match(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_DECLARED_FEATURE))
    assert not evs[0].event.match(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL))


def test_deferred_resize_skipped() -> None:
    """TestNodeDeclaredFeatures_DeferredResizeSkipped."""
    pod = make_pod("p").uid("p").obj()
    c = pod.status.conditions.add()
    c.type, c.status, c.reason = "PodResizePending", "True", "Deferred"
    ni = NodeInfo(make_node("node1").obj())
    pl = NodeDeclaredFeatures(None, None, True, enable_in_place_pod_vertical_scaling_scheduler_preemption=True)
    result, status = pl.pre_filter(CycleState(), pod, [])
    assert result is None and is_skip(status)
    assert pl.filter(CycleState(), pod, ni) is None


def test_deferred_resize_not_skipped_by_default() -> None:
    """InPlacePodVerticalScalingSchedulerPreemption is alpha and off in 1.37: a deferred resize
    changes nothing."""
    pod = restart_all_pod()
    c = pod.status.conditions.add()
    c.type, c.status, c.reason = "PodResizePending", "True", "Deferred"
    pl = nodedeclaredfeatures.new_default()
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    assert pl.filter(state, pod, NodeInfo(make_node("n").obj())) == UNSATISFIED


# ---------------------------------------------------------------- the plugin with the registered features


def restart_all_pod(init: bool = False) -> Pod:
    pod = plain_pod(uid="123")
    c = (pod.spec.initContainers if init else pod.spec.containers).add()
    c.name, c.image, c.restartPolicy = "container", "image", "Never"
    rule = c.restartPolicyRules.add()
    rule.action = "RestartAllContainers"
    rule.exitCodes.operator = "In"
    rule.exitCodes.values.append(1)
    return pod


def host_network_userns_pod() -> Pod:
    pod = plain_pod()
    pod.spec.hostNetwork = True
    pod.spec.hostUsers = False
    return pod


def bind_mount_pod(kind: str) -> Pod:
    pod = plain_pod()
    c: Any
    if kind == "ephemeral":
        c = pod.spec.ephemeralContainers.add().ephemeralContainerCommon
    else:
        c = (pod.spec.initContainers if kind == "init" else pod.spec.containers).add()
    c.name = "c"
    m = c.volumeMounts.add()
    m.name, m.mountPath = "v", "/v"
    m.bindMountOptions.append("noexec")
    return pod


ALL_NAMES = sorted(f.name() for f in ndf_features.ALL_FEATURES)

DEFAULT_CASES = [
    ("no requirements", plain_pod(), [], None, None),
    ("restart rule, node without features", restart_all_pod(), [], ["RestartAllContainersOnContainerExits"],
     UNSATISFIED),
    ("restart rule, node declares it", restart_all_pod(), ["RestartAllContainersOnContainerExits"],
     ["RestartAllContainersOnContainerExits"], None),
    ("restart rule in an init container", restart_all_pod(init=True), ["ExtendWebSocketsToKubelet"],
     ["RestartAllContainersOnContainerExits"], UNSATISFIED),
    ("hostNetwork with a user namespace", host_network_userns_pod(),
     ["RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"],
     ["UserNamespacesHostNetworkSupport"], None),
    ("bind mount options", bind_mount_pod("regular"), ["UserNamespacesHostNetworkSupport"],
     ["VolumeBindMountOptions"], UNSATISFIED),
    ("bind mount options in an ephemeral container", bind_mount_pod("ephemeral"), ["VolumeBindMountOptions"],
     ["VolumeBindMountOptions"], None),
    # Unknown names are ignored (TryMap), even when they sort between known ones.
    ("unknown declared features are ignored", restart_all_pod(),
     ["Aaa", "RestartAllContainersOnContainerExits", "Sub/feature", "Zzz"],
     ["RestartAllContainersOnContainerExits"], None),
    ("every feature declared", host_network_userns_pod(), ALL_NAMES, ["UserNamespacesHostNetworkSupport"], None),
]


@pytest.mark.parametrize(("name", "pod", "declared", "want_reqs", "want_filter"), DEFAULT_CASES,
                         ids=[c[0] for c in DEFAULT_CASES])
def test_default_framework(name: str, pod: Pod, declared: list[str], want_reqs: list[str],
                           want_filter: Status | None) -> None:
    pl = in_tree_registry()["NodeDeclaredFeatures"](None, FakeHandle())
    assert isinstance(pl, NodeDeclaredFeatures)
    state = CycleState()
    _, status = pl.pre_filter(state, pod, [])
    if not want_reqs:
        assert is_skip(status)
        return
    assert status is None
    reqs = state.read(PRE_FILTER_STATE_KEY).reqs
    assert pl.ndf_framework is not None and pl.ndf_framework.unmap(reqs) == want_reqs
    assert pl.filter(state, pod, NodeInfo(declared_node("n", declared))) == want_filter


def test_node_declared_features_memo_follows_node() -> None:
    ni = NodeInfo(declared_node("n", ["VolumeBindMountOptions"]))
    fw = nodedeclaredfeatures.DEFAULT_FRAMEWORK
    assert fw.unmap(node_declared_features(ni)) == ["VolumeBindMountOptions"]
    ni.set_node(declared_node("n", ["ExtendWebSocketsToKubelet", "VolumeBindMountOptions"]))
    assert fw.unmap(node_declared_features(ni)) == ["ExtendWebSocketsToKubelet", "VolumeBindMountOptions"]
    other = mock_framework("VolumeBindMountOptions")
    assert other.unmap(node_declared_features(ni, other)) == ["VolumeBindMountOptions"]
    assert node_declared_features(NodeInfo(), other).is_empty()


# ---------------------------------------------------------------- framework_test.go

_FEATURE_MAX = parse("1.38.0")
_DISCOVER_REGISTRY = [
    MockFeature("FeatureA", discover_fn=lambda cfg: cfg.feature_gates.enabled("feature-a"), max_ver=_FEATURE_MAX,
                reqs=FeatureRequirements(("feature-a",))),
    MockFeature("FeatureB", discover_fn=lambda cfg: cfg.feature_gates.enabled("feature-b"), max_ver=_FEATURE_MAX,
                reqs=FeatureRequirements(("feature-b",))),
]

DISCOVER_CASES = [
    ("Feature Enabled", NodeConfiguration(FeatureGateMap({"feature-a": True})), ["FeatureA"]),
    ("multiple features enabled", NodeConfiguration(FeatureGateMap({"feature-a": True, "feature-b": True})),
     ["FeatureA", "FeatureB"]),
    ("no features enabled", NodeConfiguration(FeatureGateMap({"feature-a": False, "feature-b": False})), []),
    ("feature past max version", NodeConfiguration(FeatureGateMap({"feature-a": True}), _FEATURE_MAX.add_minor(1)),
     []),
    ("feature past max version - pre-release version",
     NodeConfiguration(FeatureGateMap({"feature-a": True}), parse("1.39.0-alpha.2.39+049eafd34dfbd2")), []),
]


@pytest.mark.parametrize(("name", "cfg", "want"), DISCOVER_CASES, ids=[c[0] for c in DISCOVER_CASES])
def test_discover_node_features(name: str, cfg: NodeConfiguration, want: list[str]) -> None:
    assert Framework(_DISCOVER_REGISTRY).discover_node_features(cfg) == want


def _pod_level_pod(with_resources: bool) -> Pod:
    pod = plain_pod("pod-with-podlevelresources" if with_resources else "pod-without-podlevelresources")
    if with_resources:
        pod.spec.resources.requests["cpu"].string = "500m"
    return pod


def _infer_pod_level(p: PodInfo) -> bool:
    return p.spec.HasField("resources")


_PLR_REQS = FeatureRequirements(("pod-level-resources",))

INFER_SCHEDULING_CASES = [
    ("pod with feature, inferred during scheduling",
     MockFeature("PodLevelResources", _infer_pod_level, reqs=_PLR_REQS), True, "1.30.0", ["PodLevelResources"]),
    ("pod without feature", MockFeature("PodLevelResources", _infer_pod_level, reqs=_PLR_REQS), False, "1.30.0",
     []),
    ("feature universally available, not inferred during create",
     MockFeature("PodLevelResources", _infer_pod_level, max_ver=parse("1.30.0"), reqs=_PLR_REQS), True, "1.31.0",
     []),
    ("pre-release target version",
     MockFeature("PodLevelResources", _infer_pod_level, max_ver=parse("1.30.0"), reqs=_PLR_REQS), True,
     "0.0.0-alpha.2.39+049eafd34dfbd2", ["PodLevelResources"]),
    ("exceeds max version", MockFeature("PodLevelResources", _infer_pod_level, max_ver=parse("1.30.0")), True,
     "1.40.0", []),
]


@pytest.mark.parametrize(("name", "feature", "with_resources", "target", "want"), INFER_SCHEDULING_CASES,
                         ids=[c[0] for c in INFER_SCHEDULING_CASES])
def test_infer_for_pod_scheduling(name: str, feature: Feature, with_resources: bool, target: str,
                                  want: list[str]) -> None:
    fw = Framework([feature])
    pod = _pod_level_pod(with_resources)
    assert fw.unmap(fw.infer_for_pod_scheduling(PodInfo(pod.spec, pod.status), parse(target))) == want


def test_infer_for_pod_scheduling_nil_target_version() -> None:
    fw = Framework([MockFeature("PodLevelResources", _infer_pod_level, reqs=_PLR_REQS)])
    pod = _pod_level_pod(True)
    with pytest.raises(ValueError, match="target version cannot be nil"):
        fw.infer_for_pod_scheduling(PodInfo(pod.spec, pod.status), None)


def _cpu_pod(cpu: str) -> Pod:
    return make_pod("test-pod").container(name="c1", cpu=cpu).obj()


def _infer_resize(old: PodInfo, new: PodInfo) -> bool:
    o, n = old.spec.containers[0].resources.requests, new.spec.containers[0].resources.requests
    return ndf_features._quantity_cmp(o["cpu"].string, n["cpu"].string) != 0


_IPR_REQS = FeatureRequirements(("inplace-pod-resize",))

INFER_UPDATE_CASES = [
    ("pod update requires feature", None, "1", "2", "1.30.0", ["InPlacePodResize"]),
    ("pod update requires feature with pre-release version", None, "1", "2", "1.35.0-alpha.2.39+049eafd34dfbd2",
     ["InPlacePodResize"]),
    ("pod update does not require feature", None, "1", "1", "1.30.0", []),
    ("feature universally available, not inferred during update", "1.30.0", "1", "2", "1.31.0", []),
]


@pytest.mark.parametrize(("name", "max_version", "old_cpu", "new_cpu", "target", "want"), INFER_UPDATE_CASES,
                         ids=[c[0] for c in INFER_UPDATE_CASES])
def test_infer_for_pod_update(name: str, max_version: str | None, old_cpu: str, new_cpu: str, target: str,
                              want: list[str]) -> None:
    fw = Framework([MockFeature("InPlacePodResize", infer_update=_infer_resize,
                                max_ver=parse(max_version) if max_version else None, reqs=_IPR_REQS)])
    old, new = _cpu_pod(old_cpu), _cpu_pod(new_cpu)
    reqs = fw.infer_for_pod_update(PodInfo(old.spec, old.status), PodInfo(new.spec, new.status), parse(target))
    assert fw.unmap(reqs) == want


def test_infer_for_pod_update_nil_target_version() -> None:
    fw = Framework([MockFeature("InPlacePodResize", infer_update=_infer_resize, reqs=_IPR_REQS)])
    old, new = _cpu_pod("1"), _cpu_pod("2")
    with pytest.raises(ValueError, match="target version cannot be nil"):
        fw.infer_for_pod_update(PodInfo(old.spec), PodInfo(new.spec), None)


MATCH_CASES = [
    ("all features match", ["feature-a", "feature-b"], ["feature-a", "feature-b", "feature-c"], True, []),
    ("some features missing", ["feature-a", "feature-b"], ["feature-a", "feature-c"], False, ["feature-b"]),
    ("all features missing", ["feature-a", "feature-b"], ["feature-c"], False, ["feature-a", "feature-b"]),
    ("no node features", ["feature-a", "feature-b"], [], False, ["feature-a", "feature-b"]),
    ("no requirements", [], ["feature-a", "feature-b", "feature-c"], True, []),
]


@pytest.mark.parametrize("variation", ["MatchNode", "MatchNodeFeatureSet"])
@pytest.mark.parametrize(("name", "reqs", "node_features", "want_match", "want_unsatisfied"), MATCH_CASES,
                         ids=[c[0] for c in MATCH_CASES])
def test_match_node(name: str, reqs: list[str], node_features: list[str], want_match: bool,
                    want_unsatisfied: list[str], variation: str) -> None:
    fw = mock_framework("feature-a", "feature-b", "feature-c")
    if variation == "MatchNode":
        node = Node()
        node.status.declaredFeatures.extend(node_features)
        result = fw.match_node(fw.must_map_sorted(reqs), node)
    else:
        result = fw.match_node_feature_set(fw.must_map_sorted(reqs), fw.must_map_sorted(node_features))
    assert result.is_match == want_match
    assert sorted(result.unsatisfied_requirements) == want_unsatisfied


def test_match_nil_node() -> None:
    fw = mock_framework("feature-a", "feature-b", "feature-c")
    with pytest.raises(ValueError, match="node cannot be nil"):
        fw.match_node(fw.must_map_sorted(["feature-a"]), None)


def test_get_feature_requirements() -> None:
    fw = nodedeclaredfeatures.DEFAULT_FRAMEWORK
    assert fw.get_feature_requirements("VolumeBindMountOptions") == FeatureRequirements(
        ("VolumeBindMountOptions",), RuntimeFeatures(mount_options=True))
    with pytest.raises(ValueError, match="feature 'Nope' not registered"):
        fw.get_feature_requirements("Nope")


# ---------------------------------------------------------------- bitmap_test.go and featureset_test.go


def test_bitmap_get_set() -> None:
    b = FeatureSet(128)
    indices = [0, 63, 64, 127]
    assert not any(b.get(i) for i in indices)
    for i in indices:
        b.set(i)
    assert all(b.get(i) for i in indices)
    assert not any(b.get(i) for i in (1, 62, 65))
    for i in (-1, 128):
        with pytest.raises(IndexError, match=f"^bitmap index out of range: {i}$"):
            b.set(i)
        with pytest.raises(IndexError, match=f"^bitmap index out of range: {i}$"):
            b.get(i)


def test_bitmap_negative_size() -> None:
    with pytest.raises(ValueError, match="bitmap size must be positive: -1"):
        FeatureSet(-1)


DIFF_CASES = [
    ("Mismatch size", 64, 128, [], [], None),
    ("Disjoint sets", 64, 64, [1, 2], [3, 4], [1, 2]),
    ("Overlap", 64, 64, [1, 2, 3], [2, 3, 4], [1]),
    ("Identical", 64, 64, [1, 2], [1, 2], []),
    ("Subset", 64, 64, [1, 2], [1, 2, 3], []),
    ("Superset", 64, 64, [1, 2, 3], [1, 2], [3]),
    ("Empty contains Empty", 64, 64, [], [], []),
]


@pytest.mark.parametrize(("name", "b_size", "other_size", "b_sets", "other_sets", "want_diff"), DIFF_CASES,
                         ids=[c[0] for c in DIFF_CASES])
def test_bitmap_difference_subset(name: str, b_size: int, other_size: int, b_sets: list[int],
                                  other_sets: list[int], want_diff: list[int] | None) -> None:
    b, other = FeatureSet(b_size), FeatureSet(other_size)
    for i in b_sets:
        b.set(i)
    for i in other_sets:
        other.set(i)
    if want_diff is None:
        with pytest.raises(ValueError, match="bitmap size mismatch: 64 != 128"):
            b.difference(other)
        with pytest.raises(ValueError, match="bitmap size mismatch; 64 != 128"):
            b.is_subset(other)
        return
    diff = b.difference(other)
    assert [i for i in range(b_size) if diff.get(i)] == want_diff
    assert b.is_subset(other) == (not want_diff)


def test_bitmap_equal_empty_clone() -> None:
    b1, b2, b3, b4 = FeatureSet(64), FeatureSet(64), FeatureSet(64), FeatureSet(128)
    b1.set(1)
    b2.set(1)
    b3.set(2)
    b4.set(1)
    assert b1.equal(b2) and not b1.equal(b3) and not b1.equal(b4)
    e = FeatureSet(64)
    assert e.is_empty()
    e.set(10)
    assert not e.is_empty()
    clone = b1.clone()
    assert b1.equal(clone)
    clone.set(2)
    assert not clone.equal(b1) and not b1.get(2) and clone.get(2)


@pytest.mark.parametrize(("name", "size", "sets", "want"), [
    ("Size 5, bit 0 and 4 set", 5, [0, 4], "10001"),
    ("Size 10, no bits set", 10, [], "0000000000"),
    ("Size 65, bit 0 and 64 set", 65, [0, 64], "1" + "0" * 63 + "1"),
])
def test_bitmap_string(name: str, size: int, sets: list[int], want: str) -> None:
    b = FeatureSet(size)
    for i in sets:
        b.set(i)
    assert str(b) == want


MAPPER_FEATURES = ["a", "b", "c", "d"]
MAPPER_CASES = [
    ("Empty input", [], False, set()),
    ("Single valid feature", ["a"], False, {0}),
    ("Multiple valid features", ["a", "c"], False, {0, 2}),
    ("All features", ["a", "b", "c", "d"], False, {0, 1, 2, 3}),
    ("Unknown feature (start)", ["0", "a"], True, {0}),
    ("Unknown feature (middle)", ["a", "ab", "b"], True, {0, 1}),
    ("Unknown feature (end)", ["d", "e"], True, {3}),
]


@pytest.mark.parametrize(("name", "inp", "want_err", "want_set"), MAPPER_CASES, ids=[c[0] for c in MAPPER_CASES])
def test_feature_mapper(name: str, inp: list[str], want_err: bool, want_set: set[int]) -> None:
    mapper = FeatureMapper(MAPPER_FEATURES)
    fs = mapper.try_map(inp)
    assert {i for i in range(len(MAPPER_FEATURES)) if fs.get(i)} == want_set
    if want_err:
        with pytest.raises(ValueError, match=r"^unknown feature "):
            mapper.map_sorted(inp)
        with pytest.raises(ValueError):
            mapper.must_map_sorted(inp)
    else:
        assert mapper.map_sorted(inp).equal(fs)
        assert mapper.must_map_sorted(inp).equal(fs)
    unmapped = mapper.unmap(fs)
    assert len(unmapped) == len(want_set)
    if want_err:
        assert set(unmapped) <= set(inp)
    else:
        assert unmapped == inp


def test_unmap_size_mismatch() -> None:
    with pytest.raises(ValueError, match=r"feature size mismatch! s.size=3; len\(m.registeredFeatures\)=4"):
        FeatureMapper(MAPPER_FEATURES).unmap(FeatureSet(3))


# ---------------------------------------------------------------- the registered features


def test_registry() -> None:
    """registry.go's AllFeatures: nine features; the framework orders them by name."""
    assert [f.name() for f in ndf_features.ALL_FEATURES] == [
        "RestartAllContainersOnContainerExits", "InPlacePodLevelResourcesVerticalScaling",
        "ExtendWebSocketsToKubelet", "InPlacePodVerticalScalingInitContainers",
        "InPlacePodVerticalScalingMemoryBackedVolumes", "UserNamespacesHostNetworkSupport",
        "DRANodeAllocatableResources", "VolumeBindMountOptions", "DRAOptionalNodeOperations",
    ]
    assert nodedeclaredfeatures.DEFAULT_FRAMEWORK.registered_features == ALL_NAMES
    assert all(f.max_version() is None for f in ndf_features.ALL_FEATURES)


@pytest.mark.parametrize("feature", ndf_features.ALL_FEATURES, ids=lambda f: f.name())
def test_feature_requirements_consistency(feature: Feature) -> None:
    """TestFeatureRequirementsConsistency: Discover checks the gates Requirements declares."""
    reqs = feature.requirements()
    assert reqs.enabled_feature_gates
    gates = dict.fromkeys(reqs.enabled_feature_gates, True)
    runtime = reqs.required_runtime_features or RuntimeFeatures()
    cfg = NodeConfiguration(FeatureGateMap(gates), parse("1.36.0"), runtime)
    assert feature.discover(cfg)
    gates[reqs.enabled_feature_gates[0]] = False
    assert not feature.discover(NodeConfiguration(FeatureGateMap(gates), parse("1.36.0"), runtime))


@pytest.mark.parametrize("feature", ndf_features.ALL_FEATURES, ids=lambda f: f.name())
@pytest.mark.parametrize("gate", [True, False])
def test_feature_discover_gate(feature: Feature, gate: bool) -> None:
    """Each feature test's TestDiscover: the feature gate alone decides (runtime support given)."""
    cfg = NodeConfiguration(FeatureGateMap({feature.name(): gate}),
                            runtime_features=RuntimeFeatures(user_namespaces_host_network=True, mount_options=True))
    assert feature.discover(cfg) == gate


@pytest.mark.parametrize("feature", ndf_features.ALL_FEATURES, ids=lambda f: f.name())
def test_feature_single_gate_requirement(feature: Feature) -> None:
    """Each feature test's TestRequirements: exactly the feature's own gate."""
    assert feature.requirements().enabled_feature_gates == (feature.name(),)


@pytest.mark.parametrize("feature", [f for f in ndf_features.ALL_FEATURES if f.name() not in (
    "RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions")],
    ids=lambda f: f.name())
def test_feature_not_needed_for_scheduling(feature: Feature) -> None:
    """The TestInferForScheduling of the features that concern updates (or nothing)."""
    assert not feature.infer_for_scheduling(PodInfo(host_network_userns_pod().spec))
    assert not feature.infer_for_scheduling(PodInfo(restart_all_pod().spec))
    assert not feature.infer_for_scheduling(PodInfo(PodSpec()))


@pytest.mark.parametrize("feature", [f for f in ndf_features.ALL_FEATURES if f.name() not in (
    "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers",
    "InPlacePodVerticalScalingMemoryBackedVolumes")], ids=lambda f: f.name())
def test_feature_not_needed_for_update(feature: Feature) -> None:
    assert not feature.infer_for_update(PodInfo(PodSpec()), PodInfo(restart_all_pod().spec))


# restartallcontainers


def _with_plain_containers(pod: Pod) -> Pod:
    """Adds a plain container to whichever of containers and initContainers is empty."""
    for containers in (pod.spec.containers, pod.spec.initContainers):
        if not containers:
            c = containers.add()
            c.name, c.image = "name", "image"
    return pod


@pytest.mark.parametrize(("name", "pod", "want"), [
    ("init container with rules", _with_plain_containers(restart_all_pod(init=True)), True),
    ("regular container with rules", _with_plain_containers(restart_all_pod()), True),
    ("no rules", _with_plain_containers(plain_pod()), False),
])
def test_restart_all_containers_infer_for_scheduling(name: str, pod: Pod, want: bool) -> None:
    assert ndf_features.RestartAllContainersFeature().infer_for_scheduling(PodInfo(pod.spec)) == want


def test_restart_all_containers_other_action() -> None:
    pod = restart_all_pod()
    pod.spec.containers[0].restartPolicyRules[0].action = "Restart"
    assert not ndf_features.RestartAllContainersFeature().infer_for_scheduling(PodInfo(pod.spec))


# usernamespaceshostnetwork


@pytest.mark.parametrize(("name", "gate", "runtime", "want"), [
    ("feature gate disabled", False, True, False),
    ("feature gate enabled but no runtime support", True, False, False),
    ("feature gate enabled and runtime supports it", True, True, True),
    ("runtime support is on", True, True, True),
    ("runtime support is off", True, False, False),
])
def test_user_namespaces_host_network_discover(name: str, gate: bool, runtime: bool, want: bool) -> None:
    cfg = NodeConfiguration(FeatureGateMap({"UserNamespacesHostNetworkSupport": gate}),
                            runtime_features=RuntimeFeatures(user_namespaces_host_network=runtime))
    assert ndf_features.UserNamespacesHostNetworkFeature().discover(cfg) == want


def test_user_namespaces_host_network_requirements() -> None:
    f = ndf_features.UserNamespacesHostNetworkFeature()
    assert f.name() == "UserNamespacesHostNetworkSupport"
    assert f.requirements() == FeatureRequirements(("UserNamespacesHostNetworkSupport",),
                                                   RuntimeFeatures(user_namespaces_host_network=True))


@pytest.mark.parametrize(("name", "host_network", "host_users", "want"), [
    ("HostNetwork true, HostUsers false", True, False, True),
    ("HostNetwork true, HostUsers nil", True, None, False),
    ("HostNetwork true, HostUsers true", True, True, False),
    ("HostNetwork false, HostUsers false", False, False, False),
])
def test_user_namespaces_host_network_infer(name: str, host_network: bool, host_users: bool | None,
                                            want: bool) -> None:
    spec = PodSpec(hostNetwork=host_network)
    if host_users is not None:
        spec.hostUsers = host_users
    assert ndf_features.UserNamespacesHostNetworkFeature().infer_for_scheduling(PodInfo(spec)) == want


# volumebindmountoptions (kube has no test file for it)


@pytest.mark.parametrize("kind", ["regular", "init", "ephemeral"])
def test_volume_bind_mount_options_infer(kind: str) -> None:
    f = ndf_features.VolumeBindMountOptionsFeature()
    assert f.infer_for_scheduling(PodInfo(bind_mount_pod(kind).spec))
    no_options = bind_mount_pod(kind)
    for containers in (no_options.spec.containers, no_options.spec.initContainers):
        for c in containers:
            del c.volumeMounts[0].bindMountOptions[:]
    for e in no_options.spec.ephemeralContainers:
        del e.ephemeralContainerCommon.volumeMounts[0].bindMountOptions[:]
    assert not f.infer_for_scheduling(PodInfo(no_options.spec))


@pytest.mark.parametrize(("gate", "runtime", "want"), [(True, True, True), (True, False, False),
                                                       (False, True, False)])
def test_volume_bind_mount_options_discover(gate: bool, runtime: bool, want: bool) -> None:
    cfg = NodeConfiguration(FeatureGateMap({"VolumeBindMountOptions": gate}),
                            runtime_features=RuntimeFeatures(mount_options=runtime))
    assert ndf_features.VolumeBindMountOptionsFeature().discover(cfg) == want


# inplacepodresize: memory-backed volumes


def _volumes_spec(*vols: tuple[str, str, str | None]) -> PodSpec:
    """Volumes as (name, "hostPath", path) or (name, medium, sizeLimit | None) for an emptyDir."""
    spec = PodSpec()
    for v in vols:
        vol = spec.volumes.add()
        vol.name = v[0]
        if v[1] == "hostPath":
            vol.volumeSource.hostPath.path = str(v[2])
            continue
        vol.volumeSource.emptyDir.medium = v[1]
        if v[2] is not None:
            vol.volumeSource.emptyDir.sizeLimit.string = str(v[2])
    return spec


MEMORY_CASES = [
    ("NoChanges", _volumes_spec(("vol-1", "Memory", "100Mi")), _volumes_spec(("vol-1", "Memory", "100Mi")), False),
    ("SizeLimitIncreased", _volumes_spec(("vol-1", "Memory", "100Mi")), _volumes_spec(("vol-1", "Memory", "200Mi")),
     True),
    ("SizeLimitDecreased", _volumes_spec(("vol-1", "Memory", "200Mi")), _volumes_spec(("vol-1", "Memory", "100Mi")),
     True),
    ("DefaultMedium_Ignored", _volumes_spec(("vol-1", "", "100Mi")), _volumes_spec(("vol-1", "", "200Mi")), False),
    ("NonEmptyDirVolume_Ignored", _volumes_spec(("vol-1", "hostPath", "/tmp")),
     _volumes_spec(("vol-1", "hostPath", "/tmp2")), False),
    ("VolumeCountMismatch_Ignored", _volumes_spec(("vol-1", "Memory", "100Mi")),
     _volumes_spec(("vol-1", "Memory", "100Mi"), ("vol-2", "Memory", "100Mi")), False),
    ("VolumeNameMismatch_Ignored", _volumes_spec(("vol-1", "Memory", "100Mi")),
     _volumes_spec(("vol-2", "Memory", "200Mi")), False),
    ("NilSizeLimit_Ignored", _volumes_spec(("vol-1", "Memory", None)), _volumes_spec(("vol-1", "Memory", "200Mi")),
     False),
    ("MultipleVolumes_OneResizableMemoryBackedVolumeResized",
     _volumes_spec(("vol-non-resizable", "hostPath", "/tmp"), ("vol-resizable", "Memory", "100Mi")),
     _volumes_spec(("vol-non-resizable", "hostPath", "/tmp"), ("vol-resizable", "Memory", "200Mi")), True),
    # Quantities compare by value (Quantity.Cmp).
    ("SameValueOtherSpelling", _volumes_spec(("vol-1", "Memory", "1Gi")),
     _volumes_spec(("vol-1", "Memory", "1073741824")), False),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), MEMORY_CASES, ids=[c[0] for c in MEMORY_CASES])
def test_memory_backed_volumes_infer_for_update(name: str, old: PodSpec, new: PodSpec, want: bool) -> None:
    assert ndf_features.MemoryBackedVolumesResizeFeature().infer_for_update(PodInfo(old), PodInfo(new)) == want


# inplacepodresize: non-sidecar init containers


def _init_spec(*containers: tuple[str, bool, dict[str, str]]) -> PodSpec:
    spec = PodSpec()
    for name, sidecar, requests in containers:
        c = spec.initContainers.add()
        c.name = name
        if sidecar:
            c.restartPolicy = "Always"
        for k, v in requests.items():
            c.resources.requests[k].string = v
    return spec


INIT_CASES = [
    ("NoChanges", _init_spec(("init-1", False, {"cpu": "100m"})), _init_spec(("init-1", False, {"cpu": "100m"})),
     False),
    ("InitContainerResourceChanged", _init_spec(("init-1", False, {"cpu": "100m"})),
     _init_spec(("init-1", False, {"cpu": "200m"})), True),
    ("SidecarContainerResourceChanged_Ignored", _init_spec(("sidecar", True, {"cpu": "100m"})),
     _init_spec(("sidecar", True, {"cpu": "200m"})), False),
    ("MixedContainers_OnlyInitChanged",
     _init_spec(("sidecar", True, {}), ("regular-init", False, {"memory": "128Mi"})),
     _init_spec(("sidecar", True, {}), ("regular-init", False, {"memory": "256Mi"})), True),
    ("MixedContainers_OnlySidecarChanged_Ignored",
     _init_spec(("sidecar", True, {"cpu": "100m"}), ("regular-init", False, {"cpu": "100m"})),
     _init_spec(("sidecar", True, {"cpu": "200m"}), ("regular-init", False, {"cpu": "100m"})), False),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), INIT_CASES, ids=[c[0] for c in INIT_CASES])
def test_nonsidecar_init_container_infer_for_update(name: str, old: PodSpec, new: PodSpec, want: bool) -> None:
    assert ndf_features.NonSidecarInitContainerResizeFeature().infer_for_update(PodInfo(old), PodInfo(new)) == want


# inplacepodresize: pod-level resources


def _pod_resources_spec(requests: dict[str, str] | None, limits: dict[str, str] | None = None) -> PodSpec:
    spec = PodSpec()
    if requests is None:
        return spec
    spec.resources.SetInParent()
    for k, v in requests.items():
        spec.resources.requests[k].string = v
    for k, v in (limits or {}).items():
        spec.resources.limits[k].string = v
    return spec


POD_LEVEL_CASES = [
    ("NoResourcesChanged", _pod_resources_spec({"cpu": "1"}, {"cpu": "1"}),
     _pod_resources_spec({"cpu": "1"}, {"cpu": "1"}), False),
    ("ResourcesAdded", _pod_resources_spec(None), _pod_resources_spec({"cpu": "1"}, {"cpu": "1"}), True),
    ("ResourcesRemoved", _pod_resources_spec({"cpu": "1"}, {"cpu": "1"}), _pod_resources_spec(None), True),
    ("ResourcesChanged", _pod_resources_spec({"cpu": "1"}, {"cpu": "1"}),
     _pod_resources_spec({"cpu": "2"}, {"cpu": "1"}), True),
    ("NilResources", _pod_resources_spec(None), _pod_resources_spec(None), False),
    # Semantic equality: the same value spelled differently is no change; an empty struct is not nil.
    ("SameValueOtherSpelling", _pod_resources_spec({"cpu": "1"}), _pod_resources_spec({"cpu": "1000m"}), False),
    ("EmptyStructAdded", _pod_resources_spec(None), _pod_resources_spec({}), True),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), POD_LEVEL_CASES, ids=[c[0] for c in POD_LEVEL_CASES])
def test_pod_level_resources_infer_for_update(name: str, old: PodSpec, new: PodSpec, want: bool) -> None:
    assert ndf_features.PodLevelResourcesResizeFeature().infer_for_update(PodInfo(old), PodInfo(new)) == want


# ---------------------------------------------------------------- versions (apimachinery util/version)


@pytest.mark.parametrize(("a", "b", "want"), [
    ("1.37.2", "1.37.2", 0),
    ("v1.37.2", "1.37.1", 1),
    ("1.38.0", "1.39", -1),  # semantic vs generic: numbers only
    ("1.39", "1.39.0", 0),
    ("1.39.0-alpha.2.39+049eafd34dfbd2", "1.38.0", 1),
    ("1.39.0-alpha.2", "1.39.0", -1),
    ("1.39.0-alpha.2", "1.39.0-alpha.10", -1),
    ("1.39.0-alpha.2", "1.39.0-beta.0", -1),
    ("1.39.0-alpha", "1.39.0-alpha.1", -1),
    ("1.39.0+build", "1.39.0", 0),
    ("0.0.0-alpha.2.39+049eafd34dfbd2", "1.30.0", -1),
])
def test_version_compare(a: str, b: str, want: int) -> None:
    assert parse(a).compare_internal(parse(b)) == want
    assert parse(b).compare_internal(parse(a)) == -want


def test_version_parse() -> None:
    v = parse_semantic("v1.37.2-rc.1+abc")
    assert (v.components, v.semver, v.pre_release, v.build_metadata) == ((1, 37, 2), True, "rc.1", "abc")
    assert str(v) == "1.37.2-rc.1+abc"
    assert not parse("1.39").semver and parse("1.39.0").semver
    assert str(parse("1.38.0").add_minor(1)) == "1.39"
    assert str(parse_generic("1.2.3-foo")) == "1.2.3"
    for bad, msg in [("1.2", 'illegal version string "1.2"'), ("01.2.3", "illegal zero-prefixed"),
                     ("1.2.3-01", "illegal zero-prefixed"), ("x", 'could not parse "x" as version'),
                     ("1.2.3-", "could not parse pre-release/metadata")]:
        with pytest.raises(ValueError, match=msg):
            parse_semantic(bad)
    with pytest.raises(ValueError, match='illegal version string "1"'):
        parse("1")


# ---------------------------------------------------------------- in a scheduler


def test_simulation_requeues_on_declared_features_update() -> None:
    """A pod rejected for a missing feature is unschedulable and unresolvable (preemption cannot help);
    a node update that does not touch declaredFeatures leaves it alone (the hint skips, and the event
    is not the registered one); declaring the feature schedules it."""
    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}],
    })
    sim = Simulation(cfg, in_tree_registry())
    try:
        sim.apply({"Node": [make_node("n1").capacity(cpu="4", pods="10").obj()], "Pod": [restart_all_pod()]})
        (p,) = sim.run_until_quiet().pods
        assert (p.phase, p.node, p.attempts) == ("Unschedulable", None, 1)
        assert p.message == ("0/1 nodes are available: 1 node(s) didn't match Pod's required features. "
                             "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")

        def updated(change: Callable[[Node], None]) -> Node:
            current = sim.cluster.get("Node", "n1")
            assert isinstance(current, Node)
            n = Node()
            n.CopyFrom(current)
            change(n)
            return n

        sim.cluster.update(updated(lambda n: n.metadata.labels.update({"a": "b"})))
        (p,) = sim.run_until_quiet().pods
        assert (p.phase, p.attempts) == ("Unschedulable", 1)

        sim.cluster.update(updated(lambda n: n.status.declaredFeatures.append("RestartAllContainersOnContainerExits")))
        (p,) = sim.run_until_quiet().pods
        assert (p.phase, p.node, p.attempts) == ("Scheduled", "n1", 2)
    finally:
        sim.scheduler.close()
