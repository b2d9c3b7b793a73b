"""Ports of helper/spread_test.go (TestGetPodServices, TestDefaultSelector), plus DefaultSelector's
other branches in spread.go: owner kinds and apiVersions, namespaces, nil and invalid selectors."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import LabelSelector, Pod, ReplicaSet, ReplicationController, Service, StatefulSet
from wasmsched.plugins.helper.spread import default_selector, get_pod_services
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

NS = "test"


def service(name: str, selector: dict[str, str] | None, ns: str = NS) -> Service:
    s = Service()
    s.metadata.name, s.metadata.namespace = name, ns
    s.spec.selector.update(selector or {})
    return s


def replica_set(name: str, match_labels: dict[str, str] | None = None, ns: str = NS,
                exprs: list[tuple[str, str, list[str]]] | None = None, nil: bool = False) -> ReplicaSet:
    rs = ReplicaSet()
    rs.metadata.name, rs.metadata.namespace = name, ns
    if not nil:
        _label_selector(rs.spec.selector, match_labels or {}, exprs or [])
    return rs


def stateful_set(name: str, match_labels: dict[str, str], ns: str = NS) -> StatefulSet:
    ss = StatefulSet()
    ss.metadata.name, ss.metadata.namespace = name, ns
    _label_selector(ss.spec.selector, match_labels, [])
    return ss


def replication_controller(name: str, selector: dict[str, str], ns: str = NS) -> ReplicationController:
    rc = ReplicationController()
    rc.metadata.name, rc.metadata.namespace = name, ns
    rc.spec.selector.update(selector)
    return rc


def _label_selector(sel: LabelSelector, match_labels: dict[str, str], exprs: list[tuple[str, str, list[str]]]) -> None:
    sel.SetInParent()
    sel.matchLabels.update(match_labels)
    for key, op, values in exprs:
        e = sel.matchExpressions.add()
        e.key, e.operator = key, op
        e.values.extend(values)


def selector_string(pod: Pod, objects: list[Any]) -> str:
    return str(default_selector(pod, FakeHandle(client=RecordingClient(objects=objects))))


# ---- TestGetPodServices ------------------------------------------------------------------------

_SERVICES = [service(f"service-{i}", {"app": f"test-{i}"}) for i in range(3)]


@pytest.mark.parametrize(("i", "want"), [(0, ["service-0"]), (1, ["service-1"]), (2, ["service-2"]), (3, []), (4, [])])
def test_get_pod_services(i: int, want: list[str]) -> None:
    pod = make_pod(f"test-pod-{i}", NS).label("app", f"test-{i}").label("label", f"label-{i}").obj()
    assert [s.metadata.name for s in get_pod_services(_SERVICES, pod)] == want


def test_get_pod_services_skips_services_without_selector() -> None:
    # A nil selector matches nothing, not everything.
    pod = make_pod("p", NS).label("app", "x").obj()
    assert get_pod_services([service("headless", None)], pod) == []


# ---- TestDefaultSelector -----------------------------------------------------------------------
# kube's cases share one informer factory, so each case sees the objects the earlier ones added.

_SVC = service("test-service", {"podLabelKey": "podLabelVal"})
_RS = replica_set("test-replicaset", {"replicaSetLabelKey": "replicaSetLabelVal"})
_RC = replication_controller("test-replicationcontroller", {"replicationLabelKey": "replicationLabelVal"})
_SS = stateful_set("test-statefulset", {"statefulSetLabelKey": "statefulSetLabelVal"})


def _pod(owner: tuple[str, str, str] | None = None) -> Pod:
    w = make_pod("test-pod", NS).label("podLabelKey", "podLabelVal")
    if owner is not None:
        w.owner_reference(*owner)
    return w.obj()


@pytest.mark.parametrize(
    ("name", "pod", "objects", "want"),
    [
        ("DefaultSelector for default case", _pod(), [], ""),
        ("DefaultSelector for no OwnerReference pod case", _pod(), [_SVC], "podLabelKey=podLabelVal"),
        ("DefaultSelector for ReplicaSet OwnerReference pod case",
         _pod(("test-replicaset", "apps/v1", "ReplicaSet")), [_SVC, _RS],
         "podLabelKey=podLabelVal,replicaSetLabelKey=replicaSetLabelVal"),
        ("DefaultSelector for ReplicationController OwnerReference pod case",
         _pod(("test-replicationcontroller", "v1", "ReplicationController")), [_SVC, _RS, _RC],
         "podLabelKey=podLabelVal,replicationLabelKey=replicationLabelVal"),
        ("DefaultSelector for StatefulSet OwnerReference pod case",
         _pod(("test-statefulset", "apps/v1", "StatefulSet")), [_SVC, _RS, _RC, _SS],
         "podLabelKey=podLabelVal,statefulSetLabelKey=statefulSetLabelVal"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("DefaultSelector") else "",
)
def test_default_selector(name: str, pod: Pod, objects: list[Any], want: str) -> None:
    assert selector_string(pod, objects) == want


def test_default_selector_merges_services_and_ands_expressions() -> None:
    pod = make_pod("p", NS).labels({"a": "1", "b": "2", "c": "3"}).owner_reference("rs", "apps/v1", "ReplicaSet").obj()
    objects = [service("s1", {"a": "1"}), service("s2", {"b": "2"}), service("other", {"a": "9"}),
               replica_set("rs", exprs=[("c", "In", ["3", "4"]), ("d", "DoesNotExist", [])])]
    sel = default_selector(pod, FakeHandle(client=RecordingClient(objects=objects)))
    # Requirements stay sorted by key, as selector.Add sorts them.
    assert str(sel) == "a=1,b=2,c in (3,4),!d"
    assert sel.matches({"a": "1", "b": "2", "c": "4"})
    assert not sel.matches({"a": "1", "b": "2", "c": "5"})


@pytest.mark.parametrize(
    ("case", "owner", "objects"),
    [
        ("other namespace's replicaset", ("rs", "apps/v1", "ReplicaSet"), [replica_set("rs", {"x": "y"}, ns="other")]),
        ("other namespace's service", None, [service("svc", {"x": "y"}, ns="other")]),
        ("replicaset not found", ("missing", "apps/v1", "ReplicaSet"), [replica_set("rs", {"x": "y"})]),
        ("wrong group for a replicaset", ("rs", "extensions/v1beta1", "ReplicaSet"), [replica_set("rs", {"x": "y"})]),
        ("unparsable apiVersion", ("rs", "apps/v1/x", "ReplicaSet"), [replica_set("rs", {"x": "y"})]),
        ("unsupported owner kind", ("d", "apps/v1", "Deployment"), [replica_set("d", {"x": "y"})]),
        ("nil replicaset selector", ("rs", "apps/v1", "ReplicaSet"), [replica_set("rs", nil=True)]),
        ("empty replicaset selector", ("rs", "apps/v1", "ReplicaSet"), [replica_set("rs", {})]),
        ("invalid replicaset selector is skipped", ("rs", "apps/v1", "ReplicaSet"),
         [replica_set("rs", exprs=[("x", "In", [])])]),
        ("service with an empty selector", None, [service("svc", {})]),
    ],
)
def test_default_selector_is_empty(case: str, owner: tuple[str, str, str] | None, objects: list[Any]) -> None:
    w = make_pod("p", NS).label("x", "y")
    if owner is not None:
        w.owner_reference(*owner)
    sel = default_selector(w.obj(), FakeHandle(client=RecordingClient(objects=objects)))
    assert sel.empty(), case


def test_default_selector_only_follows_the_controller_reference() -> None:
    pod = make_pod("p", NS).label("x", "y").owner_reference("rs", "apps/v1", "ReplicaSet").obj()
    pod.metadata.ownerReferences[0].controller = False
    assert selector_string(pod, [replica_set("rs", {"x": "y"})]) == ""


def test_default_selector_core_group_spellings() -> None:
    # ParseGroupVersion("/v1") is the core group's v1, like "v1".
    pod = make_pod("p", NS).label("x", "y").owner_reference("rc", "/v1", "ReplicationController").obj()
    assert selector_string(pod, [replication_controller("rc", {"x": "y"})]) == "x=y"
