"""The registry token flow (Bearer challenge -> token -> retry) against a small in-test registry.

distribution's own token auth needs a token server with signed JWTs; what matters here is the client's
side of the exchange, so a fake registry on 127.0.0.1 serves one artifact behind a Bearer challenge and
records what it was asked.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.registry import OCI_MANIFEST, sha256_digest

from .conftest import write_docker_config
from .helpers import EMPTY_GUEST

TOKEN = "tok-123"
CONFIG = b"{}"
LAYER_DIGEST = sha256_digest(EMPTY_GUEST)
MANIFEST = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                       "config": {"mediaType": "application/vnd.oci.empty.v1+json",
                                  "digest": sha256_digest(CONFIG), "size": 2},
                       "layers": [{"mediaType": "application/vnd.module.wasm.content.layer.v1+wasm",
                                   "digest": LAYER_DIGEST, "size": len(EMPTY_GUEST)}]}).encode()


class FakeRegistry(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.token_requests: list[dict[str, Any]] = []
        self.password = "pw"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakeRegistry

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/token"):
            auth = self.headers.get("Authorization", "")
            self.server.token_requests.append({"path": self.path, "auth": auth})
            if auth != "Basic " + base64.b64encode(f"u:{self.server.password}".encode()).decode():
                return self._send(401)
            return self._send(200, json.dumps({"token": TOKEN}).encode())
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            challenge = (f'Bearer realm="http://{self.server.host}/token",service="fake",'
                         'scope="repository:guests/x:pull"')
            return self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {"WWW-Authenticate": challenge})
        if self.path == "/v2/guests/x/manifests/v1":
            return self._send(200, MANIFEST, {"Content-Type": OCI_MANIFEST})
        if self.path == f"/v2/guests/x/manifests/{sha256_digest(MANIFEST)}":
            # Other bytes than the digest names, and no Docker-Content-Digest: only the pin can tell.
            return self._send(200, MANIFEST + b" ", {"Content-Type": OCI_MANIFEST})
        if self.path == f"/v2/guests/x/blobs/{LAYER_DIGEST}":
            return self._send(200, EMPTY_GUEST)
        return self._send(404)


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    server = FakeRegistry()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_bearer_token_with_basic_credentials(fake: FakeRegistry, tmp_path: Path, oci_cache: Path) -> None:
    cfg = write_docker_config(tmp_path / "config.json", fake.host, "u", "pw")
    assert fetch_guest(f"oci://{fake.host}/guests/x:v1",
                       oci=OciOptions(plain_http=True, registry_config=cfg)) == EMPTY_GUEST
    # One token, asked once with the credentials, for this repository's pull scope, reused for the blob.
    assert len(fake.token_requests) == 1
    assert "scope=repository%3Aguests%2Fx%3Apull" in fake.token_requests[0]["path"]
    assert "service=fake" in fake.token_requests[0]["path"]


def test_bearer_token_refused(fake: FakeRegistry, tmp_path: Path, oci_cache: Path) -> None:
    cfg = write_docker_config(tmp_path / "config.json", fake.host, "u", "wrong")
    url = f"oci://{fake.host}/guests/x:v1"
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=OciOptions(plain_http=True, registry_config=cfg))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: token request to http://{fake.host}/token "
                            f"refused (401) with the credentials (registry config {cfg})")


def test_anonymous_token_request(fake: FakeRegistry, tmp_path: Path, oci_cache: Path) -> None:
    """No credentials for the registry: the token is asked for anonymously (a public repository's way)."""
    empty = tmp_path / "config.json"
    empty.write_text("{}")
    with pytest.raises(WasmLoadError, match="refused \\(401\\) anonymously"):
        fetch_guest(f"oci://{fake.host}/guests/x:v1", oci=OciOptions(plain_http=True, registry_config=empty))
    assert fake.token_requests[0]["auth"] == ""


def test_manifest_by_digest_is_checked_without_a_digest_header(fake: FakeRegistry, tmp_path: Path,
                                                               oci_cache: Path) -> None:
    cfg = write_docker_config(tmp_path / "config.json", fake.host, "u", "pw")
    url = f"oci://{fake.host}/guests/x@{sha256_digest(MANIFEST)}"
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=OciOptions(plain_http=True, registry_config=cfg))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: manifest digest mismatch: expected "
                            f"{sha256_digest(MANIFEST)}, got {sha256_digest(MANIFEST + b' ')}")
