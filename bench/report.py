"""What `simulate --report` costs and how its page behaves in a browser, on synthetic clusters.

Per size: `simulate -o json` (the baseline, measured in the same run) and `simulate -o json --report` as
subprocesses (CPU seconds), the page's size beside the JSON output's, and in headless Chromium (Debian's, driven
by Playwright as tests/report does) the seconds until the page is ready (its first view drawn) and until each
other view is drawn (the pods view builds the table of every pod). Prints a table and writes JSON.

    .venv/bin/python bench/report.py [--sizes 2000x4000,5000x20000] [--out bench/results/report.json]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import load_avg, write_results

VIEWS = ("cluster", "pods", "plugins")


def simulate(argv: list[str], stdout: Path) -> float:
    """CPU seconds of one `wasmsched simulate` subprocess, its output into `stdout`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with stdout.open("w") as f:
        subprocess.run([sys.executable, "-m", "wasmsched", "simulate", *argv], check=True, stdout=f)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def open_page(path: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium")
    if exe is None:
        raise SystemExit("chromium is not installed: `make browser` installs it")
    out: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        out["open"] = time.perf_counter() - start
        for view in VIEWS:
            start = time.perf_counter()
            page.click(f"nav button[data-view={view}]")
            page.wait_for_selector(f"#view-{view}.active")
            # Drawn: the table's rows or the charts' canvases are there, and a frame was painted.
            page.wait_for_selector(f"#view-{view} {'.tabulator-row' if view == 'pods' else 'canvas'}")
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r(null)))")
            out[view] = time.perf_counter() - start
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000x4000,5000x20000", help="NODESxPODS,...")
    ap.add_argument("--out", default="bench/results/report.json")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            nodes, pods = (int(x) for x in size.split("x"))
            gen = ["--generate", f"nodes={nodes},pods={pods}"]
            json_out, page = Path(tmp) / "out.json", Path(tmp) / "report.html"
            base = simulate([*gen, "-o", "json"], json_out)
            cpu = simulate([*gen, "-o", "json", "--report", str(page)], Path(tmp) / "out2.json")
            times = open_page(page)
            rows.append({"nodes": nodes, "pods": pods, "simulate_cpu_s": round(base, 2),
                         "report_cpu_s": round(cpu, 2), "json_mib": round(json_out.stat().st_size / 2**20, 2),
                         "page_mib": round(page.stat().st_size / 2**20, 2),
                         **{f"{k}_s": round(v, 2) for k, v in times.items()}})
    header = ("nodes", "pods", "simulate_cpu_s", "report_cpu_s", "json_mib", "page_mib", "open_s",
              *(f"{v}_s" for v in VIEWS))
    print("  ".join(f"{h:>14}" for h in header))
    for r in rows:
        print("  ".join(f"{r[h]:>14}" for h in header))
    print("baseline: simulate -o json of the same cluster (its CPU seconds and output size), in the same run")
    write_results(Path(args.out), {"benchmark": "report", "load_avg": load_avg(), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
