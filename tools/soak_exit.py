"""Runs the demo command many times, a few at a time, and counts the exit codes.

A soak test for crashes at exit (an abort there is exit code 134 after correct output), which a
single run shows only now and then:

    .venv/bin/python tools/soak_exit.py            # 200 runs, two at a time
    .venv/bin/python tools/soak_exit.py -n 50 -j 4 -- simulate --config X.yaml cluster/

Prints one line per exit code (`exit 0: 200`; a run killed by a signal is shown as the shell shows it,
128 + the signal number, e.g. `exit 134 (SIGABRT)`) and the first stderr line of each failure kind.
Exits 0 when every run exited 0, else 1.
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COMMAND = ["simulate", "--config", "examples/nodenumber/scheduler.yaml", "examples/clusters/demo"]


def run_once(cmd: list[str]) -> tuple[int, str]:
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    first = next((line for line in p.stderr.splitlines() if line.strip()), "")
    return p.returncode, first


def _shell_code(code: int) -> int:
    return 128 - code if code < 0 else code


def _describe(code: int) -> str:
    if code >= 0:
        return str(code)
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"{_shell_code(code)} ({name})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--runs", type=int, default=200, help="number of runs (default 200)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("command", nargs="*", help="wasmsched arguments (default: the demo with NodeNumber)")
    args = ap.parse_args(argv)
    exe = str(Path(sys.executable).parent / "wasmsched")
    cmd = [exe, *(args.command or DEFAULT_COMMAND)]
    counts: collections.Counter[int] = collections.Counter()
    samples: dict[int, str] = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for code, first in pool.map(lambda _: run_once(cmd), range(args.runs)):
            counts[code] += 1
            if code != 0:
                samples.setdefault(code, first)
    for code in sorted(counts, key=_shell_code):
        sample = f"  e.g. {samples[code]}" if code in samples else ""
        print(f"exit {_describe(code)}: {counts[code]}{sample}")
    return 0 if set(counts) == {0} else 1


if __name__ == "__main__":
    sys.exit(main())
