"""The PV and PVC assume caches of the volume binder (volumebinding/assume_cache.go and
passive_assume_cache.go).

kube's passive cache sits on the informer's store and keeps assumed (in-memory, not yet written)
versions of objects; an assumed object is served only while the store still holds the version it
was assumed from. Here the store is the handle's ClusterClient (the informer cache's view), read on
each access, and an assumed object whose version the store no longer has is dropped when next seen:
the same answers as kube's expiry on informer events, without needing the events.
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar

from wasmsched.api.storage import get_persistent_volume_class
from wasmsched.api.types import PersistentVolume, PersistentVolumeClaim, object_key
from wasmsched.framework.interface import ClusterClient

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


class VolumeBindingError(RuntimeError):
    """An error of the volume binder, with kube's message."""


class NotFoundError(VolumeBindingError):
    """apierrors.NewNotFound: `<resource> "<name>" not found`."""

    def __init__(self, resource: str, name: str) -> None:
        super().__init__(f'{resource} "{name}" not found')
        self.resource = resource
        self.name = name

    def __str__(self) -> str:
        return str(self.args[0])


class PassiveAssumeCache(Generic[T]):
    def __init__(self, client: ClusterClient, kind: str, resource: str) -> None:
        self._client = client
        self._kind = kind
        self._resource = resource
        self._lock = threading.RLock()
        self._assumed: dict[str, T] = {}

    def _valid_assumed(self, key: str, stored: Any) -> T | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return None
        if stored is None or assumed.metadata.resourceVersion != stored.metadata.resourceVersion:
            # The store has a newer version (or none): kube's mayExpire drops the assumed one.
            del self._assumed[key]
            return None
        return assumed

    def get_api_obj(self, key: str) -> T:
        """The store's version; NotFoundError when it has none."""
        obj = self._client.get_object(self._kind, key)
        if obj is None:
            raise NotFoundError(self._resource, key)
        return obj  # type: ignore[no-any-return]

    def get(self, key: str) -> T:
        """The assumed version while it is based on the store's, else the store's."""
        with self._lock:
            obj = self.get_api_obj(key)
            assumed = self._valid_assumed(key, obj)
            return assumed if assumed is not None else obj

    def assume(self, obj: T) -> None:
        """Keeps `obj` in memory only; its resourceVersion must be the store's."""
        key = object_key(obj)
        with self._lock:
            stored = self.get_api_obj(key)
            if stored.metadata.resourceVersion != obj.metadata.resourceVersion:
                raise VolumeBindingError(f'"{key}" is out of sync (stored: {stored.metadata.resourceVersion}, '
                                   f"assume: {obj.metadata.resourceVersion})")
            self._assumed[key] = obj

    def restore(self, obj: T) -> None:
        """Drops the assumed version of `obj` if it is the one assumed."""
        key = object_key(obj)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is not None and assumed.metadata.resourceVersion == obj.metadata.resourceVersion:
                del self._assumed[key]

    def is_assumed(self, key: str) -> bool:
        with self._lock:
            return key in self._assumed


class PVAssumeCache(PassiveAssumeCache[PersistentVolume]):
    def __init__(self, client: ClusterClient) -> None:
        super().__init__(client, "PersistentVolume", "persistentvolumes")

    def list_pvs(self, storage_class_name: str) -> list[PersistentVolume]:
        """The PVs of a class, assumed versions included so that a PV assumed for one claim is not
        offered to another in the next cycle. The class is taken from the stored version (kube's
        index), which the scheduler never changes."""
        with self._lock:
            out: list[PersistentVolume] = []
            for obj in self._client.list_objects(self._kind):
                if get_persistent_volume_class(obj) != storage_class_name:
                    continue
                assumed = self._valid_assumed(object_key(obj), obj)
                out.append(assumed if assumed is not None else obj)
            return out


class PVCAssumeCache(PassiveAssumeCache[PersistentVolumeClaim]):
    def __init__(self, client: ClusterClient) -> None:
        super().__init__(client, "PersistentVolumeClaim", "persistentvolumeclaims")
