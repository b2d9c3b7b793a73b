"""framework/pod_index.py: every pod by namespace and label, kept by the scheduler's event handlers (kube's pod
lister with its namespace indexer)."""

from __future__ import annotations

from wasmsched.api.labels import parse_selector
from wasmsched.framework.pod_index import PodIndex
from wasmsched.testing.builders import make_pod


def names(pods: list) -> list[str]:  # type: ignore[type-arg]
    return [f"{p.metadata.namespace}/{p.metadata.name}" for p in pods]


def test_lists_by_namespace_and_selector_in_key_order_through_adds_updates_and_deletes() -> None:
    index = PodIndex()
    a = make_pod("a", "ml").label("group", "x").label("tier", "1").obj()
    b = make_pod("b", "ml").label("group", "x").obj()
    c = make_pod("c", "ml").label("group", "y").obj()
    d = make_pod("a", "web").label("group", "x").obj()
    for p in (c, b, d, a):
        index.add(p)
    assert names(index.list("ml", parse_selector("group=x"))) == ["ml/a", "ml/b"]
    assert names(index.list("ml", parse_selector("group in (x),tier=1"))) == ["ml/a"]
    assert names(index.list("ml", parse_selector("group!=x"))) == ["ml/c"]  # no equality: every pod is matched
    assert names(index.list("", parse_selector("group=x"))) == ["ml/a", "ml/b", "web/a"]
    assert names(index.list("ml", parse_selector(""))) == ["ml/a", "ml/b", "ml/c"]
    # An update moves the pod between label values; the old value no longer lists it.
    b2 = make_pod("b", "ml").label("group", "y").obj()
    index.update(b, b2)
    assert names(index.list("ml", parse_selector("group=x"))) == ["ml/a"]
    assert names(index.list("ml", parse_selector("group=y"))) == ["ml/b", "ml/c"]
    # Adding a pod again (a resync) replaces it; deleting it forgets it everywhere.
    index.add(make_pod("a", "ml").label("group", "z").obj())
    assert names(index.list("ml", parse_selector("group=x"))) == []
    index.delete(a)
    assert names(index.list("ml", parse_selector(""))) == ["ml/b", "ml/c"]
    index.delete(make_pod("nope", "ml").obj())  # unknown: nothing happens
    for p in (b2, c, d):
        index.delete(p)
    assert index.list("", parse_selector("")) == []
