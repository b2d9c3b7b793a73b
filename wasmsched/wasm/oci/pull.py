"""Pulling a guest from a registry: `resolve` (what a tag points to now) and `pull` (the module and its digest).

A pull by digest is served from the blob cache (store.py) when the manifest and the layer are there, with
no request at all; a pull by tag always asks the registry for the manifest (tags move), then takes the
layer from the cache if it has it. With `OciOptions.public_key` the manifest's cosign signature is checked
(cosign.py) before the module is returned; a verified signature is cached too and re-verified on each load.
Errors are RegistryError subclasses whose text does not repeat the reference: the caller adds it.
"""

from __future__ import annotations

import logging

from wasmsched.wasm.bounded import MAX_GUEST_BYTES
from wasmsched.wasm.oci import artifact, cosign
from wasmsched.wasm.oci.errors import NotFound, RegistryError, SignatureError
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import Reference, parse
from wasmsched.wasm.oci.registry import Manifest, Registry
from wasmsched.wasm.oci.store import BlobStore

log = logging.getLogger("wasmsched.wasm")


def resolve(ref: Reference | str, options: OciOptions) -> str:
    """The manifest digest the reference names now: its own digest if pinned (no request), else one
    HEAD of the tag's manifest. For a poller (hot reload): a change means `pull` would load other bytes."""
    ref = parse(ref) if isinstance(ref, str) else ref
    if ref.digest is not None:
        return ref.digest
    return Registry(ref, options).resolve(ref.selector)


def pull(ref: Reference | str, options: OciOptions, max_bytes: int = MAX_GUEST_BYTES) -> tuple[bytes, str]:
    """The module's bytes and the digest of the manifest they came from (the index's, for an index).
    A layer (and a compat layer's inflated tar) larger than max_bytes is refused."""
    ref = parse(ref) if isinstance(ref, str) else ref
    return _Puller(ref, options, max_bytes).pull()


class _Puller:
    def __init__(self, ref: Reference, options: OciOptions, max_bytes: int) -> None:
        self.ref = ref
        self.options = options
        self.max_bytes = max_bytes
        self.store = BlobStore(options.cache_dir)
        self._registry: Registry | None = None
        self.fetched = 0  # blobs and manifests that came from the registry, for the log line

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = Registry(self.ref, self.options)
        return self._registry

    def pull(self) -> tuple[bytes, str]:
        top = self._manifest(self.ref.selector)
        doc = top.json()
        manifest = top
        if artifact.is_index(top.media_type, doc):
            manifest = self._manifest(artifact.pick_manifest(doc))
            doc = manifest.json()
        layer = artifact.pick_layer(doc)
        blob = self._blob(layer.digest, layer.size)
        data = artifact.module_bytes(layer, blob, self.max_bytes)
        if self.options.public_key is not None:
            self._verify(cosign.load_public_key(self.options.public_key), top.digest)
        log.info('"Pulled wasm guest" ref="%s" digest="%s" layer="%s" mediaType="%s" bytes=%d fromRegistry=%d',
                 self.ref, top.digest, layer.digest, layer.media_type, len(data), self.fetched)
        return data, top.digest

    def _manifest(self, selector: str) -> Manifest:
        """By digest: the cache, else the registry (then cached). By tag: always the registry."""
        if selector.startswith("sha256:"):
            cached = self.store.get(selector)
            if cached is not None:
                return Manifest(cached, "", selector)
        manifest = self.registry.get_manifest(selector)
        self.fetched += 1
        self.store.put(manifest.digest, manifest.data)
        return manifest

    def _blob(self, digest: str, size: int) -> bytes:
        cached = self.store.get(digest)
        if cached is not None and len(cached) == size:
            return cached
        data = self.registry.get_blob(digest, size, self.max_bytes)
        self.fetched += 1
        self.store.put(digest, data)
        return data

    def _verify(self, key: cosign.ec.EllipticCurvePublicKey, manifest_digest: str) -> None:
        sig_digest = self.store.signature_ref(manifest_digest)
        if sig_digest is not None:
            try:
                self._verify_signature_manifest(key, self._manifest(sig_digest), manifest_digest)
                return
            except RegistryError as e:
                log.info('"Cached signature not usable, asking the registry" ref="%s" err="%s"', self.ref, e)
        tag = cosign.signature_tag(manifest_digest)
        try:
            sig_manifest = self._manifest(tag)
        except NotFound:
            raise SignatureError(f"no cosign signature: tag {tag} not found") from None
        self._verify_signature_manifest(key, sig_manifest, manifest_digest)
        self.store.put_signature_ref(manifest_digest, sig_manifest.digest)

    def _verify_signature_manifest(self, key: cosign.ec.EllipticCurvePublicKey, sig_manifest: Manifest,
                                   manifest_digest: str) -> None:
        layers = cosign.signature_layers(sig_manifest.json())
        if not layers:
            raise SignatureError(f"signature manifest {sig_manifest.digest} has no {cosign.PAYLOAD_TYPE} layer "
                                 f"with a {cosign.SIGNATURE_ANNOTATION} annotation")
        errors = []
        for layer in layers:
            payload = self._blob(layer.digest, layer.size)
            try:
                cosign.verify(key, layer, payload, manifest_digest)
                log.info('"Verified cosign signature" ref="%s" digest="%s" signature="%s"', self.ref,
                         manifest_digest, sig_manifest.digest)
                return
            except SignatureError as e:
                errors.append(str(e))
        raise SignatureError("; ".join(dict.fromkeys(errors)))

