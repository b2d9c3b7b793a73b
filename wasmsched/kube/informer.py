"""Informers: a local copy of one kind's objects, kept current by list + watch, calling handlers.

client-go's reflector and shared informer in one: list (in pages), then watch from the list's
resourceVersion with bookmarks; when the watch ends, watch again from the last resourceVersion seen;
on `410 Gone` (the version was compacted), or an event that cannot be decoded (client-go's StreamWatcher
ends the watch with an error), list again and reconcile, delivering the adds, updates and deletes the
relist reveals; on a broken connection retry with jittered exponential backoff. Handlers
run on the informer's thread, one event at a time, as client-go's processor runs them.
"""

from __future__ import annotations

import builtins
import logging
import random
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from wasmsched.api.decoding import shorten
from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.kinds import RESOURCES, Resource
from wasmsched.api.types import object_key
from wasmsched.framework.watched import WatchedObjectStore, object_name
from wasmsched.kube.api import ApiError, KubeApi, TransportError, WatchStream
from wasmsched.kube.codec import CodecError, WatchDecodeError
from wasmsched.util.klog import quote

log = logging.getLogger("wasmsched.kube")

# client-go's reflector: watches last 5-10 minutes (randomised so informers do not reconnect together).
MIN_WATCH_TIMEOUT_SECONDS = 300
# Backoff after a failed list or watch (client-go: 800 ms doubling to 30 s, with jitter).
INITIAL_BACKOFF = 0.8
MAX_BACKOFF = 30.0
# kube-scheduler's pod informer leaves out pods that finished: they hold no resources.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def trim_managed_fields(obj: Any) -> Any:
    """kube-scheduler's pod informer transform (newPodInformer): pods are kept without
    .metadata.managedFields, which no plugin reads; a pod is then smaller to hold, to compare and to
    hand to a wasm guest (which decodes every byte it is given)."""
    if len(obj.metadata.managedFields):
        obj.metadata.ClearField("managedFields")
    return obj


@dataclass
class Handler:
    on_add: Callable[[Any], None] | None
    on_update: Callable[[Any, Any], None] | None
    on_delete: Callable[[Any], None] | None


