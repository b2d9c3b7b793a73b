"""What kube-scheduler serves on its secure port (--secure-port, default 10259): /healthz, /livez,
/readyz with named checks, and /metrics; over HTTPS, behind delegated authentication and
authorization (TokenReview and SubjectAccessReview on the API server).

Each request goes through kube's handler chain in order: authentication (401 with an `Unauthorized`
Status), authorization (403 with `forbidden: User "x" cannot get path "/metrics"`), then the
endpoint (404 `404 page not found` for an unknown path). When the API server cannot answer a review
the request fails with 500 and one log line; the server never prints a traceback.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from wasmsched.kube.api import KubeApi
from wasmsched.kube.delegatedauth import (
    DEFAULT_ALWAYS_ALLOW_GROUPS,
    DEFAULT_ALWAYS_ALLOW_PATHS,
    DelegatingAuthenticator,
    DelegatingAuthorizer,
    InvalidTokenError,
    ReviewError,
    UserInfo,
    review_client,
)
from wasmsched.kube.healthz import HEALTH_ENDPOINTS, HealthCheck, HealthResponse, root_health, single_health, with_ping
from wasmsched.kube.servingcert import ServingCertOptions, server_ssl_context
from wasmsched.util.klog import V0, quote

log = logging.getLogger(__name__)

DEFAULT_SECURE_PORT = 10259  # kubeschedulerconfig.DefaultKubeSchedulerPort
# how long one connection may stay idle or take to hand-shake before it is dropped
_CONNECTION_TIMEOUT_SECONDS = 60.0
_TEXT = "text/plain; charset=utf-8"


def _status_body(code: int, reason: str, message: str) -> bytes:
    """A metav1.Status as apierrors builds it for 401 and 403."""
    status: dict[str, Any] = {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
        "reason": reason,
    }  # fmt: skip
    if code == 403:
        status["details"] = {}
    status["code"] = code
    return json.dumps(status, separators=(",", ":")).encode()


def _sanitize(text: str) -> str:
    """responsewriters' sanitizer: the message may echo the request's path."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ListenError(OSError):
    """The secure port could not be opened: `address` (host:port) and why (`errno`, `reason`)."""

    def __init__(self, errno: int, address: str, reason: str) -> None:
        super().__init__(errno, f"failed to listen on {address}: {reason}")
        self.address = address
        self.reason = reason


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], family: socket.AddressFamily, secure: SecureServer) -> None:
        self.address_family = family
        self.secure = secure
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # the TLS handshake happens here, on the connection's own thread, so that a slow client
        # never holds up accepting others
        request.settimeout(_CONNECTION_TIMEOUT_SECONDS)
        try:
            tls = self.secure.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log.debug('"TLS handshake error" client="%s" err="%s"', _addr(client_address), e)
            return
        try:
            _Handler(tls, client_address, self)
        finally:
            with contextlib.suppress(OSError):
                tls.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints a traceback by default; a broken connection is one log line
        log.debug('"Connection error" client="%s"', _addr(client_address), exc_info=False)


