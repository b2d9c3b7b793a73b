"""The NodeResourceTopologyMatch guest (examples/noderesourcetopology) under `wasmsched run` against a real
kube-apiserver: the published NodeResourceTopology CRD (vendored in testdata/, never fetched) is installed,
KWOK nodes get their NodeResourceTopology objects through the API, and the scheduler watches them through
the args' `watch` (docs/abi.md §14.2). A Guaranteed pod that fits node X's total but none of its NUMA zones
is not bound to X; one that fits no zone anywhere waits with the plugin's reason, and is bound once an
update of X's object (a cluster event of the CRD's resource) gives a zone room for it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.go_guests import build_example, builds_go
from tests.watch_helpers import NRT
from wasmsched.api.errors import ApiError, is_already_exists, is_not_found
from wasmsched.devcluster import DevCluster
from wasmsched.kube.api import KubeApi

from .helpers import wait_for
from .run_helpers import (
    SchedulerProcess,
    condition,
    create_node,
    create_pod,
    get_pod,
    node_json,
    scheduler_config,
    unique,
)

CRD_FILE = Path(__file__).parent / "testdata" / "noderesourcetopology-crd.yaml"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD_NAME = "noderesourcetopologies.topology.node.k8s.io"


@pytest.fixture(scope="module")
@builds_go
def guest() -> Path:
    return build_example("noderesourcetopology")


def _served(api: KubeApi) -> bool | None:
    try:
        api.request_json("GET", NRT.path())
        return True
    except ApiError:
        return None  # 404 until the CRD is established, then 503 while its storage starts


@pytest.fixture(scope="module")
def published_crd(dev_cluster: DevCluster) -> Iterator[dict[str, Any]]:
    """The published CRD, installed for this module. Other modules of the same dev cluster install a
    schema-less CRD of the same name (tests/watch_helpers.py), whose objects this schema would prune: the
    one found before is put back afterwards, or the published one is deleted when there was none."""
    crd = yaml.safe_load(CRD_FILE.read_text())
    api = dev_cluster.kube_api()
    try:
        try:
            before: dict[str, Any] | None = api.request_json("GET", f"{CRD_PATH}/{CRD_NAME}")
        except ApiError as e:
            if not is_not_found(e):
                raise
            before = None
        if before is None:
            try:
                api.request_json("POST", CRD_PATH, body=crd)
            except ApiError as e:
                if not is_already_exists(e):
                    raise
        else:
            crd["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
            api.request_json("PUT", f"{CRD_PATH}/{CRD_NAME}", body=crd)
        wait_for("the CRD to be served", lambda: _served(api), timeout=30)
        installed = api.request_json("GET", f"{CRD_PATH}/{CRD_NAME}")
        yield installed
    finally:
        try:
            if before is None:
                api.request("DELETE", f"{CRD_PATH}/{CRD_NAME}")

                def gone() -> bool | None:
                    try:
                        api.request_json("GET", f"{CRD_PATH}/{CRD_NAME}")
                        return None
                    except ApiError as e:
                        return True if is_not_found(e) else None

                wait_for("the CRD to be deleted", gone, timeout=60)
            else:
                current = api.request_json("GET", f"{CRD_PATH}/{CRD_NAME}")
                restored = {"apiVersion": before["apiVersion"], "kind": before["kind"],
                            "metadata": {"name": CRD_NAME, "annotations": before["metadata"].get("annotations", {}),
                                         "resourceVersion": current["metadata"]["resourceVersion"]},
                            "spec": before["spec"]}
                api.request_json("PUT", f"{CRD_PATH}/{CRD_NAME}", body=restored)
                wait_for("the CRD to be served again", lambda: _served(api), timeout=30)
        finally:
            api.close()



def zone(name: str, cpus: str) -> dict[str, Any]:
    return {"name": name, "type": "Node", "resources": [
        {"name": "cpu", "capacity": cpus, "allocatable": cpus, "available": cpus},
        {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "8Gi"}]}


def nrt_object(node: str, scope: str, *cpus: str) -> dict[str, Any]:
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": node},
            "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                           {"name": "topologyManagerScope", "value": scope}],
            "zones": [zone(f"node-{i}", c) for i, c in enumerate(cpus)]}


def guaranteed_pod(name: str, scheduler: str, cpu: str, tag: str) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "2Gi"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                     # only this test's nodes: other tests of the dev cluster may leave nodes without NRT objects
                     "nodeSelector": {"nrt-test": tag},
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": res, "limits": dict(res)}}]}}


def test_a_pod_fitting_no_single_numa_zone_of_x_is_not_bound_to_x(
        admin: KubeApi, namespace: str, dev_cluster: DevCluster, published_crd: dict[str, Any], guest: Path,
        tmp_path: Path) -> None:
    assert [v["name"] for v in published_crd["spec"]["versions"]] == ["v1alpha1", "v1alpha2"]
    tag = unique("nrt")
    x, y = f"{tag}-x", f"{tag}-y"
    sched = unique("topo")
    created: list[str] = []
    proc = None
    try:
        for node in (x, y):
            create_node(admin, node_json(node, cpu="8", memory="16Gi", labels={"nrt-test": tag}))
            created.append(f"/api/v1/nodes/{node}")
        # X: two 4-CPU zones, container scope; Y: 2 + 6 CPUs, pod scope.
        for obj in (nrt_object(x, "container", "4", "4"), nrt_object(y, "pod", "2", "6")):
            admin.request_json("POST", NRT.path(), body=obj)
            created.append(NRT.path(name=obj["metadata"]["name"]))
        # The published schema kept every field the plugin reads.
        stored = admin.request_json("GET", NRT.path(name=x))
        assert stored["zones"][1]["resources"][0] == {"name": "cpu", "capacity": "4", "allocatable": "4",
                                                      "available": "4"}
        assert stored["attributes"][1] == {"name": "topologyManagerScope", "value": "container"}

        cfg = scheduler_config(tmp_path / "scheduler.yaml", sched, extra_profile=(
            "  plugins:\n    multiPoint:\n      enabled:\n      - name: NodeResourceTopologyMatch\n"
            "  pluginConfig:\n  - name: NodeResourceTopologyMatch\n    args:\n"
            f"      guestURL: {guest}\n"
            "      guestConfig: '{\"scoringStrategy\": {\"type\": \"LeastAllocated\"}}'\n"
            "      watch:\n"
            "      - {group: topology.node.k8s.io, version: v1alpha2, resource: noderesourcetopologies}\n"))
        proc = SchedulerProcess(tmp_path, dev_cluster.kubeconfig, cfg, "--leader-elect=false")

        # 6 CPUs: X's 8 free CPUs hold it, none of its zones does; Y's 6-CPU zone does.
        create_pod(admin, namespace, guaranteed_pod("wide", sched, "6", tag))
        bound = wait_for("wide bound", lambda: (get_pod(admin, namespace, "wide") or {}).get("spec", {})
                         .get("nodeName"), timeout=60)
        assert bound == y, proc.log()

        # 7 CPUs: X's total holds it (Y's does not any more); no zone anywhere does.
        create_pod(admin, namespace, guaranteed_pod("too-wide", sched, "7", tag))

        def rejected() -> dict[str, Any] | None:
            c = condition(get_pod(admin, namespace, "too-wide") or {}, "PodScheduled")
            return c if c and c["status"] == "False" else None

        cond = wait_for("too-wide rejected", rejected, timeout=60)
        assert "1 cannot align container" in cond["message"], cond
        assert "1 Insufficient cpu" in cond["message"], cond
        assert not (get_pod(admin, namespace, "too-wide") or {})["spec"].get("nodeName")

        # The exporter reports X's zones merged (8 CPUs in node-0): the object's Update event requeues the pod.
        current = admin.request_json("GET", NRT.path(name=x))
        current["zones"] = [zone("node-0", "8"), zone("node-1", "0")]
        admin.request_json("PUT", NRT.path(name=x), body=current)
        bound = wait_for("too-wide bound after the NRT update",
                         lambda: (get_pod(admin, namespace, "too-wide") or {}).get("spec", {}).get("nodeName"),
                         timeout=60)
        assert bound == x, proc.log()
        assert proc.alive(), proc.log()
        assert "Traceback" not in proc.log()
    finally:
        if proc is not None:
            proc.stop()
        for path in created:
            with contextlib.suppress(ApiError):
                admin.request("DELETE", path)


def test_the_vendored_crd_is_the_published_file_unchanged() -> None:
    """The header names the source; below it, the file as published (its own first line)."""
    text = CRD_FILE.read_text()
    header, _, body = text.partition("apiVersion: apiextensions.k8s.io/v1\n")
    assert all(line.startswith("#") for line in header.splitlines())
    source = "https://github.com/k8stopologyawareschedwg/noderesourcetopology-api/blob/v0.1.2/manifests/crd.yaml"
    assert source in header
    assert "Apache License 2.0" in header
    crd = yaml.safe_load(text)
    assert crd["metadata"]["name"] == CRD_NAME and crd["spec"]["scope"] == "Cluster"
    assert json.dumps(crd["spec"]["names"], sort_keys=True) == json.dumps(
        {"kind": "NodeResourceTopology", "listKind": "NodeResourceTopologyList", "plural": "noderesourcetopologies",
         "shortNames": ["node-res-topo"], "singular": "noderesourcetopology"}, sort_keys=True)
    assert body.startswith("kind: CustomResourceDefinition\n")
