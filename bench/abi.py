"""Per-call cost of the wasm host: wasmsched next to KSWE's Go host (wazero) on the same .wasm files.

Each row runs one call on one guest on both hosts, in interleaved rounds (wasmsched first in even
rounds, KSWE first in odd ones), and reports min and median per op and the ratio of the medians:

  empty filter           Filter on one node, guest returns at once: the host's cost per call
  empty filter, batch    the same over the 1,000 nodes (filter_batch; KSWE: Filter per node), per node
  filter reading node    KSWE's guest/testdata/filter (decodes the pod and the node), one node
  nodenumber score       Score on one node after PreScore (KSWE's scheduler_perf nodenumber guest)
  nodenumber score, batch   score_batch over the 1,000 nodes (KSWE: Score per node), per node
  enqueue                EventsToRegister on the nodenumber guest
  nodenumber full cycle  PreFilter, Filter xN, PreScore, Score xN (each the guest implements) on 1,000 nodes

The nodenumber guest's Score finds its node in a list the guest SDK keeps per cycle and scans
linearly (guest/internal/prefilter nodeInfoList.Get), so over many nodes most of a Score is guest
time, the same work on both hosts; the single-node score row repeats node-8, found at once.

wasmsched is driven through the public plugin API (new_wasm_plugin on a FakeHandle whose snapshot
holds the nodes, then the batch calls the framework's runner makes), so this measures whichever host
is in place. KSWE's column comes from bench/kswe (built by bench/kswe/build.sh from the checkout given
with --kswe, a kube-scheduler-wasm-extension source tree at 9b2791f1bbea), one process per row kept
alive and asked for one round at a time. The guests are KSWE's committed prebuilt .wasm, except the
empty filter: KSWE's all_noop.wasm exports postfilter with a signature wasmsched refuses (i32, where
KSWE's ABI says i64), so the same module without that export is assembled here from WAT.

"Host overhead" is estimated from the empty guest: its per-call cost, and per node inside a batch.
Prints a table, writes JSON. Numbers on a busy machine are noisy: the JSON records the load average.

    .venv/bin/python bench/abi.py --kswe PATH [--nodes 1000] [--rounds 7] [--round-ms 200]
                                  [--only KEY ...] [--wasmsched-only] [--out bench/results/abi.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
KSWE_COMMIT = "9b2791f1bbea"
KSWE_BUILD = ROOT / "bench" / "kswe" / "build.sh"
EMPTY = "<empty filter>"  # the guest assembled from EMPTY_FILTER_WAT
EMPTY_FILTER_WAT = """(module
  (memory (export "memory") 1 1)
  (func (export "prefilter") (result i32) (i32.const 0))
  (func (export "filter") (result i32) (i32.const 0)))
