"""The bundled WAT example (examples/wasm/last-digit): built with tools/wat2wasm.py, enabled by its
KubeSchedulerConfiguration next to the default plugins, it moves pods to nodes with high last digits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "wasm" / "last-digit"
DEMO = ROOT / "examples" / "clusters" / "demo"
sys.path.insert(0, str(ROOT / "tools"))

import wat2wasm  # noqa: E402 - importable only once tools/ is on sys.path (above)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    wasm = tmp_path / "last_digit.wasm"
    assert wat2wasm.main([str(EXAMPLE / "last_digit.wat"), str(wasm)]) == 0
    cfg = yaml.safe_load((EXAMPLE / "scheduler.yaml").read_text())
    cfg["profiles"][0]["pluginConfig"][0]["args"]["guestURL"] = str(wasm)
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def placements(doc: dict) -> dict[str, str | None]:
    return {p["name"]: p["node"] for p in doc["pods"]}


def test_example_guest_scores_nodes_by_last_digit(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    rc, out, _ = run_cli(capsys, "simulate", "-o", "json", "--explain", "--config", str(config), str(DEMO))
    assert rc == 0
    doc = json.loads(out)
    rc, base_out, _ = run_cli(capsys, "simulate", "-o", "json", str(DEMO))
    base = placements(json.loads(base_out))
    with_wasm = placements(doc)
    # The api pods share node-03 with the defaults; weight 3 x 10 x digit pulls them to node-08.
    assert [base[f"api-{i}"] for i in range(3)] == ["node-03"] * 3
    assert [with_wasm[f"api-{i}"] for i in range(3)] == ["node-08"] * 3
    api0 = next(p for p in doc["pods"] if p["name"] == "api-0")
    assert api0["scores"]["node-08"]["LastDigit"] == 3 * 80
    assert api0["scores"]["node-03"]["LastDigit"] == 3 * 30
    assert doc["summary"]["wasm"]["LastDigit"] == {"created": 1, "discarded": 0, "live": 1, "idle": 1,
                                                   "scheduling": 0, "binding": 0}


@pytest.mark.parametrize("text", ["(module (func", '(module (func (export "f") (result i32)))'])
def test_wat2wasm_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    bad = tmp_path / "bad.wat"
    bad.write_text(text)
    assert wat2wasm.main([str(bad)]) == 2
    assert "bad.wat" in capsys.readouterr().err
    assert not (tmp_path / "bad.wasm").exists()
