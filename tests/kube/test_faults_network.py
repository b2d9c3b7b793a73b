"""The network's fault scenarios (latency and resets, a black-holed leader, refused bindings) at test_faults.py's
size, in a file of their own so that `make test`'s workers run them beside the control plane's."""

from __future__ import annotations

import pytest

from .faults_lib import NETWORK, FaultRun, run_and_check


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", NETWORK)
def test_fault_scenario(fault_run: FaultRun, scenario: str) -> None:
    run_and_check(fault_run, scenario)
