"""docs/abi.md §13 conformance, Loading (items 1-15): module shape, signatures, imports, guestURL forms,
the SHA-256 pin, instantiation (_initialize/_start, proc_exit, memory limit) and the eager instance.
Also the args decode errors of §9/§10 and the on-disk compile cache of runtime.py."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from tests.wasm.harness import compile_wat, load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import loader
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

INSTANTIATE_ERROR = "failed to create a guest pool: wasm: instantiate error: "

FILTER_OK = '(module (memory (export "memory") 1 1) (func (export "filter") (result i32) (i32.const 0)))'


def load_error(source: str, tmp_path: Path, **args: Any) -> str:
    with pytest.raises(WasmLoadError) as ei:
        load(source, tmp_path, **args)
    return str(ei.value)


def load_url(url: str, tmp_path: Path, name: str = "wasm", **args: Any) -> WasmPlugin:
    return new_wasm_plugin(name, {"guestURL": url, **args}, None, runtime=Runtime(cache_dir=tmp_path / "cache"))


def url_error(url: str, tmp_path: Path, **args: Any) -> str:
    with pytest.raises(WasmLoadError) as ei:
        load_url(url, tmp_path, **args)
    return str(ei.value)


def run_filter(plugin: WasmPlugin, node: str = "n1") -> Any:
    pod = make_pod("p").obj()
    ni = NodeInfo(make_node(node).obj())
    plugin.pre_filter(CycleState(), pod, [ni])
    return plugin.filter(CycleState(), pod, ni)


# ----- item 1 -------------------------------------------------------------------------------------


def test_item01_only_memory_is_no_plugin(tmp_path: Path) -> None:
    """Item 1: only `memory` exported -> `wasm: guest does not export any plugin functions`."""
    msg = load_error('(module (memory (export "memory") 1 1))', tmp_path)
    assert msg == "wasm: guest does not export any plugin functions"


def test_item01_other_exports_do_not_count_as_plugin_functions(tmp_path: Path) -> None:
    """Item 1 (§2 other exports ignored): malloc, free, _start, _initialize and globals are no plugin functions."""
    src = """(module (memory (export "memory") 1 1)
      (global (export "g") (mut i32) (i32.const 0))
      (func (export "malloc") (param i32) (result i32) (i32.const 0))
      (func (export "free") (param i32))
      (func (export "_initialize")) (func (export "_start"))
      (func (export "Filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path) == "wasm: guest does not export any plugin functions"


# ----- item 2 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("src", [
    '(module (func (export "filter") (result i32) (i32.const 0)))',
    '(module (memory 1 1) (func (export "filter") (result i32) (i32.const 0)))',
    '(module (memory (export "mem") 1 1) (func (export "filter") (result i32) (i32.const 0)))',
], ids=["no-memory", "memory-not-exported", "memory-under-another-name"])
def test_item02_filter_without_memory(src: str, tmp_path: Path) -> None:
    """Item 2: `filter` but no exported `memory` -> `wasm: guest doesn't export memory[memory]`."""
    assert load_error(src, tmp_path) == "wasm: guest doesn't export memory[memory]"


def test_item02_memory_named_export_must_be_a_memory(tmp_path: Path) -> None:
    """Item 2: an export named `memory` that is not a memory does not count."""
    src = """(module (memory 1 1) (global (export "memory") i32 (i32.const 0))
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path) == "wasm: guest doesn't export memory[memory]"


# ----- items 3, 4 ---------------------------------------------------------------------------------


def sig_error(name: str, want: str) -> str:
    return f"wasm: guest exports the wrong signature for func[{name}]. should be () -> ({want})"


@pytest.mark.parametrize("func", [
    '(func (export "filter") (result i64) (i64.const 0))',
    '(func (export "filter") (param i32) (result i32) (i32.const 0))',
    '(func (export "filter"))',
    '(func (export "filter") (result i32 i32) (i32.const 0) (i32.const 0))',
], ids=["i64", "param", "no-result", "two-results"])
def test_item03_filter_wrong_signature(func: str, tmp_path: Path) -> None:
    """Item 3: `filter: ()->i64` (and other wrong shapes) -> `...func[filter]. should be () -> (i32)`."""
    src = f'(module (memory (export "memory") 1 1) {func})'
    assert load_error(src, tmp_path) == sig_error("filter", "i32")


def test_item03_filter_export_that_is_not_a_function(tmp_path: Path) -> None:
    """Item 3: a `filter` export that is a global has the wrong signature too."""
    src = '(module (memory (export "memory") 1 1) (global (export "filter") i32 (i32.const 0)))'
    assert load_error(src, tmp_path) == sig_error("filter", "i32")


@pytest.mark.parametrize(("func", "name", "want"), [
    ('(func (export "addpod"))', "addpod", "i32"),
    ('(func (export "removepod"))', "removepod", "i32"),
    ('(func (export "postfilter") (result i32) (i32.const 0))', "postfilter", "i64"),
    ('(func (export "score") (result i32) (i32.const 0))', "score", "i64"),
    ('(func (export "permit") (result i32) (i32.const 0))', "permit", "i64"),
    ('(func (export "unreserve") (result i32) (i32.const 0))', "unreserve", ""),
    ('(func (export "enqueue") (result i32) (i32.const 0))', "enqueue", ""),
], ids=["addpod", "removepod", "postfilter", "score", "permit", "unreserve", "enqueue"])
def test_item04_wrong_signature_texts(func: str, name: str, want: str, tmp_path: Path) -> None:
    """Item 4: `addpod: ()->()` -> `() -> (i32)`; `postfilter: ()->i32` -> `() -> (i64)` (and the other shapes)."""
    src = f'(module (memory (export "memory") 1 1) {func})'
    assert load_error(src, tmp_path) == sig_error(name, want)


# ----- item 5 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("funcs", "first"), [
    # score is declared (and exported) before filter: the report still follows §2's order.
    (['(func (export "score") (result i32) (i32.const 0))', '(func (export "filter") (result i64) (i64.const 0))'],
     "filter"),
    (['(func (export "removepod"))', '(func (export "addpod"))'], "addpod"),
    (['(func (export "postbind") (result i32) (i32.const 0))', '(func (export "score") (result i32) (i32.const 0))',
      '(func (export "enqueue") (result i32) (i32.const 0))'], "enqueue"),
], ids=["filter-score", "addpod-removepod", "enqueue-first"])
def test_item05_first_mismatch_in_abi_order_every_time(funcs: list[str], first: str, tmp_path: Path) -> None:
    """Item 5: wrong `filter` and wrong `score` -> the error names `filter`, every time (§2 order)."""
    src = '(module (memory (export "memory") 1 1) ' + " ".join(funcs) + ")"
    path = compile_wat(src, tmp_path)
    rt = Runtime(cache_dir=tmp_path / "cache")
    for _ in range(10):
        with pytest.raises(WasmLoadError) as ei:
            new_wasm_plugin("wasm", {"guestURL": str(path)}, None, runtime=rt)
        assert str(ei.value).startswith(f"wasm: guest exports the wrong signature for func[{first}]. ")


# ----- item 6 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("imp", "want"), [
    ('(import "k8s.io/scheduler" "no_such" (func (param i32 i32) (result i32)))',
     "wasm: guest imports unknown function k8s.io/scheduler.no_such"),
    ('(import "env" "f" (func))', "wasm: guest imports unknown function env.f"),
    ('(import "k8s.io/api" "node" (func (param i32 i32) (result i32)))',
     "wasm: guest imports k8s.io/api.node with the wrong signature"),
    ('(import "k8s.io/scheduler" "result.status_reason" (func (param i32 i32) (result i32)))',
     "wasm: guest imports k8s.io/scheduler.result.status_reason with the wrong signature"),
    ('(import "wasi_snapshot_preview1" "no_such_call" (func))',
     "wasm: guest imports unknown function wasi_snapshot_preview1.no_such_call"),
    ('(import "env" "g" (global i32))', "wasm: guest imports unsupported global env.g"),
    ('(import "env" "t" (table 1 funcref))', "wasm: guest imports unsupported table env.t"),
], ids=["unknown-scheduler", "env", "node-signature", "setter-with-result", "unknown-wasi", "global", "table"])
def test_item06_bad_imports_are_named(imp: str, want: str, tmp_path: Path) -> None:
    """Item 6: `k8s.io/scheduler.no_such`, `env.f`, `k8s.io/api.node` as (i32,i32)->i32 -> load error naming it."""
    src = f'(module {imp} (memory (export "memory") 1 1) (func (export "filter") (result i32) (i32.const 0)))'
    assert load_error(src, tmp_path) == want


def test_item06_imported_memory_is_a_load_error(tmp_path: Path) -> None:
    """Item 6 (§2 imports): a non-function import (memory) is a load error naming it."""
    src = """(module (import "env" "mem" (memory 1)) (export "memory" (memory 0))
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path) == "wasm: guest imports unsupported memory env.mem"


def test_item06_bad_import_fails_before_guest_code_runs(tmp_path: Path) -> None:
    """Item 6 (§2): imports are checked before any guest code runs (a trapping start section is never reached)."""
    src = """(module (import "env" "f" (func)) (memory (export "memory") 1 1)
      (func $boom unreachable) (start $boom)
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path) == "wasm: guest imports unknown function env.f"


# ----- item 7 and the args decode errors ----------------------------------------------------------


def test_item07_empty_url(tmp_path: Path) -> None:
    """Item 7: empty guestURL -> `wasm: guestURL is required`."""
    assert url_error("", tmp_path) == "wasm: guestURL is required"


def test_item07_windows_path_is_an_unsupported_scheme(tmp_path: Path) -> None:
    """Item 7: `c:\\foo.wasm` -> `wasm: error reading guestURL c:\\foo.wasm: unsupported URL scheme: c`."""
    assert url_error("c:\\foo.wasm", tmp_path) == "wasm: error reading guestURL c:\\foo.wasm: unsupported URL scheme: c"


def test_item07_other_scheme(tmp_path: Path) -> None:
    """Item 7 (§10 fetch): other schemes are errors, e.g. `unsupported URL scheme: ldap`."""
    url = "ldap://example.com/guest.wasm"
    assert url_error(url, tmp_path) == f"wasm: error reading guestURL {url}: unsupported URL scheme: ldap"


def test_item07_missing_file(tmp_path: Path) -> None:
    """Item 7 (§10 fetch): an unreadable path is `wasm: error reading guestURL <url>: ...`."""
    url = str(tmp_path / "nope.wasm")
    assert url_error(url, tmp_path).startswith(f"wasm: error reading guestURL {url}: ")


@pytest.mark.parametrize(("key", "value"), [
    ("guestConfig", 5),
    ("logSeverity", "warning"),
    ("logSeverity", True),
    ("args", "a b"),
    ("args", [1, 2]),
    ("timeout", 100),
    ("timeout", "soon"),
    ("startTimeout", 1.5),
    ("memoryLimitPages", "4096"),
    ("maxInstances", 0),
    ("guestSHA256", "abc"),
])
def test_args_wrong_type_is_a_decode_error(key: str, value: Any, tmp_path: Path) -> None:
    """§9/§10: a wrong type is `failed to decode into <plugin> PluginConfig: <detail>` (no load happens)."""
    path = compile_wat(FILTER_OK, tmp_path)
    msg = url_error(str(path), tmp_path, name="MyWasm", **{key: value})
    assert msg.startswith("failed to decode into MyWasm PluginConfig: "), msg
    assert len(msg) > len("failed to decode into MyWasm PluginConfig: ")


def test_args_guest_url_wrong_type(tmp_path: Path) -> None:
    """§9/§10: guestURL of the wrong type is a decode error naming the plugin."""
    with pytest.raises(WasmLoadError, match=r"^failed to decode into MyWasm PluginConfig: "):
        new_wasm_plugin("MyWasm", {"guestURL": 7}, None, runtime=Runtime(cache_dir=tmp_path / "cache"))


def test_args_unknown_key_is_ignored(tmp_path: Path) -> None:
    """§9: unknown keys only warn; the guest loads."""
    path = compile_wat(FILTER_OK, tmp_path)
    plugin = load_url(str(path), tmp_path, noSuchKey=1)
    assert plugin.counters()["created"] == 1


# ----- item 8 -------------------------------------------------------------------------------------


def test_item08_url_forms_load_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8: `file://rel/g.wasm`, `file:///abs/g.wasm`, `rel/g.wasm`, `/abs/g.wasm` load the same bytes."""
    monkeypatch.chdir(tmp_path)
    path = compile_wat(FILTER_OK, tmp_path / "rel", "g.wasm")
    data = path.read_bytes()
    absolute = str(path.resolve())
    assert absolute.startswith("/")
    urls = ["file://rel/g.wasm", f"file://{absolute}", "rel/g.wasm", absolute]
    rt = Runtime(cache_dir=tmp_path / "cache")
    for url in urls:
        assert fetch_guest(url) == data, url
        plugin = new_wasm_plugin("wasm", {"guestURL": url}, None, runtime=rt)
        assert run_filter(plugin) is None, url
        plugin.close()
    # One module for all four forms: the same bytes, compiled once.
    assert rt.compiled + rt.loaded_from_cache == 1


def test_item08_relative_paths_without_a_config_file_use_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8: with no configuration file (a config built in code), relative paths resolve against the
    working directory; test_simulate_wasm.py covers paths relative to the configuration file."""
    compile_wat(FILTER_OK, tmp_path / "a" / "rel", "g.wasm")
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "b")
    assert url_error("rel/g.wasm", tmp_path).startswith("wasm: error reading guestURL rel/g.wasm: ")
    assert url_error("file://rel/g.wasm", tmp_path).startswith("wasm: error reading guestURL file://rel/g.wasm: ")
    monkeypatch.chdir(tmp_path / "a")
    assert load_url("rel/g.wasm", tmp_path).counters()["created"] == 1


# ----- item 9 -------------------------------------------------------------------------------------


BOMB_BYTES = 16 << 20


@functools.cache
def _gzip_bomb() -> bytes:
    return gzip.compress(bytes(BOMB_BYTES), compresslevel=9)


class _GuestHandler(http.server.BaseHTTPRequestHandler):
    guest = b""

    def do_GET(self) -> None:
        if self.path == "/500":
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/404":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/gz":
            body = gzip.compress(self.guest)
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path in ("/gzbomb", "/gz2"):
            # /gzbomb: 16 MiB of zeros in ~16 KiB; /gz2: the guest as two concatenated gzip members.
            half = len(self.guest) // 2
            body = (_gzip_bomb() if self.path == "/gzbomb"
                    else gzip.compress(self.guest[:half]) + gzip.compress(self.guest[half:]))
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/plain":
            self.send_response(200)
            self.send_header("Content-Length", str(len(self.guest)))
            self.end_headers()
            self.wfile.write(self.guest)
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/gz")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(400)
            self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def guest_server() -> Iterator[tuple[str, bytearray]]:
    guest = wasmtime.wat2wasm(FILTER_OK)
    handler = type("Handler", (_GuestHandler,), {"guest": guest})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", guest
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_item09_http_500(guest_server: tuple[str, bytes], tmp_path: Path) -> None:
    """Item 9: HTTP 500 -> contains `received 500 status code` (§10 fetch text)."""
    base, _ = guest_server
    url = base + "/500"
    msg = url_error(url, tmp_path)
    assert "received 500 status code" in msg
    assert msg == f'wasm: error reading guestURL {url}: received 500 status code from "{url}"'


def test_item09_http_404(guest_server: tuple[str, bytes], tmp_path: Path) -> None:
    """Item 9 (§9): any non-200 is an error."""
    base, _ = guest_server
    assert "received 404 status code" in url_error(base + "/404", tmp_path)


def test_item09_gzip_encoded_200_loads(guest_server: tuple[str, bytes], tmp_path: Path) -> None:
    """Item 9: a gzip-encoded 200 (Content-Encoding: gzip) loads; the decoded bytes are the guest."""
    base, guest = guest_server
    assert fetch_guest(base + "/gz") == guest
    plugin = load_url(base + "/gz", tmp_path)
    assert run_filter(plugin) is None
    assert fetch_guest(base + "/plain") == guest


def test_item09_redirect_is_followed(guest_server: tuple[str, bytes], tmp_path: Path) -> None:
    """Item 9 (§9): http(s) follows redirects."""
    base, guest = guest_server
    assert fetch_guest(base + "/redirect") == guest


def test_item09_sha_pin_applies_to_decoded_bytes(guest_server: tuple[str, bytes], tmp_path: Path) -> None:
    """Items 9/10: the guestSHA256 pin is checked on the fetched, gzip-decoded bytes."""
    base, guest = guest_server
    plugin = load_url(base + "/gz", tmp_path, guestSHA256=hashlib.sha256(guest).hexdigest())
    assert plugin.counters()["created"] == 1


def test_gzip_members_are_all_decoded(guest_server: tuple[str, bytes]) -> None:
    base, guest = guest_server
    assert fetch_guest(base + "/gz2") == guest


def test_gzip_bomb_is_refused_while_inflating(guest_server: tuple[str, bytes],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip body inflating past MAX_GUEST_BYTES fails as soon as it gets there: the host never
    holds the whole inflated body (a 1 GiB bomb used to cost 2 GB before the size check)."""
    base, _ = guest_server
    _gzip_bomb()  # built before measuring
    monkeypatch.setattr(loader, "MAX_GUEST_BYTES", 64 << 10)
    tracemalloc.start()
    try:
        with pytest.raises(WasmLoadError) as e:
            fetch_guest(base + "/gzbomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(e.value) == f"wasm: error reading guestURL {base}/gzbomb: guest is larger than 65536 bytes"
    assert peak < BOMB_BYTES // 4


# A file reporting size 0 that never ends: checked in a child process with its address space capped, so
# a host that reads it whole fails there with MemoryError instead of eating this machine's memory.
_DEV_ZERO_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from wasmsched.wasm import loader
from wasmsched.wasm.errors import WasmLoadError
loader.MAX_GUEST_BYTES = 1 << 20
try:
    loader.fetch_guest(sys.argv[1])
except WasmLoadError as e:
    print(e)
"""


@pytest.mark.parametrize("url", ["/dev/zero", "file:///dev/zero"])
def test_endless_device_is_refused_at_the_limit(url: str) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    proc = subprocess.run([sys.executable, "-c", _DEV_ZERO_CHILD, url], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == f"wasm: error reading guestURL {url}: guest is larger than 1048576 bytes\n"


def test_file_at_the_limit_loads_and_one_byte_more_is_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "g.wasm"
    path.write_bytes(b"\x00asm" + bytes(60))
    monkeypatch.setattr(loader, "MAX_GUEST_BYTES", 64)
    assert len(fetch_guest(str(path))) == 64
    path.write_bytes(b"\x00asm" + bytes(61))
    with pytest.raises(WasmLoadError, match=r": guest is larger than 64 bytes$"):
        fetch_guest(str(path))


# ----- item 10 ------------------------------------------------------------------------------------


def test_item10_wrong_sha256(tmp_path: Path) -> None:
    """Item 10: wrong guestSHA256 -> `wasm: guestSHA256 mismatch for <url>: expected <pin>, got <actual>`."""
    path = compile_wat(FILTER_OK, tmp_path)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    pin = "0" * 64
    msg = url_error(str(path), tmp_path, guestSHA256=pin)
    assert msg.startswith("wasm: guestSHA256 mismatch")
    assert msg == f"wasm: guestSHA256 mismatch for {path}: expected {pin}, got {actual}"


def test_item10_right_sha256_in_upper_case_loads(tmp_path: Path) -> None:
    """Item 10: the right guestSHA256 in upper case loads (case-insensitive)."""
    path = compile_wat(FILTER_OK, tmp_path)
    pin = hashlib.sha256(path.read_bytes()).hexdigest().upper()
    plugin = load_url(str(path), tmp_path, guestSHA256=pin)
    assert run_filter(plugin) is None


# ----- item 11 ------------------------------------------------------------------------------------


def test_item11_start_panics(tmp_path: Path) -> None:
    """Item 11: `_start` printing `panic!` then `unreachable` ->
    `failed to create a guest pool: wasm: instantiate error: panic!\\nwasm error: unreachable...`."""
    msg = load_error("conformance_a/start_panic", tmp_path)
    assert msg.startswith(INSTANTIATE_ERROR + "panic!\nwasm error: unreachable"), msg


def test_item11_trap_without_output_omits_captured_part(tmp_path: Path) -> None:
    """Item 11 (§10 instantiation): with nothing captured the text is just the trap."""
    src = """(module (memory (export "memory") 1 1)
      (func (export "_start") (drop (i32.div_s (i32.const 1) (i32.const 0))))
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path).startswith(INSTANTIATE_ERROR + "wasm error: integer divide by zero")


def test_item11_start_section_trap(tmp_path: Path) -> None:
    """Item 11 (§2 step 2): a trap in the wasm start section is an instantiation error too."""
    src = """(module (memory (export "memory") 1 1) (func $s unreachable) (start $s)
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path).startswith(INSTANTIATE_ERROR + "wasm error: unreachable")


def test_item11_initialize_trap(tmp_path: Path) -> None:
    """Item 11 (§2 step 3): a trap in `_initialize` is an instantiation error."""
    src = """(module (memory (export "memory") 1 1) (func (export "_initialize") unreachable)
      (func (export "filter") (result i32) (i32.const 0)))"""
    assert load_error(src, tmp_path).startswith(INSTANTIATE_ERROR + "wasm error: unreachable")


# ----- item 12 ------------------------------------------------------------------------------------


def test_item12_initialize_runs_before_start(tmp_path: Path) -> None:
    """Item 12: `_initialize` runs, before `_start` (after the start section): order 1, 2, 3."""
    plugin = load("conformance_a/lifecycle_order", tmp_path)
    [inst] = plugin.pool.instances()
    assert inst.get_global("order") == 123
    assert inst.get_global("initialized") == 1


def test_item12_initialize_alone_runs(tmp_path: Path) -> None:
    """Item 12: a WASI reactor (only `_initialize`) is initialized at instantiation."""
    src = """(module (memory (export "memory") 1 1)
      (global $g (export "g") (mut i32) (i32.const 0))
      (func (export "_initialize") (global.set $g (i32.const 7)))
      (func (export "filter") (result i32) (global.get $g)))"""
    plugin = load(src, tmp_path)
    [inst] = plugin.pool.instances()
    assert inst.get_global("g") == 7
    # The guest's state after _initialize is what calls see: filter returns g (7 -> Code(7)).
    st = run_filter(plugin)
    assert st is not None and st.code == 7


def test_item12_every_instance_is_initialized(tmp_path: Path) -> None:
    """Item 12: instances created later (a second pod in binding) also run `_initialize` then `_start`."""
    src = (Path(__file__).resolve().parent.parent / "wat" / "conformance_a" / "lifecycle_order.wat").read_text()
    src = src.replace('(func (export "filter") (result i32) (i32.const 0))',
                      '(func (export "filter") (result i32) (i32.const 0)) (func (export "bind") (result i32) '
                      "(i32.const 0))")
    plugin = load(src, tmp_path)
    p, q = make_pod("p").obj(), make_pod("q").obj()
    plugin.pre_filter(CycleState(), p, [])
    plugin.scheduling_cycle_done(p, True)  # P's instance is now in binding
    plugin.pre_filter(CycleState(), q, [])
    assert plugin.counters()["created"] == 2
    ids = {plugin.pool.pinned_instance_id(get_pod_key(p)), plugin.pool.pinned_instance_id(get_pod_key(q))}
    assert len(ids) == 2
    for iid in ids:
        inst = plugin.pool.instance(iid)  # type: ignore[arg-type]
        assert inst is not None and inst.get_global("order") == 123


# ----- item 13 ------------------------------------------------------------------------------------

PROC_EXIT = """(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1 1)
  (global $after (export "after") (mut i32) (i32.const 0))
  (global $started (export "started") (mut i32) (i32.const 0))
  (func (export "_start") (global.set $started (i32.const 1)) (call $proc_exit (i32.const CODE))
    (global.set $after (i32.const 1)))
  (func (export "filter") (result i32) (i32.const 0)))"""


def test_item13_proc_exit_0_in_start_leaves_instance_usable(tmp_path: Path) -> None:
    """Item 13: `proc_exit(0)` in `_start` only ends `_start`; the instance is usable."""
    plugin = load(PROC_EXIT.replace("CODE", "0"), tmp_path)
    [inst] = plugin.pool.instances()
    assert inst.get_global("started") == 1
    assert inst.get_global("after") == 0  # _start ended at proc_exit
    assert run_filter(plugin) is None
    assert plugin.counters()["discarded"] == 0


def test_item13_proc_exit_0_in_initialize_still_runs_start(tmp_path: Path) -> None:
    """Item 13 (§2 step 3): `proc_exit(0)` in `_initialize` ends only `_initialize`; `_start` still runs."""
    src = """(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
      (memory (export "memory") 1 1)
      (global $i (export "i") (mut i32) (i32.const 0))
      (global $s (export "s") (mut i32) (i32.const 0))
      (func (export "_initialize") (global.set $i (i32.const 1)) (call $proc_exit (i32.const 0)))
      (func (export "_start") (global.set $s (i32.const 1)))
      (func (export "filter") (result i32) (i32.const 0)))"""
    plugin = load(src, tmp_path)
    [inst] = plugin.pool.instances()
    assert (inst.get_global("i"), inst.get_global("s")) == (1, 1)
    assert run_filter(plugin) is None


def test_item13_proc_exit_3_is_a_load_error(tmp_path: Path) -> None:
    """Item 13: `proc_exit(3)` in `_start` -> load error containing `guest exited with code 3`."""
    msg = load_error(PROC_EXIT.replace("CODE", "3"), tmp_path)
    assert "guest exited with code 3" in msg
    assert msg.startswith(INSTANTIATE_ERROR + "wasm error: guest exited with code 3")


# ----- item 14 ------------------------------------------------------------------------------------


def test_item14_memory_min_above_limit_fails_instantiation(tmp_path: Path) -> None:
    """Item 14: memory min > `memoryLimitPages` -> instantiation error."""
    src = '(module (memory (export "memory") 3) (func (export "filter") (result i32) (i32.const 0)))'
    assert load_error(src, tmp_path, memoryLimitPages=2).startswith(INSTANTIATE_ERROR)


def test_item14_memory_min_at_limit_loads(tmp_path: Path) -> None:
    """Item 14: memory min == `memoryLimitPages` is within the limit."""
    src = '(module (memory (export "memory") 2) (func (export "filter") (result i32) (i32.const 0)))'
    plugin = load(src, tmp_path, memoryLimitPages=2)
    assert run_filter(plugin) is None


def test_item14_memory_grow_past_limit_returns_minus_one(tmp_path: Path) -> None:
    """Item 14: `memory.grow` past `memoryLimitPages` -> -1, no trap; within it -> the old size."""
    plugin = load("conformance_a/memory_grow", tmp_path, memoryLimitPages=3)
    pod = make_pod("p").obj()
    ni = NodeInfo(make_node("n1").obj())
    plugin.pre_filter(CycleState(), pod, [ni])
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    inst.set_global("pages", 2)
    assert plugin.filter(CycleState(), pod, ni) is None
    assert inst.get_global("grown") == 1  # 1 -> 3 pages: at the limit
    inst.set_global("pages", 1)
    assert plugin.filter(CycleState(), pod, ni) is None
    assert inst.get_global("grown") == -1  # 3 -> 4 pages: past the limit
    assert inst.memory_pages() == 3
    assert plugin.counters()["discarded"] == 0


# ----- item 15 ------------------------------------------------------------------------------------


def test_item15_one_instance_created_eagerly(tmp_path: Path) -> None:
    """Item 15: after load, `created == 1` (one instance, eagerly; idle)."""
    plugin = load("conformance_a/enqueue_and_filter", tmp_path)
    c = plugin.counters()
    assert c["created"] == 1
    assert (c["live"], c["idle"], c["scheduling"], c["binding"], c["discarded"]) == (1, 1, 0, 0, 0)


def test_item15_events_to_register_does_not_change_pinned_instance(tmp_path: Path) -> None:
    """Item 15: EventsToRegister later changes no pod's pinned instance (it uses an idle or new one)."""
    plugin = load("conformance_a/enqueue_and_filter", tmp_path)
    events = plugin.events_to_register()
    assert len(events) == 1  # from the guest's enqueue, run on the idle instance
    assert plugin.counters()["created"] == 1
    assert plugin.counters()["idle"] == 1

    pod = make_pod("p").obj()
    key = get_pod_key(pod)
    ni = NodeInfo(make_node("n1").obj())
    plugin.pre_filter(CycleState(), pod, [ni])
    pinned = plugin.pool.pinned_instance_id(key)
    assert pinned is not None

    assert len(plugin.events_to_register()) == 1
    assert plugin.pool.pinned_instance_id(key) == pinned
    assert plugin.filter(CycleState(), pod, ni) is None
    assert plugin.pool.pinned_instance_id(key) == pinned

    mine = plugin.pool.instance(pinned)
    assert mine is not None
    assert mine.get_global("filters") == 1
    assert mine.get_global("enqueues") == 1  # only the call made before P pinned it
    others = [i for i in plugin.pool.instances() if i.id != pinned]
    assert [(i.get_global("enqueues"), i.get_global("filters")) for i in others] == [(1, 0)]
    c = plugin.counters()
    assert (c["scheduling"], c["idle"]) == (1, 1)  # the borrowed instance went back to idle


def test_item15_default_events_without_enqueue_leave_pins_alone(tmp_path: Path) -> None:
    """Item 15: without `enqueue`, EventsToRegister is the default list and touches no instance."""
    plugin = load(FILTER_OK, tmp_path)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    pinned = plugin.pool.pinned_instance_id(get_pod_key(pod))
    assert len(plugin.events_to_register()) == 6
    assert plugin.pool.pinned_instance_id(get_pod_key(pod)) == pinned
    assert plugin.counters()["created"] == 1


# ----- compile cache (runtime.py; issue requirement) ----------------------------------------------


def test_second_load_with_fresh_runtime_uses_disk_cache(tmp_path: Path) -> None:
    """The same guest bytes loaded by a fresh Runtime sharing cache_dir are not recompiled."""
    path = compile_wat(FILTER_OK, tmp_path)
    cache = tmp_path / "shared-cache"
    rt1 = Runtime(cache_dir=cache)
    new_wasm_plugin("wasm", {"guestURL": str(path)}, None, runtime=rt1)
    assert (rt1.compiled, rt1.loaded_from_cache) == (1, 0)
    assert any(cache.iterdir())

    rt2 = Runtime(cache_dir=cache)
    plugin = new_wasm_plugin("wasm", {"guestURL": str(path)}, None, runtime=rt2)
    assert rt2.compiled == 0
    assert rt2.loaded_from_cache == 1
    assert run_filter(plugin) is None


def test_same_runtime_compiles_once(tmp_path: Path) -> None:
    """Loading the same bytes twice on one Runtime compiles once (in-memory module cache)."""
    path = compile_wat(FILTER_OK, tmp_path)
    rt = Runtime(cache_dir=tmp_path / "cache")
    new_wasm_plugin("a", {"guestURL": str(path)}, None, runtime=rt)
    new_wasm_plugin("b", {"guestURL": str(path)}, None, runtime=rt)
    assert (rt.compiled, rt.loaded_from_cache) == (1, 0)


def test_stale_cache_entry_is_recompiled(tmp_path: Path) -> None:
    """A corrupt cache file only costs a recompile."""
    path = compile_wat(FILTER_OK, tmp_path)
    cache = tmp_path / "shared-cache"
    new_wasm_plugin("wasm", {"guestURL": str(path)}, None, runtime=Runtime(cache_dir=cache))
    for f in cache.iterdir():
        f.write_bytes(b"not a module")
    rt = Runtime(cache_dir=cache)
    plugin = new_wasm_plugin("wasm", {"guestURL": str(path)}, None, runtime=rt)
    assert (rt.compiled, rt.loaded_from_cache) == (1, 0)
    assert run_filter(plugin) is None


def test_invalid_module_is_a_compile_error(tmp_path: Path) -> None:
    """§10 module: bytes that are not wasm -> `wasm: error compiling guest: ...`."""
    bad = tmp_path / "bad.wasm"
    bad.write_bytes(b"\x00asm\x01\x00\x00\x00garbage")
    assert url_error(str(bad), tmp_path).startswith("wasm: error compiling guest: ")
