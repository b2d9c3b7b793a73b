"""Raw JSON requests through an official-client ApiClient (its auth, TLS and pool), for what the typed API
cannot say: any kind by path, discovery documents, dry-run creates of arbitrary manifests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from wasmsched.kube.rest import raw_request


def request_json(api: client.ApiClient, method: str, path: str, body: Any = None,
                 query: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """(HTTP status, decoded JSON body or None); never raises for an HTTP error status."""
    resp = raw_request(api, method, path, query=query, body=body)
    data = resp.read()
    try:
        return resp.status, json.loads(data) if data else None
    except ValueError:
        return resp.status, data.decode(errors="replace")
