"""The differential-testing cluster generator: deterministic per seed, always loadable by wasmsched's
manifest and config loaders, covering every feature it lists, and never breaking a simulation."""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.differential.context import FEATURES, Ctx, Knobs
from tests.differential.generate import CLUSTER_FILE, CONFIG_FILE, case_to_dir, generate_case
from wasmsched.api.manifest import load_paths
from wasmsched.cli.main import main
from wasmsched.config import load_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation

LOAD_SEEDS = 500
COVERAGE_SEEDS = 300
SIMULATE_SEEDS = 200
CHUNK = 50
DRA_FILTER_ERROR = 'running "DynamicResources" filter plugin: '


def _chunks(total: int) -> list[range]:
    return [range(start, min(start + CHUNK, total)) for start in range(0, total, CHUNK)]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # unschedulable pods are logged as warnings; hundreds of cases would flood the output
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    for seed in (0, 1, 7, 12345):
        a = case_to_dir(generate_case(seed), tmp_path / f"a{seed}")
        random.seed(seed + 1)  # the global random state plays no part
        b = case_to_dir(generate_case(seed), tmp_path / f"b{seed}")
        assert _files(a) == _files(b)
    assert json.dumps(generate_case(3).objects) != json.dumps(generate_case(4).objects)


def test_global_random_state_untouched() -> None:
    random.seed(99)
    before = random.getstate()
    generate_case(5)
    assert random.getstate() == before


def test_case_to_dir_writes_config_only_when_present(tmp_path: Path) -> None:
    with_config = next(s for s in range(100) if generate_case(s).config is not None)
    without = next(s for s in range(100) if generate_case(s).config is None)
    assert sorted(_files(case_to_dir(generate_case(with_config), tmp_path / "c"))) == [CLUSTER_FILE, CONFIG_FILE]
    assert sorted(_files(case_to_dir(generate_case(without), tmp_path / "n"))) == [CLUSTER_FILE]


@pytest.mark.parametrize("seeds", _chunks(LOAD_SEEDS), ids=lambda r: f"{r.start}-{r.stop - 1}")
def test_cases_load_and_keep_the_contract(seeds: range, tmp_path: Path) -> None:
    for seed in seeds:
        case = generate_case(seed)
        out = case_to_dir(case, tmp_path / str(seed))
        loaded = load_paths([out / CLUSTER_FILE])
        assert not loaded.warnings, (seed, loaded.warnings)
        assert len(loaded.objects) == len(case.objects), seed
        load_config(str(out / CONFIG_FILE) if case.config is not None else None)

        kinds = Counter(o["kind"] for o in case.objects)
        node_names = {o["metadata"]["name"] for o in case.objects if o["kind"] == "Node"}
        pods = [o for o in case.objects if o["kind"] == "Pod"]
        running = [p for p in pods if "nodeName" in p["spec"]]
        assert 1 <= kinds["Node"] <= 7 and len(running) <= 8 and 1 <= len(pods) - len(running) <= 6, seed
        assert all(p["spec"]["nodeName"] in node_names for p in running), seed
        # running pods first, then the pending ones in creation order
        assert pods[: len(running)] == running, seed
        stamps = [o["metadata"]["creationTimestamp"] for o in case.objects]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), seed
        assert len({o["metadata"]["uid"] for o in case.objects}) == len(case.objects), seed
        used = {o["metadata"]["namespace"] for o in case.objects if "namespace" in o["metadata"]}
        declared = {o["metadata"]["name"] for o in case.objects if o["kind"] == "Namespace"}
        assert used <= declared, seed


def test_every_feature_appears() -> None:
    seen: set[str] = set()
    for seed in range(COVERAGE_SEEDS):
        seen |= generate_case(seed).features
    assert sorted(FEATURES - seen) == []


def test_knobs_tune_the_features() -> None:
    off = Knobs(config=0.0, preemption_scenario=0.0, scheduling_gates=0.0, pdbs=0.0)
    on = Knobs(config=1.0, preemption_scenario=1.0)
    for seed in range(30):
        quiet = generate_case(seed, off)
        assert quiet.config is None
        assert not quiet.features & {"config", "preemption_scenario", "scheduling_gates", "pdb"}
        busy = generate_case(seed, on)
        assert busy.config is not None and "preemption_scenario" in busy.features


def test_unlisted_feature_tag_is_refused() -> None:
    ctx = Ctx(seed=0, rng=random.Random(0), knobs=Knobs())
    with pytest.raises(KeyError, match="not listed"):
        ctx.tag("no.such.feature")


@pytest.mark.parametrize("seeds", _chunks(SIMULATE_SEEDS), ids=lambda r: f"{r.start}-{r.stop - 1}")
def test_simulation_never_raises(seeds: range, tmp_path: Path) -> None:
    registry = in_tree_registry()
    for seed in seeds:
        case = generate_case(seed)
        out = case_to_dir(case, tmp_path / str(seed))
        cfg = load_config(str(out / CONFIG_FILE) if case.config is not None else None)
        sim = Simulation(cfg, registry, explain=True)
        try:
            sim.apply(load_paths([out / CLUSTER_FILE]).by_kind)
            result = sim.run_until_quiet()
        finally:
            sim.scheduler.close()
        # one result per pod, none left in an internal-error state; the DRA allocator's own errors (an
        # incomplete pool asked for all its devices, a constraint All cannot meet) are kube's too
        assert len(result.pods) == sum(1 for o in case.objects if o["kind"] == "Pod"), seed
        assert all(p.phase != "Error" or p.message.startswith(DRA_FILTER_ERROR) for p in result.pods), \
            (seed, [p.message for p in result.pods])


def test_simulate_cli_reads_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = next(s for s in range(100) if generate_case(s).config is not None)
    out = case_to_dir(generate_case(seed), tmp_path / "case")
    assert main(["simulate", "-o", "json", "--config", str(out / CONFIG_FILE), str(out / CLUSTER_FILE)]) == 0
    assert json.loads(capsys.readouterr().out)["pods"]


def test_a_pod_uses_at_most_one_driver_that_prevents_scheduling_when_missing() -> None:
    # kube names the first missing driver of a Go map (random order): with two, its message is undetermined.
    from tests.differential.volumes import Storage, _volume_driver

    checked = 0
    for seed in range(21000, 22000):
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for obj in generate_case(seed).objects:
            by_kind.setdefault(obj["kind"], []).append(obj)
        prevent = {d["metadata"]["name"] for d in by_kind.get("CSIDriver", [])
                   if d["spec"].get("preventPodSchedulingIfMissing")}
        st = Storage(by_kind=by_kind)
        for pod in by_kind.get("Pod", []):
            drivers = {_volume_driver(st, pod["metadata"]["namespace"], v) for v in pod["spec"].get("volumes", [])}
            assert len(drivers & prevent) <= 1, (seed, pod["metadata"]["name"], drivers & prevent)
            checked += bool(drivers & prevent)
    assert checked > 0  # such pods exist: the rule was exercised
