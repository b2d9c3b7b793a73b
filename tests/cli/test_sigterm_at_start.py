"""A SIGTERM that comes while the process is still starting (Python imports `run`'s modules for about a
second, after the first 80 ms in which the interpreter starts): `run` stops cleanly on it, exit 0, as it does
a minute later; any other subcommand is ended by it. The child sends itself the SIGTERM as its arguments
are parsed, where the subcommand's modules are imported."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cli.terminal import ENDED_WITHIN, ROOT

CHILD = """
import os, signal, sys
from wasmsched.cli import main

build_parser = main.build_parser

def signalled_while_parsing():
    os.kill(os.getpid(), signal.SIGTERM)
    return build_parser()

main.build_parser = signalled_while_parsing
sys.exit(main.main(sys.argv[1:]))
"""


def _started(argv: list[str]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=ENDED_WITHIN, check=False)
    return proc.returncode, proc.stderr


def _kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    # an address nothing listens on: the run stops before it needs the server
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }))
    return path


def test_run_stopped_while_it_starts_exits_cleanly(tmp_path: Path) -> None:
    code, err = _started(["-v", "2", "run", "--kubeconfig", str(_kubeconfig(tmp_path)), "--secure-port", "0",
                          "--leader-elect=false"])
    assert code == 0, err
    assert '"Received signal; shutting down" signal="SIGTERM"' in err
    assert "Traceback" not in err


def test_another_subcommand_is_still_ended_by_it() -> None:
    code, err = _started(["simulate", "--generate", "nodes=100,pods=20000"])
    assert code == -signal.SIGTERM, err
