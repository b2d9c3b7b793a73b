"""What a pull or push needs besides the reference: the args of docs/abi.md §9 that concern registries."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OciOptions:
    # http:// instead of https://; decode_args allows it only for a loopback registry.
    plain_http: bool = False
    # PEM bundle of the CAs the registry's certificate (and its token server's) may chain to; None: the system's.
    ca_file: Path | None = None
    # A docker config.json; None: $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
    registry_config: Path | None = None
    # cosign.pub (PEM ECDSA P-256): when set, the manifest must carry a cosign signature made with its key.
    public_key: Path | None = None
    # The blob cache; None: $WASMSCHED_OCI_CACHE_DIR, else $XDG_CACHE_HOME/wasmsched/oci (store.py).
    cache_dir: Path | None = None

    def resolved(self, base_dir: str | os.PathLike[str] | None) -> OciOptions:
        """The paths made absolute against base_dir (the configuration file's directory), as guestURL's are."""
        if base_dir is None:
            return self

        def at(p: Path | None) -> Path | None:
            return None if p is None or p.is_absolute() else Path(base_dir) / p

        return OciOptions(self.plain_http, at(self.ca_file) or self.ca_file,
                          at(self.registry_config) or self.registry_config,
                          at(self.public_key) or self.public_key, self.cache_dir)
