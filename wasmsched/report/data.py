"""The data of a report: one finished simulation as a JSON document that the HTML page (report/html.py) and
`compare` (report/compare.py) read.

It is columnar and interned (pods and nodes as parallel arrays, node names as indexes, repeated messages
once) because a 5,000-node, 20,000-pod run must stay a few megabytes. Per pod it keeps what --explain shows,
summarised (scheduler/algorithm.py's FilterSummary: counts per Filter verdict with the first node names,
and the best nodes' weighted scores), so the page says what was cut (`notes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wasmsched.embedded.memory import KIND_POD
from wasmsched.framework.interface import EXTENSION_POINTS
from wasmsched.framework.status import Status, is_success
from wasmsched.scheduler.algorithm import SUMMARY_BEST_NODES, SUMMARY_NODE_NAMES, CycleExplain, FilterGroup
from wasmsched.scheduler.cache import ZONE_LABELS

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics
    from wasmsched.simulator.simulation import Simulation, SimulationResult

# The report document's shape; the page and `compare` check it.
FORMAT = "wasmsched.report/v1"
# Resources every node has; extended resources are added when some node has them.
BASE_RESOURCES = ("cpu", "memory", "pods")
PLUGIN_DURATION = "scheduler_plugin_execution_duration_seconds"
EXTENSION_POINT_DURATION = "scheduler_framework_extension_point_duration_seconds"


@dataclass
class _Strings:
    """Interned strings: the document holds each once and refers to it by index."""

    items: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.items)
            self.items.append(s)
        return i


def report_document(sim: Simulation, result: SimulationResult, *, title: str, config: str | None,
                    metrics: SchedulerMetrics | None) -> dict[str, Any]:
    """The report of a finished run. `config`: the configuration file's path (None: the defaults)."""
    strings = _Strings()
    nodes = node_usage(sim)
    node_index = {n: i for i, n in enumerate(nodes["names"])}
    pods = _pods(result, strings, node_index)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "title": title,
        "config": config,
        "summary": {
            **{phase: result.count(phase) for phase in sorted({p.phase for p in result.pods})},
            "pods": len(result.pods), "nodes": len(nodes["names"]), "seconds": round(result.seconds, 3),
        },
        "profiles": profiles_document(sim),
        "wasm": result.extra_summary.get("wasm", {}),
        "nodes": nodes,
        "pods": pods,
        "plugins": plugin_document(result, metrics),
        "strings": strings.items,
        "notes": [
            f"Per pod, the last scheduling attempt is shown: Filter verdicts are counted per plugin and reason "
            f"with the first {SUMMARY_NODE_NAMES} node names of each, and scores are kept for the "
            f"{SUMMARY_BEST_NODES} best nodes.",
        ],
    }
    if metrics is not None:
        doc["notes"].append(f"Plugin times are measured in {metrics.plugin_metrics_sample_percent}% of scheduling "
                            "cycles (kube-scheduler samples 10%); extension point times in every cycle.")
    return doc


def node_usage(sim: Simulation) -> dict[str, Any]:
    """Per node, in name order: zone, allocatable and requested resources after the run (the scheduler's
    cache: what its plugins saw), as parallel arrays."""
    cache = sim.scheduler.cache
    snap = sim.scheduler.algorithm.snapshot
    cache.update_snapshot(snap)
    infos = sorted(snap.list(), key=lambda ni: ni.name)
    extended = sorted({r for ni in infos for r in ni.allocatable.scalar_resources})
    resources = [*BASE_RESOURCES, *extended]
    alloc: dict[str, list[int]] = {r: [] for r in resources}
    req: dict[str, list[int]] = {r: [] for r in resources}
    zones: list[str] = []
    for ni in infos:
        a, q = ni.allocatable, ni.requested
        for r, av, qv in (("cpu", a.milli_cpu, q.milli_cpu), ("memory", a.memory, q.memory),
                          ("pods", a.allowed_pod_number, len(ni.pods))):
            alloc[r].append(av)
            req[r].append(qv)
        for r in extended:
            alloc[r].append(a.scalar_resources.get(r, 0))
            req[r].append(q.scalar_resources.get(r, 0))
        labels = ni.node.metadata.labels if ni.node is not None else {}
        zones.append(next((labels[k] for k in ZONE_LABELS if k in labels), ""))
    return {"names": [ni.name for ni in infos], "zones": zones, "resources": resources,
            "allocatable": alloc, "requested": req}


