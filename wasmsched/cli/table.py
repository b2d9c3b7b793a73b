"""The table output of `simulate`: one row per pod, the summary line, and with --explain, under each
pod, why nodes were filtered out (grouped by reason) and the best nodes' weighted scores per plugin.

It renders the same document that `-o json`/`-o yaml` print, so the three outputs never disagree.
With more pods than a limit (simulate's --limit, 50 unless --all), only the pods that need a look
are listed (those not Scheduled, Running or Pending), at most `limit` of them, and one line counts the rest:
20,000 rows of "Scheduled" would bury them, and -o json has every pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wasmsched.cli.color import GREEN, RED, YELLOW, paint

HEADER = ("NAMESPACE", "NAME", "PHASE", "NODE", "ATTEMPTS", "MESSAGE")
# Counts after "preempted" in the summary line, shown only when not zero.
EXTRA_COUNTS = ("error", "ignored", "running", "pending")
# Phases a long table leaves out: the pod went where it should, or (interrupted) nothing is decided yet.
QUIET_PHASES = ("Scheduled", "Running", "Pending")
PHASE_COLORS = {"Scheduled": GREEN, "Running": GREEN, "Unschedulable": RED, "Error": RED, "Preempted": YELLOW}
BEST_NODES = 3
NODE_NAMES_PER_REASON = 5
INDENT = "    "


def format_table(doc: Mapping[str, Any], *, limit: int | None = None, color: bool = False) -> str:
    """`limit`: None lists every pod; else, when there are more pods than that, see the module's doc."""
    pods: Sequence[Mapping[str, Any]] = doc["pods"]
    listed = pods
    if limit is not None and len(pods) > limit:
        listed = [p for p in pods if p["phase"] not in QUIET_PHASES][:limit]
    lines = []
    if listed:
        rows = [HEADER] + [_row(p) for p in listed]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
        phase = HEADER.index("PHASE")
        for i, r in enumerate(rows):
            cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)]
            if i:
                # Padded first, painted after: the escape codes take no column.
                cells[phase] = paint(r[phase], PHASE_COLORS.get(r[phase], ""), color) + cells[phase][len(r[phase]):]
            lines.append("  ".join(cells) + "  " + r[-1])
            if i and "filter" in listed[i - 1]:
                lines.extend(INDENT + line for line in explain_lines(listed[i - 1]))
        lines.append("")
    if len(listed) < len(pods):
        lines.append(not_listed_line(pods, listed))
    lines.append(summary_line(doc["summary"]))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def not_listed_line(pods: Sequence[Mapping[str, Any]], listed: Sequence[Mapping[str, Any]]) -> str:
    shown = {id(p) for p in listed}
    by_phase: dict[str, int] = {}
    for p in pods:
        if id(p) not in shown:
            by_phase[p["phase"]] = by_phase.get(p["phase"], 0) + 1
    counts = ", ".join(f"{n} {phase}" for phase, n in by_phase.items())
    hidden = len(pods) - len(listed)
    return (f"{hidden} of {len(pods)} pods not listed ({counts}): --all or --limit N lists more, "
            f"-o json every pod")


def _row(p: Mapping[str, Any]) -> tuple[str, ...]:
    node = p["node"] or (f"(nominated {p['nominatedNode']})" if p["nominatedNode"] else "-")
    return (p["namespace"], p["name"], p["phase"], node, str(p["attempts"]), one_line(p["message"]))


def one_line(message: str, rest_is: str = "in -o json") -> str:
    """The first line of a message; a wasm error's stack trace stays in json/yaml and the -v logs."""
    first, _, rest = message.partition("\n")
    if not rest:
        return first
    more = rest.count("\n") + 1
    return f"{first} [{more} more line{'s' if more > 1 else ''} {rest_is}]"


def summary_line(s: Mapping[str, Any]) -> str:
    parts = [f"{s['scheduled']} scheduled", f"{s['unschedulable']} unschedulable", f"{s['preempted']} preempted"]
    parts += [f"{s[k]} {k}" for k in EXTRA_COUNTS if s.get(k)]
    line = f"{', '.join(parts)} in {s['seconds']:.3f}s"
    return line + " (interrupted)" if s.get("interrupted") else line


# ----- --explain ------------------------------------------------------------------------------


def explain_lines(pod: Mapping[str, Any]) -> list[str]:
    """Text lines (without indentation) explaining one pod's last scheduling attempt."""
    filt: Mapping[str, Any] = pod.get("filter") or {}
    scores: Mapping[str, Mapping[str, int]] = pod.get("scores") or {}
    if not filt:
        return []
    passed = [n for n, st in filt.items() if st == "ok"]
    rejected = {n: st for n, st in filt.items() if st != "ok"}
    lines = [f"filter: {len(passed)} of {len(filt)} nodes passed"
             + (f", {len(rejected)} filtered out:" if rejected else "")]
    lines += ["  " + line for line in _reason_lines(rejected)]
    if scores:
        lines.append(f"score: best {min(BEST_NODES, len(scores))} of {len(scores)} nodes (weighted):")
        lines += ["  " + line for line in _score_lines(scores)]
    elif len(passed) == 1:
        lines.append("score: one feasible node, not scored")
    return lines


def _reason_lines(rejected: Mapping[str, Mapping[str, Any]]) -> list[str]:
    if not rejected:
        return []
    groups: dict[tuple[str, str], list[str]] = {}
    for node, st in rejected.items():
        groups.setdefault((st.get("plugin", ""), one_line(", ".join(st.get("reasons", ())))), []).append(node)
    ordered = sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))
    count_w = max(len(str(len(nodes))) for _, nodes in ordered)
    plugin_w = max(len(plugin) for (plugin, _), _ in ordered)
    out = []
    for (plugin, reason), nodes in ordered:
        out.append(f"{len(nodes):>{count_w}}  {plugin:<{plugin_w}}  {reason}  ({_node_names(nodes)})")
    return out


def _node_names(nodes: Sequence[str]) -> str:
    shown = ", ".join(sorted(nodes)[:NODE_NAMES_PER_REASON])
    more = len(nodes) - NODE_NAMES_PER_REASON
    return f"{shown}, and {more} more" if more > 0 else shown


def _score_lines(scores: Mapping[str, Mapping[str, int]]) -> list[str]:
    best = sorted(scores, key=lambda n: (-scores[n]["total"], n))[:BEST_NODES]
    plugins: list[str] = []
    for n in best:
        plugins += [p for p in scores[n] if p != "total" and p not in plugins]
    rows = [("PLUGIN", *best)]
    rows += [(p, *(str(scores[n].get(p, "-")) for n in best)) for p in plugins]
    rows.append(("TOTAL", *(str(scores[n]["total"]) for n in best)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))])
            for r in rows]
