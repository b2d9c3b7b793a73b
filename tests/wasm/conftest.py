"""Fixtures shared by the wasm tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import wasmsched.wasm.engine as wasm_runtime
from wasmsched.wasm.engine import Runtime


@pytest.fixture(scope="module")
def process_runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    """The process runtime that plugin factories without an explicit runtime use (simulate,
    register_wasm_plugins), swapped for one whose compile cache is a temporary directory."""
    rt = Runtime(cache_dir=tmp_path_factory.mktemp("wasm-cache"))
    saved = wasm_runtime._default
    wasm_runtime._default = rt
    try:
        yield rt
    finally:
        wasm_runtime._default = saved
