"""Fault injection against the real API server (issue 29 §1), small: each scenario of tests/kube/faults_lib.py
with 300 pods on 30 KWOK nodes, two leader-elected `wasmsched run` replicas behind fault proxies and a wasm
plugin trapping on 5% of its calls. bench/faults.py runs the same at full size (2,000 pods, 200 nodes).

The control plane's faults are here, the network's in test_faults_network.py: two files, so that `make test`'s
workers (a file each at a time) run them side by side."""

from __future__ import annotations

import pytest

from .faults_lib import NETWORK, SCENARIOS, FaultRun, run_and_check


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", [name for name in SCENARIOS if name not in NETWORK])
def test_fault_scenario(fault_run: FaultRun, scenario: str) -> None:
    run_and_check(fault_run, scenario)
