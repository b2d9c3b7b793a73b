"""Watched objects: the objects of any resource a plugin declares it reads besides pods and nodes
(docs/abi.md §14.2, a wasm plugin's `args.watch`), CRDs included, as JSON.

The interface plugins (and the wasm host's `handle.objects.list/get`) read is `WatchedObjects`; a plugin
gets its own view from the framework Handle, `handle.watched_objects(watch)`, in its factory: declaring the
resources there is what makes the backends fill them (`simulate` from the cluster manifests,
`embedded/watched.py`; `run` with one informer per resource, `kube/dynamic_informer.py`). A resource the
plugin did not declare raises `ResourceNotWatchedError`.

`WatchedObjectStore` is the one implementation: every declared resource's objects, fed by the backend
(`apply`/`delete`/`replace`), read by every plugin's view. Objects are the current ones, not a per-cycle
snapshot (as kube's listers). Each object version's JSON is encoded once, on its first read. Every change
is handed to the subscribers (the scheduler turns it into a cluster event named
`<resource>.<version>.<group>`, as kube-scheduler does for a dynamically watched resource).
"""

from __future__ import annotations

import builtins
import json
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.labels import Selector, parse_selector
from wasmsched.framework.events import ActionType


class ResourceNotWatchedError(LookupError):
    """A read of a resource the plugin did not declare in its args.watch."""

    def __init__(self, gvr: GroupVersionResource) -> None:
        self.gvr = gvr
        super().__init__(f"resource {gvr.resource} is not in args.watch")


class WatchedObjects(Protocol):
    """What one plugin reads of its declared resources; each object as JSON bytes (apiVersion, kind,
    metadata, ... as the API server serves it)."""

    def list(self, gvr: GroupVersionResource, namespace: str = "", label_selector: str = "") -> list[bytes]:
        """The objects of `gvr` in (namespace, name) order: in one namespace, or every one when
        `namespace` is ""; those matching `label_selector` (labels.Parse syntax; "" selects all).
        Raises ResourceNotWatchedError for an undeclared resource and api.labels.SelectorError for a
        selector that does not parse."""
        ...

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> bytes | None:
        """One object ("" namespace for a cluster-scoped one); None when there is none. Raises
        ResourceNotWatchedError for an undeclared resource."""
        ...


# (gvr, action, old, new): a watched object added (old None), updated, or deleted (new None). Objects are
# the parsed JSON (dicts), read only.
ChangeListener = Callable[[GroupVersionResource, ActionType, "Mapping[str, Any] | None", "Mapping[str, Any] | None"],
                          None]


# Sorts after any object name (names are DNS subdomains, or at least printable text).
_LAST = "\U0010ffff"


class _Entry:
    """One object version: the parsed object, its labels, and its JSON once asked for."""

    __slots__ = ("_json", "labels", "obj")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.obj = obj
        meta = obj.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        self.labels: Mapping[str, str] = labels if isinstance(labels, Mapping) else {}
        self._json: bytes | None = None

    def json(self) -> bytes:
        data = self._json
        if data is None:
            # Encoded once per version; two threads racing here encode the same bytes.
            data = self._json = json.dumps(self.obj, separators=(",", ":"), ensure_ascii=False).encode()
        return data


def object_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a JSON object ("" namespace when it has none)."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return "", ""
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return (ns if isinstance(ns, str) else ""), (name if isinstance(name, str) else "")


class _Resource:
    """One resource's objects by (namespace, name), with the sorted order kept until membership changes."""

    __slots__ = ("_order", "objects")

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], _Entry] = {}
        self._order: list[tuple[str, str]] | None = None

    def order(self) -> list[tuple[str, str]]:
        order = self._order
        if order is None:
            order = self._order = sorted(self.objects)
        return order

    def put(self, key: tuple[str, str], entry: _Entry) -> _Entry | None:
        old = self.objects.get(key)
        self.objects[key] = entry
        if old is None:
            self._order = None
        return old

    def pop(self, key: tuple[str, str]) -> _Entry | None:
        old = self.objects.pop(key, None)
        if old is not None:
            self._order = None
        return old


