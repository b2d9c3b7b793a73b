"""Fault injection against the real API server (issue 29 §1), small: each scenario of tests/kube/faults_lib.py
with 300 pods on 30 KWOK nodes, two leader-elected `wasmsched run` replicas behind fault proxies and a wasm
plugin trapping on 5% of its calls. bench/faults.py runs the same at full size (2,000 pods, 200 nodes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from wasmsched.devcluster import DevCluster

from .faults_lib import HEADER, SCENARIOS, FaultRun, check

PODS, NODES = 300, 30


@pytest.fixture
def fault_run(dev_cluster: DevCluster, namespace: str, tmp_path: Path) -> Iterator[FaultRun]:
    run = FaultRun(dev_cluster, tmp_path / "faults", namespace, PODS, NODES)
    try:
        yield run
    finally:
        run.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_fault_scenario(fault_run: FaultRun, scenario: str) -> None:
    result = fault_run.run(scenario, SCENARIOS[scenario])
    print(f"\n{HEADER}\n{result.row()}\n{result}")
    check(result)
