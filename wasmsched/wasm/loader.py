"""Fetching a guest's bytes from `guestURL` (ABI.md §9): file://, http(s)://, or a plain path.

Fetched once, at load. HTTP follows redirects and decodes gzip; anything but 200 is an error. The
optional `guestSHA256` pin is checked on the fetched (decoded) bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import urllib.error
import urllib.request
from pathlib import Path

from wasmsched.wasm.errors import WasmLoadError

# Large enough for any real guest (a standard-Go guest is a few MiB), small enough to refuse a mistake.
MAX_GUEST_BYTES = 256 << 20
HTTP_TIMEOUT = 30.0

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def fetch_guest(url: str, sha256: str | None = None) -> bytes:
    try:
        data = _fetch(url)
    except WasmLoadError:
        raise
    except Exception as e:
        raise WasmLoadError(f"wasm: error reading guestURL {url}: {_detail(e)}") from e
    if len(data) > MAX_GUEST_BYTES:
        raise WasmLoadError(f"wasm: error reading guestURL {url}: guest is larger than {MAX_GUEST_BYTES} bytes")
    if sha256 is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha256.lower():
            raise WasmLoadError(f"wasm: guestSHA256 mismatch for {url}: expected {sha256}, got {actual}")
    return data


def _fetch(url: str) -> bytes:
    m = _SCHEME.match(url)
    if m is None:
        return _read_file(url)
    scheme = m.group(1).lower()
    if scheme == "file":
        path = url[len("file:"):]
        path = path.removeprefix("//")
        return _read_file(path)
    if scheme in ("http", "https"):
        return _http_get(url)
    raise WasmLoadError(f"wasm: error reading guestURL {url}: unsupported URL scheme: {m.group(1)}")


def _read_file(path: str) -> bytes:
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_GUEST_BYTES:
        raise OSError(f"{path}: guest is larger than {MAX_GUEST_BYTES} bytes")
    return p.read_bytes()


def _http_get(url: str) -> bytes:
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            status = resp.status
            body = resp.read(MAX_GUEST_BYTES + 1)
            encoding = (resp.headers.get("Content-Encoding") or "").lower()
    except urllib.error.HTTPError as e:
        raise WasmLoadError(f'wasm: error reading guestURL {url}: received {e.code} status code from "{url}"') from e
    if status != 200:
        raise WasmLoadError(f'wasm: error reading guestURL {url}: received {status} status code from "{url}"')
    if encoding == "gzip":
        body = gzip.decompress(body)
    return body


def _detail(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError):
        return str(e.reason)
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return str(e)
