"""Where the control-plane binaries are: the directory `make kube` (tools/kube/build.sh) links them into."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The release tools/kube/build.sh builds; its binaries are linked from <cache>/<KUBE_VERSION>/bin.
KUBE_VERSION = "v1.37.2"
BIN_ENV = "WASMSCHED_KUBE_BIN"
CACHE_ENV = "WASMSCHED_KUBE_CACHE"
NAMES = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")


class BinariesMissingError(Exception):
    """A control-plane binary is not there: the user has to run `make kube`."""


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kwok: Path


def bin_dir() -> Path:
    """$WASMSCHED_KUBE_BIN, else ${WASMSCHED_KUBE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/wasmsched/kube}/<version>/bin
    (the same root as tools/kube/build.sh)."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        return Path(explicit).expanduser()
    root = os.environ.get(CACHE_ENV)
    if not root:
        root = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wasmsched" / "kube")
    return Path(root).expanduser() / KUBE_VERSION / "bin"


def find_binaries() -> Binaries:
    """The binaries, resolved (build.sh links them); raises BinariesMissingError naming every missing one."""
    where = bin_dir()
    paths = {name: where / name for name in NAMES}
    missing = [name for name, p in paths.items() if not (p.is_file() and os.access(p, os.X_OK))]
    if missing:
        raise BinariesMissingError(
            f"{', '.join(missing)} not found in {where}: run `make kube` to build the Kubernetes {KUBE_VERSION} "
            f"control plane (or set ${BIN_ENV} to a directory holding {', '.join(NAMES)})")
    return Binaries(etcd=paths["etcd"].resolve(), kube_apiserver=paths["kube-apiserver"].resolve(),
                    kube_controller_manager=paths["kube-controller-manager"].resolve(), kwok=paths["kwok"].resolve())
