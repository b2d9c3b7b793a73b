"""The dev cluster itself, against the real binaries: the API server is up and secured as documented, KWOK
plays nodes and pods as a kubelet would, and the cluster can be restarted, compacted and torn down."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from wasmsched.api.errors import ApiError, is_forbidden, is_not_found, is_unauthorized
from wasmsched.devcluster import DevCluster, DevClusterError, processes
from wasmsched.devcluster.binaries import Binaries
from wasmsched.devcluster.cluster import STATE_FILE
from wasmsched.devcluster.nodes import node_ready
from wasmsched.kube.api import KubeApi, load_configuration

from .helpers import plain, wait_for


def _pod(name: str, node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


def _config_map(name: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {}}


@pytest.fixture
def kwok_node(dev_cluster: DevCluster, request: pytest.FixtureRequest) -> str:
    """A KWOK node of its own for the test (deleted after it)."""
    name = f"n-{request.node.name.replace('_', '-')[:40]}-{os.getpid()}"
    dev_cluster.create_nodes(1, prefix=name)
    request.addfinalizer(lambda: _delete_node(dev_cluster, f"{name}0"))
    return f"{name}0"


def _delete_node(cluster: DevCluster, name: str) -> None:
    with cluster.kube_api() as api:
        api.request_json("DELETE", f"/api/v1/nodes/{name}")


def test_readyz_answers_ok_over_tls_with_the_ca(dev_cluster: DevCluster) -> None:
    ctx = ssl.create_default_context(cafile=str(dev_cluster.ca_file))
    req = urllib.request.Request(dev_cluster.server + "/readyz",
                                 headers={"Authorization": f"Bearer {dev_cluster.admin_token}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        assert (resp.status, resp.read()) == (200, b"ok")
    assert dev_cluster.server.startswith("https://127.0.0.1:")


def test_kubeconfig_works_with_the_official_client(dev_cluster: DevCluster) -> None:
    with config.new_client_from_config(config_file=str(dev_cluster.kubeconfig)) as api:
        assert client.VersionApi(api).get_code().git_version == "v1.37.2"
        names = {plain(ns)["metadata"]["name"] for ns in client.CoreV1Api(api).list_namespace().items}
    assert {"default", "kube-system", "kube-node-lease"} <= names


def test_admin_creates_a_kwok_node_that_becomes_ready_and_holds_a_lease(dev_cluster: DevCluster) -> None:
    name = f"ready-{os.getpid()}-"
    # An unannotated node next to it: KWOK leaves it alone (tests can make nodes nothing heartbeats).
    dev_cluster.create_nodes(1, prefix=name + "unmanaged-", wait_ready=False, managed=False)
    try:
        [node] = dev_cluster.create_nodes(1, prefix=name)
        assert node_ready(node)
        assert node["status"]["allocatable"] == {"cpu": "32", "memory": "256Gi", "pods": "110"}
        assert "taints" not in node["spec"]
        with dev_cluster.kube_api() as api:
            lease = wait_for("the node's Lease", lambda: _lease(api, name + "0"))
            # KWOK renews it (as its own holder identity), as a kubelet renews its node's Lease.
            assert lease["spec"]["leaseDurationSeconds"] == 40
            assert lease["spec"]["renewTime"]
            unmanaged = api.request_json("GET", f"/api/v1/nodes/{name}unmanaged-0")
            assert not node_ready(unmanaged)
    finally:
        _delete_node(dev_cluster, name + "0")
        _delete_node(dev_cluster, name + "unmanaged-0")


def _lease(api: KubeApi, name: str) -> Any:
    try:
        return api.request_json("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}")
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


def test_a_bound_pod_becomes_running_and_a_deleted_one_goes_away(dev_cluster: DevCluster, namespace: str,
                                                                  kwok_node: str) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    with dev_cluster.kube_api() as api:
        api.request_json("POST", pods, body=_pod("p1", kwok_node))

        def running() -> Any:
            pod = api.request_json("GET", f"{pods}/p1")
            return pod if pod["status"]["phase"] == "Running" else None

        pod = wait_for("p1 Running", running)
        assert pod["status"]["podIP"]
        assert {"type": "Ready", "status": "True"}.items() <= next(
            c for c in pod["status"]["conditions"] if c["type"] == "Ready").items()
        # A graceful delete (the default period, as preemption's) only marks it; KWOK, as a kubelet whose
        # containers stopped, removes it.
        marked = api.request_json("DELETE", f"{pods}/p1")
        assert marked["metadata"]["deletionTimestamp"]
        assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
        wait_for("p1 gone", lambda: not api.request_json("GET", pods)["items"])


SELF_SUBJECT_REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _whoami(api: KubeApi) -> Any:
    return api.request_json("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=SELF_SUBJECT_REVIEW)


def test_the_restricted_token_is_authenticated_but_forbidden(dev_cluster: DevCluster, namespace: str) -> None:
    with dev_cluster.kube_api(dev_cluster.restricted_token) as api:
        review = _whoami(api)
        assert review["status"]["userInfo"]["username"] == "restricted"
        assert review["status"]["userInfo"]["groups"] == ["system:authenticated"]
        with pytest.raises(ApiError) as e:
            api.request_json("GET", f"/api/v1/namespaces/{namespace}/pods")
        assert e.value.status == 403 and is_forbidden(e.value)
    with dev_cluster.kube_api("not-a-token") as api, pytest.raises(ApiError) as e:
        api.request_json("GET", f"/api/v1/namespaces/{namespace}/pods")
    assert e.value.status == 401 and is_unauthorized(e.value)


def test_token_request_mints_service_account_tokens(dev_cluster: DevCluster, namespace: str) -> None:
    with dev_cluster.kube_api() as api:
        # No ServiceAccount admission and no serviceaccount controller: the account is made by hand.
        api.request_json("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", body={
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sched"}})
        tr = api.request_json("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/sched/token", body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": [], "expirationSeconds": 600}})
    with dev_cluster.kube_api(tr["status"]["token"]) as api:
        review = _whoami(api)
    assert review["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:sched"


def test_restart_apiserver_keeps_the_data_and_the_port(dev_cluster: DevCluster, namespace: str) -> None:
    server, pid = dev_cluster.server, dev_cluster.pids["kube-apiserver"]
    config_maps = f"/api/v1/namespaces/{namespace}/configmaps"
    with dev_cluster.kube_api() as api:
        api.request_json("POST", config_maps, body=_config_map("kept", {"k": "v"}))
    dev_cluster.restart_apiserver()
    assert dev_cluster.server == server
    assert dev_cluster.pids["kube-apiserver"] != pid
    assert not processes.running(pid)
    with dev_cluster.kube_api() as api:
        assert api.request_json("GET", f"{config_maps}/kept")["data"] == {"k": "v"}


def test_compacted_resource_versions_are_gone(dev_cluster: DevCluster, namespace: str) -> None:
    config_maps = f"/api/v1/namespaces/{namespace}/configmaps"
    with dev_cluster.kube_api() as api:
        old = api.request_json("POST", config_maps, body=_config_map("c", {"n": "0"}))["metadata"]["resourceVersion"]
        api.request_json("PATCH", f"{config_maps}/c", body={"data": {"n": "1"}},
                         content_type="application/merge-patch+json")
        assert dev_cluster.compact_etcd() > int(old)
        # A fresh watch cache (as after a restart) cannot serve a compacted revision either.
        dev_cluster.restart_apiserver()
    with dev_cluster.kube_api() as api:
        # The watch is answered with one ERROR event (and ended): a Status 410 whose reason is Expired, which
        # kube's IsResourceExpired tells (IsGone does not: client-go's reflector asks both).
        data, _ = api.request("GET", config_maps, query={"watch": "true", "resourceVersion": old,
                                                         "timeoutSeconds": 10})
    first = json.loads(data.splitlines()[0])
    assert first["type"] == "ERROR"
    assert (first["object"]["code"], first["object"]["reason"]) == (410, "Expired")


def test_up_refuses_a_directory_where_a_cluster_runs(dev_cluster: DevCluster) -> None:
    with pytest.raises(DevClusterError, match="a dev cluster already runs in"):
        DevCluster.up(dev_cluster.directory)
    assert all(processes.running(pid) for pid in dev_cluster.pids.values())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", *args], capture_output=True,
                          text=True, check=False, timeout=180)


def test_cli_up_with_nodes_then_down_stops_everything(kube_binaries: Binaries, tmp_path: Path) -> None:
    d = tmp_path / "c"
    up = _cli("up", "--dir", str(d), "--nodes", "2")
    assert up.returncode == 0, up.stderr
    assert f"export KUBECONFIG={d / 'kubeconfig'}" in up.stdout
    state = json.loads((d / STATE_FILE).read_text())
    pids = {name: p["pid"] for name, p in state["processes"].items()}
    try:
        assert set(pids) == {"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}
        with KubeApi(load_configuration(str(d / "kubeconfig"))) as api:
            nodes = api.request_json("GET", "/api/v1/nodes")["items"]
        assert sorted(n["metadata"]["name"] for n in nodes) == ["kwok-node-0", "kwok-node-1"]
        assert all(node_ready(n) for n in nodes)
        for log in ("etcd.log", "kube-apiserver.log", "kube-controller-manager.log", "kwok.log"):
            assert (d / "logs" / log).is_file()
    finally:
        down = _cli("down", "--dir", str(d))
    assert down.returncode == 0, down.stderr
    assert "stopped kwok, kube-controller-manager, kube-apiserver, etcd" in down.stdout
    assert not any(processes.running(pid) for pid in pids.values())
    assert not d.exists()
    again = _cli("down", "--dir", str(d))
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_delete_namespace_removes_it_and_its_objects_without_a_namespace_controller(dev_cluster: DevCluster,
                                                                                  kwok_node: str) -> None:
    name = f"purge-{os.getpid()}"
    dev_cluster.create_namespace(name)
    with dev_cluster.kube_api() as api:
        api.request_json("POST", f"/api/v1/namespaces/{name}/pods", body=_pod("bound", kwok_node))
        api.request_json("POST", f"/api/v1/namespaces/{name}/configmaps", body=_config_map("c"))
        dev_cluster.delete_namespace(name)
        with pytest.raises(ApiError) as e:
            api.request_json("GET", f"/api/v1/namespaces/{name}")
        assert e.value.status == 404 and is_not_found(e.value)
        in_namespace = {"fieldSelector": f"metadata.namespace={name}"}
        assert api.request_json("GET", "/api/v1/pods", query=in_namespace)["items"] == []
        assert api.request_json("GET", "/api/v1/configmaps", query=in_namespace)["items"] == []