"""
FILTER_GUEST = "guest/testdata/filter/main.wasm"
NODENUMBER_GUEST = "internal/e2e/scheduler_perf/wasm/nodenumber/main.wasm"
CALLS = ("filter", "filter-batch", "score", "score-batch", "enqueue", "cycle")
TARGET_HOST_CALL_NS = 300.0  # issue 13: host overhead per call <= 0.3 us
TARGET_HOST_NODE_NS = 100.0  # ... per node inside a batch <= 100 ns
TARGET_CYCLE_RATIO = 0.5  # ... nodenumber full cycle <= 0.5x KSWE's


@dataclass(frozen=True)
class Measurement:
    key: str
    what: str
    guest: str  # EMPTY, or a path inside the KSWE checkout
    call: str  # one of CALLS, the same name on both hosts
    unit: str  # what one op is: "call", "node" (batches, per node) or "cycle"


MEASUREMENTS = (
    Measurement("empty_filter", "empty filter", EMPTY, "filter", "call"),
    Measurement("empty_filter_batch", "empty filter, batch", EMPTY, "filter-batch", "node"),
    Measurement("filter_reads_node", "filter reading node", FILTER_GUEST, "filter", "call"),
    Measurement("nodenumber_score", "nodenumber score", NODENUMBER_GUEST, "score", "call"),
    Measurement("nodenumber_score_batch", "nodenumber score, batch", NODENUMBER_GUEST, "score-batch", "node"),
    Measurement("enqueue", "enqueue", NODENUMBER_GUEST, "enqueue", "call"),
    Measurement("cycle", "nodenumber full cycle", NODENUMBER_GUEST, "cycle", "cycle"),
)


@dataclass
class Stats:
    ns: list[float]
    min_ns: float = field(init=False)
    median_ns: float = field(init=False)

    def __post_init__(self) -> None:
        if not self.ns:
            raise ValueError("no rounds")
        self.min_ns = min(self.ns)
        self.median_ns = statistics.median(self.ns)


@dataclass
class Row:
    m: Measurement
    wasmsched: Stats
    kswe: Stats | None

    @property
    def ratio(self) -> float | None:
        """wasmsched's median over KSWE's: above 1, wasmsched is that many times slower."""
        return None if self.kswe is None else self.wasmsched.median_ns / self.kswe.median_ns


# ----- formatting (pure) ---------------------------------------------------------------------------

def format_ns(ns: float) -> str:
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} us"
    return f"{ns / 1e6:.2f} ms"


def format_table(rows: Sequence[Row], nodes: int) -> str:
    head = (f"{'what':<26} {'per':<5} {'wasmsched min':>13} {'median':>10}   {'KSWE min':>10} {'median':>10}"
            f"   {'ratio':>7}")
    lines = [f"(batches and cycle over {nodes} nodes; ratio = wasmsched median / KSWE median)", head]
    for r in rows:
        k = ("-", "-") if r.kswe is None else (format_ns(r.kswe.min_ns), format_ns(r.kswe.median_ns))
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        lines.append(f"{r.m.what:<26} {r.m.unit:<5} {format_ns(r.wasmsched.min_ns):>13} "
                     f"{format_ns(r.wasmsched.median_ns):>10}   {k[0]:>10} {k[1]:>10}   {ratio:>7}")
    return "\n".join(lines)


def host_overhead(rows: Sequence[Row]) -> dict[str, Any]:
    """The issue's targets read off the rows (medians); a row that was not measured is left out."""
    by_key = {r.m.key: r for r in rows}
    out: dict[str, Any] = {}
    if (r := by_key.get("empty_filter")) is not None:
        out["per_call_ns"] = {"wasmsched": r.wasmsched.median_ns, "wasmsched_min": r.wasmsched.min_ns,
                              "kswe": _median(r.kswe), "target_ns": TARGET_HOST_CALL_NS}
    if (r := by_key.get("empty_filter_batch")) is not None:
        out["per_node_in_batch_ns"] = {"wasmsched": r.wasmsched.median_ns, "wasmsched_min": r.wasmsched.min_ns,
                                       "kswe": _median(r.kswe), "target_ns": TARGET_HOST_NODE_NS}
    if (r := by_key.get("cycle")) is not None and r.ratio is not None:
        assert r.kswe is not None
        out["cycle_ratio"] = {"ratio": r.ratio, "ratio_min": r.wasmsched.min_ns / r.kswe.min_ns,
                              "target": TARGET_CYCLE_RATIO}
    return out


def _median(s: Stats | None) -> float | None:
    return None if s is None else s.median_ns


