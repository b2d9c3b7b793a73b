"""Loading Kubernetes manifests (YAML/JSON files or directories) into typed messages.

Objects are converted once at ingest. Defaults that the API server would fill in and the
scheduler relies on are applied here: `metadata.namespace` ("default" for namespaced kinds, cleared
for cluster-scoped ones), a deterministic `metadata.uid` and a `creationTimestamp` that increases in
order of appearance, so that runs are reproducible. Then every object is validated as
kube-apiserver would on create (`wasmsched.api.validation`), a second object with the kind,
namespace and name of an earlier one is refused as the API server refuses it, and so is a second
global-default PriorityClass.

Files are parsed by the strict loader of `wasmsched.api.decoding` (size limit, duplicate keys,
alias and depth limits). Every error is a one-line ManifestError naming the file, the document and
the object.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from google.protobuf.message import Message

from wasmsched.api.convert import ConversionError, dict_to_message, message_to_dict
from wasmsched.api.decoding import (
    MAX_MANIFEST_BYTES,
    DecodeError,
    brief,
    json_type_name,
    load_json,
    read_limited,
    shorten,
    yaml_documents,
)
from wasmsched.api.defaulting import DEFAULTERS
from wasmsched.api.kinds import RESOURCES as KIND_RESOURCES
from wasmsched.api.types import KIND_TYPES, NAMESPACED_KINDS, object_key
from wasmsched.api.validation.objects import validate_object
from wasmsched.api.validation.scheduling import global_default_conflict

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# uuid5 namespace for generated UIDs (fixed, so UIDs are stable across runs)
UID_NAMESPACE = uuid.UUID("6f1c7c8e-2b0a-4c53-9a55-7a6d1f0e9b11")
# creationTimestamp given to the first object without one; later ones get one second more each
BASE_CREATION_SECONDS = 1_704_067_200  # 2024-01-01T00:00:00Z

# kind -> the resource as apierrors.NewAlreadyExists names it (`pods "p1" already exists`).
RESOURCES: dict[str, str] = {kind: r.group_resource for kind, r in KIND_RESOURCES.items()}


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the text names the file, document, object and field."""


@dataclass(slots=True)
class LoadedObject:
    """One object read from a manifest, with where it came from."""

    api_version: str
    kind: str
    message: Message
    source: str
    document: int


@dataclass(slots=True)
class UnstructuredObject:
    """An object of a kind wasmsched has no type for (a CRD's, or a built-in one it does not read), as
    decoded, not validated; `where` is "file: document N" (and ", items[i]"), `warning` the warning that
    says it was skipped, `source` the file."""

    api_version: str
    kind: str
    obj: Mapping[str, Any]
    where: str
    warning: str
    source: str = ""


@dataclass(slots=True)
class LoadedObjects:
    """Everything read by load_paths: objects in file order, grouped by kind, and warnings; the objects of
    kinds without a type apart, in file order."""

    objects: list[LoadedObject] = field(default_factory=list)
    by_kind: dict[str, list[Message]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    unstructured: list[UnstructuredObject] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Message]:
        """The messages of one kind ("Pod", "Node", ...), in order of appearance."""
        return self.by_kind.get(kind, [])

    def add(self, obj: LoadedObject) -> None:
        """Append an object, keeping the per-kind grouping in step."""
        self.objects.append(obj)
        self.by_kind.setdefault(obj.kind, []).append(obj.message)


def manifest_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand paths: files as given, directories recursively (.yaml/.yml/.json, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in MANIFEST_SUFFIXES))
        elif p.exists():
            out.append(p)
        else:
            raise ManifestError(f"{p}: no such file or directory")
    return out


