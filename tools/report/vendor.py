#!/usr/bin/env python3
"""Puts the browser libraries the HTML report inlines into wasmsched/report/vendor (not committed).

The versions are pinned with their integrity hashes in tools/report/package-lock.json; `npm ci` installs
exactly those (verifying the hashes) into a cache outside the tree, keyed by the lock file's hash, and the
few files the report needs are copied from there with the libraries' licences. Idempotent: nothing is done
when the vendor directory was made from the same lock file. Run by `make setup` and by setup.py's build.

Apache ECharts (charts, heatmaps for thousands of nodes on a canvas) and Tabulator (a table of 20,000 pods
that renders only the visible rows, with filters): docs/architecture.md says why these two.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
LOCK = HERE / "package-lock.json"
DEST = ROOT / "wasmsched" / "report" / "vendor"
STAMP = DEST / ".stamp"
# vendor file -> its path under node_modules
FILES = {
    "echarts.min.js": "echarts/dist/echarts.min.js",
    "echarts.LICENSE": "echarts/LICENSE",
    "tabulator.min.js": "tabulator-tables/dist/js/tabulator.min.js",
    "tabulator.min.css": "tabulator-tables/dist/css/tabulator.min.css",
    "tabulator.LICENSE": "tabulator-tables/LICENSE",
}


class VendorError(Exception):
    """The libraries cannot be had; the text says what is needed."""


def lock_hash() -> str:
    h = hashlib.sha256(LOCK.read_bytes())
    h.update((HERE / "package.json").read_bytes())
    h.update(repr(sorted(FILES.items())).encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("WASMSCHED_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wasmsched")
    return Path(base) / "report-npm" / lock_hash()


def up_to_date() -> bool:
    return STAMP.is_file() and STAMP.read_text().strip() == lock_hash() and all(
        (DEST / f).is_file() for f in FILES)


def install() -> Path:
    """node_modules of the pinned libraries, installed into the cache on first use."""
    cache = cache_dir()
    modules = cache / "node_modules"
    if all((modules / src).is_file() for src in FILES.values()):
        return modules
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError("the HTML report inlines ECharts and Tabulator, which set-up installs with npm "
                          "(Node.js) from the npm registry: npm is not on PATH")
    cache.mkdir(parents=True, exist_ok=True)
    for f in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / f, cache / f)
    cmd = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(cmd, cwd=cache, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VendorError(f"{' '.join(cmd)} in {cache} failed: {done.stderr.strip() or done.stdout.strip()}")
    return modules


def main() -> int:
    if up_to_date():
        return 0
    try:
        modules = install()
    except VendorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    DEST.mkdir(parents=True, exist_ok=True)
    for name, src in FILES.items():
        shutil.copyfile(modules / src, DEST / name)
    STAMP.write_text(lock_hash() + "\n")
    print(f"report libraries: {', '.join(sorted(FILES))} in {DEST.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
