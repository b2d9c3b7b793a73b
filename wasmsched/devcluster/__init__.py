"""A throwaway Kubernetes control plane for development and tests: etcd, kube-apiserver and KWOK (fake
nodes that heartbeat and run pods), started on free 127.0.0.1 ports from the binaries `make kube` builds.

`wasmsched dev-cluster up|down` (cli/devcluster.py) and the tests' `dev_cluster` fixture use `DevCluster`.
"""

from wasmsched.devcluster.binaries import KUBE_VERSION, BinariesMissingError
from wasmsched.devcluster.cluster import DEFAULT_DIR, DevCluster, DevClusterError

__all__ = ["DEFAULT_DIR", "KUBE_VERSION", "BinariesMissingError", "DevCluster", "DevClusterError"]
