"""`wasmsched compare`: the pods it lists as moved, newly placed and no longer placed are exactly those whose
placement differs between two `simulate -o json` runs of the same input; its table and its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import ROOT
from wasmsched.cli.main import main

DEMO = ROOT / "examples" / "clusters" / "demo"
NODENUMBER = ROOT / "examples" / "nodenumber" / "scheduler.yaml"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def placements(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str | None]:
    code, out, _ = cli(capsys, "simulate", "-o", "json", *argv)
    assert code == 0
    return {f"{p['namespace']}/{p['name']}": p["node"] if p["phase"] in ("Scheduled", "Running") else None
            for p in json.loads(out)["pods"]}


@pytest.mark.parametrize("inputs", [[str(DEMO)], ["--generate", "nodes=30,pods=200"]])
def test_moved_pods_are_those_placed_differently(capsys: pytest.CaptureFixture[str], nodenumber_wasm: Path,
                                                 inputs: list[str]) -> None:
    before = placements(capsys, *inputs)
    after = placements(capsys, "--config", str(NODENUMBER), *inputs)
    code, out, _ = cli(capsys, "compare", "--config", str(NODENUMBER), *inputs, "-o", "json")
    assert code == 0
    diff: dict[str, Any] = json.loads(out)
    moved = {k: [a, after[k]] for k, a in before.items() if a and after[k] and a != after[k]}
    assert moved, "the scenario must move pods"
    assert {m[0]: m[1:] for m in diff["moved"]} == moved
    assert {m[0] for m in diff["newlyPlaced"]} == {k for k, a in before.items() if not a and after[k]}
    assert {m[0] for m in diff["newlyUnschedulable"]} == {k for k, a in before.items() if a and not after[k]}
    assert [r["config"] for r in diff["runs"]] == [None, str(NODENUMBER)]


def test_compare_table_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str], nodenumber_wasm: Path) -> None:
    page = tmp_path / "c.html"
    code, out, _ = cli(capsys, "compare", "--config", str(NODENUMBER), str(DEMO), "--report", str(page))
    assert code == 0
    assert out.splitlines()[:2] == ["baseline: (defaults)", f"candidate: {NODENUMBER}"]
    assert "4 pods moved" in out and "0 pods no longer placed" in out
    assert "balance: % requested across nodes" in out and "zone-a" in out
    assert page.stat().st_size > 0


def test_two_configurations_are_compared_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    most = tmp_path / "most.yaml"
    most.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
""")
    code, out, _ = cli(capsys, "compare", "--config", str(most), "--config", str(most), str(DEMO), "-o", "json")
    assert code == 0
    diff = json.loads(out)
    assert diff["moved"] == [] and diff["newlyPlaced"] == [] and diff["newlyUnschedulable"] == []
    code, out, _ = cli(capsys, "compare", "--config", str(most), str(DEMO), "-o", "json")
    assert code == 0 and json.loads(out)["moved"]


@pytest.mark.parametrize("configs", [[], ["a.yaml", "b.yaml", "c.yaml"]])
def test_compare_needs_one_or_two_configurations(capsys: pytest.CaptureFixture[str], configs: list[str]) -> None:
    code, out, err = cli(capsys, "compare", *(a for c in configs for a in ("--config", c)), str(DEMO))
    assert code == 2 and out == ""
    assert err == "error: compare needs --config CANDIDATE, or --config BASELINE --config CANDIDATE\n"
