"""Shared by the tests that build Go guests (examples/, tests/go/, the tutorial) and load them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Compiling a 17 MB Go guest takes seconds; its artifact is keyed by the module's sha256 and wasmtime's
# version, so a cache kept across runs is safe.
MODULE_CACHE = ROOT / ".cache" / "wasm-modules"
# As the Makefile's GO_WASM_BUILD: reproducible bytes keep the module cache hitting.
GO_WASM_BUILD = ["go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false"]


def run_ok(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Runs argv in cwd (env added to the environment); fails the test with its output unless it succeeds."""
    proc = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{' '.join(argv)} in {cwd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def build_go_guest(guest_dir: Path, out: Path) -> None:
    run_ok([*GO_WASM_BUILD, "-o", str(out), "."], guest_dir, {"GOOS": "wasip1", "GOARCH": "wasm"})
