"""A throwaway Kubernetes control plane for development and tests: etcd, kube-apiserver,
kube-controller-manager (components.CONTROLLERS) and KWOK (fake nodes that heartbeat and run pods),
started on free 127.0.0.1 ports from the binaries `make kube` builds.

`wasmsched dev-cluster up|down` (cli/devcluster.py) and the tests' `dev_cluster` fixture use `DevCluster`.
The cluster module (and with it the `kubernetes` client, a quarter second to import) loads on first use,
so `wasmsched` commands that do not need it do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wasmsched.devcluster.binaries import KUBE_VERSION, BinariesMissingError

if TYPE_CHECKING:
    from wasmsched.devcluster.cluster import DEFAULT_DIR, DevCluster, DevClusterError

__all__ = ["DEFAULT_DIR", "KUBE_VERSION", "BinariesMissingError", "DevCluster", "DevClusterError"]
_LAZY = {"DEFAULT_DIR", "DevCluster", "DevClusterError"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from wasmsched.devcluster import cluster

        return getattr(cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
