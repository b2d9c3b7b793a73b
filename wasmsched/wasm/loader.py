"""Fetching a guest's bytes from `guestURL` (docs/abi.md §9): file://, http(s)://, oci://, or a plain path.

Fetched once, at load. HTTP follows redirects and decodes gzip; anything but 200 is an error. The
optional `guestSHA256` pin is checked on the fetched (decoded) bytes.

A relative path (plain or `file://rel/x.wasm`) is resolved against `base_dir`, the directory of the
configuration file that names it (as kubeconfig paths are), or the working directory without one.

MAX_GUEST_BYTES is enforced while reading and while decompressing, never after: a file's size says
nothing for devices (`/dev/zero` reports 0), and a small gzip body can inflate to gigabytes.

oci:// references are pulled by wasm/oci (pull.py), with the registry options of the args (OciOptions).
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING, BinaryIO

from wasmsched.wasm.bounded import MAX_GUEST_BYTES, LimitExceeded, gunzip
from wasmsched.wasm.errors import WasmLoadError

if TYPE_CHECKING:
    from wasmsched.wasm.oci.options import OciOptions

# MAX_GUEST_BYTES (bounded.py) is read from this module's globals, so a test may lower it here.
__all__ = ["MAX_GUEST_BYTES", "GuestTooLarge", "fetch_guest"]
HTTP_TIMEOUT = 30.0
CHUNK_BYTES = 1 << 20

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


class GuestTooLarge(Exception):
    def __init__(self) -> None:
        super().__init__(f"guest is larger than {MAX_GUEST_BYTES} bytes")


def fetch_guest(url: str, sha256: str | None = None, base_dir: str | os.PathLike[str] | None = None,
                oci: OciOptions | None = None) -> bytes:
    """The guest's bytes. `oci` holds an oci:// reference's registry options (default: none of them), its
    relative paths resolved against base_dir as a relative guestURL is."""
    try:
        data = pull_guest(url, oci, base_dir)[0] if url[:6].lower() == "oci://" else _fetch(url, base_dir)
    except WasmLoadError:
        raise
    except Exception as e:
        raise load_error(url, e) from e
    check_sha256(url, data, sha256)
    return data


def check_sha256(url: str, data: bytes, pin: str | None) -> str:
    """The bytes' SHA-256 (hex); WasmLoadError when `guestSHA256` pins another."""
    actual = hashlib.sha256(data).hexdigest()
    if pin is not None and actual != pin.lower():
        raise WasmLoadError(f"wasm: guestSHA256 mismatch for {url}: expected {pin}, got {actual}")
    return actual


def scheme_of(url: str) -> str:
    """guestURL's scheme, lower case; "" for a plain path."""
    m = _SCHEME.match(url)
    return m.group(1).lower() if m else ""


def local_path(url: str, base_dir: str | os.PathLike[str] | None) -> str:
    """The path a plain or file: guestURL names, as tried (relative ones joined to base_dir)."""
    return _local_path(url.removeprefix("file:").removeprefix("//") if scheme_of(url) == "file" else url, base_dir)


def guest_origin(url: str, base_dir: str | os.PathLike[str] | None) -> str:
    """Where a guest is read from, the same for every spelling of it: a local file's absolute path, else
    guestURL. The module cache keeps one build per origin (wasm/module_cache.py)."""
    if scheme_of(url) in ("", "file"):
        return os.path.abspath(local_path(url, base_dir))
    return url


def read_file(url: str, path: str) -> bytes:
    """The file's bytes; WasmLoadError naming guestURL as written."""
    try:
        return _read_file(path)
    except Exception as e:
        raise load_error(url, e) from e


def load_error(url: str, e: BaseException) -> WasmLoadError:
    return WasmLoadError(f"wasm: error reading guestURL {url}: {_detail(e)}")


