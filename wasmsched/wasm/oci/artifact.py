"""Which manifest of an index and which layer of a manifest hold the wasm module, and its bytes from the layer.

Accepted layers (docs/abi.md §9):
- the module itself: `application/wasm` (the CNCF wasm OCI artifact, `oras push x.wasm:application/wasm`,
  `wasmsched guest push`) or `application/vnd.module.wasm.content.layer.v1+wasm` (wasm-to-oci, Istio's OCI
  format);
- Istio's compat image: one `application/vnd.oci.image.layer.v1.tar+gzip` or
  `application/vnd.docker.image.rootfs.diff.tar.gzip` layer whose tar holds exactly one `*.wasm` file.
A manifest with one module layer uses it (other layers, such as a README, are ignored); several module layers,
or no module layer and not exactly one tar layer, are refused: guessing would load the wrong code.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from typing import Any

from wasmsched.wasm.bounded import LimitExceeded, gunzip
from wasmsched.wasm.oci.errors import NoWasmLayer, RegistryError
from wasmsched.wasm.oci.registry import DOCKER_LIST, OCI_INDEX

WASM_LAYER = "application/wasm"
WASM_TO_OCI_LAYER = "application/vnd.module.wasm.content.layer.v1+wasm"
WASM_LAYERS = (WASM_LAYER, WASM_TO_OCI_LAYER)
TAR_GZIP_LAYERS = ("application/vnd.oci.image.layer.v1.tar+gzip", "application/vnd.docker.image.rootfs.diff.tar.gzip")
WASM_CONFIG = "application/vnd.wasm.config.v0+json"
WASM_PLATFORM = ("wasi", "wasm")  # (os, architecture) of a wasm image in an index, as docker buildx writes it


@dataclass(frozen=True)
class Layer:
    media_type: str
    digest: str
    size: int

    @property
    def is_tar(self) -> bool:
        return self.media_type in TAR_GZIP_LAYERS


def is_index(media_type: str, doc: dict[str, Any]) -> bool:
    return media_type in (OCI_INDEX, DOCKER_LIST) or doc.get("mediaType") in (OCI_INDEX, DOCKER_LIST) or (
        "manifests" in doc and "layers" not in doc)


def pick_manifest(doc: dict[str, Any]) -> str:
    """The digest of the index entry to use: the wasi/wasm platform's, or the only entry."""
    entries = [m for m in doc.get("manifests") or [] if isinstance(m, dict) and isinstance(m.get("digest"), str)]
    for m in entries:
        p = m.get("platform") or {}
        if isinstance(p, dict) and (p.get("os"), p.get("architecture")) == WASM_PLATFORM:
            return str(m["digest"])
    if len(entries) == 1:
        return str(entries[0]["digest"])
    raise NoWasmLayer(f"image index has {len(entries)} manifests and none for platform wasi/wasm")


def pick_layer(doc: dict[str, Any]) -> Layer:
    layers = []
    for raw in doc.get("layers") or []:
        if not isinstance(raw, dict):
            continue
        media_type, digest, size = raw.get("mediaType"), raw.get("digest"), raw.get("size")
        if isinstance(media_type, str) and isinstance(digest, str) and isinstance(size, int):
            layers.append(Layer(media_type, digest, size))
    modules = [la for la in layers if la.media_type in WASM_LAYERS]
    if len(modules) == 1:
        return modules[0]
    if len(modules) > 1:
        raise NoWasmLayer(f"{len(modules)} wasm layers; expected one")
    tars = [la for la in layers if la.is_tar]
    if len(tars) == 1:
        return tars[0]
    types = ", ".join(sorted({la.media_type for la in layers})) or "none"
    raise NoWasmLayer(f"no wasm layer (layer media types: {types}; accepted: {', '.join(WASM_LAYERS)}, "
                      f"or one {' or '.join(TAR_GZIP_LAYERS)} holding one .wasm file)")


def module_bytes(layer: Layer, blob: bytes, max_bytes: int) -> bytes:
    """The module: the blob itself, or the one .wasm file of a tar+gzip layer (inflated up to max_bytes)."""
    if not layer.is_tar:
        return blob
    try:
        tar_bytes = gunzip(blob, max_bytes)
    except LimitExceeded:
        raise RegistryError(f"layer {layer.digest} inflates to more than {max_bytes} bytes") from None
    except (OSError, EOFError, ValueError) as e:
        raise NoWasmLayer(f"layer {layer.digest} is not gzip: {e}") from None
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".wasm")]
            if len(members) != 1:
                names = ", ".join(m.name for m in members) or "none"
                raise NoWasmLayer(f"layer {layer.digest}: expected one .wasm file in the tar, found {names}")
            f = tar.extractfile(members[0])
            if f is None:
                raise NoWasmLayer(f"layer {layer.digest}: cannot read {members[0].name}")
            return f.read()
    except tarfile.TarError as e:
        raise NoWasmLayer(f"layer {layer.digest} is not a tar: {e}") from None
