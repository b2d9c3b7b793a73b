"""`wasmsched cache info|clear` and `wasmsched --version`: results on stdout, nothing else there."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import wasmtime

from wasmsched.cli.main import main
from wasmsched.wasm.engine import Runtime

GUESTS = [bytes(wasmtime.wat2wasm(f'(module (memory (export "memory") 1 1) (func (export "filter") (result i32) '
                                  f"(i32.const {n})))")) for n in range(2)]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "modules"
    monkeypatch.setenv("WASMSCHED_CACHE_DIR", str(d))
    monkeypatch.setenv("WASMSCHED_CACHE_MAX_BYTES", "64Mi")
    return d


def test_info_on_a_missing_cache(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "info"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"path: {cache_dir}", "entries: 0", "size: 0 bytes (0.0 MiB)",
                                "max size: 67108864 bytes (64.0 MiB)"]
    assert err == ""


def test_info_then_clear(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rt = Runtime()  # the cache of the environment
    for w in GUESTS:
        rt.compile(w)
    sizes = {p: p.stat().st_size for p in cache_dir.glob("*.cwasm")}
    total = sum(sizes.values())
    assert len(sizes) == 2

    assert main(["cache", "info"]) == 0
    out, _ = capsys.readouterr()
    assert f"entries: 2\nsize: {total} bytes (" in out

    assert main(["cache", "clear"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert set(lines[:2]) == {f"removed {p} ({n} bytes)" for p, n in sizes.items()}
    assert lines[2] == f"removed 2 entries, {total} bytes ({total / (1 << 20):.1f} MiB), from {cache_dir}"
    assert err == "" and not any(cache_dir.glob("*.cwasm"))

    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"removed 0 entries, 0 bytes (0.0 MiB), from {cache_dir}\n"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    want = (f"wasmsched {importlib.metadata.version('wasmsched')} "
            f"(wasmtime {importlib.metadata.version('wasmtime')}, kubernetes v1.")
    assert out.startswith(want), out
    assert re.fullmatch(r"wasmsched \S+ \(wasmtime \S+, kubernetes v1\.\d+\.\d+\)\n", out), out
