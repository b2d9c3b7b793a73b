"""Requests to a Kubernetes API server, through the official client's configuration and transport.

The official `kubernetes` client loads kubeconfigs (auth plugins, exec credentials, certificates) and
in-cluster configuration and owns the connection pool; its typed API is not used, so that lists and
watches can ask for protobuf and be decoded into the project's generated types (codec.py), and so that
its reply-model quirks (37.0.2 fails to deserialize pods/binding's Status reply) do not matter.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import platform
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from google.protobuf.message import Message
from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes.config import kube_config
from kubernetes.config.config_exception import ConfigException

from wasmsched.api.convert import message_to_dict

# ApiError and TransportError are api/errors.py's, re-exported: importers of kube.api keep working.
from wasmsched.api.errors import (
    ApiError,
    StatusCause,
    StatusDetails,
    TransportError,
    generic_server_response,
    is_not_found,
)
from wasmsched.api.kinds import Resource
from wasmsched.kube import codec
from wasmsched.kube.codec import WatchEvent
from wasmsched.kube.rest import TRANSPORT_ERRORS, raw_request
from wasmsched.kube.transport import CONNECTION_LOST, CurlError, CurlTransport
from wasmsched.util.version import dist_version

log = logging.getLogger("wasmsched.kube")

M = TypeVar("M", bound=Message)

# A list is read in pages of this many objects, as client-go's reflector does.
LIST_PAGE_SIZE = 500
# How long a request may take, except watches (which the server ends after timeoutSeconds).
REQUEST_TIMEOUT = (10.0, 60.0)
# client-go's rest.Request sends a request again, up to this many times, when the server answered 429 or a
# 5xx with Retry-After (after sleeping that long; it did not act on the request) and, for a GET, when the
# connection ended under it (with_retry.go; maxRetries defaults to 10 in NewRequest).
MAX_RETRIES = 10
# The code label of rest_client_request_retries_total for a request that got no answer.
NO_ANSWER_CODE = "<error>"


class ClientConfigError(Exception):
    """The kubeconfig (or in-cluster configuration) cannot be used; names the file."""


@dataclass
class ClientConnection:
    """KubeSchedulerConfiguration's clientConnection (component-base ClientConnectionConfiguration)."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = codec.PROTOBUF
    qps: float = 50.0
    burst: int = 100

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClientConnection:
        out = cls()
        out.kubeconfig = str(d.get("kubeconfig", "") or "")
        out.accept_content_types = str(d.get("acceptContentTypes", "") or "")
        out.content_type = str(d.get("contentType", "") or codec.PROTOBUF)
        if d.get("qps") is not None:
            out.qps = float(d["qps"])
        if d.get("burst") is not None:
            out.burst = int(d["burst"])
        return out


def user_agent() -> str:
    return f"wasmsched/v{dist_version('wasmsched')} ({platform.system().lower()}/{platform.machine()}) scheduler"


def load_configuration(kubeconfig: str = "", master: str = "") -> kclient.Configuration:
    """client-go's BuildConfigFromFlags, as kube-scheduler loads its configuration: the kubeconfig (with
    --master overriding its server), else --master alone, else in-cluster configuration; ClientConfigError
    naming what could not be used. $KUBECONFIG is not read (kube-scheduler does not read it), but the
    error when nothing was given says how to pass it."""
    if kubeconfig and not os.path.exists(kubeconfig):
        raise ClientConfigError(f'kubeconfig "{kubeconfig}": no such file')
    return _files_master_or_in_cluster(
        [kubeconfig] if kubeconfig else [], "", master,
        lambda e: f"no --kubeconfig or --master given and not running in a cluster ({e}); {_pass_kubeconfig_hint()}")


def _files_master_or_in_cluster(paths: list[str], source: str, master: str,
                                nothing: Callable[[ConfigException], str]) -> kclient.Configuration:
    """The kubeconfig files (merged), else --master alone, else in-cluster configuration; --master overrides
    the files' server. `nothing` words the error when there is none of these."""
    cfg = _configuration()
    if paths:
        _load_kubeconfig_files(cfg, paths, source)
        if master:
            cfg.host = master
        return cfg
    if master:
        cfg.host = master
        return cfg
    try:
        kconfig.load_incluster_config(client_configuration=cfg)
    except ConfigException as e:
        raise ClientConfigError(nothing(e)) from e
    return cfg


