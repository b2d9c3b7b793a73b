"""A registry that accepts connections but never answers: the read timeout, one line naming the registry."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.oci import registry
from wasmsched.wasm.oci.options import OciOptions


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A listening socket nobody accepts on: the kernel completes the handshake, nothing is ever sent."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"127.0.0.1:{s.getsockname()[1]}"


def test_read_timeout_is_unreachable(silent_server: str, oci_cache: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "READ_TIMEOUT", 0.3)
    empty = tmp_path / "config.json"
    empty.write_text("{}")
    url = f"oci://{silent_server}/guests/x:v1"
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=OciOptions(plain_http=True, registry_config=empty))
    text = str(e.value)
    assert text.startswith(f"wasm: error pulling guestURL {url}: registry {silent_server} unreachable: ")
    assert "timed out" in text
    assert "\n" not in text
