"""Static bearer tokens (kube-apiserver's --token-auth-file): an admin in system:masters and a user with
no groups beyond system:authenticated, which RBAC forbids everything but discovery and self-review."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ADMIN_USER = "admin"
RESTRICTED_USER = "restricted"


@dataclass(frozen=True)
class StaticTokens:
    admin: str
    restricted: str


def new_tokens() -> StaticTokens:
    return StaticTokens(admin=secrets.token_hex(16), restricted=secrets.token_hex(16))


def write_token_auth_file(path: Path, tokens: StaticTokens) -> None:
    """CSV lines `token,user,uid[,"group1,group2"]` (the apiserver's tokenfile format)."""
    text = (f'{tokens.admin},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'
            f"{tokens.restricted},{RESTRICTED_USER},{RESTRICTED_USER}\n")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
