"""Fault injection at full size (issue 29 §1): every scenario of tests/kube/faults_lib.py -- kube-apiserver
restarted 3 times, etcd stalled (SIGSTOP) 10 s twice, 200 ms latency with 2% of connections reset, the
leader's connection black-holed past its lease, bindings answered 500/429/409 by an admission webhook, and
in all of them a wasm plugin trapping on 5% of its calls -- with 2,000 pending pods on 200 KWOK nodes and two
leader-elected `wasmsched run` replicas, each behind its own FaultProxy. tests/kube/test_faults.py runs the
same with 300 pods on 30 nodes in `make test`.

Starts its own dev cluster (`make kube` builds the binaries), prints the per-scenario table, writes JSON and
exits 1 if a scenario's checks failed (a pod left pending, a pod with two Scheduled events, a lease handed
over before it expired, a traceback, an unexpected exit, RSS past the limit, metrics that disagree).

    PYTHONPATH=. .venv/bin/python bench/faults.py [--pods 2000] [--nodes 200] [--only NAME ...]
        [--out bench/results/faults.json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.kube.faults_lib import SCENARIOS, FaultRun, Result, check, table
from wasmsched.devcluster import DevCluster


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--only", nargs="*", choices=list(SCENARIOS), default=list(SCENARIOS))
    ap.add_argument("--out", type=Path, default=Path("bench/results/faults.json"))
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="work in DIR and keep it: each replica's log, per scenario (default: a temporary "
                         "directory, removed)")
    args = ap.parse_args()
    results: list[Result] = []
    failures: dict[str, str] = {}
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(str(args.keep)) if args.keep is not None
          else tempfile.TemporaryDirectory(prefix="wasmsched-faults-")) as tmp:
        cluster = DevCluster.up(Path(tmp) / "cluster", die_with_parent=True)
        try:
            for i, name in enumerate(args.only):
                ns = f"faults-{i}-{name.replace('%', '').replace('.', '')}"[:60].rstrip("-")
                cluster.create_namespace(ns)
                run = FaultRun(cluster, Path(tmp) / ns, ns, args.pods, args.nodes, seed=i)
                try:
                    result = run.run(name, SCENARIOS[name], settle_timeout=600)
                finally:
                    run.close()
                    cluster.delete_namespace(ns)
                results.append(result)
                print(result.row(), flush=True)
                try:
                    check(result)
                except AssertionError as e:
                    failures[name] = str(e)
        finally:
            cluster.down()
    print()
    print(table(results))
    for name, why in failures.items():
        print(f"FAILED {name}: {why}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"pods": args.pods, "nodes": args.nodes,
                                    "results": [dataclasses.asdict(r) for r in results],
                                    "failures": failures}, indent=1, default=str))
    print(f"wrote {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
