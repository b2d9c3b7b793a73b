"""Loading Kubernetes manifests (YAML/JSON files or directories) into typed messages.

Objects are converted once at ingest. Defaults that the API server would fill in and the
scheduler relies on are applied here: `metadata.namespace` ("default" for namespaced kinds), a
deterministic `metadata.uid` and a `creationTimestamp` that increases in order of appearance,
so that runs are reproducible.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from google.protobuf.message import Message

from wasmsched.api.convert import ConversionError, dict_to_message
from wasmsched.api.types import KIND_TYPES, NAMESPACED_KINDS

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# uuid5 namespace for generated UIDs (fixed, so UIDs are stable across runs)
UID_NAMESPACE = uuid.UUID("6f1c7c8e-2b0a-4c53-9a55-7a6d1f0e9b11")
# creationTimestamp given to the first object without one; later ones get one second more each
BASE_CREATION_SECONDS = 1_704_067_200  # 2024-01-01T00:00:00Z


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
class LoadedObjects:
    """Everything read by load_paths: objects in file order, grouped by kind, and warnings."""

    objects: list[LoadedObject] = field(default_factory=list)
    by_kind: dict[str, list[Message]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Message]:
        """The messages of one kind ("Pod", "Node", ...), in order of appearance."""
        return self.by_kind.get(kind, [])

    def add(self, obj: LoadedObject) -> None:
        """Append an object, keeping the per-kind grouping in step."""
        self.objects.append(obj)
        self.by_kind.setdefault(obj.kind, []).append(obj.message)


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings, as sigs.k8s.io/yaml does when decoding to JSON."""


def _timestamp_as_string(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)
_CLoaderBase: Any = getattr(yaml, "CSafeLoader", None)
if _CLoaderBase is not None:

    class _CLoader(_CLoaderBase):  # type: ignore[misc,valid-type]
        """The libyaml-backed variant of _Loader (much faster on large manifests)."""

    _CLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)
    _LOADER: Any = _CLoader
else:
    _LOADER = _Loader


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
    """(1-based document index, decoded document) of a YAML or JSON text."""
    if source.endswith(".json"):
        try:
            yield 1, json.loads(text)
        except json.JSONDecodeError as e:
            raise ManifestError(f"{source}: invalid JSON: {e}") from None
        return
    try:
        yield from enumerate(yaml.load_all(text, Loader=_LOADER), start=1)
    except yaml.YAMLError as e:
        raise ManifestError(f"{source}: invalid YAML: {e}") from None


class _Context:
    """Per-load state: the counter behind generated creation timestamps."""

    def __init__(self) -> None:
        self.sequence = 0

    def next_timestamp(self) -> int:
        seconds = BASE_CREATION_SECONDS + self.sequence
        self.sequence += 1
        return seconds


def _describe(source: str, where: str, obj: Mapping[str, Any] | None) -> str:
    """'file: document N (Kind ns/name)' for error messages."""
    label = f"{source}: {where}"
    if not isinstance(obj, Mapping):
        return label
    kind = obj.get("kind")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    parts = [str(kind)] if kind else []
    if name:
        parts.append(f"{ns}/{name}" if ns else str(name))
    return f"{label} ({' '.join(parts)})" if parts else label


def _apply_defaults(msg: Message, kind: str, ctx: _Context) -> None:
    """Fill namespace, uid and creationTimestamp as the API server would."""
    meta = msg.metadata  # type: ignore[attr-defined]
    if kind in NAMESPACED_KINDS and not meta.namespace:
        meta.namespace = "default"
    if not meta.name and meta.generateName:
        suffix = uuid.uuid5(UID_NAMESPACE, f"{kind}/{meta.namespace}/{meta.generateName}/{ctx.sequence}").hex[
            :5
        ]
        meta.name = meta.generateName + suffix
    if not meta.uid:
        meta.uid = str(uuid.uuid5(UID_NAMESPACE, f"{kind}/{meta.namespace}/{meta.name}"))
    if not meta.HasField("creationTimestamp"):
        meta.creationTimestamp.seconds = ctx.next_timestamp()


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
        raise ManifestError(f"{_describe(source, where, None)}: expected an object, got {type(obj).__name__}")
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
        result.warnings.append(
            f"{_describe(source, where, obj)}: unsupported kind {api_version} {kind}, skipped"
        )
        return
    try:
        msg = dict_to_message(obj, cls)
    except ConversionError as e:
        raise ManifestError(f"{_describe(source, where, obj)}: {e}") from None
    if not msg.metadata.name and not msg.metadata.generateName:  # type: ignore[attr-defined]
        raise ManifestError(f"{_describe(source, where, obj)}: metadata.name: required value")
    _apply_defaults(msg, kind, ctx)
    result.add(LoadedObject(api_version, kind, msg, source, document))


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
        key = min(extra)
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
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ManifestError(f"{f}: {e}") from None
        _load_text(text, str(f), ctx, result)
    return result
