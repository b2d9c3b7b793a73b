"""`oci://REGISTRY/REPO[:TAG][@sha256:HEX]`: the reference a guestURL names (docs/abi.md §9).

The grammar is distribution's (github.com/distribution/reference) minus its defaults: the registry is
always written out (no implicit docker.io, which a scheduler configuration should not guess), and a
reference without tag or digest means the tag `latest`, as docker and oras do. When both are given the
digest decides and the tag is only a label, as in docker.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

SCHEME = "oci://"
_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::[0-9]+)?$")
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_LOOPBACK_NAMES = ("localhost",)


class BadReference(ValueError):
    """Not an oci:// reference; the text says what is wrong."""


@dataclass(frozen=True)
class Reference:
    registry: str  # host[:port], as written (an IPv6 host in brackets)
    repository: str
    tag: str | None = None
    digest: str | None = None  # sha256:<64 lower-case hex>

    @property
    def host(self) -> str:
        """The registry's host without the port (an IPv6 address without brackets)."""
        host = self.registry
        if host.startswith("["):
            return host[1:host.index("]")]
        return host.rsplit(":", 1)[0] if ":" in host else host

    @property
    def is_loopback(self) -> bool:
        host = self.host
        if host.lower() in _LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    @property
    def selector(self) -> str:
        """What the manifest is fetched by: the digest when pinned, else the tag."""
        return self.digest or self.tag or "latest"

    def with_digest(self, digest: str) -> Reference:
        return Reference(self.registry, self.repository, self.tag, digest)

    def with_tag(self, tag: str) -> Reference:
        return Reference(self.registry, self.repository, tag, None)

    @property
    def name(self) -> str:
        """REGISTRY/REPO, cosign's `docker-reference`."""
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        out = SCHEME + self.name
        if self.tag is not None:
            out += f":{self.tag}"
        if self.digest is not None:
            out += f"@{self.digest}"
        return out


def is_oci(url: str) -> bool:
    return url[:len(SCHEME)].lower() == SCHEME


def parse(url: str) -> Reference:
    if not is_oci(url):
        raise BadReference(f"{url!r} does not start with {SCHEME}")
    rest = url[len(SCHEME):]
    digest = None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
        if not _DIGEST.match(digest):
            raise BadReference(f"digest {digest!r} is not sha256: and 64 lower-case hex digits")
    registry, slash, path = rest.partition("/")
    if not slash or not path:
        raise BadReference("expected oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]")
    if not _HOST.match(registry):
        raise BadReference(f"registry {registry!r} is not a host[:port]")
    tag = None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, tag = path.rsplit(":", 1)
        if not _TAG.match(tag):
            raise BadReference(f"tag {tag!r} is not a valid tag")
    for component in path.split("/"):
        if not _COMPONENT.match(component):
            raise BadReference(f"repository {path!r} is not valid (lower-case components separated by /)")
    if tag is None and digest is None:
        tag = "latest"
    return Reference(registry, path, tag, digest)
