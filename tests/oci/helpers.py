"""Guests and pushes shared by the OCI tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import wasmtime

from tests.wasm.harness import LAST_DIGIT_WAT
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.push import Pushed, push
from wasmsched.wasm.oci.reference import parse

from .conftest import RunningRegistry

# Two different valid modules: a re-push under the same tag changes the digest.
EMPTY_GUEST = bytes(wasmtime.wat2wasm("(module)"))
OTHER_GUEST = bytes(wasmtime.wat2wasm('(module (func (export "f")))'))


def last_digit_wasm() -> bytes:
    return bytes(wasmtime.wat2wasm(LAST_DIGIT_WAT.read_text()))


def options(reg: RunningRegistry, **kw: object) -> OciOptions:
    """Plain HTTP to the test registry with the right credentials, plus kw."""
    base: dict[str, object] = {"plain_http": True, "registry_config": reg.config_json}
    base.update(kw)
    return OciOptions(**base)  # type: ignore[arg-type]


def push_module(reg: RunningRegistry, repo_tag: str, module: bytes = EMPTY_GUEST, **kw: object) -> Pushed:
    return push(parse(reg.ref(repo_tag)), module, "guest.wasm", options(reg), **kw)  # type: ignore[arg-type]


def run_oras(oras: Path, reg: RunningRegistry, *argv: str, cwd: Path | None = None) -> str:
    proc = subprocess.run([str(oras), *argv, "--plain-http", "--registry-config", str(reg.config_json)],
                          capture_output=True, text=True, cwd=cwd, check=False, timeout=60)
    assert proc.returncode == 0, f"oras {' '.join(argv)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout
