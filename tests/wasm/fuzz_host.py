"""The native host (wasmsched/wasm/_host.c) against hostile guests: a guest fuzz run on the host built with
AddressSanitizer and UndefinedBehaviorSanitizer (tools/host_sanitized.py).

The guest is generated from the ABI's tables (wasm/abi.py): it imports every host import of §4.1 and every
WASI preview 1 function, and each export runs an interpreter of `ops` random operations seeded by the
exported global `seed`: an import called with adversarial arguments (0, pointers at, straddling and past the
memory's end, lengths near 2^32, 0x7FFFFFFF and 0x80000000, pointers into a region it fills with such words,
so iovecs, subscriptions and names read from memory are adversarial too, and 64-bit values for WASI's i64
parameters), memory.grow (up to memoryLimitPages, during the call), or a refill of that region. Before each
import it counts the call in the exported global `calls`, so a call that trapped still counts its imports.

The driver runs real `GuestInstance`s of a plugin loaded by the wasm host (real Host handlers, a cluster
with nodes, pods and a waiting pod), calling every export with its per-call values, Filter and Score also
over node lists (`call_nodes`), and keeps using an instance after a trap (the native host must survive
that; the pool would discard it). `handle.run_filter_plugins_with_nominated_pods` runs a second fuzz
plugin's Filter inside the import (re-entrant guest calls), a few levels deep. Some instances are created
from modules whose `_initialize` runs the same interpreter (imports at instantiation).

Every outcome must be a documented one (docs/abi.md §4.2, §10): the call returns, or fails with a
GuestCallError whose kind is a memory fault of a named import, another host-function failure, the
guest's exit, or its timeout; an instantiation fails only as WasmLoadError. Anything else (another
exception, another text) is counted as unexpected, and a sanitizer report or a dead process fails the run.

    python -m tests.wasm.fuzz_host --calls 1000000 [--seed N] [--chunk 100000]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# Where the interpreter's operands point when "valid": the region it fills, and fixed strings.
REGION = 0x100
REGION_MASK = 0x3FFF
STRINGS = 0x6000
STRING_DATA = (b"node-1\0node-2\0{}\0[]\0null\0"
               b'{"namespace":"default","name":"p-0"}\0{"uid":"w-0"}\0{"group":"","version":"v1"}\0')
MEMORY_LIMIT_PAGES = 8
NODES = ("node-1", "node-2", "node-3")


def _wat_type(kinds: str, result: bool) -> str:
    params = " ".join("i64" if k == "I" else "i32" for k in kinds)
    return (f"(param {params})" if params else "") + (" (result i32)" if result else "")


def targets() -> list[tuple[str, str, str, bool]]:
    """Every import the guest calls: (module, name, parameter kinds, has a result)."""
    from wasmsched.wasm.abi import IMPORTS, WASI_FUNCTIONS, WASI_MODULE, WASI_NO_RESULT
    out = [(i.module, i.name, "i" * len(i.params), bool(i.results)) for i in IMPORTS]
    out += [(WASI_MODULE, n, p, n not in WASI_NO_RESULT) for n, p in WASI_FUNCTIONS.items()]
    return out


def guest_wat(init_ops: int = 0, init_seed: int = 1) -> str:
    """The fuzz guest; with init_ops, `_initialize` runs that many operations seeded with init_seed."""
    from wasmsched.wasm.abi import EXPORTS, I64, V2_EXPORTS
    imps = targets()
    lines = ["(module"]
    for k, (mod, name, kinds, res) in enumerate(imps):
        lines.append(f'  (import "{mod}" "{name}" (func $imp{k} {_wat_type(kinds, res)}))')
    data = "".join(f"\\{b:02x}" for b in STRING_DATA)
    lines += [
        '  (memory (export "memory") 2)',
        '  (global $seed (export "seed") (mut i64) (i64.const 1))',
        '  (global $calls (export "calls") (mut i64) (i64.const 0))',
        '  (global $ops (export "ops") (mut i32) (i32.const 32))',
        f'  (data (i32.const {STRINGS}) "{data}")',
        # xorshift64: the op stream is the seed's alone
        "  (func $next (result i64)",
        "    (global.set $seed (i64.xor (global.get $seed) (i64.shl (global.get $seed) (i64.const 13))))",
        "    (global.set $seed (i64.xor (global.get $seed) (i64.shr_u (global.get $seed) (i64.const 7))))",
        "    (global.set $seed (i64.xor (global.get $seed) (i64.shl (global.get $seed) (i64.const 17))))",
        "    (global.get $seed))",
        "  (func $r32 (result i32) (i32.wrap_i64 (i64.shr_u (call $next) (i64.const 16))))",
        "  (func $end (result i32) (i32.shl (memory.size) (i32.const 16)))",
    ]
    # An adversarial i32 operand: 16 shapes picked by the low bits, sized by the high ones.
    shapes = [
        "(i32.const 0)",
        "(i32.shr_u (local.get $r) (i32.const 24))",
        f"(i32.add (i32.const {REGION}) (i32.and (i32.shr_u (local.get $r) (i32.const 8)) (i32.const {REGION_MASK})))",
        f"(i32.add (i32.const {REGION}) (i32.and (i32.shr_u (local.get $r) (i32.const 12)) (i32.const {REGION_MASK})))",
        "(i32.and (i32.shr_u (local.get $r) (i32.const 16)) (i32.const 0xFFF))",
        "(i32.sub (call $end) (i32.shr_u (local.get $r) (i32.const 24)))",
        "(i32.add (call $end) (i32.shr_u (local.get $r) (i32.const 24)))",
        "(call $end)",
        "(i32.sub (i32.const -1) (i32.shr_u (local.get $r) (i32.const 28)))",
        "(i32.add (i32.const 0x80000000) (i32.shr_u (local.get $r) (i32.const 24)))",
        "(i32.sub (i32.const 0x7FFFFFFF) (i32.shr_u (local.get $r) (i32.const 28)))",
        "(local.get $r)",
        f"(i32.add (i32.const {STRINGS}) (i32.shr_u (local.get $r) (i32.const 26)))",
        "(i32.const 8)",
        "(i32.shr_u (local.get $r) (i32.const 28))",
        "(i32.add (i32.sub (call $end) (i32.const 8)) (i32.shr_u (local.get $r) (i32.const 28)))",
    ]
    lines.append("  (func $arg (result i32) (local $r i32) (local.set $r (call $r32))")
    lines.append(_switch("(i32.and (local.get $r) (i32.const 15))", [f"(return {s})" for s in shapes], "i32"))
    lines.append("    (i32.const 0))")
    shapes64 = ["(i64.const 0)", "(i64.const -1)", "(i64.const 0x8000000000000000)", "(call $next)",
                "(i64.extend_i32_u (call $arg))", "(i64.const 0x7FFFFFFFFFFFFFFF)",
                "(i64.shr_u (call $next) (i64.const 40))", "(i64.const 1)"]
    lines.append("  (func $arg64 (result i64) (local $r i32) (local.set $r (call $r32))")
    lines.append(_switch("(i32.and (local.get $r) (i32.const 7))", [f"(return {s})" for s in shapes64], "i64"))
    lines.append("    (i64.const 0))")
    # One operation: an import (most), memory.grow, or a refill of the region with operands or random bytes.
    cases = []
    for k, (_mod, name, kinds, res) in enumerate(imps):
        args = " ".join("(call $arg64)" if c == "I" else "(call $arg)" for c in kinds)
        call = f"(call $imp{k} {args})"
        body = "(global.set $calls (i64.add (global.get $calls) (i64.const 1))) " + (f"(drop {call})" if res else call)
        if name == "proc_exit":  # it ends the call: rarely
            body = f"(if (i32.eqz (i32.and (call $r32) (i32.const 63))) (then {body}))"
        cases.append(body)
    cases.append("(drop (memory.grow (i32.and (call $r32) (i32.const 3))))")
    fill = (f"(local.set $p (i32.add (i32.const {REGION}) (i32.and (call $r32) (i32.const 0x3FC0))))"
            "(local.set $i (i32.const 0))"
            "(loop $fill (i32.store (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2))) (call $arg))"
            " (local.set $i (i32.add (local.get $i) (i32.const 1)))"
            " (br_if $fill (i32.lt_u (local.get $i) (i32.const 16))))")
    cases.append(fill)
    cases.append(fill.replace("(i32.store", "(i64.store").replace("(call $arg))", "(call $next))")
                 .replace("(i32.const 2))", "(i32.const 3))"))
    lines.append("  (func $op (local $p i32) (local $i i32)")
    lines.append(_switch(f"(i32.rem_u (call $r32) (i32.const {len(cases)}))", cases, None))
    lines.append("  )")
    lines.append("  (func $run (param $n i32)")
    lines.append("    (block $done (loop $more (br_if $done (i32.eqz (local.get $n))) (call $op)"
                 " (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $more))))")
    # Results: mostly Success, sometimes any code (outside 0..6 too).
    code = "(if (result i32) (i32.and (call $r32) (i32.const 3)) (then (i32.const 0)) (else (call $arg)))"
    for name, result in (*EXPORTS.items(), *V2_EXPORTS.items()):
        if result is None:
            lines.append(f'  (func (export "{name}") (call $run (global.get $ops)))')
        elif result == I64:
            high = "(i64.shl (i64.extend_i32_u (call $arg)) (i64.const 32))"
            lines.append(f'  (func (export "{name}") (result i64) (call $run (global.get $ops))'
                         f" (i64.or {high} (i64.extend_i32_u {code})))")
        else:
            lines.append(f'  (func (export "{name}") (result i32) (call $run (global.get $ops)) {code})')
    if init_ops:
        lines.append(f'  (func (export "_initialize") (global.set $seed (i64.const {init_seed}))'
                     f" (call $run (i32.const {init_ops})))")
    lines.append(")")
    return "\n".join(lines)


def _switch(selector: str, cases: list[str], result: str | None) -> str:
    """A br_table over cases (each ends the switch)."""
    n = len(cases)
    del result
    out = ["    (block $end"]
    out += [f"    (block $c{k}" for k in reversed(range(n))]
    out.append(f"      (br_table {' '.join(f'$c{k}' for k in range(n))} $c0 {selector}))")
    out += [f"      {body} (br $end))" for body in cases]
    return "\n".join(out)


# ----- the driver (runs in the process that loaded the sanitized host) ------------------------------------

# The kinds of failure the ABI documents (§4.2, §10): the text after "wasm error: ".
_IMPORT = r"(?:k8s\.io/(?:api|scheduler|klog)|wasi_snapshot_preview1)\.[\w.]+"
DOCUMENTED = (
    ("memory fault", re.compile(rf"^host function {_IMPORT} failed: out of bounds memory access$")),
    ("timeout", re.compile(r"^timeout after \S+$")),
    ("exit", re.compile(r"^guest exited with code -?\d+$")),
    # a guest's input the host refuses (§10, §14.2, §15.3, §15.4), never an internal error's text
    ("host failure", re.compile(rf"^host function {_IMPORT} failed: (?:invalid (?:event |query |pod keys )?JSON: "
                                r"|invalid query: |invalid pod keys: |invalid labelSelector: "
                                r"|resource \S+ is not in args\.watch$|import called outside a guest call$)")),
)


@dataclass
class Totals:
    calls: int = 0  # imports the guests called
    export_calls: int = 0
    instantiations: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)

    def add(self, other: dict[str, Any]) -> None:
        self.calls += other["calls"]
        self.export_calls += other["export_calls"]
        self.instantiations += other["instantiations"]
        self.outcomes.update(other["outcomes"])
        self.unexpected += other["unexpected"]

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "export_calls": self.export_calls, "instantiations": self.instantiations,
                "outcomes": dict(self.outcomes), "unexpected": self.unexpected[:20]}


def classify(text: str) -> str | None:
    """The documented kind of a guest call's failure text, or None."""
    m = list(re.finditer(r"wasm error: (.*)", text))
    if not m:
        return None
    kind = m[-1].group(1)
    for name, pattern in DOCUMENTED:
        if pattern.match(kind):
            return name
    return None


class Fuzzer:
    """Drives fuzz guests through GuestInstances of real plugins (see the module's text)."""

    def __init__(self, work: Path, seed: int) -> None:
        from tests.wasm.harness import WasmHandle, compile_wat
        from wasmsched.framework.cycle_state import CycleState
        from wasmsched.testing.builders import make_node, make_pod
        from wasmsched.wasm.encoding import PodEncoder
        from wasmsched.wasm.engine import Runtime
        from wasmsched.wasm.plugin import new_wasm_plugin

        self.rng = random.Random(seed)
        self.totals = Totals()
        nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in NODES]
        self.pods = [make_pod(f"p-{i}").uid(f"u-{i}").req(cpu="100m").obj() for i in range(4)]
        self.handle = WasmHandle(pods=[make_pod("bound").node("node-1").obj()], nodes=nodes)
        self.handle.add_waiting_pod(make_pod("w-0").uid("w-0").obj(), plugin="fuzz")
        self.handle.run_filter_plugins_with_nominated_pods = self._nested_filters  # type: ignore[method-assign]
        self._depth = threading.local()
        runtime = Runtime(cache_dir=work / "cache")
        path = compile_wat(guest_wat(), work, "fuzz.wasm")
        raw = {"guestURL": str(path), "timeout": "50ms", "memoryLimitPages": MEMORY_LIMIT_PAGES,
               "args": ["fuzz", "\u00e9"], "logSeverity": 0}
        self.plugins = [new_wasm_plugin(f"fuzz{k}", dict(raw), self.handle, runtime=runtime) for k in range(2)]
        self.init_paths = [compile_wat(guest_wat(init_ops=8, init_seed=self.rng.getrandbits(63) | 1), work,
                                       f"init{k}.wasm") for k in range(4)]
        self.raw = raw
        self.runtime = runtime
        self.work = work
        self.node_infos = {n: self.handle.snapshot_shared_lister().get(n) for n in NODES}
        self.cycle_state = CycleState
        self.encoder = PodEncoder()
        self.instances = [self._new_instance(p) for p in self.plugins]

    def _new_instance(self, plugin: Any) -> Any:
        from wasmsched.wasm.instance import GuestInstance
        self.totals.instantiations += 1
        return GuestInstance(plugin.compiled)

    def _nested_filters(self, state: Any, pod: Any, node_info: Any) -> Any:
        """A re-entrant guest call: the other plugin's Filter, on its own instance, inside the import."""
        depth = getattr(self._depth, "n", 0)
        if depth >= 3:
            return None
        self._depth.n = depth + 1
        try:
            inst = self._new_instance(self.plugins[depth % 2])
            self._call(inst, "filter")
        finally:
            self._depth.n = depth
        return None

    def _context(self, export: str) -> Any:
        from wasmsched.wasm.call_context import CallContext
        from wasmsched.wasm.encoding import FilteredNodes
        marshal_pod = self.encoder.encode
        rng = self.rng
        pod = rng.choice(self.pods)
        node = rng.choice(NODES)
        ctx = CallContext(export=export, pod=pod, node_name=node, target_pod=rng.choice(self.pods),
                          node_info=self.node_infos[node], cycle_state=self.cycle_state(),
                          filtered_nodes=FilteredNodes(list(NODES)), node_statuses=dict.fromkeys(NODES[:2], 2),
                          node_scores=[(n, 10 * k) for k, n in enumerate(NODES)], cycle_state_id=rng.randrange(4),
                          released_states=(1, 2), hint_event=rng.randrange(8), old_object=marshal_pod(pod),
                          new_object=marshal_pod(rng.choice(self.pods)), queued_pod_info=b"\x0a\x00")
        if export in ("enqueue", "queuesort"):
            ctx.pod = None if export == "enqueue" else pod
        return ctx

    def _call(self, inst: Any, export: str) -> None:
        from wasmsched.wasm.errors import GuestCallError
        before = inst.get_global("calls")
        inst.set_global("seed", self.rng.getrandbits(63) | 1)
        inst.set_global("ops", self.rng.choice((8, 32, 64)))
        ctx = self._context(export)
        self.totals.export_calls += 1
        try:
            if export in ("filter", "score") and self.rng.random() < 0.3:
                _, _, _, error = inst.call_nodes(ctx, list(NODES))
                if error is not None:
                    raise error
            else:
                inst.call(ctx)
            self.totals.outcomes["returned"] += 1
        except GuestCallError as e:
            kind = classify(str(e))
            if kind is None:
                self._unexpected(f"{export}: {e}")
            else:
                self.totals.outcomes[kind] += 1
        except Exception as e:  # noqa: BLE001 - anything else escaping a guest call is the finding
            self._unexpected(f"{export}: {type(e).__name__}: {e}")
        self.totals.calls += (inst.get_global("calls") - before) & 0xFFFFFFFFFFFFFFFF

    def _unexpected(self, text: str) -> None:
        self.totals.outcomes["unexpected"] += 1
        if len(self.totals.unexpected) < 50:
            self.totals.unexpected.append(text[:2000])

    def _instantiate_at_start(self) -> None:
        """A plugin whose _initialize calls imports: instantiation succeeds or fails as WasmLoadError."""
        from wasmsched.wasm.errors import WasmLoadError
        from wasmsched.wasm.plugin import new_wasm_plugin
        raw = dict(self.raw, guestURL=str(self.rng.choice(self.init_paths)), startTimeout="50ms")
        self.totals.instantiations += 1
        try:
            new_wasm_plugin("fuzzinit", raw, self.handle, runtime=self.runtime).close()
            self.totals.outcomes["instantiated"] += 1
        except WasmLoadError as e:
            self.totals.outcomes["instantiate " + (classify(str(e)) or "other load error")] += 1
        except Exception as e:  # noqa: BLE001 - anything else escaping is the finding
            self._unexpected(f"instantiate: {type(e).__name__}: {e}")

    def run(self, calls: int) -> Totals:
        from wasmsched.wasm.abi import EXPORTS, V2_EXPORTS
        exports = [*EXPORTS, *V2_EXPORTS]
        while self.totals.calls < calls:
            k = self.rng.randrange(len(self.instances))
            if self.rng.random() < 0.01:  # a fresh instance now and then; the old one is simply dropped
                self.instances[k] = self._new_instance(self.plugins[k])
            if self.rng.random() < 0.005:
                self._instantiate_at_start()
            self._call(self.instances[k], self.rng.choice(exports))
        return self.totals