class BaseInformer:
    """The reflector and store of any informer; what it lists and watches, and how its objects are keyed,
    is the subclass's (Informer: a kind of api/kinds.py as protobuf messages; kube/dynamic_informer.py: any
    resource as JSON)."""

    def __init__(self, api: KubeApi, *, field_selector: str = "", transform: Callable[[Any], Any] | None = None,
                 rng: random.Random | None = None) -> None:
        self.api = api
        self.field_selector = field_selector
        # client-go's SetTransform: applied to every object listed or watched, before the store sees it.
        self.transform = transform
        self.handlers: builtins.list[Handler] = []
        self._store: dict[str, Any] = {}
        # client-go's namespace index: listers of namespaced kinds read one namespace at a time.
        self._by_namespace: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._synced = threading.Event()
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._watch_response: Any = None
        # Set when the informer gave up before its first list (a watched resource the server refuses).
        self.startup_error: str | None = None
        self.last_resource_version = ""
        # What happened, for logs and tests: lists made (the first plus every relist) and watches opened.
        self.lists = 0
        self.relists_after_gone = 0
        # Watches ended by an event that could not be decoded (each followed by a list).
        self.decode_failures = 0
        self.watches = 0

    @property
    def kind(self) -> str:
        """What logs call it."""
        raise NotImplementedError

    # ----- what the subclass defines -------------------------------------------------------------

    def _list_items(self) -> tuple[builtins.list[Any], str]:
        """Every object, and the list's resourceVersion."""
        raise NotImplementedError

    def _open_watch(self, timeout_seconds: int) -> AbstractContextManager[WatchStream]:
        raise NotImplementedError

    def _watch_error(self, status: Any) -> ApiError:
        """The ApiError of a watch's ERROR event (its object is a Status)."""
        raise NotImplementedError

    def _refused_at_start(self, e: ApiError, listing: bool) -> bool:
        """Whether a failed list ends the informer (and sets `startup_error`) instead of being retried."""
        return False

    def _key(self, obj: Any) -> str:
        return object_key(obj)

    def _namespace(self, obj: Any) -> str:
        return obj.metadata.namespace  # type: ignore[no-any-return]

    def _resource_version(self, obj: Any) -> str:
        return obj.metadata.resourceVersion  # type: ignore[no-any-return]

    def add_handler(self, handler: Handler) -> None:
        if self._synced.is_set():
            # A late handler sees what is there, as client-go's AddEventHandler replays the store.
            for obj in self.list():
                if handler.on_add:
                    handler.on_add(obj)
        self.handlers.append(handler)

    # ----- the local store ---------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._store.get(key)

    def list(self) -> builtins.list[Any]:
        with self._lock:
            return list(self._store.values())

    def store_size(self) -> int:
        with self._lock:
            return len(self._store)

    def list_namespace(self, namespace: str) -> builtins.list[Any]:
        with self._lock:
            return list(self._by_namespace.get(namespace, {}).values())

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    # ----- delivery --------------------------------------------------------------------------

    def _deliver(self, what: str, *args: Any) -> None:
        for h in self.handlers:
            fn = getattr(h, what)
            if fn is None:
                continue
            try:
                fn(*args)
            except Exception:  # a handler's bug must not stop the informer
                log.exception('"Event handler failed" kind="%s" event="%s"', self.kind, what)

    def _apply(self, etype: str, obj: Any) -> None:
        key = self._key(obj)
        ns = self._namespace(obj)
        with self._lock:
            old = self._store.get(key)
            if etype == "DELETED":
                self._store.pop(key, None)
                in_ns = self._by_namespace.get(ns)
                if in_ns is not None:
                    in_ns.pop(key, None)
                    if not in_ns:
                        del self._by_namespace[ns]
            else:
                self._store[key] = obj
                self._by_namespace.setdefault(ns, {})[key] = obj
        if etype == "DELETED":
            # The event carries the object's final state, which is what handlers get (client-go).
            self._deliver("on_delete", obj)
        elif old is None:
            self._deliver("on_add", obj)
        else:
            self._deliver("on_update", old, obj)

    def _replace(self, items: builtins.list[Any]) -> None:
        """A (re)list: the store becomes `items`; what changed is delivered (client-go's Replace).
        An object whose resourceVersion did not change is delivered to nobody, so the store keeps the one
        the handlers (the scheduler's cache) already hold rather than a second copy of it."""
        fresh = {self._key(o): o for o in items}
        with self._lock:
            kept = self._store
        for key, o in fresh.items():
            old = kept.get(key)
            if old is not None and self._resource_version(old) == self._resource_version(o):
                fresh[key] = old
        by_namespace: dict[str, dict[str, Any]] = {}
        for key, o in fresh.items():
            by_namespace.setdefault(self._namespace(o), {})[key] = o
        with self._lock:
            old_store = self._store
            self._store = fresh
            self._by_namespace = by_namespace
        for key, old in old_store.items():
            if key not in fresh:
                self._deliver("on_delete", old)
        for key, obj in fresh.items():
            old = old_store.get(key)
            if old is None:
                self._deliver("on_add", obj)
            elif self._resource_version(old) != self._resource_version(obj):
                self._deliver("on_update", old, obj)

    # ----- list and watch --------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Lists and watches until `stop` is set."""
        self._stop = stop
        backoff = INITIAL_BACKOFF
        need_list = True
        while not stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
                backoff = INITIAL_BACKOFF
            except ApiError as e:
                if self._refused_at_start(e, need_list):
                    return
                if e.status == 410:
                    log.info('"Watch expired; relisting" kind="%s" resourceVersion="%s" err=%s',
                             self.kind, self.last_resource_version, quote(e.message))
                    self.relists_after_gone += 1
                    need_list = True
                    continue
                log.error('"Failed to watch" kind="%s" err=%s retryIn="%.1fs"', self.kind, quote(e), backoff)
                backoff = self._sleep(backoff)
            except WatchDecodeError as e:
                if stop.is_set():
                    break
                # client-go: the StreamWatcher turns the event it cannot decode into an error that ends the
                # watch ("Warning: watch ended with error"), and the reflector lists again after its backoff;
                # the objects the list brings are delivered, so nothing after the bad event is lost.
                self.decode_failures += 1
                log.warning('"Watch ended with error; relisting" kind="%s" object="%s" err=%s retryIn="%.1fs"',
                            self.kind, e.object, quote(shorten(str(e), 300)), backoff)
                need_list = True
                backoff = self._sleep(backoff)
            except (TransportError, CodecError, OSError) as e:
                if stop.is_set():
                    break
                # client-go's reflector: one "Failed to watch" per attempt, the list's failure named as such.
                log.error('"Failed to watch" kind="%s" server="%s" err=%s retryIn="%.1fs"', self.kind, self.api.host,
                          quote(shorten(f"failed to list {self.kind}: {e}" if need_list else str(e), 300)), backoff)
                backoff = self._sleep(backoff)
            except Exception as e:  # noqa: BLE001 - urllib3's reader raises ProtocolError and others mid-stream
                if stop.is_set():
                    break
                log.warning('"Watch connection broke; retrying" kind="%s" err=%s retryIn="%.1fs"',
                            self.kind, quote(shorten(f"{type(e).__name__}: {e}", 300)), backoff)
                backoff = self._sleep(backoff)

    def stop_watch(self) -> None:
        """Cuts the open watch so that run() sees `stop` at once instead of at the next event."""
        stream = self._watch_response
        if stream is not None:
            stream.shutdown()

    def _sleep(self, backoff: float) -> float:
        self._stop.wait(backoff * (1.0 + self._rng.random()))
        return min(backoff * 2, MAX_BACKOFF)

    def _list(self) -> None:
        try:
            items, rv = self._list_items()
        except ApiError as e:
            # 410 on a list is not a reason to relist again; any refusal is reported as client-go does.
            raise ApiError(e.status if e.status != 410 else 500, e.reason, f"failed to list {self.kind}: {e.message}",
                           e.method, e.path) from e
        self.lists += 1
        if self.transform is not None:
            items = [self.transform(o) for o in items]
        self._replace(items)
        self.last_resource_version = rv
        if not self._synced.is_set():
            log.info('"Caches populated" type="%s" count=%d resourceVersion="%s"', self.kind, len(items), rv)
            self._synced.set()

    def _watch(self) -> None:
        timeout = int(MIN_WATCH_TIMEOUT_SECONDS * (1.0 + self._rng.random()))
        with self._open_watch(timeout) as stream:
            self.watches += 1
            self._watch_response = stream
            if self._stop.is_set():
                return
            for ev in stream.events:
                if self._stop.is_set():
                    return
                if ev.type == "ERROR":
                    raise self._watch_error(ev.object)
                if ev.type == "BOOKMARK":
                    self.last_resource_version = ev.resource_version or self.last_resource_version
                    continue
                if ev.type not in ("ADDED", "MODIFIED", "DELETED"):
                    log.warning('"Unknown watch event type" kind="%s" type="%s"', self.kind, ev.type)
                    continue
                self._apply(ev.type, ev.object if self.transform is None else self.transform(ev.object))
                self.last_resource_version = ev.resource_version or self.last_resource_version


