"""docs/abi.md §16.2: hot reload. With reloadInterval set, a changed guestURL (a file, the symlink swap of a
ConfigMap volume, an http URL) replaces the running module without a restart: new scheduling cycles run
the new module, a pod pinned to an old instance finishes its cycles there, and the old module is freed
once no pod holds it. A reload that fails keeps the running module and is reported once."""

from __future__ import annotations

import gc
import http.server
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import wasmtime

from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin, register_wasm_plugins
from wasmsched.wasm.reload import RELOAD_FAILED_REASON

from .harness import WasmHandle

PLUGIN = "wasm"
NODE_ADD = "\\01\\00\\00\\00\\01\\00\\00\\00"
NODE_DELETE = "\\01\\00\\00\\00\\04\\00\\00\\00"
LEASE = {"Kind": "Lease", "APIVersion": "coordination.k8s.io/v1", "Name": "kube-scheduler", "Namespace": "kube-system"}


def guest(version: int, *, events: str = NODE_ADD, postbind: bool = True, start: str = "") -> bytes:
    """A guest scoring every node `version`; postbind counts its calls in the global `postbinds`."""
    return bytes(wasmtime.wat2wasm(f"""
(module
  (import "k8s.io/scheduler" "result.cluster_events" (func $cluster_events (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{events}")
  (global $postbinds (export "postbinds") (mut i32) (i32.const 0))
  (func (export "enqueue") (call $cluster_events (i32.const 0) (i32.const 8)))
  (func (export "prefilter") (result i32) (i32.const 0))
  (func (export "score") (result i64) (i64.shl (i64.const {version}) (i64.const 32)))
  {'(func (export "postbind") (global.set $postbinds (i32.add (global.get $postbinds) (i32.const 1))))'
   if postbind else ''}
  {start}
)"""))


@pytest.fixture
def handle() -> WasmHandle:
    h = WasmHandle()
    h.metrics = SchedulerMetrics()
    return h


def load(path: str, handle: WasmHandle, runtime: Runtime, interval: str = "1h", **args: Any) -> WasmPlugin:
    # A long interval: the tests call reloader.check() themselves (one test runs the poller).
    return new_wasm_plugin(PLUGIN, {"guestURL": path, "reloadInterval": interval, **args}, handle,
                           runtime=runtime, event_object=LEASE)


def write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def score(plugin: WasmPlugin, pod_name: str) -> int:
    node = NodeInfo(make_node("n1").obj())
    s, st = plugin.score(CycleState(), make_pod(pod_name).obj(), node)
    assert st is None, st
    return s


def reloads(handle: WasmHandle, result: str) -> float:
    assert handle.metrics is not None
    return handle.metrics.registry.get_sample_value("wasmsched_wasm_reloads_total",
                                                    {"plugin": PLUGIN, "result": result}) or 0.0


def test_new_cycles_get_the_new_module_pinned_pods_finish_on_the_old(process_runtime: Runtime, tmp_path: Path,
                                                                       handle: WasmHandle) -> None:
    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = load(str(path), handle, process_runtime)
    assert plugin.reloader is not None
    node = NodeInfo(make_node("n1").obj())
    try:
        # a: its scheduling cycle is under way on module 1; b: its binding cycle is.
        a, b = make_pod("a").obj(), make_pod("b").obj()
        plugin.pre_filter(CycleState(), b, [node])
        plugin.scheduling_cycle_done(b, True)
        plugin.pre_filter(CycleState(), a, [node])
        old_instances = [weakref.ref(i) for i in plugin.pool.instances()]
        old_compiled = weakref.ref(plugin.compiled)

        assert plugin.reloader.check() is None  # nothing changed
        write(path, guest(2))
        assert plugin.reloader.check() == "success"
        assert reloads(handle, "success") == 1

        c = make_pod("c").obj()
        plugin.pre_filter(CycleState(), c, [node])
        assert plugin.score(CycleState(), c, node) == (2, None)  # a new cycle: the new module
        assert plugin.score(CycleState(), a, node) == (1, None)  # a's cycle began on the old one
        assert plugin.versions.draining() == 1
        plugin.scheduling_cycle_done(a, False)
        (old_version,) = [v for v in plugin.versions.all() if v is not plugin.versions.current]
        held = old_version.pool.pinned_instance_id(get_pod_key(b))
        assert held is not None and held in [r().id for r in old_instances if r() is not None]  # type: ignore[union-attr]
        plugin._no_result_call("postbind", b, "n1")  # b's PostBind, before its cycle releases the instance
        assert int(old_version.pool.instance(held).get_global("postbinds")) == 1  # type: ignore[union-attr]
        del old_version
        plugin.binding_cycle_done(b)
        # Nobody holds the old module: its pool is closed and its instances are freed.
        assert plugin.versions.draining() == 0
        gc.collect()
        assert all(r() is None for r in old_instances)
        assert old_compiled() is None
        assert plugin.counters()["live"] == 1
        assert score(plugin, "d") == 2
    finally:
        plugin.close()


