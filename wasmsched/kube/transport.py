"""The requests' transport: libcurl (pycurl), HTTP/2 multiplexed over one connection to the API server.

Measured on this project's 2-core machine against kube-apiserver 1.37.2 (docs/architecture.md §2.9, "Why
libcurl"): a pods/binding POST costs this process 101 µs of CPU through libcurl's multi interface over
HTTP/2, 173 µs over HTTP/1.1 keep-alive, 240 µs through http.client, 290 µs through aiohttp and
440-520 µs through urllib3 (the official client's transport). The scheduler makes two requests per
pod (its binding and its event), so the transport is most of what a bound pod costs besides its
scheduling cycle. kube-scheduler talks HTTP/2 to the API server too: one connection, every request a
stream on it.

One thread drives a CurlMulti: callers on any thread `request()` and wait for their answer, so many
requests are in flight at once (each binding cycle, each dispatcher worker, each event writer) on one
connection, and the waiting costs no CPU. The official client's Configuration supplies everything
about the connection: the server, the CA, the client certificate, the bearer token (refreshed by its
hook, as for exec credential plugins), verify_ssl, tls_server_name and a proxy.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import select
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pycurl

log = logging.getLogger("wasmsched.kube")

# The transport thread ends after this long without a request.
IDLE_EXIT_SECONDS = 30.0
# Handles kept for reuse (each remembers nothing between requests but saves an allocation).
FREE_HANDLES = 64
# How often the configuration's token refresh hook is asked. The official client's hooks (kubeconfig tokens,
# exec plugins, OIDC: kube_config._refresh_api_key; a service account's token file: incluster_config) fetch a
# new token minutes before the old one expires, but each call re-applies the whole configuration, the
# environment's proxy lookup included (~0.1 ms, measured as 9% of `run`'s GIL time at 100 pods/s, two
# requests per pod): asked once a second, no request goes out with a token the hook would have replaced.
AUTH_REFRESH_SECONDS = 1.0


class CurlError(Exception):
    """The request did not get an answer (connection refused, TLS failure, timeout, reset); `code` is
    libcurl's CURLcode (0 when the transport itself gave up)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


# libcurl's CURLE_HTTP2_STREAM (a stream reset: the connection went away under it); pycurl has no name for it.
CURLE_HTTP2_STREAM = 92
# The CURLcodes of a connection that ended under a request (client-go's net.IsConnectionReset,
# IsProbableEOF and IsHTTP2ConnectionLost): nothing was answered, and a GET may be sent again.
CONNECTION_LOST = frozenset({
    pycurl.E_GOT_NOTHING, pycurl.E_SEND_ERROR, pycurl.E_RECV_ERROR, pycurl.E_PARTIAL_FILE,
    pycurl.E_HTTP2, CURLE_HTTP2_STREAM,
})


@dataclass
class Reply:
    status: int
    reason: str
    content_type: str | None
    data: bytes
    # Retry-After's seconds on a 429 or 5xx (0: none; libcurl reads "0" as none too, and kube-apiserver
    # sends the header only with a positive value: responsewriters.ErrorNegotiated).
    retry_after: int = 0


@dataclass(eq=False)
class _Request:
    method: str
    url: str
    headers: list[str]
    body: bytes | None
    timeout: tuple[float, float]
    done: threading.Event = field(default_factory=threading.Event)
    buf: io.BytesIO = field(default_factory=io.BytesIO)
    reply: Reply | None = None
    error: str = ""
    error_code: int = 0


def _auth_headers(cfg: Any) -> list[str]:
    # auth_settings() calls the configuration's refresh hook (exec plugins, OIDC) before reading the token.
    return [f"{s['key']}: {s['value']}" for s in cfg.auth_settings().values()
            if s.get("in") == "header" and s.get("value")]


