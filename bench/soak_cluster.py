"""Soak of `wasmsched run` on a real API server (issue 29 §2): RSS, informer stores and wasm instances
while PODS pods go through the scheduler in waves of WAVE (created, all bound, deleted, all gone).

    make kube examples/nodenumber/nodenumber.wasm
    .venv/bin/python bench/soak_cluster.py                                   # 1,000 nodes, 100,000 pods
    .venv/bin/python bench/soak_cluster.py --nodes 100 --pods 5000 --wave 1000 --warmup-seconds 0  # short
    .venv/bin/python bench/soak_cluster.py --wave 5000 --max-seconds 2400   # as many waves as 40 minutes allow
    .venv/bin/python bench/soak_cluster.py --wave 2500 --wave-period 150    # a wave every 2.5 minutes (below)
    .venv/bin/python bench/soak_cluster.py --wave 2500 --wave-period 150 --jemalloc   # as the image runs it

Starts a dev-cluster (etcd, kube-apiserver, kube-controller-manager, KWOK) in a temporary directory,
creates NODES KWOK nodes (32 CPU, 256Gi, 110 pods) and starts one `wasmsched run` with the default profile
plus the NodeNumber guest (examples/nodenumber, as in examples/nodenumber/scheduler.yaml, weight 10;
`--no-guest`: the default profile alone) and clientConnection qps QPS (burst 2 QPS). Then, wave after
wave: WAVE pods of 100m / 500Mi are created (8 threads) in namespace `soak`, the benchmark's watch waits
until every one is bound, they are deleted (deletecollection, grace 0) and it waits until the watch saw
them all go and `run` itself has forgotten them (its Pod informer store and its cache back to what they
held before the first wave, nothing pending), then SETTLE seconds.

--wave-period P: a wave starts every P seconds and the readings after its deletion are taken at the end of its
period (at least SETTLE after the deletion). The event broadcaster keeps each event's series for 6 minutes, so
what it holds at a reading is the pods bound in the 6 minutes before: waves at a varying pace (a machine busy
early in the soak, idle later) make that level follow the pace, not the pods so far, and it shows as a slope
(the soak of 2026-12-07: Python's blocks rose 200 per 1,000 pods while waves went from 2.5 to 1.2 minutes,
with the C heap flat). With a fixed period each reading's window holds the same waves. A wave longer than its
period is read SETTLE after its deletion, said in the log and marked over_period in the JSON.

Sampled: the `run` process's RSS (/proc/PID/status VmRSS) every second, and at the end of each wave's
binding and of its deletion `run`'s /metrics: wasmsched_informer_store_objects{resource} (each informer's
store), scheduler_cache_size{type}, scheduler_pending_pods{queue}, wasmsched_wasm_instances{state} and the
instances created and discarded so far; and `run`'s CPU. After each deletion also RSS by what holds it
(rss_by_kind, from /proc/PID/smaps: glibc's heaps, other anonymous memory such as Python's arenas, files), each
with its own slope. And the Nodes' updates, through the benchmark's own watch: how many fell in each wave
(the table's "node upd"; their times in the JSON's node_update_seconds).

Baseline: the warm-up waves, in the same process: the first WARMUP (default 2) and every wave that starts
within WARMUP_SECONDS of the first (default 720 s, twice the window: `run`'s event broadcaster keeps each
event's series for 6 minutes, as client-go's does, so RSS rightly grows until the first ones expire and the
allocator's arenas settle; the full soak rose until ~570 s). A soak asks
whether memory keeps growing with the pods that went through, not what the guest costs: the reference is
the process's own level once warm (imports, the 1,000-node snapshot, the guest's instances, the
allocator's arenas at a wave's peak, the watch caches), and a second process (the default profile alone,
say) would have its own heap layout, and double the run on a 2-core machine shared with the API server
and KWOK; `--no-guest` runs that soak on its own when wanted.

Verdict (each part must hold):
  rss       the slope of RSS after each deletion (the median of its per-second samples from the deletion's
            end to the reading: a single sample reads whichever moment of the scavenger's 10 s cycle it
            meets, and its interval was a quarter wider in the paced soak of 2026-12-07) against the pods so
            far over the waves after warm-up (Theil-Sen, robust to one wave read at an allocator's peak) is
            under --slope-kib KiB per 1,000 pods (default 1) with 95 % confidence: "flat" when its whole
            interval is under the limit, "growing" (LEAK) when it is all above, otherwise "unresolved"
            (UNRESOLVED: wave-to-wave RSS noise of a MiB or two makes the interval about ±12 KiB per 1,000
            pods over 35 paced waves of 2,500 pods, so a slope near the limit needs more waves to tell).
            Reported too: the least-squares slope and its standard error, the slope of the single readings,
            the highest and lowest RSS after deletion, and the growth since warm-up.
            Read on the waves that met no node heartbeat: KWOK rewrites every node's status about every 10
            minutes, all 1,000 within seconds, and a wave that meets that burst is read while `run` still
            holds several MiB of it (live bytes, gone by the next wave). The benchmark watches the Nodes
            itself; a wave in which at least a tenth of them were updated, from its start to its reading, is
            marked "node heartbeat" in the table and its slope printed apart (the 100,000-pod jemalloc soak of
            2026-12-07 read those waves up to 10 MiB above the others, more as each burst spread later into
            its wave; read with them, its least-squares slope had twice the standard error, 15.9 KiB per
            1,000 pods against 7.3). A leak keeps what it took, so the later waves without
            a heartbeat show it all the same. Every slope below is read on the same waves.
  malloc    the same slope for the C heap's live bytes (`run`'s wasmsched_malloc_in_use_bytes, read with
            the deletion's last scrape): the allocator's free memory, most of RSS's noise, is not in it, so it
            resolves a far smaller slope; "growing" is a LEAK whatever RSS says. Python's allocated blocks
            (wasmsched_python_allocated_blocks) are reported beside it, in blocks per 1,000 pods.
  stores    after every deletion each informer's store holds what it held before the first wave (Pod: 0
            of the soak's pods; Node: NODES), the cache holds no pod and no assumed pod, nothing pending.
  instances after every deletion no instance is pinned (scheduling, binding), live instances stay within
            maxInstances and their number does not grow after warm-up; none was discarded.

Prints the per-wave table, an ASCII plot of the RSS series and the verdict on stdout (progress on
stderr); writes JSON (--out, default bench/results/soak_cluster.json) with every sample.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from real_cluster import (  # noqa: E402  (bench/ is not a package)
    CREATORS,
    PodWatcher,
    SchedulerProcess,
    _jsonable,
    config,
    create_nodes,
    delete_pods,
    jemalloc_argv,
    log,
    pod,
)
from real_cluster_lib import parse_samples, process_cpu_seconds  # noqa: E402

from wasmsched.api.kinds import RESOURCES  # noqa: E402
from wasmsched.devcluster.cluster import DevCluster  # noqa: E402
from wasmsched.devcluster.processes import free_port  # noqa: E402
from wasmsched.kube.api import ApiError, ClientConnection, KubeApi, TransportError, load_configuration  # noqa: E402
from wasmsched.kube.client_cluster import EVENT_SERIES_WINDOW  # noqa: E402
from wasmsched.kube.informer import Handler, Informer  # noqa: E402
from wasmsched.wasm.args import DEFAULT_MAX_INSTANCES  # noqa: E402

NAMESPACE = "soak"
SCHEDULER = "soak"
GUEST = "NodeNumber"
MAX_PODS_PER_NODE = 110


def rss_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


# glibc's thread arenas are heaps of at most HEAP_MAX_SIZE (64 MiB on 64-bit), each mapped at a multiple of it.
_GLIBC_HEAP_ALIGN = 64 << 20
_SMAPS_HEADER = re.compile(r"^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$")


def rss_by_kind(pid: int) -> dict[str, int] | None:
    """`pid`'s RSS (KiB) by what holds it, from /proc/PID/smaps: `malloc_heaps` (glibc's main heap and its
    thread arenas' heaps), `anon_other` (every other anonymous mapping: Python's 1 MiB arenas, the C heap's
    mmapped large blocks, thread stacks, wasm memories), `files` (code, data and mapped files). Where the
    slope lives says whose memory it is: the allocators' free pages move malloc_heaps, pymalloc's
    fragmentation anon_other."""
    out = {"malloc_heaps": 0, "anon_other": 0, "files": 0}
    kind = "files"
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                m = _SMAPS_HEADER.match(line)
                if m:
                    name = m[2].strip()
                    if name == "[heap]" or (not name and int(m[1], 16) % _GLIBC_HEAP_ALIGN == 0):
                        kind = "malloc_heaps"
                    elif not name or name.startswith("["):
                        kind = "anon_other"
                    else:
                        kind = "files"
                elif line.startswith("Rss:"):
                    out[kind] += int(line.split()[1])
    except OSError:
        return None
    return out


class Sampler:
    """RSS of `pid` every second, tagged with the wave and phase the benchmark is in."""

    def __init__(self, pid: int, t0: float) -> None:
        self.pid, self.t0 = pid, t0
        self.wave, self.phase = -1, "start"
        self.series: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss-sampler")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            rss = rss_kib(self.pid)
            if rss is None:
                return
            self.series.append({"t": round(time.perf_counter() - self.t0, 1), "rss_kib": rss,
                                "wave": self.wave, "phase": self.phase})

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(3)


def gauges(text: str) -> dict[str, Any]:
    """What the verdict reads from one scrape of `run`'s /metrics."""
    out: dict[str, Any] = {"stores": {}, "cache": {}, "pending": {}, "instances": {}, "created": 0.0,
                           "discarded": 0.0}
    for name, labels, value in parse_samples(text):
        if name == "wasmsched_informer_store_objects":
            out["stores"][labels.get("resource", "")] = int(value)
        elif name == "scheduler_cache_size":
            out["cache"][labels.get("type", "")] = int(value)
        elif name == "scheduler_pending_pods":
            out["pending"][labels.get("queue", "")] = int(value)
        elif name == "wasmsched_wasm_instances":
            st = labels.get("state", "")
            out["instances"][st] = out["instances"].get(st, 0) + int(value)
        elif name == "wasmsched_wasm_instances_created_total":
            out["created"] += value
        elif name == "wasmsched_wasm_instances_discarded_total":
            out["discarded"] += value
        elif name == "wasmsched_malloc_in_use_bytes":
            out["malloc_kib"] = round(value / 1024, 1)
        elif name == "wasmsched_python_allocated_blocks":
            out["python_blocks"] = int(value)
        elif name == "wasmsched_threads":
            out["threads"] = int(value)
    out["created"], out["discarded"] = int(out["created"]), int(out["discarded"])
    return out


