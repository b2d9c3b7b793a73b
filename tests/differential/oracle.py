"""The kube-oracle process (tools/kube-oracle): kube-scheduler 1.37.2's own framework answering
differential cases, one JSON line per request, in a long-lived `kube-oracle serve`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from wasmsched.plugins.registry import in_tree_registry

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tools" / "kube" / "build.sh"
ENV_BINARY = "WASMSCHED_KUBE_ORACLE"


class OracleError(RuntimeError):
    pass


def oracle_binary() -> Path:
    """$WASMSCHED_KUBE_ORACLE, or the binary `make kube-oracle` built into the cache."""
    if os.environ.get(ENV_BINARY):
        path = Path(os.environ[ENV_BINARY])
        if not path.is_file():
            raise OracleError(f"${ENV_BINARY}: {path}: no such file")
        return path
    if not BUILD_SCRIPT.is_file():
        raise OracleError(f"kube-oracle: set ${ENV_BINARY} (no {BUILD_SCRIPT} to find the cached build)")
    out = subprocess.run([str(BUILD_SCRIPT), "--print-dir", "kube-oracle"], capture_output=True, text=True,
                         check=False)
    for line in out.stdout.splitlines():
        name, _, built = line.partition("=")
        if name == "kube-oracle" and Path(built).is_file():
            return Path(built)
    raise OracleError(f"kube-oracle is not built: run `make kube-oracle`\n{out.stderr.strip()}")


class Oracle:
    """One `kube-oracle serve` process; `ask` sends a case and returns kube's result document."""

    def __init__(self, binary: Path | None = None, verbosity: int = 0) -> None:
        self.binary = binary or oracle_binary()
        self._proc = subprocess.Popen([str(self.binary), "serve", f"-v={verbosity}"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL if verbosity == 0
                                      else None, text=True, bufsize=1)
        self._next_id = 0
        self.plugins = sorted(in_tree_registry())

    def ask(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
            mode: str) -> dict[str, Any]:
        """kube's result document for the case. kube's profiles keep only the plugins wasmsched has
        (its registry; docs/compatibility.md)."""
        self._next_id += 1
        request = {"id": self._next_id, "mode": mode, "config": config, "objects": list(objects),
                   "plugins": self.plugins}
        stdin: IO[str] | None = self._proc.stdin
        stdout: IO[str] | None = self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            code = self._proc.wait(timeout=10)
            raise OracleError(f"kube-oracle exited ({code}) on request {self._next_id}")
        doc: dict[str, Any] = json.loads(line)
        if doc.get("id") != self._next_id:
            raise OracleError(f"kube-oracle answered request {doc.get('id')}, expected {self._next_id}")
        doc.pop("id")
        return doc

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