def test_configmap_symlink_swap_is_seen(process_runtime: Runtime, tmp_path: Path, handle: WasmHandle) -> None:
    """A ConfigMap volume: guest.wasm -> ..data/guest.wasm, ..data -> ..<timestamp>; an update writes a new
    directory and renames a new ..data link over the old one. Same size and modification time on purpose."""
    vol = tmp_path / "vol"
    vol.mkdir()
    one, two = guest(1), guest(2)
    assert len(one) == len(two)
    for name, data in (("..2026_12_05_1", one), ("..2026_12_05_2", two)):
        (vol / name).mkdir()
        (vol / name / "guest.wasm").write_bytes(data)
        os.utime(vol / name / "guest.wasm", ns=(1_700_000_000_000_000_000,) * 2)
    os.symlink("..2026_12_05_1", vol / "..data")
    os.symlink("..data/guest.wasm", vol / "guest.wasm")
    plugin = load(str(vol / "guest.wasm"), handle, process_runtime)
    assert plugin.reloader is not None
    try:
        assert score(plugin, "p") == 1
        os.symlink("..2026_12_05_2", vol / "..data_tmp")
        os.replace(vol / "..data_tmp", vol / "..data")
        assert plugin.reloader.check() == "success"
        assert score(plugin, "q") == 2
    finally:
        plugin.close()


class _Guests(http.server.BaseHTTPRequestHandler):
    body = b""
    etag = '"1"'
    conditional: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).conditional.append(self.headers.get("If-None-Match"))
        if self.headers.get("If-None-Match") == self.etag:
            self.send_response(304)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("ETag", self.etag)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_guest() -> Iterator[tuple[str, type[_Guests]]]:
    class Handler(_Guests):
        conditional: ClassVar[list[str | None]] = []

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/guest.wasm", Handler
    finally:
        server.shutdown()
        server.server_close()


def test_http_url_is_polled_with_its_etag(process_runtime: Runtime, handle: WasmHandle,
                                          http_guest: tuple[str, type[_Guests]]) -> None:
    url, server = http_guest
    server.body, server.etag = guest(1), '"v1"'
    plugin = load(url, handle, process_runtime)
    assert plugin.reloader is not None
    try:
        assert plugin.reloader.check() is None
        assert server.conditional == [None, '"v1"']  # the first GET, then a conditional one answered 304
        server.body, server.etag = guest(2), '"v2"'
        assert plugin.reloader.check() == "success"
        assert score(plugin, "p") == 2
    finally:
        plugin.close()


BAD_RELOADS = {
    "compile error": (b"\0asm\x01\0\0\0\x99garbage", "wasm: "),
    "_start traps": (guest(2, start='(func (export "_start") unreachable)'), "unreachable"),
    "wrong exports": (guest(2, postbind=False), "wasm: the new module exports enqueue,prefilter,score, the running "
                                                "one enqueue,postbind,prefilter,score: a plugin's extension points "
                                                "are fixed when the scheduler starts"),
    "events changed": (guest(2, events=NODE_DELETE), "EventsToRegister (Node/4) differ from the running one's "
                                                     "(Node/1): the queue's event registrations are fixed when the "
                                                     "scheduler starts; restart it to take the new ones"),
}


@pytest.mark.parametrize("case", list(BAD_RELOADS))
def test_failed_reload_keeps_the_running_module(process_runtime: Runtime, tmp_path: Path, handle: WasmHandle,
                                                caplog: pytest.LogCaptureFixture, case: str) -> None:
    data, reason = BAD_RELOADS[case]
    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = load(str(path), handle, process_runtime)
    assert plugin.reloader is not None
    try:
        write(path, data)
        with caplog.at_level(logging.INFO, logger="wasmsched.wasm"):
            assert plugin.reloader.check() == "failure"
            assert plugin.reloader.check() is None  # the same module is not tried again
        lines = [r.getMessage() for r in caplog.records if "Reload of wasm plugin failed" in r.getMessage()]
        assert len(lines) == 1 and f'plugin="{PLUGIN}"' in lines[0] and reason in lines[0], lines
        (event,) = [e for e in handle.recorder.events if e["reason"] == RELOAD_FAILED_REASON]
        assert event["type"] == "Warning" and event["regarding"] == LEASE and reason in event["note"]
        assert reloads(handle, "failure") == 1
        assert score(plugin, "p") == 1  # still the running module
        assert plugin.counters()["live"] >= 1 and plugin.versions.draining() == 0
        write(path, guest(3))  # the next change is tried
        assert plugin.reloader.check() == "success"
        assert score(plugin, "q") == 3
    finally:
        plugin.close()


