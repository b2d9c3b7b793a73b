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
DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo"


# --- --explain -----------------------------------------------------------------------------------

def test_explain_filter_and_scores(capsys: pytest.CaptureFixture[str]) -> None:
    doc = simulate_json(capsys, "explain", "--explain")
    pods = pods_by_name(doc)

    incoming = pods["incoming"]
    assert incoming["node"] == "empty"
    assert incoming["filter"] == {
        "tainted": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable", "reasons": [UNTOLERATED]},
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
                    "reasons": ["Insufficient cpu"]}
    assert too_big["filter"] == {
        "tainted": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable", "reasons": [UNTOLERATED]},
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
    assert [(p["name"], p["phase"], p["node"]) for p in second["pods"]] == [
        ("wants-both", "Unschedulable", None), ("wants-cpu", "Running", "n-cpu"), ("wants-memory", "Running", "n-mem")]
    again = second["pods"][0]
    assert again["phase"] == "Unschedulable"
    assert again["message"] == pods_by_name(first)["wants-both"]["message"]


def test_out_dir_after_preemption_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "state"
    simulate_json(capsys, "preemption", "--out", str(out_dir))
    pcs = _load_all(out_dir / "priorityclasses.yaml")
    assert sorted((pc["metadata"]["name"], pc["value"]) for pc in pcs) == [
        ("high", 1000), ("low", 100), ("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)]
    pods = _load_all(out_dir / "pods.yaml")
    assert [(p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods] == [("critical", "n1")]
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(out_dir))
    assert rc == 0, err
    doc = json.loads(out)
    assert [(p["name"], p["phase"], p["node"]) for p in doc["pods"]] == [("critical", "Running", "n1")]
    assert doc["summary"]["scheduled"] == 0
    assert doc["summary"]["running"] == 1


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


# --- flags and outputs a user meets first --------------------------------------------------------

def test_verbosity_after_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "simulate", "-v", "2", *scenario_args("least-allocated"))
    assert rc == 0, err
    assert '"Successfully bound pod to node" pod="default/incoming"' in err
    rc, _, err = run_cli(capsys, "-v", "2", "simulate", *scenario_args("least-allocated"))
    assert rc == 0, err
    assert '"Successfully bound pod to node" pod="default/incoming"' in err


@pytest.mark.parametrize("spec, message", [
    ("nodes=100000,pods=1", "--generate: nodes must be between 0 and 15000, got 100000"),
    ("nodes=1,pods=150001", "--generate: pods must be between 0 and 150000, got 150001"),
    ("nodes=-1,pods=1", "--generate: nodes must be between 0 and 15000, got -1"),
    ("nodes=1,pods=" + "9" * 5000, '--generate: pods must be an integer, got "' + "9" * 40 + '..."'),
    ("nodes=1,pods=1,seed=" + "9" * 30, '--generate: seed must be an integer, got "' + "9" * 30 + '"'),
    ("nodes=1", "--generate: both nodes=N and pods=M are required"),
    ("nodes=1,pods=2,size=3", '--generate: expected nodes=N,pods=M[,seed=S], got "size=3"'),
])
def test_generate_sizes_are_bounded(capsys: pytest.CaptureFixture[str], spec: str, message: str) -> None:
    rc, out, err = run_cli(capsys, "simulate", "--generate", spec)
    assert (rc, out, err) == (2, "", f"error: {message}\n")


def test_no_nodes_ends_unschedulable(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--generate", "nodes=0,pods=5")
    assert rc == 0, err
    doc = json.loads(out)
    assert {(p["phase"], p["message"]) for p in doc["pods"]} == {
        ("Unschedulable", "no nodes available to schedule pods")}
    assert doc["summary"]["unschedulable"] == 5


@pytest.mark.parametrize("where", ["a-file", "a-file/sub"])
def test_out_must_be_a_writable_directory_checked_before_the_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    target = tmp_path / where
    rc, out, err = run_cli(capsys, "simulate", "--out", str(target), *scenario_args("least-allocated"))
    assert rc == 2
    assert out == ""  # refused before any result is printed
    assert err.startswith(f"error: --out {target}: ") and "not a directory" in err
    assert err.count("\n") == 1


def test_out_is_the_same_bytes_for_the_same_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The demo has preemption, bindings, failures and running pods: every kind of write simulate makes.
    runs = []
    for i in range(3):
        out_dir = tmp_path / f"run{i}"
        rc, _, err = run_cli(capsys, "simulate", "--out", str(out_dir), str(DEMO))
        assert rc == 0, err
        runs.append({f.name: f.read_bytes() for f in sorted(out_dir.iterdir())})
    assert runs[0] == runs[1] == runs[2]
    pods = [d for d in yaml.safe_load_all(runs[0]["pods.yaml"]) if d]
    assert [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods] == sorted(
        f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods)
    assert all(p["metadata"]["resourceVersion"] for p in pods)
    # Keys sorted as kubectl prints them, maps included.
    assert list(pods[0]) == sorted(pods[0])
    assert list(pods[0]["metadata"]) == sorted(pods[0]["metadata"])


def test_every_input_pod_is_accounted_for(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Running pods (spec.nodeName in the input) are reported; the summary counts every phase."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "running"},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lost"},
         "spec": {"nodeName": "gone", "containers": [{"name": "c", "image": "x"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other"},
         "spec": {"schedulerName": "someone-else", "containers": [{"name": "c", "image": "x"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new"},
         "spec": {"containers": [{"name": "c", "image": "x"}]}},
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", str(path))
    assert rc == 0, err
    assert err == (f'warning: {path}: document 3: spec.nodeName: node "gone" does not exist: pod default/lost '
                   "is reported Running and holds no node's resources\n")
    doc = json.loads(out)
    assert [(p["name"], p["phase"], p["node"], p["message"]) for p in doc["pods"]] == [
        ("other", "Ignored", None, 'no profile for schedulerName "someone-else"'),
        ("new", "Scheduled", "n1", ""),
        ("running", "Running", "n1", ""),
        ("lost", "Running", "gone", 'node "gone" does not exist'),
    ]
    summary = {k: v for k, v in doc["summary"].items() if k != "seconds"}
    assert summary == {"scheduled": 1, "unschedulable": 0, "preempted": 0, "error": 0, "ignored": 1,
                       "running": 2}
    rc, out, _ = run_cli(capsys, "simulate", str(path))
    assert out.splitlines()[-1].startswith("1 scheduled, 0 unschedulable, 0 preempted, 1 ignored, 2 running in ")


def test_a_duplicate_between_a_file_and_generate_names_both(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: node-00000}\n")
    rc, out, err = run_cli(capsys, "simulate", "--generate", "nodes=2,pods=0", str(path))
    assert (rc, out) == (2, "")
    assert err == (f'error: --generate: nodes "node-00000" already exists (first defined in {path}: '
                   "document 1)\n")


def test_explain_in_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "simulate", "--explain", *scenario_args("explain"))
    assert rc == 0, err
    text = out.split("\n")
    start = next(i for i, line in enumerate(text) if line.split()[:2] == ["default", "incoming"])
    block = text[start + 1:start + 13]
    assert block[0] == "    filter: 2 of 3 nodes passed, 1 filtered out:"
    assert block[1] == f"      1  TaintToleration  {UNTOLERATED}  (tainted)"
    assert block[2] == "    score: best 2 of 2 nodes (weighted):"
    assert block[3].split() == ["PLUGIN", "empty", "half-full"]
    rows = {line.split()[0]: line.split()[1:] for line in block[4:] if line.strip()}
    assert rows["NodeResourcesFit"] == ["81", "31"]
    assert rows["TaintToleration"] == ["300", "300"]
    # As kube 1.37: VolumeBinding scores (StorageCapacityScoring) and DynamicResources scores every node
    # 0 for a pod without claims; PodTopologySpread and InterPodAffinity skip.
    assert rows["VolumeBinding"] == rows["DynamicResources"] == ["0", "0"]
    assert rows["TOTAL"] == ["452", "402"]
    too_big = next(i for i, line in enumerate(text) if line.split()[:2] == ["default", "too-big"])
    assert text[too_big + 1] == "    filter: 0 of 3 nodes passed, 3 filtered out:"
    assert text[too_big + 2] == "      2  NodeResourcesFit  Insufficient cpu  (empty, half-full)"
    assert text[too_big + 3] == f"      1  TaintToleration   {UNTOLERATED}  (tainted)"
    # Without --explain, the table is the rows alone.
    rc, plain, _ = run_cli(capsys, "simulate", *scenario_args("explain"))
    assert "filter:" not in plain and "score:" not in plain


def test_a_node_with_an_enormous_allocatable_is_read_as_kube_reads_it(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    """cpu: 1e400 is a valid quantity (scoring, in floats, used to fail on it with a Python OverflowError);
    kube-scheduler reads it with MilliValue(), which overflows int64 to 0 (api/quantity.py), so the node has no
    room: one warning per quantity says so, and the pod goes to the other node."""
    path = tmp_path / "c.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: huge}\n"
                    "status: {allocatable: {cpu: 1e400, memory: 1e400, pods: '110'}}\n---\n"
                    "apiVersion: v1\nkind: Node\nmetadata: {name: small}\n"
                    "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '110'}}\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}\n")
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", str(path))
    assert rc == 0
    warnings = err.splitlines()
    assert len(warnings) == 2 and all('"Node allocatable quantity is past int64' in w and 'node="huge"' in w
                                      for w in warnings), err
    assert [(p["name"], p["phase"], p["node"]) for p in json.loads(out)["pods"]] == [("p", "Scheduled", "small")]


def test_the_api_servers_system_priority_classes_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """kube-apiserver creates system-node-critical and system-cluster-critical; pods name them often.
    A dump of a real cluster carries them too: those are taken as they are."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: kube-system}\n"
           "spec: {priorityClassName: %s, containers: [{name: c, image: x}]}\n")
    path = tmp_path / "c.yaml"
    path.write_text(NODE + "---\n" + pod % ("proxy", "system-node-critical") + "---\n"
                    + pod % ("dns", "system-cluster-critical"))
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--out", str(out_dir), str(path))
    assert rc == 0, err
    assert {p["name"]: p["phase"] for p in json.loads(out)["pods"]} == {"proxy": "Scheduled", "dns": "Scheduled"}
    pods = {p["metadata"]["name"]: p["spec"]["priority"] for p in _load_all(out_dir / "pods.yaml")}
    assert pods == {"proxy": 2000001000, "dns": 2000000000}
    classes = _load_all(out_dir / "priorityclasses.yaml")
    assert [(c["metadata"]["name"], c["value"]) for c in classes] == [
        ("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)]
    # The written state, system classes included, loads again.
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", str(out_dir))
    assert rc == 0, err
