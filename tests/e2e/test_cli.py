"""End-to-end tests of `wasmsched simulate`'s outputs (--explain, --out, --output, --generate)
and of bad input (exit code 2 with a message naming the file and the field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import (
    NOT_HELPFUL,
    SCENARIOS,
    fit_message,
    pods_by_name,
    run_cli,
    scenario_args,
    simulate_json,
)

UNTOLERATED = "node(s) had untolerated taint(s)"


# --- --explain -----------------------------------------------------------------------------------

def test_explain_filter_and_scores(capsys: pytest.CaptureFixture[str]) -> None:
    doc = simulate_json(capsys, "explain", "--explain")
    pods = pods_by_name(doc)

    incoming = pods["incoming"]
    assert incoming["node"] == "empty"
    assert incoming["filter"] == {
        "tainted": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable", "reason": UNTOLERATED},
        "empty": "ok",
        "half-full": "ok",
    }
    scores = incoming["scores"]
    assert set(scores) == {"empty", "half-full"}
    for node, entry in scores.items():
        assert "total" in entry, node
        assert entry["total"] == sum(v for k, v in entry.items() if k != "total"), entry
        # No PreferNoSchedule taints anywhere: every node gets MaxNodeScore (reverse normalisation) x 3.
        assert entry["TaintToleration"] == 300
        # Plugins whose PreScore returns Skip (no preferred terms, no spread constraints) do not score.
        assert "NodeAffinity" not in entry
        assert "PodTopologySpread" not in entry
    # LeastAllocated, cpu and memory weight 1: empty (75 + 87) / 2, half-full (25 + 37) / 2.
    assert scores["empty"]["NodeResourcesFit"] == 81
    assert scores["half-full"]["NodeResourcesFit"] == 31
    assert scores["empty"]["total"] > scores["half-full"]["total"]

    too_big = pods["too-big"]
    assert too_big["phase"] == "Unschedulable"
    insufficient = {"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable",
                    "reason": "Insufficient cpu"}
    assert too_big["filter"] == {
        "tainted": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable", "reason": UNTOLERATED},
        "empty": insufficient,
        "half-full": insufficient,
    }
    assert too_big["scores"] == {}
    assert too_big["message"] == fit_message(3, {UNTOLERATED: 1, "Insufficient cpu": 2}, {NOT_HELPFUL: 3})


def test_without_explain_no_filter_or_scores(capsys: pytest.CaptureFixture[str]) -> None:
    doc = simulate_json(capsys, "explain")
    for p in doc["pods"]:
        assert set(p) == {"namespace", "name", "node", "phase", "message", "nominatedNode", "attempts"}
    assert set(doc) == {"pods", "events", "summary"}
    assert {"scheduled", "unschedulable", "preempted", "seconds"} <= set(doc["summary"])


# --- --out DIR -----------------------------------------------------------------------------------

def _load_all(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_out_dir_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "state"
    first = simulate_json(capsys, "resources-fit", "--out", str(out_dir))
    assert (out_dir / "nodes.yaml").exists()
    assert (out_dir / "pods.yaml").exists()
    nodes = _load_all(out_dir / "nodes.yaml")
    assert sorted(n["metadata"]["name"] for n in nodes) == ["n-cpu", "n-mem", "n-small"]
    assert all(n["kind"] == "Node" for n in nodes)
    pods = {p["metadata"]["name"]: p for p in _load_all(out_dir / "pods.yaml")}
    assert set(pods) == {"wants-cpu", "wants-memory", "wants-both"}
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in pods.values())
    assert pods["wants-cpu"]["spec"]["nodeName"] == "n-cpu"
    assert pods["wants-memory"]["spec"]["nodeName"] == "n-mem"
    assert not pods["wants-both"]["spec"].get("nodeName")

    # Loading the written state back: the bound pods are running pods now, the pending one fails
    # again with the same message.
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(out_dir))
    assert rc == 0, err
    second = json.loads(out)
    assert [p["name"] for p in second["pods"]] == ["wants-both"]
    again = second["pods"][0]
    assert again["phase"] == "Unschedulable"
    assert again["message"] == pods_by_name(first)["wants-both"]["message"]


def test_out_dir_after_preemption_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "state"
    simulate_json(capsys, "preemption", "--out", str(out_dir))
    pcs = _load_all(out_dir / "priorityclasses.yaml")
    assert sorted((pc["metadata"]["name"], pc["value"]) for pc in pcs) == [("high", 1000), ("low", 100)]
    pods = _load_all(out_dir / "pods.yaml")
    assert [(p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods] == [("critical", "n1")]
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(out_dir))
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pods"] == []
    assert doc["summary"]["scheduled"] == 0


# --- --output yaml | table -----------------------------------------------------------------------

def _without_seconds(doc: dict[str, Any]) -> dict[str, Any]:
    d = dict(doc)
    d["summary"] = {k: v for k, v in doc["summary"].items() if k != "seconds"}
    return d


def test_output_yaml_matches_json(capsys: pytest.CaptureFixture[str]) -> None:
    as_json = simulate_json(capsys, "taints-noschedule")
    rc, out, err = run_cli(capsys, "simulate", "--output", "yaml", *scenario_args("taints-noschedule"))
    assert rc == 0, err
    as_yaml = yaml.safe_load(out)
    assert _without_seconds(as_yaml) == _without_seconds(as_json)
    assert pods_by_name(as_yaml)["tolerates-gpu"]["node"] == "gpu"


@pytest.mark.parametrize("flags", [[], ["--output", "table"]])
def test_output_table(capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    rc, out, err = run_cli(capsys, "simulate", *flags, *scenario_args("taints-noschedule"))
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "PHASE", "NODE", "ATTEMPTS", "MESSAGE"]
    rows = {line.split()[1]: line for line in lines[1:] if line.strip() and line.startswith("default")}
    assert set(rows) == {"tolerates-gpu", "tolerates-any-dedicated", "no-tolerations"}
    assert rows["tolerates-gpu"].split()[:5] == ["default", "tolerates-gpu", "Scheduled", "gpu", "1"]
    assert rows["tolerates-any-dedicated"].split()[2:4] == ["Scheduled", "infra"]
    assert rows["no-tolerations"].split()[2] == "Unschedulable"
    assert rows["no-tolerations"].endswith(fit_message(2, {UNTOLERATED: 2}, {NOT_HELPFUL: 2}))
    assert lines[-1].startswith("2 scheduled, 1 unschedulable, 0 preempted in ")


# --- --generate ----------------------------------------------------------------------------------

def test_generate_50_nodes_200_pods(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", "--generate", "nodes=50,pods=200")
    assert rc == 0, err
    doc = json.loads(out)
    pods = doc["pods"]
    assert len(pods) == 200
    assert len({(p["namespace"], p["name"]) for p in pods}) == 200
    scheduled_events = {e["regarding"] for e in doc["events"] if e["reason"] == "Scheduled"}
    for p in pods:
        key = f"{p['namespace']}/{p['name']}"
        assert p["phase"] in ("Scheduled", "Unschedulable"), p
        if p["phase"] == "Scheduled":
            assert p["node"], p
            assert key in scheduled_events
        else:
            assert p["node"] is None
            assert p["message"].startswith("0/50 nodes are available: "), p
    s = doc["summary"]
    assert s["scheduled"] + s["unschedulable"] == 200
    assert s["scheduled"] == sum(1 for p in pods if p["phase"] == "Scheduled")


# --- bad input -----------------------------------------------------------------------------------

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

BAD_MANIFESTS = {
    "malformed-yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p\n  namespace: [\n", []),
    "containers-not-a-list": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: {}\n",
        ["spec.containers"]),
    "int-field-is-a-string": (
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  priority: \"x\"\n"
         "  containers: [{name: c, image: busybox}]\n"),
        ["spec.priority"]),
    "unknown-field": (
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
         "  containers: [{name: c, image: busybox}]\n  nodeSelectorr: {a: b}\n"),
        ["nodeSelectorr"]),
    "invalid-quantity": (
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
         "  containers: [{name: c, image: busybox, resources: {requests: {cpu: 1.2.3}}}]\n"),
        ["spec.containers[0].resources.requests.cpu"]),
    "unknown-priority-class": (
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
         "  priorityClassName: does-not-exist\n  containers: [{name: c, image: busybox}]\n"),
        ["does-not-exist", "PriorityClass"]),
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_bad_manifest(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    text, fields = BAD_MANIFESTS[case]
    bad = tmp_path / f"{case}.yaml"
    bad.write_text(text)
    (tmp_path / "node.yaml").write_text(NODE)
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(tmp_path / "node.yaml"), str(bad))
    assert rc == 2, (rc, err)
    assert out == ""
    assert bad.name in err, f"stderr does not name the file: {err!r}"
    for f in fields:
        assert f in err, f"stderr does not name {f!r}: {err!r}"


BAD_CONFIGS = {
    "unknown-plugin": (
        ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
         "- schedulerName: default-scheduler\n  plugins:\n    score:\n"
         "      enabled: [{name: NoSuchPlugin, weight: 1}]\n"),
        ["NoSuchPlugin"]),
    "percentage-out-of-range": (
        ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "percentageOfNodesToScore: 120\n"),
        ["percentageOfNodesToScore", "120"]),
    "malformed-config": ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: [\n", []),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    text, fields = BAD_CONFIGS[case]
    cfg = tmp_path / f"{case}.yaml"
    cfg.write_text(text)
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", "--config", str(cfg),
                           str(SCENARIOS / "least-allocated" / "cluster.yaml"))
    assert rc == 2, (rc, err)
    assert out == ""
    assert cfg.name in err, f"stderr does not name the file: {err!r}"
    for f in fields:
        assert f in err, f"stderr does not name {f!r}: {err!r}"


def test_missing_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "cluster.yaml"
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(missing))
    assert rc == 2
    assert out == ""
    assert str(missing) in err


def test_no_path_at_all(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "simulate", "--output", "json")
    assert rc == 2
    assert out == ""
    assert "PATH" in err


def test_empty_directory_warns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", str(tmp_path))
    assert rc == 0
    assert f"warning: {tmp_path}: no Kubernetes objects found" in err
    assert json.loads(out)["pods"] == []


def test_seed_breaks_ties_reproducibly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Eight identical empty nodes: every node ties, so the seed alone picks the host.
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for i in range(8)]
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}})
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))

    def host(seed: int) -> str:
        rc, out, _ = run_cli(capsys, "simulate", "-o", "json", "--seed", str(seed), str(path))
        assert rc == 0
        node: str = json.loads(out)["pods"][0]["node"]
        return node

    assert host(1) == host(1)
    assert len({host(s) for s in range(12)}) > 1
