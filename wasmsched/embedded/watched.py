"""`simulate`'s watched objects (docs/abi.md §14.2): what fills the scheduler's WatchedObjectStore
(framework/watched.py) from the cluster manifests and the embedded cluster.

- A declared resource of a kind wasmsched reads (api/kinds.py RESOURCES: Namespace, PersistentVolume, ...)
  follows the embedded cluster: every add, update and delete of that kind, as the object's JSON.
- Any other declared resource (a CRD's, or a built-in kind wasmsched has no type for) takes the manifests'
  objects of its kind, as written (no schema): apiVersion, kind and metadata.name are all it needs. A
  manifest's kind is matched to a resource by a CustomResourceDefinition in the manifests when there is one
  (spec.group, spec.names.kind and plural, spec.versions[].name, spec.scope), else by kube's
  `meta.UnsafeGuessKindToResource` (lower case plural). Objects of kinds no plugin declared are skipped
  with a warning, as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wasmsched.api.convert import message_to_dict
from wasmsched.api.decoding import json_type_name, shorten
from wasmsched.api.gvr import GroupVersionResource, split_api_version, unsafe_guess_kind_to_resource
from wasmsched.api.kinds import RESOURCES, Resource
from wasmsched.api.manifest import UID_NAMESPACE, ManifestError, UnstructuredObject
from wasmsched.embedded.memory import MemoryCluster
from wasmsched.framework.watched import WatchedObjectStore, object_name

CRD_API_VERSION = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"


def known_resource(gvr: GroupVersionResource) -> Resource | None:
    """The kind wasmsched reads (with its message type) that a resource is, if any."""
    for r in RESOURCES.values():
        if r.group_version == gvr.group_version and r.plural == gvr.resource and r.available():
            return r
    return None


def follow_cluster(cluster: MemoryCluster, store: WatchedObjectStore) -> None:
    """Each declared resource of a kind the embedded cluster holds follows it (add, update, delete)."""
    for gvr in store.declared():
        r = known_resource(gvr)
        if r is None:
            continue

        def add(obj: Any, gvr: GroupVersionResource = gvr) -> None:
            store.apply(gvr, message_to_dict(obj))

        def update(_old: Any, obj: Any, gvr: GroupVersionResource = gvr) -> None:
            store.apply(gvr, message_to_dict(obj))

        def delete(obj: Any, gvr: GroupVersionResource = gvr) -> None:
            store.delete(gvr, message_to_dict(obj))

        cluster.watch(r.kind, add, update, delete)


@dataclass(frozen=True)
class _Scope:
    """A kind's resource as the manifests define it."""

    gvr: GroupVersionResource
    namespaced: bool | None  # None: no CustomResourceDefinition says


def _crd_resources(objects: Iterable[UnstructuredObject]) -> tuple[dict[tuple[str, str, str], _Scope],
                                                                   dict[tuple[str, str, str], UnstructuredObject]]:
    """(group, version, kind) -> resource of every CustomResourceDefinition among the objects, and the CRD
    that defined each. Malformed CRDs are passed over (they are not applied anywhere)."""
    out: dict[tuple[str, str, str], _Scope] = {}
    source: dict[tuple[str, str, str], UnstructuredObject] = {}
    for u in objects:
        if u.api_version != CRD_API_VERSION or u.kind != CRD_KIND:
            continue
        spec = u.obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        group = spec.get("group")
        versions = spec.get("versions")
        if not isinstance(names, Mapping) or not isinstance(group, str) or not isinstance(versions, list):
            continue
        kind, plural = names.get("kind"), names.get("plural")
        if not isinstance(kind, str) or not isinstance(plural, str):
            continue
        namespaced = spec.get("scope") == "Namespaced"
        for v in versions:
            name = v.get("name") if isinstance(v, Mapping) else None
            if isinstance(name, str):
                key = (group, name, kind)
                out[key] = _Scope(GroupVersionResource(group, name, plural), namespaced)
                source[key] = u
    return out, source


def resource_of(u: UnstructuredObject, crds: Mapping[tuple[str, str, str], _Scope]) -> _Scope:
    """The resource a manifest's object belongs to: its CRD's, a known kind's, or kube's guess."""
    group, version = split_api_version(u.api_version)
    scope = crds.get((group, version, u.kind))
    if scope is not None:
        return scope
    known = RESOURCES.get(u.kind)
    if known is not None and known.group_version == u.api_version:
        return _Scope(GroupVersionResource(group, version, known.plural), known.namespaced)
    plural, _ = unsafe_guess_kind_to_resource(u.kind)
    return _Scope(GroupVersionResource(group, version, plural), None)


def load_manifest_objects(store: WatchedObjectStore, objects: Iterable[UnstructuredObject]) -> list[UnstructuredObject]:
    """Puts the manifests' objects of declared resources into the store; returns those taken (and the
    CustomResourceDefinitions that named their resources), whose "skipped" warnings no longer hold.
    Raises ManifestError for a taken object without a name, or defined twice."""
    objects = list(objects)
    declared = set(store.declared())
    if not declared:
        return []
    crds, crd_source = _crd_resources(objects)
    taken: list[UnstructuredObject] = []
    used_crds: dict[int, UnstructuredObject] = {}
    seen: dict[tuple[GroupVersionResource, str, str], str] = {}
    for u in objects:
        scope = resource_of(u, crds)
        if scope.gvr not in declared:
            continue
        group, version = split_api_version(u.api_version)
        crd = crd_source.get((group, version, u.kind))
        if crd is not None:
            used_crds[id(crd)] = crd
        obj = _admit(u, scope)
        ns, name = object_name(obj)
        first = seen.get((scope.gvr, ns, name))
        if first is not None:
            raise ManifestError(f'{u.where} ({u.kind} {ns + "/" if ns else ""}{shorten(name)}): '
                                f'{scope.gvr.group_resource} "{shorten(name)}" already exists '
                                f"(first defined in {first})")
        seen[(scope.gvr, ns, name)] = u.where
        store.apply(scope.gvr, obj)
        taken.append(u)
    return taken + list(used_crds.values())


def _admit(u: UnstructuredObject, scope: _Scope) -> dict[str, Any]:
    """What the API server does to any object on create that the scheduler could see: a name is required;
    a namespaced kind's object without a namespace goes to "default", a cluster-scoped one loses its
    namespace; it gets a uid (deterministic, as manifest.py gives the typed objects)."""
    meta = u.obj.get("metadata")
    label = f"{u.where} ({u.kind})"
    if not isinstance(meta, Mapping):
        what = "required field is missing" if meta is None else f"expected an object, got {json_type_name(meta)}"
        raise ManifestError(f"{label}: metadata: {what}")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{label}: metadata.name: Required value: name is required")
    ns = meta.get("namespace", "")
    if not isinstance(ns, str):
        raise ManifestError(f"{label}: metadata.namespace: expected a string, got {json_type_name(ns)}")
    if scope.namespaced is True and not ns:
        ns = "default"
    elif scope.namespaced is False:
        ns = ""
    new_meta = dict(meta)
    if ns:
        new_meta["namespace"] = ns
    else:
        new_meta.pop("namespace", None)
    if not new_meta.get("uid"):
        new_meta["uid"] = str(uuid.uuid5(UID_NAMESPACE, f"{scope.gvr}/{ns}/{name}"))
    return {**u.obj, "metadata": new_meta}