def _addr(client_address: Any) -> str:
    try:
        return f"{client_address[0]}:{client_address[1]}"
    except (TypeError, IndexError):
        return str(client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "wasmsched"
    sys_version = ""

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are logged by _serve, at debug level like kube's V(3) httplog

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass

    def _serve(self) -> None:
        start = time.monotonic()
        status = 500
        try:
            status = self._dispatch()
        except (ConnectionError, TimeoutError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:  # noqa: BLE001 - WithPanicRecovery: one failed request, not a dead server
            log.error('"Observed a panic" method="%s" URI="%s" err=%s', self.command, self.path,
                      json.dumps(f"{type(e).__name__}: {e}"))  # fmt: skip
            try:
                self._send(500, _TEXT, b"Internal Server Error\n")
            except OSError:
                self.close_connection = True
        log.debug('"HTTP" verb="%s" URI="%s" latency="%.3fms" userAgent="%s" srcIP="%s" resp=%d', self.command,
                  self.path, (time.monotonic() - start) * 1000, self.headers.get("User-Agent", ""),
                  _addr(self.client_address), status)  # fmt: skip

    def _dispatch(self) -> int:
        secure = self.server.secure
        # the request target is origin-form ("/path?query"); like Go's URL.Path, the path is decoded, and
        # the same decoded path is authorized and routed
        raw_path, _, raw_query = self.path.partition("?")
        path = unquote(raw_path)
        query = parse_qs(raw_query, keep_blank_values=True)
        if not self.headers.get("Authorization") and secure.authorizer.path_always_allowed(path):
            # Probes carry no token: the health paths answer them even when anonymous requests are refused.
            return self._route(path, query)
        try:
            user = secure.authenticator.authenticate(self.headers.get("Authorization"))
        except InvalidTokenError:
            user = None
        except ReviewError as e:
            log.error('"Unable to authenticate the request" err=%s', quote(e))
            return self._internal_error(e)
        if user is None:
            return self._send(401, "application/json", _status_body(401, "Unauthorized", "Unauthorized"))
        verb = self.command.lower()
        try:
            decision = secure.authorizer.authorize(user, verb, path)
        except ReviewError as e:
            log.error('"Unable to authorize the request" user="%s" verb="%s" path="%s" err=%s', user.name, verb, path,
                      quote(e))  # fmt: skip
            return self._internal_error(e)
        if not decision.allowed:
            return self._forbidden(user, verb, path, decision.reason)
        return self._route(path, query)

    def _route(self, path: str, query: Mapping[str, list[str]]) -> int:
        secure = self.server.secure
        parts = path.strip("/").split("/")
        if parts[0] in HEALTH_ENDPOINTS:
            checks = secure.checks_for(parts[0])
            if len(parts) == 1 and path == f"/{parts[0]}":
                return self._health(root_health(parts[0], checks, query))
            if len(parts) == 2 and parts[1] in checks:
                return self._health(single_health(checks[parts[1]]))
        if path == "/metrics" and secure.registry is not None:
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            return self._send(200, content_type, encoder(secure.registry))
        return self._send(404, _TEXT, b"404 page not found\n")

    def _health(self, r: HealthResponse) -> int:
        return self._send(r.status, _TEXT, r.body.encode())

    def _forbidden(self, user: UserInfo, verb: str, path: str, reason: str) -> int:
        msg = _sanitize(f"User {json.dumps(user.name)} cannot {verb} path {json.dumps(path)}")
        if reason:
            msg = f"{msg}: {reason}"
        log.debug('"Forbidden" URI="%s" reason="%s"', self.path, reason)
        return self._send(403, "application/json", _status_body(403, "Forbidden", f"forbidden: {msg}"))

    def _internal_error(self, err: Exception) -> int:
        body = _sanitize(f"Internal Server Error: {json.dumps(self.path)}: {err}") + "\n"
        return self._send(500, _TEXT, body.encode())

    def _send(self, status: int, content_type: str, body: bytes) -> int:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache, private")  # WithCacheControl
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return status


class SecureServer:
    """The scheduler's secure port.

    `checks` maps an endpoint ("healthz", "livez", "readyz") to its named checks (callables returning
    None when healthy, else the reason); an endpoint without checks answers with `ping`. `registry`
    is what /metrics exposes. `port=0` picks a free port; `.port` and `.url` tell which once built.
    """

    def __init__(
        self,
        bind_address: str = "127.0.0.1",
        port: int = DEFAULT_SECURE_PORT,
        api: KubeApi | None = None,
        registry: CollectorRegistry | None = None,
        checks: Mapping[str, Mapping[str, HealthCheck]] | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        cert_dir: str | None = None,
        *,
        anonymous: bool = True,
        always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS,
        always_allow_groups: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_GROUPS,
        authenticator: DelegatingAuthenticator | None = None,
        authorizer: DelegatingAuthorizer | None = None,
    ) -> None:
        try:
            ip = ipaddress.ip_address(bind_address)
        except ValueError:
            raise ValueError(f"bind address {bind_address!r} is not an IP address") from None
        self.bind_address = bind_address
        self.registry = registry
        self._owned: list[KubeApi] = []  # the review clients made here, closed at shutdown
        self._checks = {name: with_ping((checks or {}).get(name)) for name in HEALTH_ENDPOINTS}
        unknown = set(checks or {}) - set(HEALTH_ENDPOINTS)
        if unknown:
            raise ValueError(f"unknown health endpoints {sorted(unknown)}; expected {list(HEALTH_ENDPOINTS)}")
        # The port first: a taken port is reported before a certificate is generated for nothing.
        family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        try:
            self._server = _Server((bind_address, port), family, self)
        except OSError as e:
            raise ListenError(e.errno or 0, self._host_port(bind_address, port), e.strerror or str(e)) from None
        try:
            self.ssl_context = server_ssl_context(
                ServingCertOptions(cert_file=cert_file, key_file=key_file, cert_dir=cert_dir), bind_address
            )
        except BaseException:
            self._server.server_close()
            raise
        if authenticator is None or authorizer is None:
            if api is None:
                raise ValueError("SecureServer needs an api for delegated authentication and authorization")
            # As kube's delegating options, each review gets a client of its own over api's configuration.
            if authenticator is None:
                authenticator = DelegatingAuthenticator(self._own(review_client(api)), anonymous=anonymous)
            if authorizer is None:
                authorizer = DelegatingAuthorizer(
                    self._own(review_client(api)), always_allow_paths=always_allow_paths,
                    always_allow_groups=always_allow_groups
                )
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    def _own(self, api: KubeApi) -> KubeApi:
        self._owned.append(api)
        return api

    def _close_owned(self) -> None:
        for api in self._owned:
            api.close()
        self._owned.clear()

    def checks_for(self, endpoint: str) -> dict[str, HealthCheck]:
        return self._checks[endpoint]

    @staticmethod
    def _host_port(host: str, port: int) -> str:
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def url(self) -> str:
        """The base URL a local client uses (loopback when bound to every address)."""
        host = self.bind_address
        ip = ipaddress.ip_address(host)
        if ip.is_unspecified:
            host = "::1" if ip.version == 6 else "127.0.0.1"
        return f"https://{self._host_port(host, self.port)}"

    def start(self) -> None:
        """Serve on a background thread."""
        if self._thread is not None:
            raise RuntimeError("SecureServer already started")
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="secure-serving", daemon=True)  # fmt: skip
        self._thread.start()
        log.log(V0, '"Serving securely on %s"', self._host_port(self.bind_address, self.port))

    def shutdown(self) -> None:
        """Stop accepting and close the listener (requests in flight finish on their threads)."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        self._close_owned()
        log.log(V0, '"Stopped listening" address="%s"', self._host_port(self.bind_address, self.port))
