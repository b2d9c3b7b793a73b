"""Static bearer tokens (kube-apiserver's --token-auth-file): an admin in system:masters, a user with no
groups beyond system:authenticated, which RBAC forbids everything but discovery and self-review, and a
metrics reader in system:monitoring, which kube's bootstrap ClusterRoleBinding of the same name allows
`get` on /metrics and the health paths (so it may scrape `wasmsched run`'s secure port)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ADMIN_USER = "admin"
RESTRICTED_USER = "restricted"
METRICS_READER_USER = "metrics-reader"
# user.MonitoringGroup: the bootstrap ClusterRole system:monitoring is bound to it.
MONITORING_GROUP = "system:monitoring"


@dataclass(frozen=True)
class StaticTokens:
    admin: str
    restricted: str
    metrics_reader: str = ""


def new_tokens() -> StaticTokens:
    return StaticTokens(admin=secrets.token_hex(16), restricted=secrets.token_hex(16),
                        metrics_reader=secrets.token_hex(16))


def write_token_auth_file(path: Path, tokens: StaticTokens) -> None:
    """CSV lines `token,user,uid[,"group1,group2"]` (the apiserver's tokenfile format)."""
    text = (f'{tokens.admin},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'
            f"{tokens.restricted},{RESTRICTED_USER},{RESTRICTED_USER}\n")
    if tokens.metrics_reader:
        text += f'{tokens.metrics_reader},{METRICS_READER_USER},{METRICS_READER_USER},"{MONITORING_GROUP}"\n'
    _write_private(path, text)


def write_token_file(path: Path, token: str) -> None:
    """One token alone, for `$(cat FILE)` in a command line."""
    _write_private(path, token + "\n")


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # credentials
    with os.fdopen(fd, "w") as f:
        f.write(text)
