"""docs/abi.md §16.2 for oci://: a tag that moves to another manifest reloads the plugin; a digest never polls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.wasm.harness import WasmHandle
from tests.wasm.test_hot_reload import guest, score
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

from .conftest import RunningRegistry
from .helpers import push_module


@pytest.fixture
def handle() -> WasmHandle:
    h = WasmHandle()
    h.metrics = SchedulerMetrics()
    return h


def load(url: str, reg: RunningRegistry, handle: WasmHandle, runtime: Runtime) -> WasmPlugin:
    # A long interval: the test calls reloader.check() itself.
    return new_wasm_plugin("wasm", {"guestURL": url, "reloadInterval": "1h", "plainHTTP": True,
                                    "registryConfig": str(reg.config_json)}, handle, runtime=runtime)


def test_moved_tag_reloads(own_oci_registry: RunningRegistry, oci_cache: Path, process_runtime: Runtime,
                           handle: WasmHandle) -> None:
    push_module(own_oci_registry, "reload/x:v1", guest(1))
    plugin = load(own_oci_registry.ref("reload/x:v1"), own_oci_registry, handle, process_runtime)
    assert plugin.reloader is not None
    try:
        assert score(plugin, "a") == 1
        assert plugin.reloader.check() is None  # the tag still points to the same manifest
        push_module(own_oci_registry, "reload/x:v1", guest(2))
        assert plugin.reloader.check() == "success"
        assert score(plugin, "b") == 2
        own_oci_registry.stop()
        # The registry gone: the running module is kept, the check reports nothing new.
        assert plugin.reloader.check() is None
        assert score(plugin, "c") == 2
    finally:
        plugin.close()


def test_digest_reference_is_not_polled(own_oci_registry: RunningRegistry, oci_cache: Path,
                                        process_runtime: Runtime, handle: WasmHandle) -> None:
    pushed = push_module(own_oci_registry, "reload/y:v1", guest(1))
    plugin = load(own_oci_registry.ref(f"reload/y@{pushed.manifest_digest}"), own_oci_registry, handle,
                  process_runtime)
    assert plugin.reloader is not None
    try:
        own_oci_registry.stop()
        assert plugin.reloader.check() is None  # no request: a stopped registry is not even noticed
        assert plugin.reloader._source_error is None
    finally:
        plugin.close()
