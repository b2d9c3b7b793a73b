"""framework/watched.py: the store of watched objects (docs/abi.md §14.2) as plugins read it through the
Handle: (namespace, name) order, namespaces, labels.Parse selectors, JSON encoded once per object version,
undeclared resources refused, and every change handed to the subscribers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.labels import SelectorError
from wasmsched.framework.events import ActionType
from wasmsched.framework.watched import ResourceNotWatchedError, WatchedObjectStore
from wasmsched.testing.fake_handle import FakeHandle

FOO = GroupVersionResource("example.com", "v1", "foos")
BAR = GroupVersionResource("example.com", "v1", "bars")


def foo(ns: str, name: str, rv: str = "1", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv, "labels": labels}
    if ns:
        meta["namespace"] = ns
    return {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": meta, "spec": {"n": name}}


def names(blobs: list[bytes]) -> list[str]:
    out = []
    for b in blobs:
        meta = json.loads(b)["metadata"]
        out.append(f"{meta.get('namespace', '')}/{meta['name']}")
    return out


@pytest.fixture
def store() -> WatchedObjectStore:
    s = WatchedObjectStore()
    s.declare([FOO])
    for ns, name, labels in [("b", "x", {"app": "web"}), ("a", "z", {"app": "db"}), ("a", "y", {}),
                             ("", "c", {"app": "web", "tier": "1"})]:
        s.apply(FOO, foo(ns, name, **labels))
    return s


def test_list_is_in_namespace_name_order_and_filters_namespaces(store: WatchedObjectStore) -> None:
    assert names(store.list(FOO)) == ["/c", "a/y", "a/z", "b/x"]
    assert names(store.list(FOO, "a")) == ["a/y", "a/z"]
    assert store.list(FOO, "nowhere") == []
    store.apply(FOO, foo("a", "a"))
    assert names(store.list(FOO)) == ["/c", "a/a", "a/y", "a/z", "b/x"]
    store.delete(FOO, foo("a", "y"))
    assert names(store.list(FOO, "a")) == ["a/a", "a/z"]
    store.apply(FOO, foo("ab", "a"))
    store.apply(FOO, foo("a-", "zz"))
    assert names(store.list(FOO, "a")) == ["a/a", "a/z"]
    assert names(store.list(FOO, "ab")) == ["ab/a"]


def test_label_selectors_are_parsed_as_labels_parse(store: WatchedObjectStore) -> None:
    assert names(store.list(FOO, label_selector="app=web")) == ["/c", "b/x"]
    assert names(store.list(FOO, label_selector="app in (db,web),tier")) == ["/c"]
    assert names(store.list(FOO, label_selector="!app")) == ["a/y"]
    assert names(store.list(FOO, "b", "app!=db")) == ["b/x"]
    with pytest.raises(SelectorError, match="unable to parse requirement"):
        store.list(FOO, label_selector="app web")


def test_get_returns_the_object_json_or_none(store: WatchedObjectStore) -> None:
    raw = store.get(FOO, "a", "z")
    assert raw is not None and json.loads(raw) == foo("a", "z", app="db")
    assert store.get(FOO, "", "c") is not None
    assert store.get(FOO, "a", "c") is None
    assert store.get(FOO, "b", "nothing") is None


def test_json_is_encoded_once_per_object_version(store: WatchedObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = json.dumps

    def counting(*a: Any, **k: Any) -> str:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(json, "dumps", counting)
    first = store.get(FOO, "a", "z")
    assert store.get(FOO, "a", "z") is first
    assert len(calls) == 1
    assert store.list(FOO, "a")[1] is first  # a/y is encoded now, a/z not again
    assert len(calls) == 2
    for _ in range(3):
        store.list(FOO)
    assert len(calls) == 4  # /c and b/x, once each
    store.apply(FOO, foo("a", "z", rv="2", app="db2"))
    second = store.get(FOO, "a", "z")
    assert second is not None and second != first and json.loads(second)["metadata"]["labels"] == {"app": "db2"}
    assert len(calls) == 5


def test_an_undeclared_resource_is_refused_by_name(store: WatchedObjectStore) -> None:
    with pytest.raises(ResourceNotWatchedError) as e:
        store.list(BAR)
    assert str(e.value) == "resource bars is not in args.watch" and e.value.gvr == BAR
    with pytest.raises(ResourceNotWatchedError):
        store.get(BAR, "", "x")
    store.apply(BAR, foo("", "ignored"))  # nothing declared it: not kept
    assert store.declared() == (FOO,)


def test_each_plugin_sees_only_what_it_declared_through_the_handle() -> None:
    handle = FakeHandle()
    mine = handle.watched_objects([BAR])
    other = handle.watched_objects([FOO])
    handle.watched.apply(FOO, foo("", "f"))
    handle.watched.apply(BAR, foo("", "b"))
    assert names(mine.list(BAR)) == ["/b"] and names(other.list(FOO)) == ["/f"]
    with pytest.raises(ResourceNotWatchedError, match=r"resource foos is not in args\.watch"):
        mine.list(FOO)
    with pytest.raises(ResourceNotWatchedError):
        mine.get(FOO, "", "f")
    assert handle.watched.declared() == (BAR, FOO)


def test_changes_reach_the_subscribers_with_old_and_new_objects() -> None:
    s = WatchedObjectStore()
    s.declare([FOO])
    seen: list[tuple[GroupVersionResource, ActionType, Any, Any]] = []
    s.subscribe(lambda gvr, action, old, new: seen.append((gvr, action, old, new)))
    a1, a2 = foo("n", "a", "1"), foo("n", "a", "2")
    s.apply(FOO, a1)
    s.apply(FOO, a2)
    s.delete(FOO, a2)
    s.delete(FOO, a2)  # already gone: nothing
    assert seen == [(FOO, ActionType.ADD, None, a1), (FOO, ActionType.UPDATE, a1, a2),
                    (FOO, ActionType.DELETE, a2, None)]


def test_replace_delivers_what_a_relist_reveals() -> None:
    s = WatchedObjectStore()
    s.declare([FOO])
    s.apply(FOO, foo("", "same", "1"))
    s.apply(FOO, foo("", "changed", "1"))
    s.apply(FOO, foo("", "gone", "1"))
    seen: list[tuple[ActionType, str]] = []
    s.subscribe(lambda gvr, action, old, new: seen.append((action, (new or old or {})["metadata"]["name"])))
    s.replace(FOO, [foo("", "same", "1"), foo("", "changed", "2"), foo("", "new", "3")])
    assert sorted(seen) == sorted([(ActionType.DELETE, "gone"), (ActionType.UPDATE, "changed"),
                                   (ActionType.ADD, "new")])
    assert names(s.list(FOO)) == ["/changed", "/new", "/same"]