def load_kubectl_configuration(kubeconfig: str = "", master: str = "") -> kclient.Configuration:
    """The configuration as kubectl finds it (client-go's default loading rules): --kubeconfig, else the
    files $KUBECONFIG lists (os.pathsep-separated; missing ones skipped; merged so that the first file to
    name a cluster, user or context, or to set current-context, wins), else ~/.kube/config when it exists;
    with none of these, in-cluster configuration. --master overrides the server."""
    if kubeconfig:
        return load_configuration(kubeconfig, master)
    env = os.environ.get(KUBECONFIG_ENV, "")
    if env:
        paths = [p for p in dict.fromkeys(os.path.expanduser(p) for p in env.split(os.pathsep) if p)
                 if os.path.exists(p)]
        source = f'${KUBECONFIG_ENV} "{env}"'
    else:
        home = os.path.expanduser(HOME_KUBECONFIG)
        paths = [home] if os.path.exists(home) else []
        source = ""
    where = f'no file ${KUBECONFIG_ENV} "{env}" names exists' if env else f"no {HOME_KUBECONFIG}"
    return _files_master_or_in_cluster(
        paths, source, master,
        lambda e: f"no --kubeconfig or --master given, {where}, and not running in a cluster ({e}); "
                  "pass --kubeconfig (wasmsched dev-cluster up writes one)")


# kubectl's (clientcmd's) $KUBECONFIG and its default file.
KUBECONFIG_ENV = "KUBECONFIG"
HOME_KUBECONFIG = "~/.kube/config"


def _configuration() -> kclient.Configuration:
    cfg = kclient.Configuration()
    # urllib3's own retries (3 by default, silent: a new connection each, right away) are off: a failed
    # request is reported at once and retried by its caller with backoff (informers, leader election), as
    # client-go does.
    cfg.retries = False
    return cfg


def _pass_kubeconfig_hint() -> str:
    env = os.environ.get(KUBECONFIG_ENV, "")
    if not env:
        return "pass --kubeconfig (wasmsched dev-cluster up writes one)"
    if os.pathsep in env:
        return (f'${KUBECONFIG_ENV} is set, but kube-scheduler does not read it: pass --kubeconfig with one of '
                f'the files it lists ("{env}")')
    return f'${KUBECONFIG_ENV} is set, but kube-scheduler does not read it: pass --kubeconfig "${KUBECONFIG_ENV}"'


def _load_kubeconfig_files(cfg: kclient.Configuration, paths: list[str], source: str = "") -> None:
    """Loads a kubeconfig file into cfg, or several merged as kubectl merges them; ClientConfigError names
    the file (and `source`, where the list came from) that could not be used."""
    def name(path: str) -> str:
        return f'kubeconfig "{path}"' + (f" (from {source})" if source else "")

    merger = kube_config.KubeConfigMerger("")
    current = ""
    for path in paths:
        try:
            merger.load_config(path)
            current = current or str(merger.config_files[path].get("current-context") or "")
        except Exception as e:  # YAML errors and the loader's own come in many types
            raise ClientConfigError(f"{name(path)}: {_text(e)}") from e
        merger.paths.append(path)
    # The client's merger lets the last file's current-context win; kubectl the first file's.
    if current:
        merger.config.value["current-context"] = current
    else:
        merger.config.value.pop("current-context", None)
    try:
        # config_base_path None: a relative certificate path is read from beside the file that names it.
        kube_config.KubeConfigLoader(config_dict=merger.config, config_base_path=None).load_and_set(cfg)
    except Exception as e:
        raise ClientConfigError(f"{name(paths[0]) if len(paths) == 1 else source}: {_text(e)}") from e


def _text(e: Exception) -> str:
    if isinstance(e, (ConfigException, ValueError, TypeError, KeyError, OSError)):
        return str(e)
    return f"{type(e).__name__}: {e}"


class _TokenBucket:
    """client-go's default rate limiter: qps tokens a second, up to burst at once."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(burst, 1)
        self.tokens = float(self.burst)
        self.last = time.monotonic()
        self._lock = threading.Lock()

    def wait(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
            self.last = now
            self.tokens -= 1
            delay = -self.tokens / self.qps if self.tokens < 0 else 0.0
        if delay > 0:
            time.sleep(delay)


class RequestCounts:
    """Requests by (code, verb, host), every client's in this process, as client-go's rest_client metrics
    are registry-wide counters (component-base/metrics/prometheus/restclient)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], int] = {}
        self._lock = threading.Lock()

    def add(self, code: str, verb: str, host: str) -> None:
        with self._lock:
            key = (code, verb, host)
            self._counts[key] = self._counts.get(key, 0) + 1

    def counts(self) -> dict[tuple[str, str, str], int]:
        with self._lock:
            return dict(self._counts)


