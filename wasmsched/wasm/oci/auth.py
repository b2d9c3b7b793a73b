"""Registry credentials from a docker `config.json`, and the `WWW-Authenticate` challenges that ask for them.

The file is the one `docker login` and `oras login` write: `$DOCKER_CONFIG/config.json`, else
`~/.docker/config.json`, or the path given as `registryConfig`. Only inline credentials are read
(`auths.<host>.auth`, base64 `user:password`, or `username` and `password`); credential helpers
(`credsStore`, `credHelpers`) would run external programs from a scheduler and are not supported: a
registry they serve is then asked anonymously, and refuses with the auth error.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("wasmsched.wasm")

# Docker Hub is keyed under its v1 index URL in config.json, whatever host the API is on.
_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)


def default_config_path() -> Path:
    env = os.environ.get("DOCKER_CONFIG")
    if env:
        return Path(env) / "config.json"
    return Path(os.path.expanduser("~")) / ".docker" / "config.json"


def _host_key(key: str) -> str:
    """`https://host:5000/v1/` -> `host:5000`: config.json keys are written in all these shapes."""
    key = key.strip()
    key = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", key)
    key = key.split("/", 1)[0]
    return "docker.io" if key in _DOCKER_HUB else key


def load_credentials(registry: str, path: Path | None) -> Credentials | None:
    """The credentials for `registry` (host[:port]) in the config file, or None.

    An explicit path that cannot be read or parsed is an error (OSError, ValueError); the default
    path may be absent.
    """
    explicit = path is not None
    path = path if path is not None else default_config_path()
    try:
        text = path.read_text()
    except FileNotFoundError:
        if explicit:
            raise
        return None
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{path}: not JSON: {e}") from None
    auths = doc.get("auths") if isinstance(doc, dict) else None
    if not isinstance(auths, dict):
        return None
    want = _host_key(registry)
    for key, entry in auths.items():
        if _host_key(key) != want or not isinstance(entry, dict):
            continue
        creds = _entry_credentials(entry)
        if creds is None:
            log.info('"Registry config entry has no inline credentials" path="%s" registry="%s"', path, registry)
        return creds
    return None


def _entry_credentials(entry: dict[str, object]) -> Credentials | None:
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            text = base64.b64decode(auth, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError("auths entry: auth is not base64 of user:password") from None
        name, sep, secret = text.partition(":")
        if not sep:
            raise ValueError("auths entry: auth is not base64 of user:password")
        return Credentials(name, secret)
    user, password = entry.get("username"), entry.get("password")
    if isinstance(user, str) and isinstance(password, str) and user:
        return Credentials(user, password)
    return None


@dataclass(frozen=True)
class Challenge:
    scheme: str  # lower case: "bearer" or "basic"
    params: dict[str, str]


def parse_challenge(header: str) -> Challenge | None:
    """The first challenge of a `WWW-Authenticate` header (RFC 7235): registries send one."""
    scheme, _, rest = header.strip().partition(" ")
    if not scheme:
        return None
    params: dict[str, str] = {}
    pos = 0
    while pos < len(rest):
        m = _PARAM.match(rest, pos)
        if m is None or m.end() == pos:
            break
        value = m.group(2) if m.group(2) is not None else m.group(3)
        params[m.group(1).lower()] = re.sub(r"\\(.)", r"\1", value)
        pos = m.end()
    return Challenge(scheme.lower(), params)


def basic_header(creds: Credentials) -> str:
    return "Basic " + base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
