"""Health endpoints as k8s.io/apiserver's pkg/server/healthz renders them.

A check is a callable returning None when healthy or the reason it is not. `/readyz` (and
`/healthz`, `/livez`) run every check: `ok`, or with `?verbose` one `[+]name ok` line per check and
`readyz check passed`; a failure answers 500 with `[-]name failed: reason withheld` lines and
`readyz check failed` (the reasons go to the log, not to the caller). `?exclude=name` skips a check.
`/readyz/<name>` runs one check: `ok` or `internal server error: reason`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

HealthCheck = Callable[[], "str | None"]

# the endpoints kube-scheduler serves; an endpoint without checks answers with the `ping` check
HEALTH_ENDPOINTS = ("healthz", "livez", "readyz")


@dataclass(frozen=True)
class HealthResponse:
    status: int
    body: str


def ping() -> str | None:
    return None


def run_check(check: HealthCheck) -> str | None:
    """A check's verdict; a check that raises is a failure with the exception as reason (the server
    must answer, not crash)."""
    try:
        return check()
    except Exception as e:  # noqa: BLE001 - any failure of a check is the check failing
        return f"{type(e).__name__}: {e}"


def with_ping(checks: Mapping[str, HealthCheck] | None) -> dict[str, HealthCheck]:
    """InstallPathHandler: no checks means the `ping` check."""
    return dict(checks) if checks else {"ping": ping}


def root_health(name: str, checks: Mapping[str, HealthCheck], query: Mapping[str, list[str]]) -> HealthResponse:
    """handleRootHealth for endpoint `name` (healthz, livez, readyz)."""
    excluded = set(query.get("exclude", []))
    unknown_excluded = set(excluded)
    out: list[str] = []
    failed: list[str] = []
    reasons: list[str] = []
    for check_name, check in checks.items():
        if check_name in excluded:
            unknown_excluded.discard(check_name)
            out.append(f"[+]{check_name} excluded: ok\n")
            continue
        reason = run_check(check)
        if reason is not None:
            out.append(f"[-]{check_name} failed: reason withheld\n")
            reasons.append(f"[-]{check_name} failed: {reason}\n")
            failed.append(check_name)
        else:
            out.append(f"[+]{check_name} ok\n")
    if unknown_excluded:
        quoted = ",".join(json.dumps(n) for n in sorted(unknown_excluded))
        out.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:
        log.info('"Health check failed" endpoint="%s" checks="%s" reasons=%s', name, ",".join(failed),
                 json.dumps("".join(reasons)))  # fmt: skip
        # http.Error appends a newline
        return HealthResponse(500, "".join(out) + f"{name} check failed\n")
    if "verbose" not in query:
        return HealthResponse(200, "ok")
    return HealthResponse(200, "".join(out) + f"{name} check passed\n")


def single_health(check: HealthCheck) -> HealthResponse:
    """adaptCheckToHandler: `/<endpoint>/<check>`."""
    reason = run_check(check)
    if reason is not None:
        return HealthResponse(500, f"internal server error: {reason}\n")
    return HealthResponse(200, "ok")