class Informer(BaseInformer):
    """One kind of api/kinds.py, as its protobuf messages."""

    def __init__(self, api: KubeApi, resource: Resource, *, field_selector: str = "",
                 transform: Callable[[Any], Any] | None = None, rng: random.Random | None = None) -> None:
        super().__init__(api, field_selector=field_selector, transform=transform, rng=rng)
        self.resource = resource

    @property
    def kind(self) -> str:
        return self.resource.kind

    def _list_items(self) -> tuple[builtins.list[Any], str]:
        return self.api.list(self.resource, field_selector=self.field_selector)

    def _open_watch(self, timeout_seconds: int) -> AbstractContextManager[WatchStream]:
        return self.api.watch(self.resource, self.last_resource_version, timeout_seconds=timeout_seconds,
                              field_selector=self.field_selector)

    def _watch_error(self, status: Any) -> ApiError:
        return ApiError(int(status.code) or 500, status.reason, status.message, "WATCH", self.resource.path())


class WatchStartupError(Exception):
    """A resource a plugin declared it watches (args.watch) cannot be listed at start-up: the text is the
    one line `run` prints before it exits 2."""


class DynamicInformer(BaseInformer):
    """Any resource (a plugin's declared `args.watch`, CRDs included), as parsed JSON: client-go's dynamic
    informer (`dynamicinformer.ForResource`), through the same KubeApi. Its first list refused with 403 or
    404 ends it with `startup_error` (the factory's cache sync raises it); later failures are retried as
    any informer's."""

    def __init__(self, api: KubeApi, gvr: GroupVersionResource, *, rng: random.Random | None = None) -> None:
        super().__init__(api, rng=rng)
        self.gvr = gvr

    @property
    def kind(self) -> str:
        return self.gvr.event_resource

    def _list_items(self) -> tuple[builtins.list[Any], str]:
        return self.api.list_json(self.gvr.path())

    def _open_watch(self, timeout_seconds: int) -> AbstractContextManager[WatchStream]:
        return self.api.watch_json(self.gvr.path(), self.last_resource_version, timeout_seconds=timeout_seconds)

    def _watch_error(self, status: Any) -> ApiError:
        code = status.get("code") if isinstance(status, dict) else None
        reason = status.get("reason", "") if isinstance(status, dict) else ""
        message = status.get("message", "") if isinstance(status, dict) else ""
        return ApiError(code if isinstance(code, int) and code else 500, str(reason), str(message), "WATCH",
                        self.gvr.path())

    def _refused_at_start(self, e: ApiError, listing: bool) -> bool:
        if not listing or self.has_synced() or e.status not in (403, 404):
            return False
        cause = e.__cause__ if isinstance(e.__cause__, ApiError) else e
        self.startup_error = watch_refused_message(self.gvr, cause)
        log.error('"Failed to list a watched resource" resource="%s" err=%s', self.kind, quote(cause.message))
        return True

    def _key(self, obj: Any) -> str:
        ns, name = object_name(obj)
        return f"{ns}/{name}" if ns else name

    def _namespace(self, obj: Any) -> str:
        return object_name(obj)[0]

    def _resource_version(self, obj: Any) -> str:
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        return rv if isinstance(rv, str) else ""


