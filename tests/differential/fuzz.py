"""`make fuzz-kube SEEDS=N`: random cases (generate.py) on wasmsched and on kube-scheduler 1.37.2
(kube-oracle), compared in both modes. Differences are printed (shrunk) and written to --out; the exit
status is 1 when any was found.

    python -m tests.differential.fuzz --seeds 0:20000 --jobs 2 --out .cache/fuzz-kube
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.differential.check import check
from tests.differential.compare import Comparison
from tests.differential.generate import generate_case
from tests.differential.local import MODES
from tests.differential.oracle import Oracle, oracle_binary
from tests.differential.swap import SWAPS


@dataclass
class SeedResult:
    seed: int
    reports: list[str]
    # Runs that parted ways at a preemption kube could have decided either way (compared up to there).
    diverged: int = 0
    attempts: int = 0
    oracle_retried: int = 0


def parse_seeds(spec: str) -> range:
    """`N` (seeds 0..N-1) or `A:B` (A..B-1)."""
    lo, sep, hi = spec.partition(":")
    try:
        return range(int(lo), int(hi)) if sep else range(int(lo))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds: expected N or A:B, got {spec!r}") from None


@dataclass
class _Worker:
    """A worker process's own oracle (one `kube-oracle serve` per process)."""

    oracle: Oracle | None = None
    modes: tuple[str, ...] = MODES
    swap: str | None = None


_worker = _Worker()


def _init(binary: str, modes: tuple[str, ...], swap: str | None) -> None:
    _worker.oracle = Oracle(Path(binary))
    _worker.modes = modes
    _worker.swap = swap


def _run_seed(seed: int) -> SeedResult:
    assert _worker.oracle is not None
    case = generate_case(seed)
    result = SeedResult(seed, [])

    def count(c: Comparison) -> None:
        result.attempts += c.attempts_compared
        result.diverged += bool(c.diverged)
        result.oracle_retried += c.oracle_retried

    for mode in _worker.modes:
        r = check(_worker.oracle, seed, case.objects, case.config, mode, compared=count, swap=_worker.swap)
        if r is not None:
            result.reports.append(r)
    return result


def run(seeds: Iterable[int], jobs: int, modes: tuple[str, ...], binary: Path, swap: str | None = None
        ) -> Iterator[SeedResult]:
    if jobs <= 1:
        _init(str(binary), modes, swap)
        yield from map(_run_seed, seeds)
        return
    with multiprocessing.get_context("fork").Pool(jobs, _init, (str(binary), modes, swap)) as pool:
        yield from pool.imap(_run_seed, seeds, chunksize=8)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="fuzz-kube", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1000"), help="N or A:B (default 1000)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes, one kube-oracle each (default 2)")
    p.add_argument("--modes", default=",".join(MODES), help="cycle,run (default both)")
    p.add_argument("--out", type=Path, help="directory for one report file per differing seed")
    p.add_argument("--only", default="", metavar="PREFIX",
                   help="run only the seeds whose case has a feature tag starting with PREFIX (e.g. dra.)")
    p.add_argument("--max-failures", type=int, default=20, help="stop after this many differing seeds")
    p.add_argument("--swap", choices=sorted(SWAPS), default=None,
                   help="run wasmsched with this in-tree plugin replaced by its wasm guest (kube keeps its own)")
    args = p.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    for m in modes:
        if m not in MODES:
            p.error(f"--modes: {m!r}: expected a subset of {','.join(MODES)}")
    binary = oracle_binary()
    seeds: Iterable[int] = args.seeds
    if args.only:
        seeds = [s for s in args.seeds if any(f.startswith(args.only) for f in generate_case(s).features)]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    done = failed = attempts = diverged = retried = 0
    # Seeds whose kube answers varied (the oracle's timing), worth asking again by hand.
    parted_seeds: list[int] = []
    retried_seeds: list[int] = []
    for res in run(seeds, args.jobs, modes, binary, args.swap):
        done += 1
        attempts += res.attempts
        diverged += res.diverged
        retried += res.oracle_retried
        if res.diverged:
            parted_seeds.append(res.seed)
        if res.oracle_retried:
            retried_seeds.append(res.seed)
        if res.reports:
            failed += 1
            text = "\n\n".join(res.reports)
            print(text, flush=True)
            if args.out:
                (args.out / f"seed-{res.seed}.txt").write_text(text + "\n")
            if failed >= args.max_failures:
                print(f"fuzz-kube: stopping after {failed} differing seeds", file=sys.stderr)
                break
        if done % 500 == 0:
            print(f"fuzz-kube: {done} seeds, {failed} differing, {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
    seconds = time.monotonic() - start
    swapped = f", {args.swap} as its wasm guest" if args.swap else ""
    print(f"fuzz-kube: {done} seeds (of {args.seeds.start}..{args.seeds.stop - 1}), modes {','.join(modes)}{swapped}: "
          f"{failed} with differences, in {seconds:.0f} s ({done / max(seconds, 1e-9):.1f} seeds/s); "
          f"{attempts} scheduling attempts compared, {diverged} runs parted ways at a preemption kube could "
          f"have decided either way, {retried} kube-oracle answers that changed when asked again")
    for what, listed in (("parted ways at a preemption", parted_seeds), ("kube answered differently", retried_seeds)):
        if listed:
            print(f"fuzz-kube: seeds where {what}: {' '.join(map(str, sorted(listed)))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
