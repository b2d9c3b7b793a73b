"""`wasmsched ... | head`: when stdout's reader goes away, wasmsched stops quietly with the status a shell
reports for a program SIGPIPE ended (141), as Unix tools do, for every subcommand (cli/main.py)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wasmsched.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent.parent


def _spawn(*argv: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "wasmsched", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)


def test_head_c_100_on_simulate_json_exits_141_quietly() -> None:
    # 500 pods make about 250 KB of JSON: more than a pipe holds, so the writer meets the closed pipe.
    proc = _spawn("simulate", "-o", "json", "--generate", "nodes=10,pods=500")
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == cli_main.EXIT_SIGPIPE == 141
    assert head.startswith(b'{"pods":[')
    assert err == ""


def test_a_reader_gone_before_the_first_line_exits_141_quietly() -> None:
    proc = _spawn("cache", "info")
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_a_broken_pipe_elsewhere_is_still_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A socket or a child's pipe that broke is a failure to report, not a reader that went away."""
    def fails(args: argparse.Namespace) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("wasmsched.cli.cache.run_info", fails)
    assert cli_main.main(["cache", "info"]) == 1
    assert "internal error" in capsys.readouterr().err
