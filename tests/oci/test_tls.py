"""HTTPS registries: the certificate must chain to `caFile` (or the system's CAs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasmsched.devcluster.certs import Pki
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.push import push
from wasmsched.wasm.oci.reference import parse

from .conftest import RunningRegistry
from .helpers import EMPTY_GUEST


def test_ca_file(oci_tls_registry: tuple[RunningRegistry, Pki], oci_cache: Path) -> None:
    reg, pki = oci_tls_registry
    trusted = OciOptions(ca_file=pki.ca_cert, registry_config=reg.config_json)
    push(parse(reg.ref("tls/x:v1")), EMPTY_GUEST, "x.wasm", trusted)
    assert fetch_guest(reg.ref("tls/x:v1"), oci=trusted) == EMPTY_GUEST
    url = reg.ref("tls/x:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=OciOptions(registry_config=reg.config_json))
    assert str(e.value).startswith(f"wasm: error pulling guestURL {url}: TLS with {reg.host} failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in str(e.value)
    assert str(e.value).endswith("(caFile names the CA of a private registry)")
