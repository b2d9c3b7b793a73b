"""etcd through its HTTP/JSON gateway (POST /v3/...; keys are base64): health, the store's revision, and
compaction, which makes older resourceVersions unreadable (kube-apiserver answers them 410 Gone)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

_TIMEOUT_SECONDS = 10.0


class EtcdError(Exception):
    pass


def _post(endpoint: str, path: str, body: dict[str, object]) -> dict[str, object]:
    req = urllib.request.Request(endpoint + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=_TIMEOUT_SECONDS) as resp:
            out = json.loads(resp.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise EtcdError(f"etcd {endpoint}{path}: {e}") from e
    if not isinstance(out, dict):
        raise EtcdError(f"etcd {endpoint}{path}: unexpected answer {out!r}")
    return out


def healthy(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(endpoint + "/health", timeout=_TIMEOUT_SECONDS) as resp:
            return bool(json.loads(resp.read()).get("health") == "true")
    except (urllib.error.URLError, OSError, ValueError):
        return False


def current_revision(endpoint: str) -> int:
    """The store's revision (every range answer's header carries it)."""
    out = _post(endpoint, "/v3/kv/range", {"key": base64.b64encode(b"/").decode(), "limit": 1})
    header = out.get("header")
    if not isinstance(header, dict) or "revision" not in header:
        raise EtcdError(f"etcd {endpoint}/v3/kv/range: no header.revision in {out!r}")
    return int(header["revision"])


def compact(endpoint: str, revision: int | None = None) -> int:
    """Compacts the keyspace up to `revision` (default: the current one), physically; returns the revision."""
    rev = current_revision(endpoint) if revision is None else revision
    _post(endpoint, "/v3/kv/compaction", {"revision": str(rev), "physical": True})
    return rev