def format_targets(overhead: dict[str, Any]) -> str:
    lines = []
    if (c := overhead.get("per_call_ns")) is not None:
        lines.append(f"host overhead per call (empty filter): median {format_ns(c['wasmsched'])}, "
                     f"min {format_ns(c['wasmsched_min'])} (target <= {format_ns(c['target_ns'])})")
    if (n := overhead.get("per_node_in_batch_ns")) is not None:
        lines.append(f"host overhead per node in a batch: median {format_ns(n['wasmsched'])}, "
                     f"min {format_ns(n['wasmsched_min'])} (target <= {format_ns(n['target_ns'])})")
    if (cy := overhead.get("cycle_ratio")) is not None:
        lines.append(f"nodenumber full cycle vs KSWE: {cy['ratio']:.2f}x of the medians, {cy['ratio_min']:.2f}x "
                     f"of the mins (target <= {cy['target']}x)")
    return "\n".join(lines)


def results_json(rows: Sequence[Row], meta: dict[str, Any]) -> dict[str, Any]:
    out_rows = [{**asdict(r.m), "wasmsched": asdict(r.wasmsched), "kswe": None if r.kswe is None else asdict(r.kswe),
                 "ratio_median": r.ratio} for r in rows]
    return {**meta, "rows": out_rows, "host_overhead": host_overhead(rows)}