# rest_client_requests_total{code,host,method}: every attempt and its answer ("<error>": none).
REQUESTS = RequestCounts()
# rest_client_request_retries_total{code,verb,host}: the attempts that were sent again.
REQUEST_RETRIES = RequestCounts()


def _status_error(status: int, reason: str, data: bytes, content_type: str | None, method: str, path: str) -> ApiError:
    """The error of a reply with an error status, as client-go's Result.Error makes it: the body's Status
    (its reason, message and details, as the server wrote them), else NewGenericServerResponse's error
    for the code (`reason`, the HTTP reason phrase, is then not used: kube's predicates read Status reasons)."""
    try:
        if codec.is_protobuf(content_type):
            from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb

            st = codec.decode_protobuf(data, meta_pb.Status)
            details = None
            if st.HasField("details"):
                d = st.details
                details = StatusDetails(
                    name=d.name, group=d.group, kind=d.kind, uid=d.uid,
                    causes=tuple(StatusCause(c.reason, c.message, c.field) for c in d.causes),
                    retry_after_seconds=d.retryAfterSeconds)
            return ApiError(status, st.reason, st.message, method, path, details)
        body = json.loads(data or b"{}")
    except (ValueError, codec.CodecError):
        return generic_server_response(status, method, data[:200].decode(errors="replace"), path)
    if isinstance(body, dict) and body.get("kind") == "Status":
        raw_details = body.get("details")
        details = StatusDetails.from_dict(raw_details) if isinstance(raw_details, dict) else None
        return ApiError(status, str(body.get("reason", "") or ""), str(body.get("message", "") or ""), method, path,
                        details)
    return generic_server_response(status, method, "", path)


def _query_string(query: Mapping[str, Any] | None) -> str:
    q = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in (query or {}).items()
         if v is not None and v != ""]
    return "?" + urlencode(q) if q else ""