def sanitized_tool() -> Any:
    """tools/host_sanitized.py (tools/ is no package: loaded from its path, as setup.py loads its tools)."""
    spec = importlib.util.spec_from_file_location("wasmsched_host_sanitized", ROOT / "tools" / "host_sanitized.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(calls: int, seed: int) -> int:
    """Runs in the sanitized process: installs the sanitized host, fuzzes, prints the totals as JSON."""
    hs = sanitized_tool()
    so = Path(os.environ["WASMSCHED_SANITIZED_HOST"])
    hs.install(so)
    # The run means something only with the sanitized build loaded and ASan's runtime in the process.
    host = sys.modules[hs.MODULE]
    assert Path(host.__file__ or "") == so, host.__file__
    assert "libasan" in Path("/proc/self/maps").read_text(), "libasan is not loaded"
    import logging

    logging.getLogger("wasmsched").setLevel(logging.CRITICAL + 1)  # guest lines and plugin errors: not the point
    from wasmsched.wasm import native
    with tempfile.TemporaryDirectory(prefix="fuzz-host-") as tmp, open(os.devnull, "wb") as devnull:
        fuzzer = Fuzzer(Path(tmp), seed)
        native.set_log_sink(devnull.fileno(), b"IWEF")  # guest klog lines formatted natively, thrown away
        totals = fuzzer.run(calls)
        for p in fuzzer.plugins:
            p.close()
    print(json.dumps(totals.as_dict()))
    return 0


def pytest_sanitized(args: list[str]) -> int:
    """pytest on the sanitized host (in a child process); nonzero on a failure or a sanitizer report."""
    if "WASMSCHED_SANITIZED_HOST" in os.environ:  # the child
        hs = sanitized_tool()
        hs.install(Path(os.environ["WASMSCHED_SANITIZED_HOST"]))
        import pytest
        return int(pytest.main(["-p", "no:cacheprovider", *args]))
    hs = sanitized_tool()
    env = hs.sanitizer_env()
    env["WASMSCHED_SANITIZED_HOST"] = str(hs.build())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    r = subprocess.run([sys.executable, "-m", "tests.wasm.fuzz_host", "--pytest", *args], cwd=ROOT, env=env,
                       check=False, capture_output=True, text=True)
    sys.stdout.write(r.stdout[-5000:])
    found = hs.reports(r.stderr)
    if found or r.returncode != 0:
        sys.stderr.write(r.stderr[-10000:])
    return r.returncode or (1 if found else 0)


@dataclass
class Report:
    totals: Totals
    sanitizer_reports: list[str]
    crashes: list[str]  # a child that died without its totals: its exit status and stderr's tail
    seconds: float

    def ok(self) -> bool:
        return not self.sanitizer_reports and not self.crashes and not self.totals.unexpected

    def summary(self) -> str:
        t = self.totals
        lines = [f"fuzz-host: {t.calls} import calls in {t.export_calls} export calls, {t.instantiations} "
                 f"instantiations, {self.seconds:.0f} s",
                 f"  outcomes: {json.dumps(dict(sorted(t.outcomes.items())))}",
                 f"  sanitizer reports: {len(self.sanitizer_reports)}, crashes: {len(self.crashes)}, "
                 f"unexpected outcomes: {t.outcomes.get('unexpected', 0)}"]
        lines += [f"  sanitizer: {r}" for r in self.sanitizer_reports[:20]]
        lines += [f"  crash: {c}" for c in self.crashes[:5]]
        lines += [f"  unexpected: {u}" for u in t.unexpected[:10]]
        return "\n".join(lines)


def run_sanitized(calls: int, seed: int, chunk: int = 100_000, timeout: float | None = None) -> Report:
    """Builds the sanitized host and fuzzes `calls` import calls in child processes of `chunk` calls each
    (seeds seed, seed+1, ...): a crash loses one chunk, not the run."""
    hs = sanitized_tool()
    so = hs.build()
    env = hs.sanitizer_env()
    env["WASMSCHED_SANITIZED_HOST"] = str(so)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    totals, reports, crashes = Totals(), [], []
    start = time.monotonic()
    k = 0
    while totals.calls < calls:
        n = min(chunk, calls - totals.calls)
        r = subprocess.run([sys.executable, "-m", "tests.wasm.fuzz_host", "--child", "--calls", str(n),
                            "--seed", str(seed + k)], cwd=ROOT, env=env, check=False, capture_output=True, text=True,
                           timeout=timeout)
        k += 1
        reports += hs.reports(r.stderr)
        last = r.stdout.strip().splitlines()[-1:] if r.stdout.strip() else []
        if r.returncode != 0 or not last:
            crashes.append(f"seed {seed + k - 1}: exit {r.returncode}: {r.stderr[-3000:]}")
            if len(crashes) >= 3:
                break
            continue
        totals.add(json.loads(last[0]))
    return Report(totals, reports, crashes, time.monotonic() - start)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.wasm.fuzz_host", description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1_000_000, help="import calls to make (default 1000000)")
    ap.add_argument("--seed", type=int, default=None, help="the first child's seed (default: random, printed)")
    ap.add_argument("--chunk", type=int, default=100_000, help="import calls per child process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pytest", nargs="+", metavar="ARG", help="run pytest with ARGs on the sanitized host instead")
    a = ap.parse_args(argv)
    if a.pytest:
        return pytest_sanitized(a.pytest)
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    if a.child:
        return child(a.calls, seed)
    print(f"fuzz-host: {a.calls} calls, seed {seed}, {a.chunk} calls per process", flush=True)
    report = run_sanitized(a.calls, seed, a.chunk)
    print(report.summary())
    return 0 if report.ok() else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
