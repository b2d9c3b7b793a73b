"""cosign's key-based signatures in its registry layout ("tag-based" `.sig` manifests), made and checked.

For an artifact whose manifest digest is `sha256:<hex>`, cosign stores an OCI manifest under the tag
`sha256-<hex>.sig` of the same repository. Each of its layers of media type
`application/vnd.dev.cosign.simplesigning.v1+json` is a "simple signing" payload
(`{"critical":{"identity":{"docker-reference":…},"image":{"docker-manifest-digest":"sha256:<hex>"},
"type":"cosign container image signature"},"optional":null}`) whose annotation
`dev.cosignproject.cosign/signature` is the base64 ASN.1 ECDSA signature over the payload's bytes, with
SHA-256. `cosign sign --key cosign.key` writes this in its legacy (tag-based) referrers mode, cosign's
keys being ECDSA P-256, so what `wasmsched guest push --sign-key` writes is meant for `cosign verify --key
cosign.pub --insecure-ignore-tlog=true` and the other way round (matched to cosign's source, not run
against the cosign binary).

Checked as `cosign verify --key` checks it (its claim check): the payload's docker-manifest-digest must be
the pulled manifest's digest, and the signature must verify with the key. The identity (docker-reference)
is not compared, as cosign does not by default: a module copied to another registry keeps its signature.
Keyless signatures (Fulcio certificates, Rekor bundles) and the OCI 1.1 referrers layout are not supported.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from wasmsched.wasm.oci.errors import SignatureError

PAYLOAD_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
SIGNATURE_TYPE = "cosign container image signature"


def signature_tag(manifest_digest: str) -> str:
    return manifest_digest.replace(":", "-") + ".sig"


def payload(docker_reference: str, manifest_digest: str) -> bytes:
    doc = {"critical": {"identity": {"docker-reference": docker_reference},
                        "image": {"docker-manifest-digest": manifest_digest},
                        "type": SIGNATURE_TYPE},
           "optional": None}
    return json.dumps(doc, separators=(",", ":")).encode()


def load_public_key(path: Path) -> ec.EllipticCurvePublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as e:
        raise SignatureError(f"public key {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise SignatureError(f"public key {path}: not a PEM public key: {e}") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise SignatureError(f"public key {path}: not an ECDSA P-256 key (cosign's)")
    return key


def load_private_key(path: Path, password: bytes | None = None) -> ec.EllipticCurvePrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password)
    except OSError as e:
        raise SignatureError(f"private key {path}: {e.strerror or e}") from None
    except (ValueError, TypeError) as e:
        raise SignatureError(f"private key {path}: {e}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise SignatureError(f"private key {path}: not an ECDSA P-256 key")
    return key


def sign(key: ec.EllipticCurvePrivateKey, data: bytes) -> str:
    return base64.b64encode(key.sign(data, ec.ECDSA(hashes.SHA256()))).decode()


@dataclass(frozen=True)
class SignatureLayer:
    digest: str  # of the payload blob
    size: int
    signature: str  # base64


def signature_layers(manifest: dict[str, Any]) -> list[SignatureLayer]:
    out = []
    for layer in manifest.get("layers") or []:
        if not isinstance(layer, dict) or layer.get("mediaType") != PAYLOAD_TYPE:
            continue
        sig = (layer.get("annotations") or {}).get(SIGNATURE_ANNOTATION)
        digest, size = layer.get("digest"), layer.get("size")
        if isinstance(sig, str) and isinstance(digest, str) and isinstance(size, int):
            out.append(SignatureLayer(digest, size, sig))
    return out


def verify(key: ec.EllipticCurvePublicKey, layer: SignatureLayer, payload_bytes: bytes,
           manifest_digest: str) -> None:
    """Raises SignatureError unless the payload names manifest_digest and the signature verifies."""
    try:
        signature = base64.b64decode(layer.signature, validate=True)
    except binascii.Error:
        raise SignatureError("signature annotation is not base64") from None
    try:
        key.verify(signature, payload_bytes, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise SignatureError("signature does not verify with the public key") from None
    try:
        doc = json.loads(payload_bytes)
        signed = doc["critical"]["image"]["docker-manifest-digest"]
        kind = doc["critical"]["type"]
    except (ValueError, KeyError, TypeError):
        raise SignatureError("signature payload is not a cosign simple-signing payload") from None
    if kind != SIGNATURE_TYPE:
        raise SignatureError(f"signature payload type is {kind!r}, not {SIGNATURE_TYPE!r}")
    if signed != manifest_digest:
        raise SignatureError(f"signature is for {signed}, not for the pulled manifest {manifest_digest}")
