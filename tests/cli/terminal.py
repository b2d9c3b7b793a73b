"""Runs `wasmsched` in a child process whose stdout and stderr are a pseudo-terminal, as a user's
shell runs it, and returns everything the terminal received (with its \r\n line ends)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Only bounds a failing test on a loaded machine.
ENDED_WITHIN = 120.0


def run_on_terminal(argv: list[str], env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """(exit code, the terminal's output) of `python -m wasmsched ARGV` with a terminal as stdout and stderr."""
    controller, terminal = os.openpty()
    # A colour terminal as most users have, whatever the suite's own environment says.
    child_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    child_env.update({"PYTHONPATH": str(ROOT), "TERM": "xterm", **(env or {})})
    try:
        proc = subprocess.Popen([sys.executable, "-m", "wasmsched", *argv], stdin=subprocess.DEVNULL,
                                stdout=terminal, stderr=terminal, env=child_env, cwd=ROOT,
                                preexec_fn=default_sigint)  # noqa: PLW1509 - only resets a signal disposition
    finally:
        os.close(terminal)
    out = bytearray()
    try:
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal's last descriptor
                break
            if not chunk:
                break
            out += chunk
        code = proc.wait(ENDED_WITHIN)
    finally:
        os.close(controller)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, out.decode()


def default_sigint() -> None:
    """In the child: SIGINT's default action, even when the suite runs with SIGINT ignored (a background
    job of a non-interactive shell does, and exec keeps an ignored signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
