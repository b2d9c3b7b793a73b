"""The bearer token the transport sends (kube/transport.py): the configuration's refresh hook (exec plugins,
OIDC, a service account's rotated token) is asked at most once per AUTH_REFRESH_SECONDS, not per request,
and a token it hands out is what the next request after that interval carries. Against a plain HTTP server
on 127.0.0.1 that records the Authorization header of each request."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import Configuration

from wasmsched.kube import transport as transport_mod
from wasmsched.kube.transport import CurlTransport


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Authorization", ""))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", seen
    srv.shutdown()
    srv.server_close()


def _configuration(host: str) -> tuple[Configuration, list[int]]:
    """A Configuration whose hook hands out a new token on every call, as an exec plugin would at expiry."""
    cfg = Configuration(host=host)
    calls = [0]

    def refresh(c: Configuration) -> None:
        calls[0] += 1
        c.api_key["BearerToken"] = f"token-{calls[0]}"
        c.api_key_prefix["BearerToken"] = "Bearer"

    refresh(cfg)
    calls[0] = 0
    cfg.refresh_api_key_hook = refresh  # type: ignore[assignment]  # typed None in the client's stubs
    return cfg, calls


def test_the_refresh_hook_is_asked_once_per_interval_not_per_request(server: tuple[str, list[str]]) -> None:
    host, seen = server
    cfg, calls = _configuration(host)
    t = CurlTransport(cfg, "test", http2=False)
    try:
        start = time.monotonic()
        for _ in range(50):
            assert t.request("GET", "/api", [], None, (5.0, 5.0)).status == 200
        elapsed = time.monotonic() - start
    finally:
        t.close()
    assert len(seen) == 50
    # Once when the transport was made, then at most once per interval that passed.
    assert 1 <= calls[0] <= 2 + int(elapsed / transport_mod.AUTH_REFRESH_SECONDS)
    assert seen[0] == "Bearer token-1"
    assert len(set(seen)) <= calls[0]


def test_a_refreshed_token_is_sent_once_the_interval_has_passed(server: tuple[str, list[str]],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    host, seen = server
    monkeypatch.setattr(transport_mod, "AUTH_REFRESH_SECONDS", 0.05)
    cfg, calls = _configuration(host)
    t = CurlTransport(cfg, "test", http2=False)
    try:
        t.request("GET", "/api", [], None, (5.0, 5.0))
        time.sleep(0.1)
        t.request("GET", "/api", [], None, (5.0, 5.0))
    finally:
        t.close()
    assert seen == ["Bearer token-1", "Bearer token-2"]
    assert calls[0] == 2


def test_without_a_hook_the_token_is_read_once(server: tuple[str, list[str]]) -> None:
    host, seen = server
    cfg = Configuration(host=host, api_key={"BearerToken": "static"}, api_key_prefix={"BearerToken": "Bearer"})
    t = CurlTransport(cfg, "test", http2=False)
    try:
        t.request("GET", "/api", [], None, (5.0, 5.0))
        cfg.api_key["BearerToken"] = "changed"  # nobody may change it without a hook; read once
        t.request("GET", "/api", [], None, (5.0, 5.0))
    finally:
        t.close()
    assert seen == ["Bearer static", "Bearer static"]