def http_get_if_changed(url: str, etag: str | None, last_modified: str | None
                        ) -> tuple[bytes, str | None, str | None] | None:
    """A conditional GET (If-None-Match / If-Modified-Since): None on 304 Not Modified; else the body
    (decoded as fetch_guest decodes it), its ETag and its Last-Modified."""
    import urllib.error  # only for http(s) guestURLs: http.client and ssl cost start-up
    import urllib.request

    headers = {"Accept-Encoding": "gzip"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            status = resp.status
            body = _read_limited(resp)
            encoding = (resp.headers.get("Content-Encoding") or "").lower()
            tags = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
    except urllib.error.HTTPError as e:
        if e.code == 304:
            return None
        raise WasmLoadError(f'wasm: error reading guestURL {url}: received {e.code} status code from "{url}"') from e
    except (OSError, GuestTooLarge) as e:
        raise WasmLoadError(f"wasm: error reading guestURL {url}: {_detail(e)}") from e
    if status != 200:
        raise WasmLoadError(f'wasm: error reading guestURL {url}: received {status} status code from "{url}"')
    return (_gunzip(body) if encoding == "gzip" else body), tags[0], tags[1]


def _fetch(url: str, base_dir: str | os.PathLike[str] | None) -> bytes:
    m = _SCHEME.match(url)
    if m is None:
        return _read_file(_local_path(url, base_dir))
    scheme = m.group(1).lower()
    if scheme == "file":
        path = url[len("file:"):]
        path = path.removeprefix("//")
        return _read_file(_local_path(path, base_dir))
    if scheme in ("http", "https"):
        return _http_get(url)
    raise WasmLoadError(f"wasm: error reading guestURL {url}: unsupported URL scheme: {m.group(1)}")


def pull_guest(url: str, oci: OciOptions | None, base_dir: str | os.PathLike[str] | None) -> tuple[bytes, str]:
    """An oci:// guestURL's module and manifest digest (wasm/oci/pull.py); WasmLoadError naming the URL."""
    # Imported here: urllib3, ssl and cryptography cost start-up time that other schemes do not need.
    from wasmsched.wasm.oci.errors import RegistryError
    from wasmsched.wasm.oci.options import OciOptions
    from wasmsched.wasm.oci.pull import pull

    try:
        return pull(url, (oci or OciOptions()).resolved(base_dir), MAX_GUEST_BYTES)
    except (RegistryError, ValueError) as e:
        raise WasmLoadError(f"wasm: error pulling guestURL {url}: {e}") from None


def resolve_guest(url: str, oci: OciOptions | None, base_dir: str | os.PathLike[str] | None) -> str:
    """The manifest digest an oci:// guestURL names now (one HEAD for a tag, none for a digest)."""
    from wasmsched.wasm.oci.errors import RegistryError
    from wasmsched.wasm.oci.options import OciOptions
    from wasmsched.wasm.oci.pull import resolve

    try:
        return resolve(url, (oci or OciOptions()).resolved(base_dir))
    except (RegistryError, ValueError) as e:
        raise WasmLoadError(f"wasm: error pulling guestURL {url}: {e}") from None


def _local_path(path: str, base_dir: str | os.PathLike[str] | None) -> str:
    """The path as tried (and as an error shows it): relative ones joined to base_dir if given."""
    if base_dir is None or os.path.isabs(path):
        return path
    return os.path.join(base_dir, path)


def _read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_GUEST_BYTES:
            raise GuestTooLarge
        # One read of the known size (a guest is tens of MB): chunks only for what grows meanwhile.
        data = f.read(size)
        rest = _read_limited(f, MAX_GUEST_BYTES - len(data))
        return data + rest if rest else data


def _read_limited(f: BinaryIO, limit: int = MAX_GUEST_BYTES) -> bytes:
    """At most limit bytes from f, in chunks; GuestTooLarge as soon as there is more."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = f.read(min(CHUNK_BYTES, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise GuestTooLarge
        chunks.append(chunk)


def _gunzip(body: bytes) -> bytes:
    """Decodes a gzip body (one or more members), never inflating past MAX_GUEST_BYTES + 1."""
    try:
        return gunzip(body, MAX_GUEST_BYTES)
    except LimitExceeded:
        raise GuestTooLarge from None


def _http_get(url: str) -> bytes:
    got = http_get_if_changed(url, None, None)
    assert got is not None  # 304 answers only a conditional request
    return got[0]


def _detail(e: BaseException) -> str:
    import urllib.error  # an error path: the import's cost does not matter here

    if isinstance(e, urllib.error.URLError):
        return str(e.reason)
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return str(e)
