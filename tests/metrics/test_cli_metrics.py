"""`wasmsched simulate --metrics FILE`: the exposition text of the run, written at the end."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.helpers import run_cli


def test_simulate_writes_the_exposition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "metrics.txt"
    rc, stdout, err = run_cli(capsys, "simulate", "--generate", "nodes=5,pods=12", "--metrics", str(out))
    assert rc == 0, err
    assert "12 scheduled" in stdout
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(out.read_text()) for s in f.samples}
    assert samples[("scheduler_schedule_attempts_total",
                    (("profile", "default-scheduler"), ("result", "scheduled")))] == 12
    assert samples[("scheduler_cache_size", (("type", "nodes"),))] == 5


def test_simulate_without_the_flag_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli(capsys, "simulate", "--generate", "nodes=2,pods=2")
    assert rc == 0, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where,message", [
    ("missing/metrics.txt", "is not a directory"),
    (".", "is a directory"),
])
def test_an_unwritable_metrics_file_is_refused_before_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               where: str, message: str) -> None:
    target = tmp_path / where
    rc, stdout, err = run_cli(capsys, "simulate", "--generate", "nodes=2,pods=2", "--metrics", str(target))
    assert rc == 2
    assert stdout == ""
    assert f"error: --metrics {target}: " in err and message in err