def profiles_document(sim: Simulation) -> list[dict[str, Any]]:
    """Each profile's enabled plugins per extension point, with score weights and which are wasm guests."""
    out = []
    for name, fwk in sim.scheduler.profiles.items():
        points: dict[str, list[str]] = {}
        for ep in EXTENSION_POINTS:
            if ep.interface is None:
                continue
            names = [pl.name for pl in fwk.plugins.of(ep.attr)]
            if names:
                points[ep.key] = names
        wasm = sorted(n for n, pl in fwk.plugins_map.items() if getattr(pl, "counters", None) is not None)
        out.append({"schedulerName": name, "extensionPoints": points,
                    "weights": dict(fwk.score_plugin_weight), "wasm": wasm})
    return out


def _pods(result: SimulationResult, strings: _Strings, node_index: Mapping[str, int]) -> dict[str, Any]:
    events: dict[str, list[list[int]]] = {}
    for e in result.events:
        events.setdefault(e.regarding, []).append([strings(e.type), strings(e.reason), strings(e.message)])
    # kube's event on each victim: "Preempted by pod <preemptor's UID> on node <node>".
    victims: dict[str, list[str]] = {}
    for e in result.events:
        if e.reason == "Preempted" and e.message.startswith("Preempted by pod "):
            uid = e.message.removeprefix("Preempted by pod ").split(" ", 1)[0]
            victims.setdefault(uid, []).append(e.regarding)
    cols: dict[str, list[Any]] = {k: [] for k in ("namespace", "name", "phase", "node", "nominated", "attempts",
                                                    "message", "explain", "events", "victims")}
    for p in result.pods:
        key = f"{p.namespace}/{p.name}"
        cols["namespace"].append(strings(p.namespace))
        cols["name"].append(p.name)
        cols["phase"].append(strings(p.phase))
        cols["node"].append(node_index.get(p.node, -1) if p.node else -1)
        cols["nominated"].append(node_index.get(p.nominated_node, -1) if p.nominated_node else -1)
        cols["attempts"].append(p.attempts)
        cols["message"].append(strings(p.message))
        cols["explain"].append(explain_summary(p.explain, strings, node_index))
        cols["events"].append(events.get(key, []))
        pod = result.cluster.get(KIND_POD, key) if victims else None
        cols["victims"].append(victims.get(pod.metadata.uid, []) if pod is not None else [])
    return cols


