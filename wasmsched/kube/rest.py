"""JSON requests through the official client's ApiClient, bypassing its typed (de)serialization.

kubernetes 37.0.2's generated models fail to round-trip some replies (MicroTime, unknown fields), so
the modules that write objects (leases, reviews) send and read plain JSON dicts; the ApiClient still
supplies the transport: the kubeconfig's server, TLS, bearer token or client certificate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

# what may go wrong on the way to the API server, besides an error status (ApiException)
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (urllib3.exceptions.HTTPError, OSError)
# every failure of a request: an error status or a transport failure
API_ERRORS: tuple[type[Exception], ...] = (ApiException, *TRANSPORT_ERRORS)


def raw_request(
    api_client: ApiClient, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
    accept: str = "application/json", content_type: str = "application/json", timeout: Any = None,
) -> Any:
    """The one place requests are made: the client's server, TLS and credentials, any body and content
    type. Returns the RESTResponse unread (watches stream it); raises one of TRANSPORT_ERRORS when the
    server cannot be reached, never for an HTTP status."""
    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    q = [(k, v) for k, v in (query or {}).items() if v is not None and v != ""]
    m, url, hdrs, data, post = api_client.param_serialize(
        method=method, resource_path=path, header_params=headers, body=body, auth_settings=["BearerToken"])
    if q:
        # param_serialize spells booleans True/False; the API wants true/false.
        url += "?" + urlencode([(k, str(v).lower() if isinstance(v, bool) else v) for k, v in q])
    try:
        return api_client.call_api(m, url, header_params=hdrs, body=data, post_params=post, _request_timeout=timeout)
    except ApiException as e:
        if e.status:
            raise
        # The client reports TLS failures as ApiException with status 0: a transport failure.
        raise urllib3.exceptions.HTTPError(e.reason) from e


def request_json(
    api_client: ApiClient, method: str, path: str, body: dict[str, Any] | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """`method path` with a JSON body; the decoded JSON reply. A non-2xx status raises ApiException
    (its `body` is the server's Status), a connection failure one of TRANSPORT_ERRORS."""
    resp = raw_request(api_client, method, path, body=body, timeout=timeout)
    raw = resp.read()
    if not 200 <= resp.status <= 299:
        raise ApiException(status=resp.status, reason=resp.reason, body=raw.decode("utf-8", "replace"))
    try:
        out = json.loads(raw)
    except ValueError as e:
        raise ApiException(status=resp.status, reason=f"invalid JSON in the reply to {method} {path}: {e}") from None
    if not isinstance(out, dict):
        raise ApiException(status=resp.status, reason=f"the reply to {method} {path} is not a JSON object")
    return out


def status_of(e: BaseException) -> int:
    """The HTTP status of an API error, 0 for a transport failure."""
    return int(e.status or 0) if isinstance(e, ApiException) else 0


def error_message(e: BaseException) -> str:
    """One line for logs: the Status message of an API error, else the exception's text."""
    if isinstance(e, ApiException):
        if e.body:
            try:
                status = json.loads(e.body)
            except ValueError:
                status = None
            if isinstance(status, dict) and isinstance(status.get("message"), str):
                return status["message"]
        return f"{e.status} {e.reason}".strip()
    text = str(e) or type(e).__name__
    return text.splitlines()[0]
