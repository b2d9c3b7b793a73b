"""The NodeResourceTopologyMatch guest (examples/noderesourcetopology) in `simulate`: it reads each node's
NodeResourceTopology object from the manifests (docs/abi.md §14.2) and keeps a Guaranteed pod off a node
whose total fits the pod but none of whose NUMA zones does. Every test here fails if the plugin looked at
the node's totals instead of its zones: the controls show that the totals fit."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.helpers import run_cli
from tests.go_guests import ROOT, build_example, builds_go

EXAMPLE = ROOT / "examples" / "noderesourcetopology"
PLUGIN = "NodeResourceTopologyMatch"


@pytest.fixture(scope="session")
@builds_go
def guest_built() -> None:
    build_example("noderesourcetopology")


@pytest.fixture
def built(guest_built: None) -> None:
    """The guest, built."""


def load(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLE / "cluster" / name).read_text()) if d]


def guaranteed(name: str, *cpus: str, memory: str = "2Gi") -> dict[str, Any]:
    """A Guaranteed pod with one container per CPU amount."""
    containers = []
    for i, cpu in enumerate(cpus):
        res = {"cpu": cpu, "memory": memory}
        containers.append({"name": f"c{i}", "image": "img", "resources": {"requests": res, "limits": dict(res)}})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": containers}}


def cluster(tmp_path: Path, nodes: list[str], pods: list[dict[str, Any]],
            edit_nrt: dict[str, Any] | None = None) -> Path:
    """A copy of the example's nodes and NodeResourceTopology objects (those named), with other pods;
    edit_nrt replaces top-level fields of every NRT object kept."""
    d = tmp_path / "cluster"
    d.mkdir()
    keep = [n for n in load("nodes.yaml") if n["metadata"]["name"] in nodes]
    nrts = []
    for original in load("noderesourcetopologies.yaml"):
        if original["metadata"]["name"] in nodes:
            o = copy.deepcopy(original)
            if edit_nrt:  # the policy comes from the edit alone
                o.pop("attributes", None)
                o.pop("topologyPolicies", None)
                o.update(edit_nrt)
            nrts.append(o)
    (d / "nodes.yaml").write_text(yaml.safe_dump_all(keep))
    (d / "noderesourcetopologies.yaml").write_text(yaml.safe_dump_all(nrts))
    (d / "pods.yaml").write_text(yaml.safe_dump_all(pods))
    return d


def simulate(capsys: pytest.CaptureFixture[str], path: Path, *, plugin: bool = True) -> dict[str, Any]:
    config = ["--config", str(EXAMPLE / "scheduler.yaml")] if plugin else []
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--explain", *config, str(path))
    assert rc == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def pods(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


def test_the_bundled_cluster_keeps_the_wide_pod_off_the_nodes_whose_zones_are_too_small(
        built: None, capsys: pytest.CaptureFixture[str]) -> None:
    got = pods(simulate(capsys, EXAMPLE / "cluster"))
    wide = got["wide"]
    # 6 CPUs: numa-a has 8 free (only web-0 and db-0 went elsewhere) but two 4-CPU zones.
    assert wide["phase"] == "Scheduled" and wide["node"] == "numa-b"
    assert wide["filter"]["numa-a"] == {"code": "Unschedulable", "plugin": PLUGIN,
                                        "reasons": ["cannot align container"]}
    too_wide = got["too-wide"]
    assert too_wide["phase"] == "Unschedulable"
    assert too_wide["filter"]["numa-a"]["plugin"] == PLUGIN
    assert "1 cannot align container" in too_wide["message"]
    # The Burstable pod needs no alignment; db-0 fits a zone of every node, and scores per zone.
    assert got["web-0"]["filter"] == {"numa-a": "ok", "numa-b": "ok", "numa-c": "ok"}
    assert {n: s[PLUGIN] for n, s in got["db-0"]["scores"].items()} == {"numa-a": 37, "numa-b": 25, "numa-c": 37}
    # Without the plugin both land on nodes a single-numa-node kubelet would refuse them on.
    default = pods(simulate(capsys, EXAMPLE / "cluster", plugin=False))
    assert default["wide"]["node"] == "numa-a" and default["too-wide"]["node"] == "numa-b"


@pytest.mark.parametrize("node, reason", [("numa-a", "cannot align container"), ("numa-c", "cannot align container"),
                                          ("numa-b", "cannot align pod")])
def test_a_pod_that_fits_the_node_but_no_zone_is_unschedulable_with_the_plugins_reason(
        built: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, node: str, reason: str) -> None:
    """7 CPUs on an empty 8-CPU node: NodeResourcesFit passes, no zone (at most 6 CPUs) holds it."""
    path = cluster(tmp_path, [node], [guaranteed("seven", "7")])
    (p,) = simulate(capsys, path)["pods"]
    assert p["phase"] == "Unschedulable"
    assert p["filter"] == {node: {"code": "Unschedulable", "plugin": PLUGIN, "reasons": [reason]}}
    assert p["message"].startswith(f"0/1 nodes are available: 1 {reason}.")
    (control,) = simulate(capsys, path, plugin=False)["pods"]
    assert control["phase"] == "Scheduled" and control["node"] == node


def test_the_pod_goes_where_one_zone_fits_it(built: None, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    """Two empty nodes alike to the default plugins; numa-a has no 5-CPU zone, numa-b has one."""
    path = cluster(tmp_path, ["numa-a", "numa-b"], [guaranteed("five", "5")])
    (p,) = simulate(capsys, path)["pods"]
    assert (p["phase"], p["node"]) == ("Scheduled", "numa-b")
    assert p["filter"]["numa-a"]["reasons"] == ["cannot align container"]


def test_scope_decides_whether_containers_may_use_different_zones(built: None, capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    """Two 3-CPU containers on a node of two 4-CPU zones: one per zone at container scope; the pod's
    6 CPUs in one zone at pod scope."""
    pod = guaranteed("pair", "3", "3")
    for scope, want in (("container", "Scheduled"), ("pod", "Unschedulable")):
        attrs = {"attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                                {"name": "topologyManagerScope", "value": scope}]}
        (tmp_path / scope).mkdir()
        path = cluster(tmp_path / scope, ["numa-a"], [pod], edit_nrt=attrs)
        (p,) = simulate(capsys, path)["pods"]
        assert p["phase"] == want, (scope, p)
        if want == "Unschedulable":
            assert p["filter"]["numa-a"]["reasons"] == ["cannot align pod"]


def test_other_policies_do_not_filter(built: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Upstream filters only for single-numa-node: with best-effort the node's total is enough."""
    attrs = {"attributes": [{"name": "topologyManagerPolicy", "value": "best-effort"},
                            {"name": "topologyManagerScope", "value": "container"}]}
    path = cluster(tmp_path, ["numa-a"], [guaranteed("seven", "7")], edit_nrt=attrs)
    (p,) = simulate(capsys, path)["pods"]
    assert (p["phase"], p["node"]) == ("Scheduled", "numa-a")


def test_without_the_watch_every_filter_fails_naming_the_resource(built: None, capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    cfg = yaml.safe_load((EXAMPLE / "scheduler.yaml").read_text())
    args = cfg["profiles"][0]["pluginConfig"][0]["args"]
    del args["watch"]
    args["guestURL"] = str(EXAMPLE / args["guestURL"])
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(cfg))
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--config", str(path),
                           str(cluster(tmp_path, ["numa-a"], [guaranteed("one", "1")])))
    assert rc == 0, err
    (p,) = json.loads(out)["pods"]
    assert p["phase"] == "Error"
    assert "handle.objects.get failed: resource noderesourcetopologies is not in args.watch" in p["message"]
