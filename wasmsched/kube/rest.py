"""KubeApi's transport: one request through the official client's ApiClient (the kubeconfig's server,
TLS, bearer token or client certificate), bypassing its typed (de)serialization.

Nothing but kube/api.py's KubeApi calls this: every other module makes its requests through a KubeApi,
which adds the rate limiter and turns failures into api/errors.py's ApiError and TransportError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

# what may go wrong on the way to the API server (KubeApi raises TransportError for them)
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (urllib3.exceptions.HTTPError, OSError)


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