class CurlTransport:
    def __init__(self, configuration: Any, user_agent: str, *, http2: bool = True) -> None:
        self.cfg = configuration
        self.user_agent = user_agent
        host = str(configuration.host).rstrip("/")
        parts = urlsplit(host)
        # tls_server_name: the URL names the server the certificate is for, CONNECT_TO says where it is.
        self._connect_to: list[str] = []
        if configuration.tls_server_name and parts.hostname:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            self._connect_to = [f"{configuration.tls_server_name}:{port}:{parts.hostname}:{port}"]
            host = f"{parts.scheme}://{configuration.tls_server_name}:{port}{parts.path}"
        self.base = host
        self.http2 = http2
        # Without a refresh hook (exec credentials, OIDC, a service account's token) the token never changes.
        self._refreshes = configuration.refresh_api_key_hook is not None
        self._auth = _auth_headers(configuration)
        self._auth_due = time.monotonic() + AUTH_REFRESH_SECONDS
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        self._free: list[pycurl.Curl] = []
        self._submitted: deque[_Request] = deque()
        self._active: dict[pycurl.Curl, _Request] = {}
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._closed = False
        self._sleeping = False
        self._lock = threading.Lock()
        # Started by the first request; it ends after IDLE_EXIT_SECONDS without one (a client nobody
        # closes costs no thread), and the next request starts it again.
        self._thread: threading.Thread | None = None

    # ----- callers --------------------------------------------------------------------------

    def request(self, method: str, path: str, headers: list[str], body: bytes | None,
                timeout: tuple[float, float]) -> Reply:
        """The server's answer (any status); CurlError when there was none."""
        # "Expect:" turns off curl's 100-continue round trip for bodies over 1 KiB.
        all_headers = [*headers, f"User-Agent: {self.user_agent}", "Expect:", *self._current_auth()]
        req = _Request(method, self.base + path, all_headers, body, timeout)
        with self._lock:
            if self._closed:
                raise CurlError("the client is closed")
            self._submitted.append(req)
            sleeping = self._sleeping
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="kube-transport", daemon=True)
                self._thread.start()
        if sleeping:
            self._wake()
        # The transport thread enforces the timeout; this wait only guards against its death.
        if not req.done.wait(timeout[0] + timeout[1] + 5.0):
            raise CurlError(f"{method} {path}: no answer in {timeout[0] + timeout[1]:.0f}s")
        if req.reply is None:
            raise CurlError(req.error, req.error_code)
        return req.reply

    def _current_auth(self) -> list[str]:
        if self._refreshes and time.monotonic() >= self._auth_due:
            # Two threads may both refresh at the due time: harmless, the hook is idempotent.
            self._auth = _auth_headers(self.cfg)
            self._auth_due = time.monotonic() + AUTH_REFRESH_SECONDS
        return self._auth

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join(5.0)
        for c in self._free:
            c.close()
        self._free.clear()
        self._multi.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError):  # the pipe is full: the loop is awake already
            os.write(self._wake_w, b"\0")

    # ----- the transport thread -------------------------------------------------------------

    def _new_handle(self) -> pycurl.Curl:
        """A handle with what every request shares; a request sets only its own options on it."""
        c = pycurl.Curl()
        cfg = self.cfg
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS if self.http2 else pycurl.CURL_HTTP_VERSION_1_1)
        # Wait for the connection being set up rather than open a second one: every request a stream on it.
        c.setopt(pycurl.PIPEWAIT, 1)
        c.setopt(pycurl.TCP_KEEPALIVE, 1)
        if self._connect_to:
            c.setopt(pycurl.CONNECT_TO, self._connect_to)
        if cfg.ssl_ca_cert:
            c.setopt(pycurl.CAINFO, cfg.ssl_ca_cert)
        if cfg.cert_file:
            c.setopt(pycurl.SSLCERT, cfg.cert_file)
        if cfg.key_file:
            c.setopt(pycurl.SSLKEY, cfg.key_file)
        if not cfg.verify_ssl:
            c.setopt(pycurl.SSL_VERIFYPEER, 0)
            c.setopt(pycurl.SSL_VERIFYHOST, 0)
        if cfg.proxy:
            c.setopt(pycurl.PROXY, cfg.proxy)
            if cfg.no_proxy:
                c.setopt(pycurl.NOPROXY, cfg.no_proxy)
        return c

    def _handle(self, req: _Request) -> pycurl.Curl:
        c = self._free.pop() if self._free else self._new_handle()
        c.setopt(pycurl.URL, req.url)
        c.setopt(pycurl.HTTPHEADER, req.headers)
        c.setopt(pycurl.WRITEDATA, req.buf)
        c.setopt(pycurl.CONNECTTIMEOUT_MS, int(req.timeout[0] * 1000))
        c.setopt(pycurl.TIMEOUT_MS, int((req.timeout[0] + req.timeout[1]) * 1000))
        # A reused handle keeps its last method: each request says its own.
        if req.method == "GET":
            c.setopt(pycurl.HTTPGET, 1)
            c.unsetopt(pycurl.CUSTOMREQUEST)
        else:
            c.setopt(pycurl.POSTFIELDS, req.body if req.body is not None else b"")
            if req.method == "POST":
                c.unsetopt(pycurl.CUSTOMREQUEST)
            else:
                c.setopt(pycurl.CUSTOMREQUEST, req.method)
        return c

    def _start(self, req: _Request) -> None:
        try:
            c = self._handle(req)
            self._multi.add_handle(c)
        except pycurl.error as e:
            req.error = f"{req.method} {req.url}: {e}"
            req.done.set()
            return
        self._active[c] = req

    def _finish(self, c: pycurl.Curl, err: str, code: int = 0) -> None:
        req = self._active.pop(c)
        self._multi.remove_handle(c)
        if err:
            req.error = f"{req.method} {req.url}: {err}"
            req.error_code = code
        else:
            status = int(c.getinfo(pycurl.RESPONSE_CODE))
            ctype = c.getinfo(pycurl.CONTENT_TYPE)
            retry_after = int(c.getinfo(pycurl.RETRY_AFTER)) if status == 429 or status >= 500 else 0
            req.reply = Reply(status, "", ctype if isinstance(ctype, str) else None, req.buf.getvalue(),
                              retry_after)
        if len(self._free) < FREE_HANDLES:
            self._free.append(c)
        else:
            c.close()
        req.done.set()

    def _loop(self) -> None:
        multi = self._multi
        idle_since = time.monotonic()
        while True:
            with self._lock:
                closed = self._closed
                new = list(self._submitted)
                self._submitted.clear()
                if not new and not self._active and time.monotonic() - idle_since > IDLE_EXIT_SECONDS:
                    self._thread = None
                    self._sleeping = False
                    return
                # From here a submitter wakes the loop (it may be about to wait in select).
                self._sleeping = True
            if closed:
                for req in new:
                    req.error = f"{req.method} {req.url}: the client was closed"
                    req.done.set()
                break
            if new or self._active:
                idle_since = time.monotonic()
            for req in new:
                self._start(req)
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            while True:
                queued, ok, failed = multi.info_read()
                for c in ok:
                    self._finish(c, "")
                for c, code, msg in failed:
                    self._finish(c, msg or "transfer failed", code)
                if not queued:
                    break
            rfds, wfds, xfds = multi.fdset()
            wait_ms = multi.timeout()
            wait = 1.0 if wait_ms < 0 else min(wait_ms / 1000.0, 1.0)
            try:
                r, _, _ = select.select([*rfds, self._wake_r], wfds, xfds, wait)
            except (OSError, ValueError):  # a descriptor curl closed meanwhile: look again
                continue
            with self._lock:
                self._sleeping = False
            if self._wake_r in r:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self._wake_r, 4096):
                        pass
        for c in list(self._active):
            self._finish(c, "the client was closed")


__all__ = ["CONNECTION_LOST", "CurlError", "CurlTransport", "Reply"]
