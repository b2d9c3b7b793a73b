"""The on-disk cache of what pulls fetched, by digest: manifests, layers, cosign signatures.

`$WASMSCHED_OCI_CACHE_DIR`, default `$XDG_CACHE_HOME/wasmsched/oci` (`~/.cache/wasmsched/oci`), laid out
as an OCI image layout's blob store: `blobs/sha256/<hex>`. Content-addressed, so an entry never goes stale:
a pull by digest whose manifest and layer are here needs no registry (a restart while the registry is
down still starts), while a pull by tag always asks the registry what the tag points to now. Signature
manifests are found by `signatures/sha256-<hex>.sig`, holding the digest of the signature manifest that
was verified for that manifest (a signature is re-verified with the key on every load, cached or not).

Every read is checked against its digest (a corrupt entry is removed and fetched again); writes go to a
temporary file renamed into place, so processes sharing the directory never see half a file. Nothing is
evicted: guests are few and small; remove the directory to reclaim the space.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from pathlib import Path

from wasmsched.util.files import cache_dir, write_atomic

log = logging.getLogger("wasmsched.wasm")

CACHE_DIR_ENV = "WASMSCHED_OCI_CACHE_DIR"
TMP_PREFIX = ".tmp-"


def default_cache_dir() -> Path:
    return cache_dir(CACHE_DIR_ENV, "oci")


class BlobStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_cache_dir()

    def path(self, digest: str) -> Path:
        algorithm, _, hexdigest = digest.partition(":")
        return self.directory / "blobs" / algorithm / hexdigest

    def get(self, digest: str) -> bytes | None:
        path = self.path(digest)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            log.warning('"Corrupt OCI cache entry removed" path="%s"', path)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return data

    def put(self, digest: str, data: bytes) -> None:
        """Stores verified bytes; a cache that cannot be written only costs a fetch next time."""
        self._write(self.path(digest), data)

    def signature_ref(self, manifest_digest: str) -> str | None:
        try:
            text = self._signature_path(manifest_digest).read_text().strip()
        except OSError:
            return None
        return text or None

    def put_signature_ref(self, manifest_digest: str, signature_digest: str) -> None:
        self._write(self._signature_path(manifest_digest), signature_digest.encode())

    def _signature_path(self, manifest_digest: str) -> Path:
        return self.directory / "signatures" / (manifest_digest.replace(":", "-") + ".sig")

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, TMP_PREFIX)
        except OSError as e:
            log.warning('"Cannot write OCI cache entry" path="%s" err="%s"', path, e)
