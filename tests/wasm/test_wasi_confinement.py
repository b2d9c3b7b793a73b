"""Confinement: every WASI preview 1 function a guest may import, called from a Filter, and the answer it gets
(docs/wasm-host.md's table, which this test reads and compares). A guest reaching for files (path_open of
/proc/self/environ on the descriptor a first preopened directory would have), sockets, the environment or
signals gets an errno and nothing else; proc_exit ends the call (tests/wasm/test_conformance_loading.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.abi import WASI_FUNCTIONS, WASI_MODULE

DOC = Path(__file__).resolve().parents[2] / "docs" / "wasm-host.md"
ERRNO = {0: "SUCCESS", 8: "BADF", 21: "FAULT", 28: "INVAL", 52: "NOSYS", 58: "NOTSUP", 70: "SPIPE"}
PATH = b"/proc/self/environ"
PATH_AT, IOVEC_AT, SUBSCRIPTION_AT, OUT_AT, RESULTS_AT = 0x100, 0x300, 0x400, 0x800, 0x1000
NOT_CALLED = "proc_exit"  # it ends the call


def on_descriptor(name: str) -> bool:
    return name.startswith(("fd_", "path_", "sock_"))


def args(name: str, params: str, fd: int) -> str:
    """Operands that are valid memory everywhere (so an errno is about the request, not a fault)."""
    special = {
        "fd_write": [fd, IOVEC_AT, 1, OUT_AT],
        "fd_read": [fd, IOVEC_AT, 1, OUT_AT],
        "poll_oneoff": [SUBSCRIPTION_AT, OUT_AT, 1, OUT_AT + 64],  # one clock subscription of 0 ns
        "proc_raise": [9],  # SIGKILL
        "clock_res_get": [0, OUT_AT], "clock_time_get": [0, 0, OUT_AT],
        "path_open": [fd, 0, PATH_AT, len(PATH), 0, 0, 0, 0, OUT_AT],
        "random_get": [OUT_AT, 16],
    }
    values = special.get(name) or [fd if k == 0 and on_descriptor(name) else PATH_AT for k in range(len(params))]
    if name in ("path_filestat_get", "path_readlink", "path_create_directory", "path_remove_directory",
                "path_unlink_file"):
        values[-2 if name in ("path_create_directory", "path_remove_directory", "path_unlink_file") else 2] = len(PATH)
    return " ".join(f"(i64.const {v})" if t == "I" else f"(i32.const {v})" for t, v in zip(params, values, strict=True))


def guest() -> str:
    lines = ["(module"]
    for name, params in WASI_FUNCTIONS.items():
        p = " ".join("i64" if c == "I" else "i32" for c in params)
        res = "" if name == NOT_CALLED else " (result i32)"
        lines.append(f'  (import "{WASI_MODULE}" "{name}" (func ${name} {f"(param {p})" if p else ""}{res}))')
    path = "".join(f"\\{b:02x}" for b in PATH)
    lines += ['  (memory (export "memory") 1)', f'  (data (i32.const {PATH_AT}) "{path}")',
              f'  (data (i32.const {IOVEC_AT}) "\\00\\01\\00\\00\\04\\00\\00\\00")',  # iovec: 4 bytes at 0x100
              '  (func (export "filter") (result i32)']
    for k, name in enumerate(WASI_FUNCTIONS):
        if name == NOT_CALLED:
            continue
        for col, fd in enumerate((3, 1)):
            if col and not on_descriptor(name):
                continue
            lines.append(f"    (i32.store (i32.const {RESULTS_AT + 8 * k + 4 * col}) "
                         f"(call ${name} {args(name, WASI_FUNCTIONS[name], fd)}))")
    lines += ["    (i32.const 0)))"]
    return "\n".join(lines)


def observed(tmp_path: Path) -> dict[str, tuple[str, str]]:
    plugin = load(guest(), tmp_path)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    assert plugin.filter(CycleState(), pod, NodeInfo(make_node("n1").obj())) is None
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    mem = inst.read_memory(RESULTS_AT, 8 * len(WASI_FUNCTIONS))
    out = {}
    for k, name in enumerate(WASI_FUNCTIONS):
        if name == NOT_CALLED:
            out[name] = ("ends the call", "")
            continue
        first, second = (int.from_bytes(mem[8 * k + 4 * c:8 * k + 4 * c + 4], "little") for c in (0, 1))
        out[name] = (ERRNO[first], ERRNO[second] if on_descriptor(name) else "")
    return out


def documented() -> dict[str, tuple[str, str]]:
    """docs/wasm-host.md's table: | `name` | answer | answer on stdout |."""
    text = DOC.read_text()
    section = text.split("## WASI preview 1, function by function", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]*?) \| ([^|]*?) \|$", section, re.M)
    return {name: (a.strip().strip("`"), b.strip().strip("`").replace("—", "")) for name, a, b in rows}


def test_every_wasi_function_gets_the_documented_answer_and_nothing_escapes(tmp_path: Path) -> None:
    got = observed(tmp_path)
    assert set(got) == set(WASI_FUNCTIONS)
    # The confinement itself, whatever the table says.
    for name in WASI_FUNCTIONS:
        if name.startswith(("path_", "sock_")):
            assert got[name] == ("BADF", "BADF"), name
    assert got["environ_get"] == ("SUCCESS", "") and got["proc_raise"] == ("NOSYS", "")
    assert got["fd_prestat_get"] == ("BADF", "BADF")
    assert documented() == got
