"""wasmsched against kube-scheduler 1.37.2 itself (kube-oracle) on random clusters: every Filter verdict,
reason and score per node, every FailedScheduling message, the chosen node and preemption's node and
victims are equal. `make fuzz-kube SEEDS=N` runs the same check on as many seeds as asked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wasmsched.testing.differential.check import check
from wasmsched.testing.differential.generate import generate_case
from wasmsched.testing.differential.local import MODES
from wasmsched.testing.differential.oracle import Oracle

# A fixed slice, about 20 s: six hundred seeds in both modes.
SLICE = range(600)
CHUNK = 25
SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.mark.parametrize("first", range(SLICE.start, SLICE.stop, CHUNK), ids=lambda s: f"seeds-{s}")
def test_random_clusters_agree_with_kube(kube_oracle: Oracle, first: int) -> None:
    reports = []
    for seed in range(first, min(first + CHUNK, SLICE.stop)):
        case = generate_case(seed)
        for mode in MODES:
            r = check(kube_oracle, seed, case.objects, case.config, mode)
            if r is not None:
                reports.append(r)
    assert not reports, "\n\n".join(reports)


def _scenarios() -> list[Path]:
    return sorted(SCENARIOS.glob("*.yaml"))


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.stem)
def test_regression_scenarios_agree_with_kube(kube_oracle: Oracle, path: Path) -> None:
    """Each difference the fuzzer found, shrunk, kept: `config` (optional) and `objects`."""
    doc = yaml.safe_load(path.read_text())
    reports = [r for mode in MODES
               if (r := check(kube_oracle, path.stem, doc["objects"], doc.get("config"), mode)) is not None]
    assert not reports, "\n\n".join(reports)