def _documents(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """(1-based document index, decoded document) of a YAML or JSON text; raises ManifestError."""
    try:
        if source.endswith(".json"):
            yield 1, load_json(text, source)
            return
        yield from yaml_documents(text, source)
    except DecodeError as e:
        raise ManifestError(str(e)) from None


class _Context:
    """Per-load state: the counter behind generated creation timestamps, where each object was first
    defined (for duplicates), and the global-default PriorityClass seen so far."""

    def __init__(self) -> None:
        self.sequence = 0
        self.defined: dict[tuple[str, str, str], str] = {}
        self.global_default: str | None = None

    def next_timestamp(self) -> int:
        seconds = BASE_CREATION_SECONDS + self.sequence
        self.sequence += 1
        return seconds


def _text(value: Any) -> str | None:
    """A string from the input, cut and escaped for a one-line message (decoding.brief); None for anything
    else (never str() an arbitrary value: it may be huge)."""
    return brief(value) if isinstance(value, str) and value else None


def _describe(source: str, where: str, obj: Mapping[str, Any] | None) -> str:
    """'file: document N (Kind ns/name)' for error messages."""
    label = f"{source}: {where}"
    if not isinstance(obj, Mapping):
        return label
    kind = _text(obj.get("kind"))
    meta = obj.get("metadata")
    name = _text(meta.get("name")) if isinstance(meta, Mapping) else None
    ns = _text(meta.get("namespace")) if isinstance(meta, Mapping) else None
    parts = [kind] if kind else []
    if name:
        parts.append(f"{ns}/{name}" if ns else name)
    return f"{label} ({' '.join(parts)})" if parts else label


def _describe_message(source: str, where: str, kind: str, msg: Message) -> str:
    """'file: document N (Kind ns/name)' for a converted (and defaulted) object."""
    meta = msg.metadata  # type: ignore[attr-defined]
    name = brief(meta.name)
    return f"{source}: {where} ({kind} {brief(meta.namespace) + '/' + name if meta.namespace else name})"


def _apply_defaults(msg: Message, kind: str, ctx: _Context) -> None:
    """Fill namespace, uid and creationTimestamp, and the kind's own defaults, as the API server would."""
    meta = msg.metadata  # type: ignore[attr-defined]
    if kind in NAMESPACED_KINDS:
        if not meta.namespace:
            meta.namespace = "default"
    elif meta.namespace:
        # the API server's BeforeCreate clears the namespace of cluster-scoped objects
        meta.namespace = ""
    if not meta.name and meta.generateName:
        suffix = uuid.uuid5(UID_NAMESPACE, f"{kind}/{meta.namespace}/{meta.generateName}/{ctx.sequence}").hex[
            :5
        ]
        meta.name = meta.generateName + suffix
    if not meta.uid:
        meta.uid = str(uuid.uuid5(UID_NAMESPACE, f"{kind}/{meta.namespace}/{meta.name}"))
    if not meta.HasField("creationTimestamp"):
        meta.creationTimestamp.seconds = ctx.next_timestamp()
    defaulter = DEFAULTERS.get(kind)
    if defaulter is not None:
        defaulter(msg)


def _convert(
    obj: Any,
    source: str,
    where: str,
    ctx: _Context,
    result: LoadedObjects,
    document: int,
    default_type: tuple[str, str] | None = None,
) -> None:
    """Convert one decoded object (expanding lists) and add it to result."""
    if not isinstance(obj, Mapping):
        raise ManifestError(f"{_describe(source, where, None)}: expected an object, got {json_type_name(obj)}")
    api_version = obj.get("apiVersion") or (default_type[0] if default_type else None)
    kind = obj.get("kind") or (default_type[1] if default_type else None)
    if not api_version:
        raise ManifestError(f"{_describe(source, where, obj)}: apiVersion: required field is missing")
    if not kind:
        raise ManifestError(f"{_describe(source, where, obj)}: kind: required field is missing")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise ManifestError(f"{_describe(source, where, obj)}: apiVersion and kind must be strings")
    if kind == "List" or (kind.endswith("List") and (api_version, kind) in KIND_TYPES):
        _convert_list(obj, api_version, kind, source, where, ctx, result, document)
        return
    cls = KIND_TYPES.get((api_version, kind))
    if cls is None:
        warning = f"{_describe(source, where, obj)}: unsupported kind {api_version} {kind}, skipped"
        result.warnings.append(warning)
        # Kept as it is: a plugin may declare it reads this kind (args.watch, a CRD's objects among them);
        # whoever takes it drops the warning (embedded/watched.py).
        result.unstructured.append(UnstructuredObject(api_version, kind, obj, f"{source}: {where}", warning,
                                                      source))
        return
    try:
        msg = dict_to_message(obj, cls)
    except ConversionError as e:
        raise ManifestError(f"{_describe(source, where, obj)}: {e}") from None
    except RecursionError:
        raise ManifestError(f"{_describe(source, where, obj)}: exceeded max depth") from None
    if not msg.metadata.name and not msg.metadata.generateName:  # type: ignore[attr-defined]
        raise ManifestError(
            f"{_describe(source, where, obj)}: metadata.name: Required value: name or generateName is required"
        )
    _apply_defaults(msg, kind, ctx)
    _admit(msg, kind, source, where, ctx)
    result.add(LoadedObject(api_version, kind, msg, source, document))


def _admit(msg: Message, kind: str, source: str, where: str, ctx: _Context) -> None:
    """What the API server checks on create: validation, then name conflicts, then the Priority
    admission plugin's single global default."""
    problem = validate_object(kind, msg)
    if problem is not None:
        raise ManifestError(f"{_describe_message(source, where, kind, msg)}: {problem}")
    meta = msg.metadata  # type: ignore[attr-defined]
    resource = RESOURCES.get(kind)
    if resource is not None:
        ident = (kind, meta.namespace, meta.name)
        first = ctx.defined.get(ident)
        if first is not None:
            raise ManifestError(
                f'{_describe_message(source, where, kind, msg)}: {resource} "{shorten(meta.name)}" already exists '
                f"(first defined in {first})"
            )
        ctx.defined[ident] = f"{source}: {where}"
    if kind == "PriorityClass" and msg.globalDefault:  # type: ignore[attr-defined]
        if ctx.global_default is not None:
            conflict = global_default_conflict(ctx.global_default, meta.name)
            raise ManifestError(f"{_describe_message(source, where, kind, msg)}: {conflict}")
        ctx.global_default = meta.name


def _convert_list(
    obj: Mapping[str, Any],
    api_version: str,
    kind: str,
    source: str,
    where: str,
    ctx: _Context,
    result: LoadedObjects,
    document: int,
) -> None:
    """Expand `kind: List` (items carry their own type) and typed lists like PodList."""
    extra = {str(k) for k in obj} - {"apiVersion", "kind", "metadata", "items"}
    if extra:
        key = shorten(min(extra))
        raise ManifestError(f'{_describe(source, where, obj)}: {key}: unknown field "{key}"')
    items = obj.get("items") or []
    if not isinstance(items, list):
        raise ManifestError(f"{_describe(source, where, obj)}: items: expected an array")
    item_type = None if kind == "List" else (api_version, kind[: -len("List")])
    for i, item in enumerate(items):
        _convert(item, source, f"{where}, items[{i}]", ctx, result, document, item_type)


def _load_text(text: str, source: str, ctx: _Context, result: LoadedObjects) -> None:
    for index, doc in _documents(text, source):
        if doc is None:
            # empty documents (a leading or trailing ---) are ignored, as kubectl does
            continue
        _convert(doc, source, f"document {index}", ctx, result, index)


def load_text(text: str, source: str = "<string>") -> LoadedObjects:
    """Load objects from one YAML (or, if source ends with .json, JSON) text."""
    result = LoadedObjects()
    _load_text(text, source, _Context(), result)
    return result


def load_paths(paths: Iterable[str | Path]) -> LoadedObjects:
    """Load every manifest under paths (files or directories) in order; raises ManifestError."""
    result = LoadedObjects()
    ctx = _Context()
    for f in manifest_files(paths):
        try:
            text = read_limited(str(f), MAX_MANIFEST_BYTES)
        except DecodeError as e:
            raise ManifestError(str(e)) from None
        _load_text(text, str(f), ctx, result)
    return result


def write_manifests(path: Path, objects: Iterable[Message]) -> int:
    """Writes objects as one multi-document YAML file that load_paths reads back, byte for byte the same
    for the same objects: sorted by namespace/name, keys sorted, without the server's managedFields (as
    `kubectl get -o yaml` prints them). Returns how many were written."""
    docs = []
    for msg in sorted(objects, key=object_key):
        doc = message_to_dict(msg)
        meta = doc.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        docs.append(doc)
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=True)
    return len(docs)