def scrape(proc: SchedulerProcess, token: str) -> dict[str, Any]:
    return gauges(proc.metrics(token))


def create_wave(api: KubeApi, wave: int, n: int) -> int:
    """WAVE pods w<wave>-<i> from CREATORS threads; the number of failed creates (logged, not retried)."""
    errors = 0
    lock = threading.Lock()

    def one(i: int) -> None:
        nonlocal errors
        body = pod(f"w{wave:03d}-{i:05d}", SCHEDULER)
        try:
            api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", body=body)
        except (ApiError, TransportError) as e:
            with lock:
                errors += 1
            log(f"create {body['metadata']['name']} failed: {e}")

    with ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(one, range(n)))
    return errors




def forgotten(g: dict[str, Any], before: dict[str, Any]) -> bool:
    """`run` holds no more of the soak's pods than before the first wave."""
    return (g["stores"].get("Pod", 0) <= before["stores"].get("Pod", 0)
            and g["cache"].get("pods", 0) <= before["cache"].get("pods", 0)
            and g["cache"].get("assumed_pods", 0) == 0 and sum(g["pending"].values()) == 0)


def slope_per_1000(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y (KiB) against x (pods), per 1,000 pods; NaN with fewer than 2 points."""
    if len(points) < 2:
        return math.nan
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return math.nan
    return sum((x - mx) * (y - my) for x, y in points) / sxx * 1000


# A wave whose watch saw at least this share of the nodes updated between its start and its reading met a
# node-heartbeat burst (NodeUpdates).
HEARTBEAT_SHARE = 0.1


def heartbeat(w: dict[str, Any], nodes: int) -> bool:
    """Whether the wave met a node-heartbeat burst; a wave recorded before node_updates was counted did not."""
    return (w.get("node_updates") or 0) >= max(1, math.ceil(nodes * HEARTBEAT_SHARE))


def warm(w: dict[str, Any], warmup: int, warmup_seconds: float) -> bool:
    """A warm-up wave: one of the first `warmup`, or started before `warmup_seconds`."""
    return bool(w["wave"] < warmup or w["started_seconds"] < warmup_seconds)


def slope_stderr_per_1000(points: list[tuple[float, float]]) -> float:
    """The least-squares slope's standard error, per 1,000 pods (the resolution the samples allow); NaN
    with fewer than 3 points."""
    n = len(points)
    if n < 3:
        return math.nan
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return math.nan
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    resid = sum((y - my - b * (x - mx)) ** 2 for x, y in points)
    return math.sqrt(resid / (n - 2) / sxx) * 1000


def theil_sen_per_1000(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Theil-Sen slope of y (KiB) against x (pods), per 1,000 pods, with its 95 % confidence interval
    (Sen 1968, from Kendall's tau): the median of the slopes between every two points, so one wave that
    read high (the allocator's arenas caught at a peak) moves it little, where it drags least squares.
    NaNs with fewer than 3 points."""
    n = len(points)
    slopes = sorted((y2 - y1) / (x2 - x1) * 1000 for i, (x1, y1) in enumerate(points)
                    for x2, y2 in points[i + 1:] if x2 != x1)
    if n < 3 or not slopes:
        return math.nan, math.nan, math.nan
    m = len(slopes)
    c = 1.96 * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    lo = max(round((m - c) / 2) - 1, 0)
    hi = min(round((m + c) / 2), m - 1)
    return statistics.median(slopes), slopes[lo], slopes[hi]


def _call(lo: float, hi: float, limit: float) -> str:
    """Flat only when the run shows it: the slope's whole confidence interval under the limit. Growing when
    its whole interval is above; otherwise the run could not tell (too few waves, too much noise)."""
    return "flat" if hi < limit else "growing" if lo > limit else "unresolved"


class NodeUpdates:
    """When the Nodes were updated, through the benchmark's own watch: KWOK's node-heartbeat Stage rewrites
    every node's status about every 10 minutes (600 s plus up to 10 s of jitter, kwok_stages.py), all 1,000
    within seconds since they were created together, and `run` decodes and caches each one (as kube-scheduler
    does), so a wave that meets that burst holds several MiB more when it is read."""

    def __init__(self, api: KubeApi, t0: float, sync_timeout: float) -> None:
        self.t0 = t0
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.informer = Informer(api, RESOURCES["Node"])
        self.informer.add_handler(Handler(lambda _n: None, self._updated, lambda _n: None))
        self.thread = threading.Thread(target=self.informer.run, args=(self._stop,), daemon=True,
                                       name="watch-nodes")
        self.thread.start()
        if not self.informer.wait_for_sync(sync_timeout):
            raise TimeoutError(f"the node informer did not sync in {sync_timeout:.0f} s")

    def _updated(self, _old: Any, _new: Any) -> None:
        with self._lock:
            self.times.append(time.perf_counter() - self.t0)

    def between(self, start: float, end: float) -> int:
        """Updates seen from `start` to `end` (seconds since t0)."""
        with self._lock:
            return sum(1 for t in self.times if start <= t <= end)

    def close(self) -> None:
        self._stop.set()
        self.informer.stop_watch()
        self.thread.join(5)


def _word(call: str | None) -> str:
    """A part's call as the verdict prints it: what fails in capitals."""
    return "flat" if call == "flat" else (call or "-").upper()


def settled_rss(series: list[dict[str, Any]], wave: int) -> float | None:
    """The median of RSS's per-second samples in a wave's settle phase (after its deletion, until the reading):
    the level the process settles at, not the one moment the reading catches (the scavenger returns the free
    pages every 10 s, and what the wave freed is returned over several of them)."""
    samples = [s["rss_kib"] for s in series if s["wave"] == wave and s["phase"] == "settle"]
    return statistics.median(samples) if samples else None


def _rss_points(waves: list[dict[str, Any]]) -> list[tuple[float, float]]:
    # A wave without samples in its settle phase (a settle under a second) is read at its deletion's end.
    return [(float(w["pods_so_far"]), float(w.get("rss_settled_kib") or w["rss_deleted_kib"])) for w in waves]


def _rounded(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 3)


def verdict(waves: list[dict[str, Any]], before: dict[str, Any], warmup: int, warmup_seconds: float, nodes: int,
            guest: bool, max_instances: int, slope_limit: float) -> dict[str, Any]:
    done = [w for w in waves if w["complete"]]
    after_warmup = [w for w in done if not warm(w, warmup, warmup_seconds)]
    # Every slope is read on the waves that met no node heartbeat: a wave that met one is read while `run`
    # still holds that burst's objects (several MiB, gone by the next wave), so its reading measures when the
    # heartbeat fell, not the pods so far. What a leak keeps stays, so it shows in every later wave.
    post = [w for w in after_warmup if not heartbeat(w, nodes)]
    beat = [w for w in after_warmup if heartbeat(w, nodes)]
    beat_sen = theil_sen_per_1000(_rss_points(beat))
    points = _rss_points(post)
    slope = slope_per_1000(points)
    sen, sen_lo, sen_hi = theil_sen_per_1000(points)
    single = theil_sen_per_1000([(float(w["pods_so_far"]), float(w["rss_deleted_kib"])) for w in post])
    rss = _call(sen_lo, sen_hi, slope_limit)
    rss_ok = rss == "flat"
    # The heap's live bytes (malloc's, Python's blocks) at the same moments: a leak moves them as it moves
    # RSS, but the allocators' free memory (RSS's noise of MiB per wave) does not.
    heap_points = [(float(w["pods_so_far"]), float(w["deleted"]["malloc_kib"])) for w in post
                   if w["deleted"].get("malloc_kib") is not None]
    heap_sen = theil_sen_per_1000(heap_points)
    block_points = [(float(w["pods_so_far"]), float(w["deleted"]["python_blocks"])) for w in post
                    if w["deleted"].get("python_blocks") is not None]
    block_sen = theil_sen_per_1000(block_points)
    kinds = sorted({k for w in post for k in (w.get("rss_deleted_by_kind") or {})})
    kind_sen = {k: theil_sen_per_1000([(float(w["pods_so_far"]), float(w["rss_deleted_by_kind"][k])) for w in post
                                       if (w.get("rss_deleted_by_kind") or {}).get(k) is not None])
                for k in kinds}
    warm_points = _rss_points([w for w in done if warm(w, warmup, warmup_seconds) and not heartbeat(w, nodes)])
    warm_end = warm_points[-1][1] if warm_points else None
    store_bad: list[str] = []
    inst_bad: list[str] = []
    for w in done:
        g = w["deleted"]
        for kind, n in g["stores"].items():
            want = nodes if kind == "Node" else before["stores"].get(kind, 0)
            if n != want:
                store_bad.append(f"wave {w['wave']}: {kind} store {n} (before the soak {want})")
        if g["cache"].get("pods", 0) or g["cache"].get("assumed_pods", 0) or sum(g["pending"].values()):
            store_bad.append(f"wave {w['wave']}: cache {g['cache']}, pending {g['pending']}")
        if guest:
            pinned = g["instances"].get("scheduling", 0) + g["instances"].get("binding", 0)
            live = sum(g["instances"].values())
            if pinned:
                inst_bad.append(f"wave {w['wave']}: {pinned} instances pinned after deletion")
            if live > max_instances:
                inst_bad.append(f"wave {w['wave']}: {live} live instances > maxInstances {max_instances}")
            if g["discarded"]:
                inst_bad.append(f"wave {w['wave']}: {g['discarded']} instances discarded")
    if guest and post:
        live_warm = max((sum(w["deleted"]["instances"].values()) for w in done if warm(w, warmup, warmup_seconds)),
                        default=0)
        live_max = max(sum(w["deleted"]["instances"].values()) for w in post)
        if live_max > max(live_warm, 1):
            inst_bad.append(f"live instances after deletion grew from {live_warm} (warm-up) to {live_max}")
    post_rss = [v for _, v in points]
    return {
        "complete": len(done) == len(waves) and bool(waves),
        "rss": rss, "rss_ok": rss_ok, "stores_ok": not store_bad, "instances_ok": not inst_bad,
        "leak": not (rss_ok and not store_bad and not inst_bad),
        # The live heap growing is a leak whatever RSS's noise lets it show.
        "malloc_growing": len(heap_points) > 2 and _call(heap_sen[1], heap_sen[2], slope_limit) == "growing",
        "slope_kib_per_1000_pods": round(slope, 3) if not math.isnan(slope) else None,
        "slope_stderr_kib_per_1000_pods": round(slope_stderr_per_1000(points), 3) if len(points) > 2 else None,
        "theil_sen_kib_per_1000_pods": [None if math.isnan(x) else round(x, 3) for x in (sen, sen_lo, sen_hi)],
        "slope_limit_kib_per_1000_pods": slope_limit,
        "rss_deleted_theil_sen_kib_per_1000_pods": [None if math.isnan(x) else round(x, 3) for x in single],
        "malloc": _call(heap_sen[1], heap_sen[2], slope_limit) if len(heap_points) > 2 else None,
        "malloc_theil_sen_kib_per_1000_pods": [None if math.isnan(x) else round(x, 3) for x in heap_sen],
        "malloc_least_squares_kib_per_1000_pods": _rounded(slope_per_1000(heap_points)),
        "malloc_stderr_kib_per_1000_pods": _rounded(slope_stderr_per_1000(heap_points)),
        "python_blocks_theil_sen_per_1000_pods": [None if math.isnan(x) else round(x, 1) for x in block_sen],
        "python_blocks_least_squares_per_1000_pods": _rounded(slope_per_1000(block_points)),
        "python_blocks_stderr_per_1000_pods": _rounded(slope_stderr_per_1000(block_points)),
        "rss_by_kind_theil_sen_kib_per_1000_pods": {k: [None if math.isnan(x) else round(x, 1) for x in v]
                                                    for k, v in kind_sen.items()},
        "post_warmup_waves": len(post),
        "heartbeat_waves": [w["wave"] for w in beat],
        "node_updates_counted": any("node_updates" in w for w in waves),
        "heartbeat_theil_sen_kib_per_1000_pods": [None if math.isnan(x) else round(x, 3) for x in beat_sen],
        "rss_heartbeat_post_warmup_max_kib": max((v for _, v in _rss_points(beat)), default=None),
        "rss_deleted_post_warmup_min_kib": min(post_rss, default=None),
        "rss_deleted_post_warmup_max_kib": max(post_rss, default=None),
        "growth_after_warmup_kib": (post_rss[-1] - warm_end) if post_rss and warm_end is not None else None,
        "store_problems": store_bad[:20], "instance_problems": inst_bad[:20],
    }


# ----- the report -------------------------------------------------------------------------------------

def _mib(kib: Any) -> str:
    return f"{kib / 1024:.1f}" if isinstance(kib, (int, float)) else "-"


def print_table(waves: list[dict[str, Any]], warmup: int, warmup_seconds: float, nodes: int) -> None:
    print(f"{'wave':>4} {'pods so far':>11} {'create s':>8} {'bind s':>7} {'delete s':>8} {'cpu s':>6} {'node upd':>8} "
          f"{'RSS bound':>9} {'RSS deleted':>11} {'RSS settled':>11} {'Pod store b/d':>13} {'Node':>5} "
          f"{'cache pods d':>12} {'pending d':>9} {'inst idle/pinned':>16} {'created':>7} {'discarded':>9} "
          f"{'malloc d':>9} {'py blocks d':>11} {'threads d':>9}")
    for w in waves:
        b, d = w["bound"], w["deleted"]
        inst = d["instances"]
        pinned = inst.get("scheduling", 0) + inst.get("binding", 0)
        tag = "  warm-up" if warm(w, warmup, warmup_seconds) else ""
        if heartbeat(w, nodes):
            tag += "  node heartbeat"
        if w.get("over_period"):
            tag += "  over period"
        if not w["complete"]:
            tag += "  INCOMPLETE"
        print(f"{w['wave']:>4} {w['pods_so_far']:>11} {w['create_seconds']:>8.1f} {w['bind_seconds']:>7.1f} "
              f"{w['delete_seconds']:>8.1f} {w['cpu_seconds']:>6.1f} {w.get('node_updates', '-'):>8} "
              f"{_mib(w['rss_bound_kib']):>7}Mi "
              f"{_mib(w['rss_deleted_kib']):>9}Mi {_mib(w.get('rss_settled_kib')):>9}Mi "
              f"{str(b['stores'].get('Pod', '-')) + '/' + str(d['stores'].get('Pod', '-')):>13} "
              f"{d['stores'].get('Node', '-'):>5} {d['cache'].get('pods', '-'):>12} "
              f"{sum(d['pending'].values()):>9} {str(inst.get('idle', 0)) + '/' + str(pinned):>16} "
              f"{d['created']:>7} {d['discarded']:>9} {_mib(d.get('malloc_kib')):>7}Mi "
              f"{d.get('python_blocks', '-'):>11} {d.get('threads', '-'):>9}{tag}")


def ascii_plot(series: list[dict[str, Any]], width: int = 100, height: int = 16) -> str:
    """RSS (MiB) against time: each column the max of its samples; B marks a column where a wave was
    being bound (created, scheduled), D where one was being deleted."""
    if not series:
        return "(no samples)"
    t_end = series[-1]["t"] or 1.0
    cols: list[list[dict[str, Any]]] = [[] for _ in range(width)]
    for s in series:
        cols[min(width - 1, int(s["t"] / t_end * (width - 1)))].append(s)
    vals = [max(s["rss_kib"] for s in c) / 1024 if c else None for c in cols]
    known = [v for v in vals if v is not None]
    lo, hi = min(known), max(known)
    span = (hi - lo) or 1.0
    rows = []
    for r in range(height, -1, -1):
        level = lo + span * r / height
        line = "".join("*" if v is not None and round((v - lo) / span * height) == r else
                       ("|" if v is not None and (v - lo) / span * height > r else " ") for v in vals)
        rows.append(f"{level:8.1f} Mi |{line}")
    phases = "".join(("B" if any(s["phase"] == "bind" for s in c) else
                      "D" if any(s["phase"] == "delete" for s in c) else ".") if c else " " for c in cols)
    rows.append(f"{'':8}    +{'-' * width}")
    rows.append(f"{'phase':>11} |{phases}")
    rows.append(f"{'':12}0 s{'':{width - 10}}{t_end:.0f} s")
    return "\n".join(rows)


def print_series(series: list[dict[str, Any]], every: int) -> None:
    """The samples, every `every`-th one: t, wave, phase, RSS."""
    print(" ".join(f"{s['t']:.0f}s:w{s['wave']}{s['phase'][0]}:{s['rss_kib'] / 1024:.1f}"
                   for s in series[::max(1, every)]))


# ----- the soak ---------------------------------------------------------------------------------------

def soak(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    cluster = DevCluster.up(tmp / "cluster", die_with_parent=True)
    log(f"dev-cluster up ({cluster.server})")
    token = cluster.admin_token
    try:
        api = KubeApi(load_configuration(str(cluster.kubeconfig)), ClientConnection(qps=0))
        create_nodes(api, cluster, args.nodes)
        api.request_json("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": NAMESPACE}})
        watcher = PodWatcher(api, NAMESPACE, 60)
        wasm = None if args.no_guest else ROOT / "examples/nodenumber/nodenumber.wasm"
        cfg = config(tmp / "soak.yaml", SCHEDULER, wasm, args.qps)
        port = free_port()
        log_path = tmp / "run.log"
        on_jemalloc = jemalloc_argv() if args.jemalloc else []
        argv = [*on_jemalloc, sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(cluster.kubeconfig),
                "--secure-port", str(port), "--bind-address", "127.0.0.1", "--cert-dir", str(tmp / "certs"),
                "--config", str(cfg)]
        t0 = time.perf_counter()
        node_updates = NodeUpdates(api, t0, 60)
        proc = SchedulerProcess(argv, ROOT, log_path, port)
        sampler = Sampler(proc.pid, t0)
        waves: list[dict[str, Any]] = []
        try:
            ready = proc.wait_ready(120 + args.nodes / 100)
            if ready is None:
                raise RuntimeError(f"`wasmsched run` not ready (see {log_path}):\n"
                                   + log_path.read_text(errors="replace")[-3000:])
            log(f"wasmsched run ready after {ready:.1f} s (pid {proc.pid})")
            before = scrape(proc, token)
            rss_ready = rss_kib(proc.pid)
            log(f"before the first wave: RSS {_mib(rss_ready)} MiB, {before}")
            done = 0
            wave = 0
            t_first = time.perf_counter()
            while done < args.pods and proc.alive():
                if args.max_seconds and time.perf_counter() - t_first > args.max_seconds:
                    log(f"--max-seconds {args.max_seconds:g} passed: no more waves ({done} pods done)")
                    break
                n = min(args.wave, args.pods - done)
                sampler.wave, sampler.phase = wave, "bind"
                cpu0 = process_cpu_seconds(proc.pid) or 0.0
                t = t_wave = time.perf_counter()
                errors = create_wave(api, wave, n)
                create_s = time.perf_counter() - t
                want = done + n - errors
                def all_bound(w: PodWatcher, want: int = want) -> bool:
                    return len(w.bound) >= want

                ok = watcher.wait(f"wave {wave}: {want} pods bound", all_bound, 120 + n / 5, proc.alive)
                bind_s = time.perf_counter() - t
                bound_g = scrape(proc, token)
                rss_bound = rss_kib(proc.pid)
                sampler.phase = "delete"
                t = time.perf_counter()
                delete_pods(api, NAMESPACE, time.monotonic() + 60 + n / 20)
                ok = watcher.wait(f"wave {wave}: the pods to be deleted", lambda w: not w.present,
                                  120 + n / 20, proc.alive) and ok
                # `run` sees the deletions through its own watch: wait until it has forgotten them.
                deadline = time.monotonic() + 60
                while True:
                    g = scrape(proc, token)
                    if forgotten(g, before) or time.monotonic() > deadline or not proc.alive():
                        break
                    time.sleep(0.5)
                delete_s = time.perf_counter() - t
                sampler.phase = "settle"
                settle = args.settle
                overran = False
                if args.wave_period:
                    # Read at the same offset from each wave's start (see --wave-period).
                    left = t_wave + args.wave_period - time.perf_counter()
                    overran = left < args.settle
                    settle = max(left, args.settle)
                    if overran:
                        log(f"wave {wave}: over --wave-period {args.wave_period:g} s; read {args.settle:g} s "
                            "after its deletion")
                time.sleep(settle)
                deleted_g = scrape(proc, token)
                rss_deleted = rss_kib(proc.pid)
                rss_settled = settled_rss(sampler.series, wave)
                rss_kinds = rss_by_kind(proc.pid)
                cpu = (process_cpu_seconds(proc.pid) or 0.0) - cpu0
                done += n
                row = {"wave": wave, "pods": n, "pods_so_far": done, "create_errors": errors,
                       "started_seconds": round(t_wave - t_first, 1), "over_period": overran,
                       "complete": bool(ok and errors == 0 and forgotten(deleted_g, before) and not watcher.rebound),
                       "create_seconds": round(create_s, 2), "bind_seconds": round(bind_s, 2),
                       "delete_seconds": round(delete_s, 2), "cpu_seconds": round(cpu, 2),
                       "rss_bound_kib": rss_bound, "rss_deleted_kib": rss_deleted, "rss_settled_kib": rss_settled,
                       "rss_deleted_by_kind": rss_kinds,
                       "node_updates": node_updates.between(t_wave - t0, time.perf_counter() - t0),
                       "bound": bound_g, "deleted": deleted_g}
                waves.append(row)
                log(f"wave {wave}: {done} pods so far, RSS bound {_mib(rss_bound)} MiB, deleted "
                    f"{_mib(rss_deleted)} MiB, Pod store {deleted_g['stores'].get('Pod')}, cache "
                    f"{deleted_g['cache']}, instances {deleted_g['instances']}, bind {bind_s:.0f} s, delete "
                    f"{delete_s:.0f} s"
                    f"{'' if row['complete'] else ' INCOMPLETE'}")
                if not row["complete"]:
                    break
                wave += 1
        finally:
            sampler.stop()
            proc.stop()
            watcher.close()
            node_updates.close()
            api.close()
        log_text = log_path.read_text(errors="replace")
        return {"ready_seconds": round(ready, 2) if ready is not None else None, "rss_ready_kib": rss_ready,
                "before": before, "waves": waves, "series": sampler.series, "exit_code": proc.proc.returncode,
                "cpu_total_seconds": proc.cpu_total,
                "node_update_seconds": [round(t, 1) for t in node_updates.times],
                "log_errors": [ln for ln in log_text.splitlines() if ln.startswith("E")][:20]}
    finally:
        cluster.down()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=100_000, help="pods over the whole soak")
    ap.add_argument("--wave", type=int, default=10_000, help="pods per wave")
    ap.add_argument("--warmup", type=int, default=2, help="waves before the slope is measured (the baseline)")
    ap.add_argument("--warmup-seconds", type=float, default=2 * EVENT_SERIES_WINDOW,
                    help="waves that start earlier are warm-up too (default: twice the event series window, 720 s: "
                         "the 100,000-pod soak of 2026-12-06 rose until ~570 s, then stayed flat)")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="start no wave after this many seconds (0: no limit); the soak ends with the waves done")
    # Longer than run's heap scavenger interval (cli/run.py HEAP_SCAVENGE_SECONDS, 10 s): the reading is the
    # state after a deletion, not whatever moment of the scavenger's cycle 3 s would catch (up to 30 MiB apart).
    ap.add_argument("--settle", type=float, default=15.0, help="seconds after a deletion before RSS is read")
    ap.add_argument("--wave-period", type=float, default=0.0,
                    help="start a wave every this many seconds and read RSS at the end of the period (0: each wave "
                         "right after the previous one's settle)")
    ap.add_argument("--qps", type=int, default=1000, help="run's clientConnection qps (burst twice that)")
    ap.add_argument("--slope-kib", type=float, default=1.0, help="the RSS slope limit, KiB per 1,000 pods")
    ap.add_argument("--no-guest", action="store_true", help="the default profile alone (no NodeNumber guest)")
    ap.add_argument("--jemalloc", action="store_true",
                    help="run `wasmsched run` on jemalloc, as the image does (LD_PRELOAD, MALLOC_CONF)")
    ap.add_argument("--out", default=str(ROOT / "bench/results/soak_cluster.json"))
    ap.add_argument("--report", metavar="JSON", default="",
                    help="run nothing: print the table and verdict of an earlier soak's JSON (its nodes, waves and "
                         "warm-up; this --slope-kib), e.g. to read a run recorded before a change to the verdict")
    args = ap.parse_args(argv)
    if args.report:
        doc = json.loads(Path(args.report).read_text())
        for key in ("nodes", "pods", "wave", "warmup", "warmup_seconds", "qps"):
            setattr(args, key, doc[key])
        args.no_guest = doc["guest"] is None
        args.jemalloc = doc.get("jemalloc", False)
        report(args, doc, doc["seconds"])
        return 0
    if min(args.nodes, args.pods, args.wave, args.qps) < 1 or args.warmup < 0:
        ap.error("--nodes, --pods, --wave and --qps must be positive, --warmup not negative")
    if args.wave > args.nodes * MAX_PODS_PER_NODE:
        ap.error(f"a wave of {args.wave} pods does not fit on {args.nodes} nodes of {MAX_PODS_PER_NODE} pods")
    wasm = ROOT / "examples/nodenumber/nodenumber.wasm"
    if not args.no_guest and not wasm.exists():
        print(f"error: {wasm} is missing: run `make examples/nodenumber/nodenumber.wasm`", file=sys.stderr)
        return 2
    load_before = [round(x, 2) for x in os.getloadavg()]
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wasmsched-soak-") as d:
        res = soak(args, Path(d))
    wall = time.perf_counter() - t
    doc = {"machine": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                       "load_avg_before": load_before, "load_avg_after": [round(x, 2) for x in os.getloadavg()]},
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "nodes": args.nodes, "pods": args.pods,
           "wave": args.wave, "warmup": args.warmup, "warmup_seconds": args.warmup_seconds,
           "max_seconds": args.max_seconds, "settle": args.settle, "qps": args.qps,
           "guest": None if args.no_guest else GUEST, "jemalloc": args.jemalloc, "seconds": round(wall, 1), **res}
    v = report(args, doc, wall)
    doc["verdict"] = v
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_jsonable(doc), indent=1) + "\n")
    log(f"wrote {out}")
    return 0 if v["complete"] and not v["leak"] and not v["malloc_growing"] else 1


