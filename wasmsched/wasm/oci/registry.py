"""The OCI distribution API (manifests and blobs, pull and push) over urllib3, with registry auth.

Why urllib3 and not the ORAS Python SDK (`oras` on PyPI) nor the project's pycurl transport: docs/architecture.md
("Guests from OCI registries"). urllib3 is already installed (the kubernetes client's transport); it keeps
connections per host, verifies TLS against `caFile`, and drops `Authorization` on a redirect to another host
(a blob served from object storage).

Auth follows the distribution token flow: a request answered 401 is repeated once with what its
`WWW-Authenticate` challenge asks for: `Bearer realm=…,service=…,scope=…` fetches a token from the realm
(with basic auth when config.json has credentials for the registry, else anonymously), `Basic` sends the
credentials. The token is kept for the client's other requests. Still 401 or 403 after that: AuthRefused.

Every byte read is bounded (manifests 4 MiB, as distribution's own limit; blobs by the caller's limit,
bounded.MAX_GUEST_BYTES by default) and every blob is checked against its digest and size before it is
returned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urljoin

import urllib3
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import SSLError

from wasmsched.wasm.bounded import MAX_GUEST_BYTES
from wasmsched.wasm.oci.auth import Challenge, Credentials, basic_header, load_credentials, parse_challenge
from wasmsched.wasm.oci.errors import AuthRefused, DigestMismatch, NotFound, RegistryError, Unreachable
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import Reference

log = logging.getLogger("wasmsched.wasm")

MAX_MANIFEST_BYTES = 4 << 20
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
CHUNK_BYTES = 1 << 20
_SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
MANIFEST_TYPES = (OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST)


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_digest(digest: str) -> None:
    if not _SHA256.match(digest):
        raise RegistryError(f"unsupported digest {digest!r} (only sha256 is)")


@dataclass(frozen=True)
class Manifest:
    data: bytes
    media_type: str
    digest: str  # sha256 of data, checked against the pinned digest or the registry's header

    def json(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.data)
        except ValueError as e:
            raise RegistryError(f"manifest {self.digest} is not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise RegistryError(f"manifest {self.digest} is not a JSON object")
        return doc


class Registry:
    """One repository of one registry; `actions` are the token scope's (`pull`, or `pull,push`)."""

    def __init__(self, ref: Reference, options: OciOptions, actions: str = "pull") -> None:
        self.ref = ref
        self.actions = actions
        scheme = "http" if options.plain_http else "https"
        self.base = f"{scheme}://{ref.registry}/v2/{ref.repository}"
        self.config_path = options.registry_config
        self._credentials: Credentials | None = None
        self._credentials_loaded = False
        self._authorization: str | None = None
        self.http = urllib3.PoolManager(
            ca_certs=str(options.ca_file) if options.ca_file is not None else None,
            timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT),
            # No retries: a scheduler's start-up should fail fast and say why; redirects are followed.
            retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=5))

    # -- reading -----------------------------------------------------------------------------------------

    def get_manifest(self, selector: str) -> Manifest:
        """The manifest a tag or digest names; the digest is checked when pinned (and against the registry's
        Docker-Content-Digest header when it sends one)."""
        resp = self._request("GET", f"{self.base}/manifests/{selector}", {"Accept": ", ".join(MANIFEST_TYPES)})
        if resp.status == 404:
            _release(resp)
            raise NotFound(f"manifest {selector} not found (unknown tag or digest)")
        self._expect(resp, 200, f"GET manifest {selector}", body_follows=True)
        data = _read(resp, MAX_MANIFEST_BYTES, "manifest")
        digest = sha256_digest(data)
        if selector.startswith("sha256:") and digest != selector:
            raise DigestMismatch(f"manifest digest mismatch: expected {selector}, got {digest}")
        header = resp.headers.get("Docker-Content-Digest")
        if header and header.startswith("sha256:") and header != digest:
            raise DigestMismatch(f"manifest digest mismatch: registry says {header}, content is {digest}")
        media_type = (resp.headers.get("Content-Type") or "").split(";")[0].strip()
        return Manifest(data, media_type, digest)

    def resolve(self, tag: str) -> str:
        """The digest a tag points to now: one HEAD, or a GET when the registry sends no digest header."""
        resp = self._request("HEAD", f"{self.base}/manifests/{tag}", {"Accept": ", ".join(MANIFEST_TYPES)})
        if resp.status == 404:
            _release(resp)
            raise NotFound(f"manifest {tag} not found (unknown tag)")
        self._expect(resp, 200, f"HEAD manifest {tag}")
        digest = resp.headers.get("Docker-Content-Digest")
        if digest and _SHA256.match(digest):
            return str(digest)
        return self.get_manifest(tag).digest

    def get_blob(self, digest: str, size: int, max_bytes: int = MAX_GUEST_BYTES) -> bytes:
        check_digest(digest)
        if size > max_bytes:
            raise RegistryError(f"blob {digest} is {size} bytes, more than the limit of {max_bytes}")
        resp = self._request("GET", f"{self.base}/blobs/{digest}")
        if resp.status == 404:
            _release(resp)
            raise NotFound(f"blob {digest} not found")
        self._expect(resp, 200, f"GET blob {digest}", body_follows=True)
        data = _read(resp, size, f"blob {digest}")
        actual = sha256_digest(data)
        if actual != digest or len(data) != size:
            raise DigestMismatch(f"blob digest mismatch: expected {digest} ({size} bytes), "
                                 f"got {actual} ({len(data)} bytes)")
        return data

    # -- writing -----------------------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        """Uploads the blob in one request (monolithic upload) unless the registry has it; its digest."""
        digest = sha256_digest(data)
        head = self._request("HEAD", f"{self.base}/blobs/{digest}")
        _release(head)
        if head.status == 200:
            return digest
        start = self._request("POST", f"{self.base}/blobs/uploads/")
        self._expect(start, 202, "POST blob upload")
        location = start.headers.get("Location")
        if not location:
            raise RegistryError("blob upload: the registry sent no Location")
        url = urljoin(self.base + "/", location)
        url += ("&" if "?" in url else "?") + urlencode({"digest": digest})
        resp = self._request("PUT", url, {"Content-Type": "application/octet-stream"}, data)
        self._expect(resp, 201, f"PUT blob {digest}")
        return digest

    def put_manifest(self, reference: str, data: bytes, media_type: str) -> str:
        resp = self._request("PUT", f"{self.base}/manifests/{reference}", {"Content-Type": media_type}, data)
        self._expect(resp, 201, f"PUT manifest {reference}")
        return sha256_digest(data)

    # -- transport and auth ------------------------------------------------------------------------------

    def _request(self, method: str, url: str, headers: dict[str, str] | None = None,
                 body: bytes | None = None) -> urllib3.BaseHTTPResponse:
        h = dict(headers or {})
        if self._authorization is not None:
            h["Authorization"] = self._authorization
        resp = self._send(method, url, h, body)
        if resp.status != 401 or "Authorization" in h:
            return self._refused(resp)
        challenge = parse_challenge(resp.headers.get("WWW-Authenticate") or "")
        _release(resp)
        self._authorization = self._authorize(challenge)
        h["Authorization"] = self._authorization
        return self._refused(self._send(method, url, h, body))

    def _refused(self, resp: urllib3.BaseHTTPResponse) -> urllib3.BaseHTTPResponse:
        if resp.status in (401, 403):
            _release(resp)
            how = "with the credentials" if self._has_credentials() else "anonymously (no credentials)"
            raise AuthRefused(f"access refused ({resp.status}) {how} for {self.ref.registry}"
                              f"{self._config_hint()}")
        return resp

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> urllib3.BaseHTTPResponse:
        try:
            return self.http.request(method, url, headers=headers, body=body, preload_content=False)
        except Urllib3Error as e:
            reason = getattr(e, "reason", None) or e
            if isinstance(reason, SSLError):
                # Reached, but not trusted: say so, with the hint a private registry's user needs.
                raise Unreachable(f"TLS with {self.ref.registry} failed: {_one_line(reason)} "
                                  "(caFile names the CA of a private registry)") from None
            raise Unreachable(f"registry {self.ref.registry} unreachable: {_one_line(reason)}") from None

    def _authorize(self, challenge: Challenge | None) -> str:
        creds = self.credentials()
        if challenge is not None and challenge.scheme == "basic":
            if creds is None:
                raise AuthRefused(f"{self.ref.registry} asks for credentials and there are none"
                                  f"{self._config_hint()}")
            return basic_header(creds)
        if challenge is None or challenge.scheme != "bearer" or "realm" not in challenge.params:
            raise AuthRefused(f"{self.ref.registry} answered 401 without a Basic or Bearer challenge")
        return "Bearer " + self._token(challenge.params, creds)

    def _token(self, params: dict[str, str], creds: Credentials | None) -> str:
        query = {"scope": f"repository:{self.ref.repository}:{self.actions}"}
        if "service" in params:
            query["service"] = params["service"]
        headers = {"Authorization": basic_header(creds)} if creds is not None else {}
        url = params["realm"] + ("&" if "?" in params["realm"] else "?") + urlencode(query)
        resp = self._send("GET", url, headers, None)
        if resp.status != 200:
            _release(resp)
            how = "with the credentials" if creds is not None else "anonymously (no credentials)"
            raise AuthRefused(f"token request to {params['realm']} refused ({resp.status}) {how}"
                              f"{self._config_hint()}")
        try:
            doc = json.loads(_read(resp, 1 << 20, "token"))
            token = doc.get("token") or doc.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise AuthRefused(f"token response from {params['realm']} has no token")
        log.debug('"Registry token obtained" registry="%s" scope="%s"', self.ref.registry, query["scope"])
        return token

    def credentials(self) -> Credentials | None:
        if not self._credentials_loaded:
            try:
                self._credentials = load_credentials(self.ref.registry, self.config_path)
            except (OSError, ValueError) as e:
                raise RegistryError(f"registry config: {_one_line(e)}") from None
            self._credentials_loaded = True
        return self._credentials

    def _has_credentials(self) -> bool:
        return self._credentials is not None

    def _config_hint(self) -> str:
        return f" (registry config {self.config_path})" if self.config_path is not None else ""

    def _expect(self, resp: urllib3.BaseHTTPResponse, status: int, what: str, body_follows: bool = False) -> None:
        """Raises unless resp has the status; the connection goes back to the pool unless the caller reads on."""
        if resp.status != status:
            detail = _error_text(resp)
            raise RegistryError(f"{what}: status {resp.status}{': ' + detail if detail else ''}")
        if not body_follows:
            _release(resp)


def _release(resp: urllib3.BaseHTTPResponse) -> None:
    """Reads what is left of an unneeded body so the connection can serve the next request."""
    with contextlib.suppress(Urllib3Error):  # a broken connection is not reused anyway
        resp.drain_conn()
    resp.release_conn()


def _read(resp: urllib3.BaseHTTPResponse, limit: int, what: str) -> bytes:
    """The body, at most `limit` bytes (more is an error, noticed while reading)."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in resp.stream(CHUNK_BYTES):
            size += len(chunk)
            if size > limit:
                raise RegistryError(f"{what} is larger than {limit} bytes")
            chunks.append(chunk)
    except Urllib3Error as e:
        raise Unreachable(f"reading {what}: {_one_line(e)}") from None
    finally:
        resp.release_conn()
    return b"".join(chunks)


def _error_text(resp: urllib3.BaseHTTPResponse) -> str:
    """The distribution API's error message ({"errors":[{"code","message"}]}), else nothing."""
    try:
        doc = json.loads(_read(resp, 64 << 10, "error"))
        errs = doc.get("errors") or []
        return "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errs if isinstance(e, dict))
    except (RegistryError, ValueError, AttributeError):
        return ""


def _one_line(e: object) -> str:
    return " ".join(str(e).split())
