"""A real control plane for the tests marked `kube` (tests/conftest.py marks every test that uses
kube_binaries, so dev_cluster too): one dev cluster per session (per pytest-xdist worker), a fresh
namespace per test. Missing binaries fail the tests, telling to run `make kube`: they are never skipped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.go_guests import build_example, builds_go
from wasmsched.api.errors import ApiError
from wasmsched.devcluster import BinariesMissingError, DevCluster
from wasmsched.devcluster.binaries import Binaries, find_binaries
from wasmsched.kube.api import KubeApi

from .faults_lib import TEST_NODES, TEST_PODS, FaultRun
from .helpers import namespace_name
from .run_helpers import kube_api


@pytest.fixture(scope="session")
def kube_binaries() -> Binaries:
    try:
        return find_binaries()
    except BinariesMissingError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def dev_cluster(kube_binaries: Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    # Stops what it started if it fails; die_with_parent: a run killed by pytest-timeout (os._exit) leaves
    # no processes behind.
    cluster = DevCluster.up(tmp_path_factory.mktemp("dev-cluster"), die_with_parent=True)
    try:
        yield cluster
    finally:
        cluster.down()


@pytest.fixture
def namespace(dev_cluster: DevCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for the test, purged with everything in it afterwards."""
    name = namespace_name(request.node.name)
    dev_cluster.create_namespace(name)
    try:
        yield name
    finally:
        dev_cluster.delete_namespace(name)



@pytest.fixture(scope="session")
def api_resources(dev_cluster: DevCluster) -> dict[tuple[str, str], tuple[str, bool]]:
    """(apiVersion, kind) -> (collection path with a `{ns}` slot for "namespaces/NS/", namespaced), from
    the server's discovery documents."""
    out: dict[tuple[str, str], tuple[str, bool]] = {}
    with dev_cluster.kube_api() as api:
        groups = api.request_json("GET", "/apis")
        for gv in ["v1"] + [v["groupVersion"] for g in groups["groups"] for v in g["versions"]]:
            base = "/api/v1" if gv == "v1" else f"/apis/{gv}"
            try:
                doc = api.request_json("GET", base)
            except ApiError:
                continue  # an aggregated API that is down
            for r in doc["resources"]:
                if "/" not in r["name"]:
                    out[(gv, r["kind"])] = (f"{base}/{{ns}}{r['name']}", r["namespaced"])
    return out


@pytest.fixture(scope="session")
@builds_go
def nodenumber_wasm() -> Path:
    """The NodeNumber example guest, built by make (cached)."""
    return build_example("nodenumber")


@pytest.fixture
def admin(dev_cluster: DevCluster) -> Iterator[KubeApi]:
    """The admin's client of the test's dev cluster (unlimited, as the tests' own requests)."""
    api = kube_api(dev_cluster.kubeconfig)
    yield api
    api.close()



@pytest.fixture
def fault_run(dev_cluster: DevCluster, namespace: str, tmp_path: Path) -> Iterator[FaultRun]:
    """A fault scenario's set-up at the tests' size (test_faults.py, test_faults_network.py)."""
    run = FaultRun(dev_cluster, tmp_path / "faults", namespace, TEST_PODS, TEST_NODES)
    try:
        yield run
    finally:
        run.close()
