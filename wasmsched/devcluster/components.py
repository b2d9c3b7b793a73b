"""The command lines of the dev cluster's components. Every listener is on 127.0.0.1: etcd's client and
peer URLs, kube-apiserver's and kube-controller-manager's secure ports, KWOK's own server."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from wasmsched.devcluster.certs import Pki

# The annotation KWOK manages nodes by (kwokctl's convention); nodes without it are left alone, so tests
# can also create nodes that nothing heartbeats.
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_ANNOTATION_VALUE = "fake"
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12"
# KWOK's pod IPs; its default /24 runs out at 254 pods, too few for benchmarks.
POD_CIDR = "10.0.0.0/16"
NODE_LEASE_DURATION_SECONDS = 40
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"


@dataclass(frozen=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    kwok: int


def etcd_argv(binary: Path, data_dir: Path, ports: Ports) -> list[str]:
    client = f"http://127.0.0.1:{ports.etcd_client}"
    peer = f"http://127.0.0.1:{ports.etcd_peer}"
    return [str(binary), "--name=dev", f"--data-dir={data_dir}",
            f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=dev={peer}", "--initial-cluster-state=new",
            # The HTTP/JSON gateway on the client port: DevCluster.compact_etcd talks to it.
            "--enable-grpc-gateway=true",
            # A throwaway store: durability buys nothing and fsync dominates write latency on shared disks.
            "--unsafe-no-fsync=true",
            "--log-level=warn"]


def kube_apiserver_argv(binary: Path, pki: Pki, token_file: Path, cert_dir: Path, ports: Ports,
                        extra_args: Sequence[str] = ()) -> list[str]:
    """RBAC on; the admission plugins that need a controller manager off; service-account signing, so the
    TokenRequest API works. `extra_args` come last and so win over these."""
    return [str(binary),
            f"--etcd-servers=http://127.0.0.1:{ports.etcd_client}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={ports.apiserver}",
            # The `kubernetes` Service's endpoints may not be a loopback address; nothing in the cluster
            # reaches the API server through that Service anyway.
            "--endpoint-reconciler-type=none",
            f"--tls-cert-file={pki.serving_cert}", f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            # Where generated certificates would go; nothing is generated (a certificate is given), but the
            # default is /var/run/kubernetes.
            f"--cert-dir={cert_dir}",
            f"--token-auth-file={token_file}",
            "--authorization-mode=Node,RBAC",
            # ServiceAccount: no controller manager makes the default accounts it requires. TaintNodesByCondition
            # taints every new Node not-ready, and only the node lifecycle controller (controller manager)
            # would lift it once KWOK reports Ready: pods would never land.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={pki.sa_public_key}",
            f"--service-account-signing-key-file={pki.sa_private_key}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            # Start-up speed: APF's bootstrap configuration objects and their controller are skipped (a dev
            # cluster has one client that matters); profiling handlers are not needed.
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            *extra_args]


# The controllers whose work a scheduler waits for, and no others (a dev cluster has no kubelets, cloud or
# workloads for the rest): the PV controller binds PersistentVolumeClaims, and provisions the ones of
# `kubernetes.io/host-path` StorageClasses once VolumeBinding's PreBind picks their node (WaitForFirstConsumer);
# the resourceclaim controller makes pods' claims from ResourceClaimTemplates and drops reservations of
# pods that are gone; the Job controller makes a Job's pods, the workload gang scheduling is for
# (examples/coscheduling).
CONTROLLERS = ("persistentvolume-binder-controller", "resourceclaim-controller", "job-controller")


def kube_controller_manager_argv(binary: Path, kubeconfig: Path, cert_dir: Path, ports: Ports) -> list[str]:
    # No --authentication/authorization-kubeconfig: nothing scrapes its metrics, and /healthz (the readiness
    # probe) is served to anyone; with them it would look for the API server's front-proxy CA, which a dev
    # cluster has none of, and log the miss over and over.
    return [str(binary), f"--kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={ports.controller_manager}",
            # Its self-signed serving certificate goes here (the default is the working directory).
            f"--cert-dir={cert_dir}",
            f"--controllers={','.join(CONTROLLERS)}",
            # The in-tree provisioner of `kubernetes.io/host-path` classes: "for testing and development",
            # a PV per claim under /tmp/hostpath_pv, removed again when the claim is deleted.
            "--enable-hostpath-provisioner=true",
            # How often it retries pending claims (a claim waiting for a PV created later is bound only then):
            # 15 s by default, a dev cluster's users and tests should not wait that long.
            "--pvclaimbinder-sync-period=2s",
            # One instance per cluster.
            "--leader-elect=false",
            "--profiling=false"]


def kwok_argv(binary: Path, kubeconfig: Path, stages_file: Path, ports: Ports) -> list[str]:
    return [str(binary), f"--kubeconfig={kubeconfig}", f"--config={stages_file}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_ANNOTATION_VALUE}",
            f"--server-address=127.0.0.1:{ports.kwok}",
            f"--cidr={POD_CIDR}",
            # A kubelet's default; without the flag the binary keeps no Leases (only kwokctl defaults it).
            f"--node-lease-duration-seconds={NODE_LEASE_DURATION_SECONDS}"]