def explain_summary(ex: CycleExplain | None, strings: _Strings, node_index: Mapping[str, int]) -> dict[str, Any] | None:
    """A pod's last attempt: Filter verdict groups [count, plugin, code, reasons, node indexes], how many nodes
    passed / were not evaluated, and the best nodes' scores {nodes, plugins, scores (per node, per plugin),
    totals}. From the summary form or, with --explain, from the full one."""
    if ex is None:
        return None
    groups = ex.filter_summary.groups if ex.filter_summary is not None else _groups(ex.filter)
    nodes = ex.filter_summary.nodes if ex.filter_summary is not None else len(node_index)
    passed = ex.filter_summary.passed if ex.filter_summary is not None else sum(
        1 for st in ex.filter.values() if st is None)
    not_evaluated = ex.filter_summary.not_evaluated if ex.filter_summary is not None else max(
        nodes - len(ex.filter), 0)
    best = sorted(ex.scores, key=lambda s: (-s.total_score, s.name))[:SUMMARY_BEST_NODES]
    plugins: list[str] = []
    for s in best:
        plugins += [ps.name for ps in s.scores if ps.name not in plugins]
    per_node = [{ps.name: ps.score for ps in s.scores} for s in best]
    pre = ex.pre_filter
    return {
        "preFilter": None if pre is None or is_success(pre) else _status(pre, strings),
        "passed": passed, "notEvaluated": not_evaluated, "nominatedFastPath": ex.nominated_fast_path,
        "filter": [[g.count, *_status(g.status, strings), [node_index.get(n, -1) for n in g.nodes]] for g in groups],
        "scores": {
            "nodes": [node_index.get(s.name, -1) for s in best],
            "plugins": [strings(p) for p in plugins],
            "values": [[scores.get(p, 0) for p in plugins] for scores in per_node],
            "totals": [s.total_score for s in best],
        },
    }


def _status(st: Status, strings: _Strings) -> list[int]:
    return [strings(st.plugin or ""), strings(str(st.code)), strings(", ".join(st.reasons))]


def _groups(filt: Mapping[str, Status | None]) -> list[FilterGroup]:
    by: dict[tuple[str, str, tuple[str, ...]], tuple[Status, list[str]]] = {}
    for node, st in filt.items():
        if st is not None:
            by.setdefault((st.plugin or "", str(st.code), tuple(st.reasons)), (st, []))[1].append(node)
    groups = [FilterGroup(st, len(nodes), sorted(nodes)[:SUMMARY_NODE_NAMES]) for st, nodes in by.values()]
    groups.sort(key=lambda g: (-g.count, g.status.plugin or "", g.status.reasons))
    return groups


def plugin_document(result: SimulationResult, metrics: SchedulerMetrics | None) -> dict[str, Any]:
    """Per plugin: nodes its Filter rejected (summed over pods' last attempts), the distribution of its
    weighted scores on the best nodes, and its time per extension point from the metrics."""
    rejected: dict[str, int] = {}
    scores: dict[str, dict[int, int]] = {}
    for p in result.pods:
        ex = p.explain
        if ex is None:
            continue
        groups = ex.filter_summary.groups if ex.filter_summary is not None else _groups(ex.filter)
        for g in groups:
            name = g.status.plugin or "(none)"
            rejected[name] = rejected.get(name, 0) + g.count
        for s in sorted(ex.scores, key=lambda s: (-s.total_score, s.name))[:SUMMARY_BEST_NODES]:
            for ps in s.scores:
                hist = scores.setdefault(ps.name, {})
                hist[ps.score] = hist.get(ps.score, 0) + 1
    return {
        "rejected": dict(sorted(rejected.items(), key=lambda kv: -kv[1])),
        "scores": {name: sorted(h.items()) for name, h in sorted(scores.items())},
        "time": _durations(metrics, PLUGIN_DURATION, ("plugin", "extension_point")),
        "extensionPoints": _durations(metrics, EXTENSION_POINT_DURATION, ("extension_point",)),
    }


def _durations(metrics: SchedulerMetrics | None, metric: str, by: Iterable[str]) -> list[dict[str, Any]]:
    """A duration histogram's sum and count per label set (other labels summed), most time first."""
    if metrics is None:
        return []
    keys = tuple(by)
    acc: dict[tuple[str, ...], list[float]] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name not in (f"{metric}_sum", f"{metric}_count"):
                continue
            k = tuple(sample.labels.get(label, "") for label in keys)
            entry = acc.setdefault(k, [0.0, 0.0])
            entry[0 if sample.name.endswith("_sum") else 1] += sample.value
    ordered = sorted(acc.items(), key=lambda kv: -kv[1][0])
    return [{**dict(zip(keys, k, strict=True)), "seconds": v[0], "count": int(v[1])} for k, v in ordered]
