"""Pushing a module as a CNCF wasm OCI artifact, optionally with a cosign signature (`wasmsched guest push`).

The artifact is an OCI image manifest with the config `application/vnd.wasm.config.v0+json` (the wasm OCI
artifact layout: `{"architecture":"wasm","os":"wasip1","layerDigests":[…]}`), its `artifactType`, and one
`application/wasm` layer titled with the file's name (what `oras pull` names the file it writes).
No timestamps: the same module pushed twice has the same manifest digest, so a pinned digest survives a re-push.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any

from wasmsched.wasm.oci import artifact, cosign
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import Reference
from wasmsched.wasm.oci.registry import OCI_MANIFEST, Registry, sha256_digest

log = logging.getLogger("wasmsched.wasm")

OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
TITLE_ANNOTATION = "org.opencontainers.image.title"


@dataclass(frozen=True)
class Pushed:
    manifest_digest: str
    signature_digest: str | None  # the signature manifest's, when signed


def _descriptor(media_type: str, data: bytes, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"mediaType": media_type, "digest": sha256_digest(data), "size": len(data)}
    if annotations:
        out["annotations"] = annotations
    return out


def _json(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()


def push(ref: Reference, module: bytes, filename: str, options: OciOptions,
         sign_key: cosign.ec.EllipticCurvePrivateKey | None = None) -> Pushed:
    """Pushes the module under ref's tag (or by digest only, when ref has no tag); signs when sign_key is given."""
    registry = Registry(ref, options, actions="pull,push")
    layer_digest = registry.put_blob(module)
    config = _json({"architecture": "wasm", "os": "wasip1", "layerDigests": [layer_digest]})
    registry.put_blob(config)
    manifest = _json({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": artifact.WASM_CONFIG,
        "config": _descriptor(artifact.WASM_CONFIG, config),
        "layers": [_descriptor(artifact.WASM_LAYER, module, {TITLE_ANNOTATION: os.path.basename(filename)})],
    })
    digest = registry.put_manifest(ref.tag or sha256_digest(manifest), manifest, OCI_MANIFEST)
    log.info('"Pushed wasm guest" ref="%s" digest="%s" bytes=%d', ref, digest, len(module))
    sig_digest = None
    if sign_key is not None:
        sig_digest = _push_signature(registry, ref, digest, sign_key)
    return Pushed(digest, sig_digest)


def _push_signature(registry: Registry, ref: Reference, digest: str,
                    key: cosign.ec.EllipticCurvePrivateKey) -> str:
    """A `sha256-<hex>.sig` manifest as `cosign sign --key` writes it (one simple-signing layer)."""
    payload = cosign.payload(ref.name, digest)
    registry.put_blob(payload)
    payload_digest = sha256_digest(payload)
    # cosign's signature images carry an image config whose rootfs lists the layer.
    config = _json({"architecture": "", "os": "", "config": {}, "created": "0001-01-01T00:00:00Z",
                    "history": [{"created": "0001-01-01T00:00:00Z"}],
                    "rootfs": {"type": "layers", "diff_ids": [payload_digest]}})
    registry.put_blob(config)
    manifest = _json({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": _descriptor(OCI_CONFIG, config),
        "layers": [_descriptor(cosign.PAYLOAD_TYPE, payload,
                               {cosign.SIGNATURE_ANNOTATION: cosign.sign(key, payload)})],
    })
    sig_digest = registry.put_manifest(cosign.signature_tag(digest), manifest, OCI_MANIFEST)
    log.info('"Pushed cosign signature" ref="%s" digest="%s" signature="%s"', ref, digest, sig_digest)
    return sig_digest

