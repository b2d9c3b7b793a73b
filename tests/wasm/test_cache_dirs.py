"""Where the compiled-module cache and the OCI blob cache live: their own variable when set, else under
$XDG_CACHE_HOME, else under ~/.cache (util/files.cache_dir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasmsched.wasm import module_cache
from wasmsched.wasm.oci import store


@pytest.mark.parametrize(("mod", "env", "name"), [(module_cache, "WASMSCHED_CACHE_DIR", "modules"),
                                                  (store, "WASMSCHED_OCI_CACHE_DIR", "oci")])
def test_cache_directory(mod: object, env: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default_cache_dir = mod.default_cache_dir  # type: ignore[attr-defined]
    monkeypatch.delenv(env, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "wasmsched" / name
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "wasmsched" / name
    monkeypatch.setenv(env, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