def watch_refused_message(gvr: GroupVersionResource, e: ApiError) -> str:
    """`watch <resource>.<version>.<group>: forbidden: User "u" cannot list ...; grant list and watch on it
    (docs/deploy.md)`, or for 404 that the server does not serve the resource."""
    message = e.message
    if e.status == 403:
        _, sep, rest = message.partition(" is forbidden: ")
        detail = f"forbidden: {rest}" if sep else message
        return f"watch {gvr}: {detail}; grant list and watch on it (docs/deploy.md)"
    return (f"watch {gvr}: not found: {message}; the API server does not serve {gvr.group_resource} in version "
            f"{gvr.version} (is its CustomResourceDefinition installed?)")


class InformerFactory:
    """One informer per kind, shared by everyone who watches or lists it; an EventSource for
    scheduler.eventhandlers.add_all_event_handlers."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self.informers: dict[str, Informer] = {}
        # The resources plugins declared they watch (args.watch), by resource.
        self.dynamic: dict[GroupVersionResource, DynamicInformer] = {}
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def informer(self, kind: str) -> Informer:
        inf = self.informers.get(kind)
        if inf is None:
            resource = RESOURCES[kind]
            pods = kind == "Pod"
            inf = Informer(self.api, resource, field_selector=POD_FIELD_SELECTOR if pods else "",
                           transform=trim_managed_fields if pods else None)
            self.informers[kind] = inf
            if self._threads:
                self._start_one(inf)
        return inf

    def watch(self, kind: str, on_add: Callable[[Any], None] | None,
              on_update: Callable[[Any, Any], None] | None,
              on_delete: Callable[[Any], None] | None) -> None:
        if kind not in RESOURCES or not RESOURCES[kind].available():
            log.warning('"No informer for kind; its events are not watched" kind="%s"', kind)
            return
        self.informer(kind).add_handler(Handler(on_add, on_update, on_delete))

    def watch_resource(self, gvr: GroupVersionResource, store: WatchedObjectStore) -> DynamicInformer:
        """A dynamic informer for a declared resource, which keeps `store`'s objects of it current."""
        inf = self.dynamic.get(gvr)
        if inf is None:
            inf = DynamicInformer(self.api, gvr)
            inf.add_handler(Handler(lambda o: store.apply(gvr, o), lambda _old, o: store.apply(gvr, o),
                                    lambda o: store.delete(gvr, o)))
            self.dynamic[gvr] = inf
            if self._threads:
                self._start_one(inf)
        return inf

    def all_informers(self) -> builtins.list[BaseInformer]:
        return [*self.informers.values(), *self.dynamic.values()]

    def start(self, stop: threading.Event) -> None:
        self._stop = stop
        for inf in self.all_informers():
            self._start_one(inf)

    def _start_one(self, inf: BaseInformer) -> None:
        t = threading.Thread(target=inf.run, args=(self._stop,), name=f"informer-{inf.kind}", daemon=True)
        t.start()
        self._threads.append(t)

    def wait_for_cache_sync(self, stop: threading.Event, timeout: float | None = None) -> bool:
        """Waits until every informer has listed once (or stop is set, or the timeout passes). Raises
        WatchStartupError when a watched resource's informer gave up at its first list."""
        for inf in self.all_informers():
            while not inf.wait_for_sync(0.2):
                refused = [i.startup_error for i in self.dynamic.values() if i.startup_error]
                if refused:
                    raise WatchStartupError(refused[0])
                if stop.is_set():
                    return False
                if timeout is not None:
                    timeout -= 0.2
                    if timeout <= 0:
                        return False
        return True

    def store_sizes(self) -> dict[str, int]:
        """Objects in each informer's store, by kind (a dynamic informer: by its resource)."""
        return {inf.kind: inf.store_size() for inf in self.all_informers()}

    def all_synced(self) -> bool:
        return all(inf.has_synced() for inf in self.all_informers())

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for inf in self.all_informers():
            inf.stop_watch()
        for t in self._threads:
            t.join(timeout)
