"""Ctrl-C during a long `simulate`: the pods so far are reported, marked interrupted, and the exit code is 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.terminal import ENDED_WITHIN, ROOT, default_sigint

# Far longer than the test waits (minutes on 2 cores): the interrupt comes in the middle of it.
LONG_RUN = ["simulate", "--generate", "nodes=100,pods=20000"]


def interrupted_run(extra: list[str]) -> tuple[int, str, str]:
    """Runs LONG_RUN + extra with -v 2, sends SIGINT once the first pod is bound; (code, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "wasmsched", "-v", "2", *LONG_RUN, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            preexec_fn=default_sigint)  # noqa: PLW1509 - only resets a signal disposition
    assert proc.stderr is not None
    try:
        err = []
        for line in proc.stderr:
            err.append(line)
            if "Successfully bound pod" in line:
                proc.send_signal(signal.SIGINT)
                break
        out, rest = proc.communicate(timeout=ENDED_WITHIN)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, "".join(err) + rest


def test_ctrl_c_prints_the_pods_so_far_and_exits_130() -> None:
    code, out, err = interrupted_run(["-o", "json"])
    assert code == 130, err
    assert "Traceback" not in err
    doc = json.loads(out)
    s = doc["summary"]
    assert s["interrupted"] is True
    assert len(doc["pods"]) == 20000  # every pod is reported, decided or not
    assert s["scheduled"] > 0 and s["pending"] > 0
    assert s["scheduled"] + s["unschedulable"] + s["pending"] == 20000
    pending = [p for p in doc["pods"] if p["phase"] == "Pending"]
    assert pending[0]["node"] is None and pending[0]["message"] == "interrupted before it was scheduled"


def test_the_table_says_the_run_was_interrupted() -> None:
    code, out, err = interrupted_run([])
    assert code == 130, err
    last = out.splitlines()[-1]
    assert last.endswith("(interrupted)") and " pending in " in last
    assert "pods not listed (" in out  # 20,000 pods: the long table's rule applies


@pytest.mark.parametrize("flag", ["--out", "--metrics"])
def test_an_interrupted_run_writes_no_files(tmp_path: Path, flag: str) -> None:
    target = tmp_path / "result"
    code, _, err = interrupted_run([flag, str(target), "-o", "json"])
    assert code == 130, err
    assert not target.exists()
