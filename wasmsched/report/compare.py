"""`wasmsched compare`'s document: two report documents (report/data.py) of the same input scheduled with two
configurations, and what changed between them — pods that moved, pods newly (not) scheduled, each node's
utilization, the balance across nodes and zones, the plugins' time."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

FORMAT = "wasmsched.compare/v1"
# A pod is placed when it ends on a node: scheduled by this run, or running from the input.
PLACED = ("Scheduled", "Running")


def compare_document(runs: Sequence[tuple[str, str | None, Mapping[str, Any]]], title: str) -> dict[str, Any]:
    """`runs`: (label, config path or None for the defaults, report document) of the baseline, then the
    candidate."""
    (_, _, a), (_, _, b) = runs
    return {
        "format": FORMAT,
        "title": title,
        "runs": [{"label": label, "config": config, "report": doc} for label, config, doc in runs],
        "diff": diff(a, b),
    }


def placements(doc: Mapping[str, Any]) -> dict[str, tuple[str, str | None, str]]:
    """namespace/name -> (phase, node or None, message) of every pod of a report document."""
    p, strings, names = doc["pods"], doc["strings"], doc["nodes"]["names"]
    out = {}
    for i, name in enumerate(p["name"]):
        phase = strings[p["phase"][i]]
        node = names[p["node"][i]] if p["node"][i] >= 0 and phase in PLACED else None
        out[f"{strings[p['namespace'][i]]}/{name}"] = (phase, node, strings[p["message"][i]])
    return out


def diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    pa, pb = placements(a), placements(b)
    moved, unplaced, placed = [], [], []
    for key, (phase_a, node_a, _) in pa.items():
        phase_b, node_b, message_b = pb.get(key, ("Absent", None, ""))
        if node_a and node_b and node_a != node_b:
            moved.append([key, node_a, node_b])
        elif node_a and not node_b:
            unplaced.append([key, node_a, phase_b, message_b.split("\n", 1)[0]])
        elif not node_a and node_b:
            placed.append([key, phase_a, node_b])
    phases = sorted({k for k in (*a["summary"], *b["summary"]) if k[:1].isupper()})
    return {
        "phases": {ph: [a["summary"].get(ph, 0), b["summary"].get(ph, 0)] for ph in phases},
        "moved": moved,
        "newlyUnschedulable": unplaced,
        "newlyPlaced": placed,
        "nodes": node_changes(a["nodes"], b["nodes"]),
        "balance": balance(a["nodes"], b["nodes"]),
        "pluginTime": plugin_time(a["plugins"]["time"], b["plugins"]["time"]),
    }


def utilization(nodes: Mapping[str, Any], resource: str) -> list[float]:
    """Per node, the share of `resource` requested, in percent (0 where the node has none)."""
    alloc, req = nodes["allocatable"].get(resource), nodes["requested"].get(resource)
    if alloc is None:
        return [0.0] * len(nodes["names"])
    return [100.0 * q / al if al > 0 else 0.0 for al, q in zip(alloc, req, strict=True)]


def node_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Per node of the baseline, the change of each resource's utilization, in percentage points."""
    resources = [r for r in a["resources"] if r in b["resources"]]
    index_b = {n: i for i, n in enumerate(b["names"])}
    change: dict[str, list[float]] = {}
    for r in resources:
        ua, ub = utilization(a, r), utilization(b, r)
        change[r] = [round(ub[index_b[n]] - ua[i], 3) if n in index_b else 0.0 for i, n in enumerate(a["names"])]
    return {"names": a["names"], "resources": resources, "change": change}


def spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    return {"mean": round(statistics.fmean(values), 3), "stddev": round(statistics.pstdev(values), 3),
            "min": round(min(values), 3), "max": round(max(values), 3)}


def balance(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """The spread of CPU and memory utilization across nodes, and each zone's utilization, in both runs."""
    resources = [r for r in ("cpu", "memory", "pods") if r in a["resources"]]
    nodes = {r: [spread(utilization(a, r)), spread(utilization(b, r))] for r in resources}
    zones: dict[str, dict[str, list[float]]] = {}
    for zone in sorted({z for z in a["zones"] if z}):
        zones[zone] = {r: [zone_utilization(a, zone, r), zone_utilization(b, zone, r)] for r in resources}
    return {"nodes": nodes, "zones": zones}


def zone_utilization(nodes: Mapping[str, Any], zone: str, resource: str) -> float:
    idx = [i for i, z in enumerate(nodes["zones"]) if z == zone]
    alloc = sum(nodes["allocatable"][resource][i] for i in idx)
    req = sum(nodes["requested"][resource][i] for i in idx)
    return round(100.0 * req / alloc, 3) if alloc else 0.0


def plugin_time(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Seconds per plugin and extension point in both runs, the largest change first."""
    acc: dict[tuple[str, str], list[float]] = {}
    for run, rows in enumerate((a, b)):
        for r in rows:
            acc.setdefault((r["plugin"], r["extension_point"]), [0.0, 0.0])[run] += r["seconds"]
    ordered = sorted(acc.items(), key=lambda kv: -abs(kv[1][1] - kv[1][0]))
    return [{"plugin": p, "extension_point": ep, "seconds": v} for (p, ep), v in ordered]