def report(args: argparse.Namespace, res: dict[str, Any], wall: float) -> dict[str, Any]:
    """Prints the soak's table, plot, series and verdict; returns the verdict."""
    waves = res["waves"]
    for w in waves:  # a run recorded before rss_settled_kib existed: from its series
        if "rss_settled_kib" not in w:
            w["rss_settled_kib"] = settled_rss(res["series"], w["wave"])
    v = verdict(waves, res["before"], args.warmup, args.warmup_seconds, args.nodes, not args.no_guest,
                DEFAULT_MAX_INSTANCES, args.slope_kib)
    profile = ("default profile" if args.no_guest else "default profile + NodeNumber guest") + \
        (", on jemalloc" if args.jemalloc else "")
    print(f"# soak of `wasmsched run` ({profile}): {args.nodes} nodes, {sum(w['pods'] for w in waves)} of "
          f"{args.pods} pods in waves of {args.wave}, qps {args.qps}, {os.cpu_count()} CPUs, {wall:.0f} s")
    print(f"# ready after {res['ready_seconds']} s with RSS {_mib(res['rss_ready_kib'])} MiB; "
          f"before the first wave: stores {res['before']['stores']}, instances {res['before']['instances']}")
    print_table(waves, args.warmup, args.warmup_seconds, args.nodes)
    print()
    print(ascii_plot(res["series"]))
    print()
    print("# RSS series (t:w<wave><phase b=bind d=delete s=settle>:MiB), every "
          f"{max(1, len(res['series']) // 60)}th sample of {len(res['series'])}:")
    print_series(res["series"], max(1, len(res["series"]) // 60))
    print()
    slope = v["slope_kib_per_1000_pods"]
    sen, sen_lo, sen_hi = v["theil_sen_kib_per_1000_pods"]
    print(f"rss:       slope after warm-up ({v['post_warmup_waves']} waves, the median of RSS's samples after each "
          "deletion), KiB per "
          f"1,000 pods: Theil-Sen {sen} (95 % {sen_lo} to {sen_hi}), least squares "
          f"{slope if slope is not None else '-'} ± {v['slope_stderr_kib_per_1000_pods']}; limit {args.slope_kib}; "
          f"after-deletion range {_mib(v['rss_deleted_post_warmup_min_kib'])}-"
          f"{_mib(v['rss_deleted_post_warmup_max_kib'])} MiB, growth since warm-up {v['growth_after_warmup_kib']} "
          f"KiB: {v['rss'] if v['rss_ok'] else v['rss'].upper()}")
    if not v["node_updates_counted"]:
        print("heartbeat: node updates were not counted in this run: every wave after warm-up is read")
    elif v["heartbeat_waves"]:
        bs, blo, bhi = v["heartbeat_theil_sen_kib_per_1000_pods"]
        print(f"heartbeat: {len(v['heartbeat_waves'])} waves after warm-up met a node heartbeat (waves "
              f"{', '.join(map(str, v['heartbeat_waves']))}; at least {HEARTBEAT_SHARE:.0%} of the nodes updated) "
              f"and are not read above: their settled RSS, up to {_mib(v['rss_heartbeat_post_warmup_max_kib'])} "
              f"MiB, has the slope {bs} (95 % {blo} to {bhi}) KiB per 1,000 pods")
    ds, dlo, dhi = v["rss_deleted_theil_sen_kib_per_1000_pods"]
    print(f"rss read once at each reading's moment, KiB per 1,000 pods: Theil-Sen {ds} (95 % {dlo} to {dhi})")
    hs, hlo, hhi = v["malloc_theil_sen_kib_per_1000_pods"]
    print(f"malloc:    live C-heap bytes at the same moments, KiB per 1,000 pods: Theil-Sen {hs} (95 % {hlo} to "
          f"{hhi}), least squares {v['malloc_least_squares_kib_per_1000_pods']} ± "
          f"{v['malloc_stderr_kib_per_1000_pods']}: {_word(v['malloc'])}")
    bs, blo, bhi = v["python_blocks_theil_sen_per_1000_pods"]
    print(f"py blocks: Python's allocated blocks at the same moments, blocks per 1,000 pods: Theil-Sen {bs} "
          f"(95 % {blo} to {bhi}), least squares {v['python_blocks_least_squares_per_1000_pods']} ± "
          f"{v['python_blocks_stderr_per_1000_pods']}")
    for kind, (ks, klo, khi) in v["rss_by_kind_theil_sen_kib_per_1000_pods"].items():
        print(f"rss {kind}: KiB per 1,000 pods: Theil-Sen {ks} (95 % {klo} to {khi})")
    print(f"stores:    {'ok' if v['stores_ok'] else 'FAIL ' + '; '.join(v['store_problems'][:5])}")
    print(f"instances: {'ok' if v['instances_ok'] else 'FAIL ' + '; '.join(v['instance_problems'][:5])}"
          + (" (no guest)" if args.no_guest else ""))
    word = "LEAK" if v["malloc_growing"] else "no leak" if not v["leak"] else \
        "UNRESOLVED" if v["stores_ok"] and v["instances_ok"] and v["rss"] == "unresolved" else "LEAK"
    print(f"verdict:   {word}{'' if v['complete'] else ' (INCOMPLETE soak)'}")
    return v


if __name__ == "__main__":
    sys.exit(main())