class KubeApi:
    """One API server connection: raw requests with the client's auth and TLS, rate-limited like client-go."""

    def __init__(self, configuration: kclient.Configuration, connection: ClientConnection | None = None) -> None:
        self.connection = connection or ClientConnection()
        self.configuration = configuration
        self.api_client = kclient.ApiClient(configuration)
        self.api_client.user_agent = user_agent()
        self._limiter = _TokenBucket(self.connection.qps, self.connection.burst)
        # Requests (not watches) go over libcurl's HTTP/2: many in flight on one connection (transport.py).
        self._transport = CurlTransport(configuration, user_agent())
        self._host_label = urlsplit(self.host).netloc

    @property
    def host(self) -> str:
        return str(self.configuration.host)

    def close(self) -> None:
        self._transport.close()
        self.api_client.close()

    def __enter__(self) -> KubeApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- raw requests ------------------------------------------------------------------

    def _open(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
              content_type: str = codec.JSON, accept: str = codec.JSON,
              timeout: Any = REQUEST_TIMEOUT) -> Any:
        try:
            return raw_request(self.api_client, method, path, query=query, body=body, accept=accept,
                               content_type=content_type, timeout=timeout)
        except TRANSPORT_ERRORS as e:
            raise TransportError(f"{method} {self.host}{path}: {e}") from e

    def request(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
                content_type: str = codec.JSON, accept: str = codec.JSON,
                timeout: float | tuple[float, float] = REQUEST_TIMEOUT) -> tuple[bytes, str | None]:
        """The response body and content type; ApiError for any status >= 300, TransportError when the
        server gave no answer. `body`: bytes as they are (a protobuf body), anything else as JSON.
        `timeout`: (connect, read) seconds per attempt, or one number for the whole request, its retries
        included (rest.Config's Timeout, which client-go makes the request's context deadline).

        Retried as client-go's rest.Request retries (MAX_RETRIES): a 429 or 5xx with Retry-After after
        sleeping that long, a GET whose connection ended under it at once; each retry waits for the rate
        limiter again and is counted in rest_client_request_retries_total; every attempt in
        rest_client_requests_total."""
        self._limiter.wait()
        headers = [f"Accept: {accept}"]
        data: bytes | None = None
        if body is not None:
            headers.append(f"Content-Type: {content_type}")
            data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        url = path + _query_string(query)
        deadline = None
        if not isinstance(timeout, tuple):
            deadline = time.monotonic() + float(timeout)
            timeout = (float(timeout), 0.0)
        attempt = 0
        while True:
            if deadline is not None:
                left = max(deadline - time.monotonic(), 0.001)
                timeout = (left, 0.0)
            try:
                reply = self._transport.request(method, url, headers, data, timeout)
            except CurlError as e:
                REQUESTS.add(NO_ANSWER_CODE, method, self._host_label)
                if method == "GET" and e.code in CONNECTION_LOST and self._may_retry(attempt, 0.0, deadline):
                    attempt += 1
                    self._retried(NO_ANSWER_CODE, method)
                    continue
                raise TransportError(str(e)) from e
            REQUESTS.add(str(reply.status), method, self._host_label)
            if reply.retry_after and self._may_retry(attempt, reply.retry_after, deadline):
                attempt += 1
                log.debug('"Got a Retry-After response" delay="%ds" attempt=%d url="%s%s" status=%d',
                          reply.retry_after, attempt, self.host, path, reply.status)
                time.sleep(reply.retry_after)
                self._retried(str(reply.status), method)
                continue
            break
        if reply.status >= 300:
            raise _status_error(reply.status, reply.reason, reply.data, reply.content_type, method, path)
        return reply.data, reply.content_type

    def _may_retry(self, attempt: int, wait: float, deadline: float | None) -> bool:
        """Whether another attempt may go out after `wait` seconds: MAX_RETRIES not reached and, with a
        whole-request timeout, its deadline not passed by then (client-go stops when the context ends)."""
        if attempt >= MAX_RETRIES:
            return False
        return deadline is None or time.monotonic() + wait < deadline

    def _retried(self, code: str, method: str) -> None:
        REQUEST_RETRIES.add(code, method, self._host_label)
        # client-go throttles every retry too (with_retry.go Before: tryThrottle).
        self._limiter.wait()

    def request_json(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
                     content_type: str = codec.JSON, timeout: Any = REQUEST_TIMEOUT) -> Any:
        """The decoded JSON reply (None when empty); raises as `request`, and CodecError for a reply that
        is not JSON."""
        data, ctype = self.request(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
        if data and ctype and not codec.is_json(ctype):
            raise codec.CodecError(f"{method} {self.host}{path}: {codec.not_an_api_answer(data, ctype)}")
        try:
            return json.loads(data) if data else None
        except ValueError as e:
            raise codec.CodecError(f"{method} {self.host}{path}: the reply is not JSON: {e}") from e

    def create(self, path: str, obj: Message, api_version: str, kind: str) -> None:
        """POST of an object (or a subresource such as pods/binding) in clientConnection.contentType:
        protobuf unless configured otherwise, as client-go sends it (the API server decodes it for less
        than JSON); the reply is not read."""
        if self.connection.content_type == codec.PROTOBUF:
            self.request("POST", path, body=codec.encode_protobuf(obj, api_version, kind),
                         content_type=codec.PROTOBUF, accept=codec.ACCEPT)
        else:
            self.request("POST", path, body={"apiVersion": api_version, "kind": kind, **message_to_dict(obj)})

    # ----- typed reads ---------------------------------------------------------------------

    def _accept(self) -> str:
        return self.connection.accept_content_types or (
            codec.ACCEPT if self.connection.content_type == codec.PROTOBUF else codec.JSON)

    def get(self, resource: Resource, namespace: str, name: str, *,
            timeout: float | tuple[float, float] = REQUEST_TIMEOUT) -> Any | None:
        try:
            data, ctype = self.request("GET", resource.path(namespace, name), accept=self._accept(), timeout=timeout)
        except ApiError as e:
            if is_not_found(e):
                return None
            raise
        try:
            return codec.decode(data, ctype, resource.message_class)
        except codec.CodecError as e:
            raise codec.CodecError(f"GET {self.host}{resource.path(namespace, name)}: {e}") from e

    def list(self, resource: Resource, namespace: str = "", *, resource_version: str = "",
             label_selector: str = "", field_selector: str = "") -> tuple[list[Any], str]:
        """Every object (read in pages), and the list's resourceVersion to watch from."""
        items: list[Any] = []
        cont = ""
        rv = ""
        while True:
            query: dict[str, Any] = {"limit": LIST_PAGE_SIZE, "continue": cont,
                                     "labelSelector": label_selector, "fieldSelector": field_selector}
            if resource_version and not cont:
                query["resourceVersion"] = resource_version
            data, ctype = self.request("GET", resource.path(namespace), query=query, accept=self._accept())
            try:
                lst = codec.decode(data, ctype, resource.list_class)
            except codec.CodecError as e:
                raise codec.CodecError(f"GET {self.host}{resource.path(namespace)}: {e}") from e
            items.extend(codec.list_items(lst))
            rv = lst.metadata.resourceVersion  # type: ignore[attr-defined]
            cont = getattr(lst.metadata, "continue")  # type: ignore[attr-defined]
            if not cont:
                return items, rv

    @contextmanager
    def watch(self, resource: Resource, resource_version: str, *, timeout_seconds: int,
              namespace: str = "", field_selector: str = "") -> Iterator[WatchStream]:
        """A watch from resource_version with bookmarks; the server ends it after timeout_seconds."""
        query = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": timeout_seconds, "fieldSelector": field_selector}
        self._limiter.wait()
        accept = codec.ACCEPT_WATCH if self.connection.content_type == codec.PROTOBUF else codec.JSON
        # The read timeout outlives the server's own, so a silent connection is noticed.
        resp = self._open("GET", resource.path(namespace), query=query, accept=accept,
                          timeout=(10.0, timeout_seconds + 30.0))
        raw = resp.response
        try:
            if resp.status >= 300:
                data = raw.data
                raise _status_error(resp.status, resp.reason or "", data, raw.headers.get("Content-Type"),
                                    "GET", resource.path(namespace))
            ctype = raw.headers.get("Content-Type")
            if codec.is_protobuf(ctype):
                yield WatchStream(codec.protobuf_watch_events(raw, resource.message_class), raw)
            elif ctype and not codec.is_json(ctype):
                raise codec.CodecError(f"GET {self.host}{resource.path(namespace)}: "
                                       f"{codec.not_an_api_answer(raw.read(120), ctype)}")
            else:
                yield WatchStream(codec.json_watch_events(_lines(raw), resource.message_class), raw)
        finally:
            # Closed before it goes back to the pool: a watch left early (a handler raised, the informer
            # stopped) has unread bytes that the next request on the connection would read as its answer.
            raw.close()
            raw.release_conn()

    # ----- untyped reads (any resource, as JSON: the dynamic informers of watched resources) ----------

    def list_json(self, path: str, *, label_selector: str = "") -> tuple[builtins.list[dict[str, Any]], str]:
        """Every object of a collection (read in pages) as parsed JSON, and the list's resourceVersion to
        watch from. Each item gets the list's apiVersion and kind (without List), as client-go's dynamic
        client gives them: the API server leaves them out of a list's items."""
        items: builtins.list[dict[str, Any]] = []
        cont = ""
        while True:
            query: dict[str, Any] = {"limit": LIST_PAGE_SIZE, "continue": cont, "labelSelector": label_selector}
            lst = self.request_json("GET", path, query=query)
            if not isinstance(lst, dict) or not isinstance(lst.get("items", []), list):
                raise codec.CodecError(f"GET {self.host}{path}: the reply is not a list")
            api_version, kind = lst.get("apiVersion"), lst.get("kind")
            item_kind = kind[:-len("List")] if isinstance(kind, str) and kind.endswith("List") else None
            for item in lst.get("items") or []:
                if isinstance(item, dict):
                    typed = {"apiVersion": api_version, "kind": item_kind, **item} if item_kind else item
                    items.append(typed)
            meta = lst.get("metadata") or {}
            cont = meta.get("continue") or ""
            if not cont:
                return items, meta.get("resourceVersion") or ""

    @contextmanager
    def watch_json(self, path: str, resource_version: str, *, timeout_seconds: int) -> Iterator[WatchStream]:
        """A JSON watch of any collection from resource_version, with bookmarks; events carry parsed JSON."""
        query = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": timeout_seconds}
        self._limiter.wait()
        resp = self._open("GET", path, query=query, accept=codec.JSON, timeout=(10.0, timeout_seconds + 30.0))
        raw = resp.response
        try:
            if resp.status >= 300:
                raise _status_error(resp.status, resp.reason or "", raw.data, raw.headers.get("Content-Type"),
                                    "GET", path)
            ctype = raw.headers.get("Content-Type")
            if ctype and not codec.is_json(ctype):
                raise codec.CodecError(f"GET {self.host}{path}: {codec.not_an_api_answer(raw.read(120), ctype)}")
            yield WatchStream(codec.json_object_watch_events(_lines(raw)), raw)
        finally:
            raw.close()
            raw.release_conn()

    def close_idle(self) -> None:
        self.api_client.rest_client.pool_manager.clear()


@dataclass
class WatchStream:
    events: Iterator[WatchEvent]
    response: Any

    def shutdown(self) -> None:
        """Ends the watch from another thread: the reader sees the connection close. A response the
        reader closed or released meanwhile (urllib3: ValueError, RuntimeError) has nothing left to end."""
        with suppress(OSError, AttributeError, ValueError, RuntimeError):
            self.response.shutdown()


def _lines(raw: Any) -> Iterator[bytes]:
    buf = b""
    for chunk in raw.stream(65536, decode_content=True):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line
    if buf:
        yield buf
