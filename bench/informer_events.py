"""What a pod's watch events cost the informer side of `wasmsched run`: decoding the protobuf frame and
the scheduler's handlers, per event, for the events a pod sees on a real cluster (its binding, then two
status updates by the kubelet), with 500 nodes and N pods in the cache.

The baseline, measured in the same run, is the path without `resources.same_request_inputs` (every
status update reads the pod's requests again, as before issue 23). Prints a table, writes JSON.

    .venv/bin/python bench/informer_events.py [--pods 2000] [--out bench/results/informer_events.json]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.gen.k8s_io.apimachinery.pkg.runtime import generated_pb2 as runtime_pb
from wasmsched.api.kinds import RESOURCES
from wasmsched.api.types import Pod
from wasmsched.config import load_config
from wasmsched.kube import codec
from wasmsched.kube.informer import Handler, Informer
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler import cache as cache_mod
from wasmsched.scheduler import events as events_mod
from wasmsched.scheduler.eventhandlers import add_all_event_handlers
from wasmsched.scheduler.factory import new_scheduler
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import RecordingClient, RecordingEvents

ROOT = Path(__file__).resolve().parents[1]


class _Source:
    def __init__(self) -> None:
        self.informers: dict[str, Informer] = {}

    def watch(self, kind: str, on_add: Any, on_update: Any, on_delete: Any) -> None:
        inf = self.informers.setdefault(kind, Informer(None, RESOURCES[kind]))  # type: ignore[arg-type]
        inf.add_handler(Handler(on_add, on_update, on_delete))


def _frame(etype: str, pod: Pod) -> bytes:
    u = runtime_pb.Unknown()
    u.typeMeta.apiVersion, u.typeMeta.kind = "v1", "Pod"
    u.raw = pod.SerializeToString()
    ev = meta_pb.WatchEvent()
    ev.type = etype
    ev.object.raw = codec.MAGIC + u.SerializeToString()
    b = ev.SerializeToString()
    return len(b).to_bytes(4, "big") + b


def _copy(p: Pod, rv: str) -> Pod:
    c = Pod()
    c.CopyFrom(p)
    c.metadata.resourceVersion = rv
    return c


def _events(n: int) -> dict[str, list[Pod]]:
    """The pods unscheduled, then each of the three updates a pod gets on a KWOK cluster."""
    out: dict[str, list[Pod]] = {"created": [], "binding": [], "status: running": [], "status: ready": []}
    for i in range(n):
        p = make_pod(f"p{i}").uid(f"u{i}").req(cpu="100m", memory="500Mi").label("app", "x").obj()
        p.metadata.resourceVersion = "1"
        out["created"].append(p)
        b = _copy(p, "2")
        b.spec.nodeName = f"n{i % 500}"
        c = b.status.conditions.add()
        c.type, c.status = "PodScheduled", "True"
        out["binding"].append(b)
        r = _copy(b, "3")
        r.status.phase, r.status.podIP, r.status.hostIP = "Running", "10.0.0.1", "10.1.1.1"
        r.status.startTime.seconds = 1000
        cs = r.status.containerStatuses.add()
        cs.name, cs.image = r.spec.containers[0].name, "pause"
        cs.state.running.startedAt.seconds = 1000
        out["status: running"].append(r)
        q = _copy(r, "4")
        q.status.containerStatuses[0].ready = True
        for t in ("Initialized", "Ready", "ContainersReady"):
            c = q.status.conditions.add()
            c.type, c.status = t, "True"
        out["status: ready"].append(q)
    return out


def measure(pods: int) -> dict[str, tuple[float, float]]:
    """(decode µs, handlers µs) per event, by event."""
    s = new_scheduler(load_config(None), in_tree_registry(), RecordingClient(), RecordingEvents(), time.monotonic,
                      binding_workers=0)
    src = _Source()
    add_all_event_handlers(s, src)
    for i in range(500):
        src.informers["Node"]._apply("ADDED", make_node(f"n{i}").capacity(cpu="4", memory="16Gi", pods="110").obj())
    inf = src.informers["Pod"]
    out = {}
    for label, objs in _events(pods).items():
        data = b"".join(_frame("ADDED" if label == "created" else "MODIFIED", p) for p in objs)
        t0 = time.process_time()
        evs = list(codec.protobuf_watch_events(io.BytesIO(data), Pod))
        t1 = time.process_time()
        for ev in evs:
            inf._apply(ev.type, ev.object)
        t2 = time.process_time()
        out[label] = (1e6 * (t1 - t0) / len(objs), 1e6 * (t2 - t1) / len(objs))
    return out


def _without_same_request_inputs(fn: Callable[[], Any]) -> Any:
    saved = cache_mod.same_request_inputs, events_mod.same_request_inputs
    cache_mod.same_request_inputs = events_mod.same_request_inputs = lambda a, b: False  # type: ignore[assignment]
    try:
        return fn()
    finally:
        cache_mod.same_request_inputs, events_mod.same_request_inputs = saved


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3, help="both paths this many times, interleaved; best kept")
    ap.add_argument("--out", default=str(ROOT / "bench/results/informer_events.json"))
    args = ap.parse_args()
    now: list[dict[str, tuple[float, float]]] = []
    base: list[dict[str, tuple[float, float]]] = []
    for _ in range(args.rounds):
        now.append(measure(args.pods))
        base.append(_without_same_request_inputs(lambda: measure(args.pods)))
    rows = []
    print(f"{'event':<18} {'decode µs':>10} {'handlers µs':>12} {'baseline µs':>12} {'ratio':>7}")
    for label in now[0]:
        dec = min(r[label][0] for r in now)
        h = min(r[label][1] for r in now)
        hb = min(r[label][1] for r in base)
        rows.append({"event": label, "decode_us": round(dec, 1), "handlers_us": round(h, 1),
                     "baseline_handlers_us": round(hb, 1)})
        print(f"{label:<18} {dec:>10.1f} {h:>12.1f} {hb:>12.1f} {hb / h:>6.2f}x")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"pods": args.pods, "nodes": 500, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
