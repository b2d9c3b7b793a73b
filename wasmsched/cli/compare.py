"""`wasmsched compare`: schedule the same input with two configurations and report what changed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from wasmsched.cli import color, simulate
from wasmsched.cli.progress import show_progress, wanted

# How many rows of each list the table prints; -o json has them all.
TABLE_ROWS = 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", action="append", default=[], metavar="FILE",
                   help="a KubeSchedulerConfiguration: given twice, the baseline then the candidate; given once, "
                        "the candidate, compared with kube-scheduler's default configuration")
    p.add_argument("--output", "-o", choices=("table", "json"), default="table")
    p.add_argument("--report", metavar="FILE.html", help="write the comparison as a self-contained HTML page")
    simulate.add_input_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if len(args.config) not in (1, 2):
        color.error("compare needs --config CANDIDATE, or --config BASELINE --config CANDIDATE")
        return 2
    configs: list[str | None] = [None, *args.config] if len(args.config) == 1 else list(args.config)
    try:
        if args.report:
            simulate.check_metrics_file(Path(args.report), "--report")
        runs = [(label, cfg, schedule(args, cfg)) for label, cfg in zip(("baseline", "candidate"), configs,
                                                                          strict=True)]
    except simulate.BadInput as e:
        color.error(str(e))
        return 2
    from wasmsched.report.compare import compare_document

    inputs = " ".join([*args.paths, *([f"--generate {args.generate}"] if args.generate else [])])
    doc = compare_document(runs, f"wasmsched compare {inputs}")
    if args.output == "json":
        json.dump(doc["diff"] | {"runs": [{"label": r["label"], "config": r["config"],
                                            "summary": r["report"]["summary"]} for r in doc["runs"]]},
                  sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        write_table(doc, sys.stdout)
    if args.report:
        from wasmsched.report import html

        html.write(Path(args.report), doc)
    return 0


def schedule(args: argparse.Namespace, config: str | None) -> dict[str, Any]:
    """One run of the input with `config`, as `simulate --report` runs it; its report document."""
    one = argparse.Namespace(**{**vars(args), "config": config, "explain": False, "metrics": None,
                                "report": "compare"})
    sim, warnings = simulate._build(one)
    for w in warnings:
        color.warning(w)
    try:
        # Ctrl-C ends the comparison (main's 130): half a run compared with a whole one would mislead.
        with show_progress(sim, f"compare: {config or 'defaults'}", sys.stderr,
                           enabled=args.output == "table" and wanted(sys.stderr, quiet=args.quiet)):
            result = sim.run_until_quiet()
        return simulate.report_document(sim, result, title=config or "default configuration", config=config,
                                        metrics=sim.scheduler.metrics)
    finally:
        sim.scheduler.close()


def write_table(doc: Mapping[str, Any], out: TextIO) -> None:
    d = doc["diff"]
    a, b = (r["config"] or "(defaults)" for r in doc["runs"])
    out.write(f"baseline: {a}\ncandidate: {b}\n\n")
    _write_rows(out, [("PHASE", "BASELINE", "CANDIDATE", "CHANGE")] + [
        (ph, str(x), str(y), f"{y - x:+d}") for ph, (x, y) in d["phases"].items()])
    for key, title, header in (("moved", "moved", ("POD", "FROM", "TO")),
                               ("newlyUnschedulable", "no longer placed", ("POD", "WAS ON", "NOW", "MESSAGE")),
                               ("newlyPlaced", "newly placed", ("POD", "WAS", "NOW ON"))):
        rows = d[key]
        out.write(f"\n{len(rows)} pod{'s' if len(rows) != 1 else ''} {title}\n")
        if rows:
            _write_rows(out, [header, *(tuple(r) for r in rows[:TABLE_ROWS])])
            if len(rows) > TABLE_ROWS:
                out.write(f"... and {len(rows) - TABLE_ROWS} more (-o json lists all)\n")
    out.write("\nbalance: % requested across nodes (mean, standard deviation, max)\n")
    _write_rows(out, [("RESOURCE", "MEAN", "STDDEV", "MAX")] + [
        (r, *(f"{v[0][k]:.1f} -> {v[1][k]:.1f}" for k in ("mean", "stddev", "max")))
        for r, v in d["balance"]["nodes"].items()])
    zones = d["balance"]["zones"]
    if zones:
        out.write("\nzones: % requested\n")
        _write_rows(out, [("ZONE", "RESOURCE", "BASELINE", "CANDIDATE")] + [
            (z, r, f"{x:.1f}", f"{y:.1f}") for z, res in zones.items() for r, (x, y) in res.items()])
    changes = [t for t in d["pluginTime"] if t["seconds"][0] != t["seconds"][1]][:TABLE_ROWS // 2]
    if changes:
        out.write("\nplugin time, the largest changes (ms)\n")
        _write_rows(out, [("PLUGIN", "EXTENSION POINT", "BASELINE", "CANDIDATE")] + [
            (t["plugin"], t["extension_point"], f"{t['seconds'][0] * 1e3:.2f}", f"{t['seconds'][1] * 1e3:.2f}")
            for t in changes])


def _write_rows(out: TextIO, rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