def test_guest_sha256_pin_refuses_another_module(process_runtime: Runtime, tmp_path: Path,
                                                 handle: WasmHandle) -> None:
    import hashlib

    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = load(str(path), handle, process_runtime, guestSHA256=hashlib.sha256(guest(1)).hexdigest())
    assert plugin.reloader is not None
    try:
        write(path, guest(2))
        assert plugin.reloader.check() == "failure"
        assert "guestSHA256 mismatch" in handle.recorder.events[-1]["note"]
        assert score(plugin, "p") == 1
    finally:
        plugin.close()


def test_the_poller_reloads_on_its_own(process_runtime: Runtime, tmp_path: Path, handle: WasmHandle) -> None:
    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = load(str(path), handle, process_runtime, interval="20ms")
    try:
        write(path, guest(2))
        deadline = time.monotonic() + 10
        while score(plugin, "p") != 2:
            assert time.monotonic() < deadline, "not reloaded within 10 s"
            time.sleep(0.02)
    finally:
        plugin.close()
    assert plugin.reloader is not None and not plugin.reloader._thread.is_alive()  # type: ignore[union-attr]


def test_without_reload_interval_nothing_polls(process_runtime: Runtime, tmp_path: Path, handle: WasmHandle) -> None:
    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = new_wasm_plugin(PLUGIN, {"guestURL": str(path)}, handle, runtime=process_runtime)
    try:
        assert plugin.reloader is None
    finally:
        plugin.close()


def test_repeated_reloads_free_every_old_module(process_runtime: Runtime, tmp_path: Path,
                                                handle: WasmHandle) -> None:
    """Memory back to the baseline: after 20 reloads with pods scheduled in between, one module's instances
    are alive, and no old module's objects are left (they are collected)."""
    path = tmp_path / "guest.wasm"
    path.write_bytes(guest(1))
    plugin = load(str(path), handle, process_runtime)
    assert plugin.reloader is not None
    node = NodeInfo(make_node("n1").obj())
    refs = []
    plugin.events_to_register()  # as the scheduler does at start
    try:
        for v in range(2, 22):
            p = make_pod(f"p{v}").obj()
            plugin.pre_filter(CycleState(), p, [node])
            refs.append(weakref.ref(plugin.compiled))
            write(path, guest(v))
            assert plugin.reloader.check() == "success"
            assert plugin.score(CycleState(), p, node) == (v - 1, None)  # p's cycle stays on its module
            plugin.scheduling_cycle_done(p, False)
        gc.collect()
        assert plugin.versions.draining() == 0
        assert [r for r in refs if r() is not None] == []
        c = plugin.counters()
        assert c["live"] == 1 and c["created"] == 21, c
    finally:
        plugin.close()


def test_reload_in_a_simulation(process_runtime: Runtime, tmp_path: Path) -> None:
    """The configuration's reloadInterval, through register_wasm_plugins: pods scheduled after a reload get
    the new module's scores (node-2 wins under v2, node-1 under v1)."""
    wat = """(module
  (import "k8s.io/scheduler" "currentNodeName" (func $node (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "score") (result i64)
    (drop (call $node (i32.const 0) (i32.const 64)))
    (if (result i64) (i32.eq (i32.load8_u (i32.const 5)) (i32.const WANT)) (then (i64.const 0x64_0000_0000))
      (else (i64.const 0)))))"""
    path = tmp_path / "guest.wasm"
    path.write_bytes(wasmtime.wat2wasm(wat.replace("WANT", str(ord("1")))))
    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN, "weight": 100}]}},
                      "pluginConfig": [{"name": PLUGIN, "args": {"guestURL": str(path), "reloadInterval": "1h"}}]}],
    })
    registry = in_tree_registry()
    register_wasm_plugins(registry, cfg)
    sim = Simulation(cfg, registry)
    try:
        nodes = [make_node(f"node-{i}").capacity(cpu="8", memory="16Gi", pods="110").obj() for i in (1, 2)]
        sim.apply({"Node": nodes, "Pod": [make_pod("before").req(cpu="100m").obj()]})
        assert [p.node for p in sim.run_until_quiet().pods] == ["node-1"]
        write(path, bytes(wasmtime.wat2wasm(wat.replace("WANT", str(ord("2"))))))
        (plugin,) = [pl for f in sim.scheduler.profiles.values() for n, pl in f.plugins_map.items() if n == PLUGIN]
        assert isinstance(plugin, WasmPlugin) and plugin.reloader is not None
        assert plugin.reloader.check() == "success"
        sim.apply({"Pod": [make_pod("after").req(cpu="100m").obj()]})
        assert {p.name: p.node for p in sim.run_until_quiet().pods} == {"before": "node-1", "after": "node-2"}
        (event,) = [e for e in sim.cluster.events if e.reason == "WasmPluginReloaded"]
        assert event.regarding == "kube-system/kube-scheduler"
    finally:
        sim.scheduler.close()
