"""A KubeSchedulerConfiguration given as a PATH (without --config) is refused with a hint, not skipped:
a run on the default plugins would give other placements without saying so (cli/simulate.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"


def test_a_configuration_as_path_is_refused_with_a_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(CONFIG)
    (tmp_path / "nodes.yaml").write_text(NODE)
    rc, out, err = run_cli(capsys, "simulate", str(cfg), str(tmp_path / "nodes.yaml"))
    assert (rc, out) == (2, "")
    assert err == (f"error: {cfg}: document 1: a KubeSchedulerConfiguration is not a manifest to schedule; "
                   f"to use it, pass it as --config {cfg}\n")


def test_the_config_file_inside_a_path_directory_is_left_out_quietly(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(CONFIG)
    (tmp_path / "nodes.yaml").write_text(NODE)
    rc, _, err = run_cli(capsys, "simulate", "--config", str(cfg), str(tmp_path))
    assert (rc, err) == (0, "")
