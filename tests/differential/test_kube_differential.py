"""wasmsched against kube-scheduler 1.37.2 itself (kube-oracle) on random clusters: every Filter verdict,
reason and score per node, every FailedScheduling message, the chosen node and preemption's node and
victims are equal. `make fuzz-kube SEEDS=N` runs the same check on as many seeds as asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.differential.check import check
from tests.differential.compare import compare
from tests.differential.generate import generate_case
from tests.differential.local import MODES, LocalCase, run_case
from tests.differential.oracle import Oracle
from tests.differential.swap import INTERPODAFFINITY_GUEST
from tests.go_guests import build_example, builds_go
from wasmsched.wasm.plugin import WasmPlugin

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


# The swapped slice (docs/compatibility.md): InterPodAffinity's wasm guest on wasmsched's side, kube's own
# plugin on kube's; `make fuzz-kube SWAP=interpodaffinity` runs the 20,000 seeds.
SWAPPED_SLICE = range(200)


@pytest.fixture(scope="module")
@builds_go
def interpodaffinity_guest() -> Path:
    build_example("interpodaffinity")
    return INTERPODAFFINITY_GUEST


def test_the_swap_runs_the_guest_in_the_in_tree_plugin_s_place(interpodaffinity_guest: Path) -> None:
    case = LocalCase(generate_case(0).objects, None, "interpodaffinity")
    try:
        fwk = next(iter(case.scheduler.profiles.values()))
        plugin = fwk.plugins_map["InterPodAffinity"]
        assert isinstance(plugin, WasmPlugin)
        assert {"addpod", "removepod", "cyclestate_clone", "queueinghint"} <= plugin.exports
    finally:
        case.scheduler.close()


@pytest.mark.parametrize("first", range(SWAPPED_SLICE.start, SWAPPED_SLICE.stop, CHUNK), ids=lambda s: f"seeds-{s}")
def test_the_interpodaffinity_guest_agrees_with_kube_s_plugin(kube_oracle: Oracle, interpodaffinity_guest: Path,
                                                               first: int) -> None:
    reports = []
    for seed in range(first, min(first + CHUNK, SWAPPED_SLICE.stop)):
        case = generate_case(seed)
        for mode in MODES:
            r = check(kube_oracle, seed, case.objects, case.config, mode, swap="interpodaffinity")
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


def _pvc_race_case(claims: int) -> list[dict[str, Any]]:
    """Two pods on one unbound Immediate claim, among many claims and volumes: the first pod is in flight
    while kube's handlers may still be taking the initial lists of PersistentVolumes and Claims."""
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "standard"},
          "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "Immediate"}
    pvcs = [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": f"claim-{i}", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                      "resources": {"requests": {"storage": "1Gi"}}}} for i in range(claims)]
    pvs = [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{i}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "storageClassName": "gold",
                     "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"h-{i}"}},
            "status": {"phase": "Available"}} for i in range(claims)]
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                      "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "claim-0"}}]}}
            for i in range(2)]
    return [node, sc, *pvcs, *pvs, *pods]


def test_kube_oracle_waits_for_its_handlers_before_the_first_pod(kube_oracle: Oracle) -> None:
    """kube-scheduler waits for its event handlers to sync before scheduling (WaitForHandlersSync). Before
    kube-oracle did, an Add from the initial list (a PersistentVolume's, in seed 283) was at times
    handled while the first pod was in flight, and sent that pod to backoffQ for an attempt more: kube
    answered that run with 2, 3 or 4 attempts, and CI failed when the first two answers were both 3."""
    objects = _pvc_race_case(10)
    ours = run_case(objects, None, "run")
    assert [a["pod"] for a in ours["attempts"]] == ["default/pod-0", "default/pod-1"]
    # One answer in ten had an attempt more: sixty answers all right leave that a 0.2% chance.
    for i in range(60):
        kube = kube_oracle.ask(objects, None, "run")
        assert [a["pod"] for a in kube["attempts"]] == ["default/pod-0", "default/pod-1"], f"answer {i}"
        assert compare(ours, kube).equal, f"answer {i}"


E2E_SCENARIOS = Path(__file__).parents[1] / "e2e" / "scenarios"
# Scenarios compared in cycle mode only, with why. Run mode has no PV controller or provisioner on either
# side, and this scenario's WaitForFirstConsumer claim is bound by one (its e2e test passes
# --provision-volumes): kube's PreBind would wait for it and never settle.
CYCLE_ONLY = {"storage-and-devices": "binds a claim through a PV provisioner"}


def _e2e_scenarios() -> list[Path]:
    return sorted(p for p in E2E_SCENARIOS.iterdir() if (p / "cluster.yaml").is_file())


@pytest.mark.parametrize("scenario", _e2e_scenarios(), ids=lambda p: p.name)
def test_e2e_scenarios_agree_with_kube(kube_oracle: Oracle, scenario: Path) -> None:
    """The e2e scenarios' expectations are written by hand (tests/e2e/test_scenarios.py); this gives them an
    independent source: kube-scheduler 1.37.2 itself decides each of them as wasmsched does."""
    objects = [d for d in yaml.safe_load_all((scenario / "cluster.yaml").read_text()) if d]
    config_path = scenario / "scheduler.yaml"
    config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else None
    modes = ("cycle",) if scenario.name in CYCLE_ONLY else MODES
    reports = [r for mode in modes
               if (r := check(kube_oracle, scenario.name, objects, config, mode)) is not None]
    assert not reports, "\n\n".join(reports)


def test_only_existing_scenarios_are_compared_in_cycle_mode_only() -> None:
    assert set(CYCLE_ONLY) <= {p.name for p in _e2e_scenarios()}
