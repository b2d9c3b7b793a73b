"""The bundled demo cluster (what `make demo` schedules) keeps producing the placements it shows."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from wasmsched.cli.main import main

from .helpers import NOT_HELPFUL

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo"
ZONES = {f"node-{i:02d}": ("zone-a", "zone-b", "zone-c")[(i - 1) % 3] for i in range(1, 13)}


@pytest.fixture(scope="module")
def demo() -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["simulate", "-o", "json", str(DEMO)]) == 0
    doc: dict = json.loads(buf.getvalue())
    return doc


def _pods(doc: dict) -> dict[str, dict]:
    return {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}


def test_summary(demo: dict) -> None:
    s = demo["summary"]
    assert (s["scheduled"], s["unschedulable"], s["preempted"]) == (20, 5, 1)


def test_cache_replicas_land_on_distinct_nodes(demo: dict) -> None:
    pods = _pods(demo)
    nodes = [pods[f"shop/cache-{i}"]["node"] for i in (1, 2, 3)] + ["node-07"]  # cache-0 runs on node-07
    assert len(set(nodes)) == 4


def test_web_is_spread_evenly_across_zones(demo: dict) -> None:
    pods = _pods(demo)
    per_zone = Counter(ZONES[pods[f"shop/web-{i}"]["node"]] for i in range(6))
    assert max(per_zone.values()) - min(per_zone.values()) <= 1 and len(per_zone) == 3


def test_gpu_jobs_use_the_tainted_gpu_nodes(demo: dict) -> None:
    pods = _pods(demo)
    assert {pods["ml/train-0"]["node"], pods["ml/train-1"]["node"]} <= {"node-10", "node-11", "node-12"}
    huge = pods["ml/train-huge"]
    assert huge["phase"] == "Unschedulable"
    assert huge["message"].startswith("0/12 nodes are available: ")
    assert "11 Insufficient nvidia.com/gpu" in huge["message"]
    assert huge["message"].endswith(f"preemption: 0/12 nodes are available: 12 {NOT_HELPFUL}.")


def test_preemption_evicts_the_cheapest_victim(demo: dict) -> None:
    pods = _pods(demo)
    assert pods["default/reporting"]["phase"] == "Scheduled"
    assert pods["default/reporting"]["node"] == "node-01"
    assert pods["default/reporting"]["attempts"] == 2
    assert pods["default/batch-3"]["phase"] == "Preempted"
    assert pods["default/batch-3"]["message"].startswith("Preempted by pod ")
    reasons = [(e["reason"], e["regarding"]) for e in demo["events"]]
    assert ("Preempted", "default/batch-3") in reasons


def test_special_pods(demo: dict) -> None:
    pods = _pods(demo)
    assert pods["default/pinned"]["node"] == "node-04"
    assert pods["shop/db-0"]["node"] == "node-02"
    assert pods["default/gated"] == {
        "namespace": "default", "name": "gated", "node": None, "phase": "Unschedulable",
        "message": "waiting for scheduling gates: [example.com/quota-check]", "nominatedNode": None, "attempts": 0,
    }
    assert pods["default/other-scheduler"]["phase"] == "Ignored"
    ingress = [pods[f"default/ingress-{i}"] for i in range(4)]
    # Host port 8443 in zone-a: two schedulable nodes have room, so two replicas place and two wait.
    assert sorted(p["phase"] for p in ingress) == ["Scheduled", "Scheduled", "Unschedulable", "Unschedulable"]
    assert len({p["node"] for p in ingress if p["node"]}) == 2


def test_output_is_reproducible() -> None:
    # Binding cycles run on other threads; the report must still be the same on every run.
    runs = []
    for _ in range(3):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["simulate", "-o", "json", "--generate", "nodes=40,pods=300"]) == 0
        doc = json.loads(buf.getvalue())
        doc["summary"].pop("seconds")
        runs.append(doc)
    assert runs[0] == runs[1] == runs[2]