# ----- arguments -----------------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kswe", type=Path, help=f"kube-scheduler-wasm-extension source checkout (commit {KSWE_COMMIT}): "
                    "its prebuilt guests and its Go host; without it only the empty guest runs, on wasmsched")
    ap.add_argument("--wasmsched-only", action="store_true", help="with --kswe, use its guests but not its host")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-ms", type=int, default=200, help="target duration of one round on each host")
    ap.add_argument("--gomaxprocs", type=int, help="GOMAXPROCS of KSWE's process (default: Go's, all cpus)")
    ap.add_argument("--only", action="append", choices=[m.key for m in MEASUREMENTS],
                    help="measure only this row (repeatable)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "abi.json")
    args = ap.parse_args(argv)
    if args.nodes < 9:
        ap.error(f"--nodes {args.nodes}: at least 9 (the single-node calls use node-8)")
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: at least 1")
    if args.round_ms < 1:
        ap.error(f"--round-ms {args.round_ms}: at least 1")
    if args.gomaxprocs is not None and args.gomaxprocs < 1:
        ap.error(f"--gomaxprocs {args.gomaxprocs}: at least 1")
    if args.wasmsched_only and args.kswe is None:
        ap.error("--wasmsched-only needs --kswe PATH (the guests are KSWE's)")
    if args.kswe is not None:
        missing = [g for g in (FILTER_GUEST, NODENUMBER_GUEST) if not (args.kswe / g).is_file()]
        if missing:
            ap.error(f"--kswe {args.kswe}: not a kube-scheduler-wasm-extension checkout ({missing[0]} is missing)")
    return args


# ----- wasmsched ---------------------------------------------------------------------------------

class WasmschedCall:
    """One measured call on wasmsched, set up as the framework would have it (PreFilter pinned the
    pod's instance, PreScore wrote what Score reads)."""

    def __init__(self, guest: Path, call: str, nodes: int) -> None:
        from wasmsched.framework.cycle_state import CycleState
        from wasmsched.framework.interface import FilterPlugin, NodeBatch, PreScorePlugin, ScorePlugin
        from wasmsched.framework.snapshot import new_snapshot
        from wasmsched.testing.builders import make_node, make_pod
        from wasmsched.testing.fake_handle import FakeHandle
        from wasmsched.wasm.plugin import new_wasm_plugin

        # The same objects as bench/kswe/main.go builds.
        node_objs = [make_node(f"node-{i}").label("kubernetes.io/os", "linux")
                     .capacity(cpu="32", memory="256Gi", pods="110").obj() for i in range(nodes)]
        snap = new_snapshot([], node_objs)
        pod = make_pod("pod-8").uid("uid-pod-8").container("registry.example/app:1", "app", cpu="100m",
                                                           memory="500Mi").obj()
        self.plugin = pl = new_wasm_plugin("wasm", {"guestURL": str(guest)}, FakeHandle(snapshot=snap))
        infos = snap.list()
        batch = NodeBatch(infos)
        node = snap.get("node-8")
        assert node is not None
        filt = pl if isinstance(pl, FilterPlugin) else None
        pre_score = pl if isinstance(pl, PreScorePlugin) else None
        score = pl if isinstance(pl, ScorePlugin) else None
        needs = {"filter": filt, "filter-batch": filt, "score": score, "score-batch": score}
        if call in needs and needs[call] is None:
            raise SystemExit(f"{guest}: the guest does not implement {call.removesuffix('-batch')}")

        def prepare(state: CycleState) -> None:
            _check("PreFilter", pl.pre_filter(state, pod, infos)[1])
            if pre_score is not None:
                _check("PreScore", pre_score.pre_score(state, pod, infos))

        state = CycleState()
        if call != "enqueue" and call != "cycle":
            prepare(state)

        def cycle() -> None:
            st = CycleState()
            _check("PreFilter", pl.pre_filter(st, pod, infos)[1])
            if filt is not None:
                _check_all("Filter", filt.filter_batch(st, pod, batch).values())
            if pre_score is not None:
                _check("PreScore", pre_score.pre_score(st, pod, infos))
            if score is not None:
                _check("Score", score.score_batch(st, pod, batch)[1])
            pl.scheduling_cycle_done(pod, False)

        ops: dict[str, Callable[[], object]] = {
            "filter": lambda: _check("Filter", pl.filter(state, pod, node)),
            "filter-batch": lambda: _check_all("Filter", pl.filter_batch(state, pod, batch).values()),
            "score": lambda: _check("Score", pl.score(state, pod, node)[1]),
            "score-batch": lambda: _check("Score", pl.score_batch(state, pod, batch)[1]),
            "enqueue": pl.events_to_register,
            "cycle": cycle,
        }
        self.op = ops[call]
        self.per_unit = nodes if call.endswith("-batch") else 1
        self.iters = 1

    def calibrate(self, round_ms: int) -> None:
        self.iters = calibrate(self.op, round_ms / 1000)

    def round(self) -> float:
        op = self.op
        t0 = time.perf_counter_ns()
        for _ in range(self.iters):
            op()
        return (time.perf_counter_ns() - t0) / self.iters / self.per_unit

    def close(self) -> None:
        self.plugin.close()


def _check(what: str, st: Any) -> None:
    from wasmsched.framework.status import Code, code_of

    if code_of(st) == Code.ERROR:
        raise SystemExit(f"{what} failed on wasmsched: {st.message()}")


def _check_all(what: str, statuses: Iterable[Any]) -> None:
    # Only the rejected nodes' statuses: the check's own cost stays out of the per-node figure.
    for st in statuses:
        if st is not None:
            _check(what, st)


def calibrate(op: Callable[[], object], round_s: float) -> int:
    """Runs op for a quarter of a round (warming up) and returns how many iterations fill a round;
    the same rule as bench/kswe's."""
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < round_s / 4 or n < 3:
        op()
        n += 1
    per = (time.perf_counter() - t0) / n
    return max(1, int(round_s / per))


# ----- KSWE --------------------------------------------------------------------------------------

def build_kswe(kswe: Path) -> Path:
    print(f"building bench/kswe against {kswe} (cached after the first time)", file=sys.stderr)
    out = subprocess.run([str(KSWE_BUILD), str(kswe)], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


class KsweCall:
    """bench/kswe in -serve mode: calibrated once, then one round per request."""

    def __init__(self, binary: Path, guest: Path, call: str, nodes: int, round_ms: int, stderr: IO[str],
                 gomaxprocs: int | None) -> None:
        self._stderr = stderr
        env = dict(os.environ)
        if gomaxprocs is not None:
            env["GOMAXPROCS"] = str(gomaxprocs)
        self.proc = subprocess.Popen(
            [str(binary), "-guest", str(guest), "-call", call, "-nodes", str(nodes), "-round-ms", str(round_ms),
             "-serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1,
            env=env)
        self.iters = int(self._read()["iters"])

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self._stderr.seek(0)
            raise SystemExit(f"bench/kswe exited ({self.proc.returncode}): {self._stderr.read().strip()}")
        try:
            out: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            raise SystemExit(f"bench/kswe printed something other than JSON: {line.strip()!r}") from None
        return out

    def round(self) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write("round\n")
        return float(self._read()["ns"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ----- driver ------------------------------------------------------------------------------------

def guest_path(m: Measurement, kswe: Path | None, empty: Path) -> Path | None:
    if m.guest == EMPTY:
        return empty
    return None if kswe is None else kswe / m.guest


def measure(m: Measurement, guest: Path, kswe_bin: Path | None, nodes: int, rounds: int, round_ms: int,
            gomaxprocs: int | None) -> Row:
    ws = WasmschedCall(guest, m.call, nodes)
    with tempfile.TemporaryFile("w+") as stderr:
        ks = KsweCall(kswe_bin, guest, m.call, nodes, round_ms, stderr, gomaxprocs) if kswe_bin is not None else None
        try:
            return _rounds(m, ws, ks, rounds, round_ms)
        finally:
            ws.close()
            if ks is not None:
                ks.close()


def _rounds(m: Measurement, ws: WasmschedCall, ks: KsweCall | None, rounds: int, round_ms: int) -> Row:
    ws.calibrate(round_ms)
    ws_ns: list[float] = []
    ks_ns: list[float] = []
    for i in range(rounds):
        # Alternate who goes first, so drift in the machine's load falls on both alike.
        if ks is not None and i % 2 == 1:
            ks_ns.append(ks.round())
        ws_ns.append(ws.round())
        if ks is not None and i % 2 == 0:
            ks_ns.append(ks.round())
    return Row(m, Stats(ws_ns), Stats(ks_ns) if ks is not None else None)


def kswe_commit(kswe: Path) -> str | None:
    r = subprocess.run(["git", "-C", str(kswe), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return r.stdout.strip() if r.returncode == 0 else None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import wasmtime

    kswe: Path | None = args.kswe.resolve() if args.kswe is not None else None
    if kswe is None:
        print("KSWE column left out: no --kswe PATH (a kube-scheduler-wasm-extension checkout at "
              f"{KSWE_COMMIT}, for its Go host and its prebuilt guests); only the empty guest runs, on wasmsched.")
    elif args.wasmsched_only:
        print("KSWE column left out: --wasmsched-only.")
    kswe_bin = build_kswe(kswe) if kswe is not None and not args.wasmsched_only else None
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="wasmsched-bench-abi-") as tmp:
        empty = Path(tmp) / "empty_filter.wasm"
        empty.write_bytes(wasmtime.wat2wasm(EMPTY_FILTER_WAT))
        for m in MEASUREMENTS:
            if args.only and m.key not in args.only:
                continue
            guest = guest_path(m, kswe, empty)
            if guest is None:
                continue
            print(f"  {m.what} ...", file=sys.stderr, flush=True)
            rows.append(measure(m, guest, kswe_bin, args.nodes, args.rounds, args.round_ms, args.gomaxprocs))
    print(format_table(rows, args.nodes))
    overhead = host_overhead(rows)
    if targets := format_targets(overhead):
        print(targets)
    load_after = os.getloadavg()
    print(f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cpus"
          + (": a busy machine, numbers are noisy" if max(load_before[0], load_after[0]) > (os.cpu_count() or 1)
             else ""))
    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "loadavg_1m": [load_before[0], load_after[0]], "nodes": args.nodes, "rounds": args.rounds,
            "round_ms": args.round_ms, "gomaxprocs": args.gomaxprocs,
            "kswe": None if kswe is None else {"path": str(kswe), "commit": kswe_commit(kswe),
                                               "binary": None if kswe_bin is None else str(kswe_bin)}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results_json(rows, meta), indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