class WatchedObjectStore:
    """Every declared resource's current objects (one store per scheduler, shared by its profiles)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._resources: dict[GroupVersionResource, _Resource] = {}
        self._listeners: list[ChangeListener] = []
        # Parsed selectors by text: guests ask with the same few selectors over and over.
        self._selectors: dict[str, Selector] = {}

    # ----- declaring (plugin factories, through the Handle) --------------------------------------

    def declare(self, watch: Iterable[GroupVersionResource]) -> WatchedObjects:
        """Adds the resources to what the backend fills and returns a view limited to them."""
        gvrs = tuple(dict.fromkeys(watch))
        with self._lock:
            for gvr in gvrs:
                self._resources.setdefault(gvr, _Resource())
        return DeclaredObjects(self, frozenset(gvrs))

    def declared(self) -> tuple[GroupVersionResource, ...]:
        """Every declared resource, in the order first declared."""
        with self._lock:
            return tuple(self._resources)

    def is_declared(self, gvr: GroupVersionResource) -> bool:
        with self._lock:
            return gvr in self._resources

    def subscribe(self, listener: ChangeListener) -> None:
        """`listener` is called after every change, on the thread that made it."""
        self._listeners.append(listener)

    # ----- feeding (the backends) -------------------------------------------------------------------

    def apply(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> None:
        """An object added or changed (by (namespace, name)); ignored for an undeclared resource."""
        key = object_name(obj)
        with self._lock:
            res = self._resources.get(gvr)
            if res is None:
                return
            old = res.put(key, _Entry(obj))
        self._notify(gvr, ActionType.ADD if old is None else ActionType.UPDATE, old.obj if old else None, obj)

    def delete(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> None:
        """An object deleted (`obj` is its final state, as a watch's DELETED event carries it)."""
        with self._lock:
            res = self._resources.get(gvr)
            if res is None:
                return
            old = res.pop(object_name(obj))
        if old is not None:
            self._notify(gvr, ActionType.DELETE, obj, None)

    def replace(self, gvr: GroupVersionResource, objs: Iterable[Mapping[str, Any]]) -> None:
        """A (re)list: the resource holds exactly `objs`; what changed is delivered as adds, updates and
        deletes (an object whose resourceVersion did not change is no update)."""
        fresh = {object_name(o): o for o in objs}
        with self._lock:
            res = self._resources.get(gvr)
            if res is None:
                return
            before = dict(res.objects)
        for key, old in before.items():
            if key not in fresh:
                self.delete(gvr, old.obj)
        for key, obj in fresh.items():
            prior = before.get(key)
            if prior is None or _resource_version(prior.obj) != _resource_version(obj) or not _resource_version(obj):
                self.apply(gvr, obj)

    def _notify(self, gvr: GroupVersionResource, action: ActionType, old: Mapping[str, Any] | None,
                new: Mapping[str, Any] | None) -> None:
        for listener in self._listeners:
            listener(gvr, action, old, new)

    # ----- reading -------------------------------------------------------------------------------

    def list(self, gvr: GroupVersionResource, namespace: str = "", label_selector: str = "") -> list[bytes]:
        selector = self._selector(label_selector)
        with self._lock:
            res = self._resource(gvr)
            order = res.order()
            if namespace:
                # The namespace's objects are one run of the sorted keys.
                order = order[bisect_left(order, (namespace, "")):bisect_right(order, (namespace, _LAST))]
            entries = [res.objects[k] for k in order]
        if selector is not None:
            entries = [e for e in entries if selector.matches(e.labels)]
        return [e.json() for e in entries]

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> bytes | None:
        with self._lock:
            entry = self._resource(gvr).objects.get((namespace, name))
        return None if entry is None else entry.json()

    def objects(self, gvr: GroupVersionResource) -> builtins.list[Mapping[str, Any]]:
        """The parsed objects of a declared resource, in (namespace, name) order (tests, reports)."""
        with self._lock:
            res = self._resource(gvr)
            return [res.objects[k].obj for k in res.order()]

    def _resource(self, gvr: GroupVersionResource) -> _Resource:
        res = self._resources.get(gvr)
        if res is None:
            raise ResourceNotWatchedError(gvr)
        return res

    def _selector(self, text: str) -> Selector | None:
        if not text:
            return None
        sel = self._selectors.get(text)
        if sel is None:
            sel = parse_selector(text)
            if len(self._selectors) < 1024:
                self._selectors[text] = sel
        return None if sel.empty() else sel


class DeclaredObjects:
    """One plugin's view of the store: only the resources it declared."""

    def __init__(self, store: WatchedObjectStore, declared: frozenset[GroupVersionResource]) -> None:
        self._store = store
        self.declared = declared

    def list(self, gvr: GroupVersionResource, namespace: str = "", label_selector: str = "") -> list[bytes]:
        if gvr not in self.declared:
            raise ResourceNotWatchedError(gvr)
        return self._store.list(gvr, namespace, label_selector)

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> bytes | None:
        if gvr not in self.declared:
            raise ResourceNotWatchedError(gvr)
        return self._store.get(gvr, namespace, name)


def _resource_version(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return rv if isinstance(rv, str) else ""

