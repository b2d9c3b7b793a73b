"""Raw JSON requests through an official-client ApiClient (its auth, TLS and pool), for what the typed API
cannot say: any kind by path, discovery documents, dry-run creates of arbitrary manifests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubernetes import client


def request_json(api: client.ApiClient, method: str, path: str, body: Any = None,
                 query: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """(HTTP status, decoded JSON body or None); never raises for an HTTP error status."""
    serialized = api.param_serialize(
        method, path, query_params=list(query.items()) if query else None,
        header_params={"Accept": "application/json", "Content-Type": "application/json"},
        body=body, auth_settings=["BearerToken"])
    resp = api.call_api(*serialized)
    data = resp.read()
    try:
        return resp.status, json.loads(data) if data else None
    except ValueError:
        return resp.status, data.decode(errors="replace")
