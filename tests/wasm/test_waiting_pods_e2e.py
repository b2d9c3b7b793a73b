"""Waiting-pod handle imports with the real scheduler's Permit (docs/abi.md §4.1, §4.4): a guest finds a
pod waiting at Permit with handle.get_waiting_pod and rejects it with handle.reject_waiting_pod from
another pod's Permit, on the scheduling thread, while the waiting pod's binding cycle is parked."""

from __future__ import annotations

from pathlib import Path

from tests.wasm.harness import compile_wat
from wasmsched.config import config_from_dict
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.plugin import register_wasm_plugins


def run(
    tmp_path: Path, with_free_pod: bool
) -> tuple[dict[str, tuple[str, str | None, int]], list[str], dict[str, int]]:
    wasm = compile_wat("e2e/permit_waiting", tmp_path)
    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": "Holder"}]}},
                      "pluginConfig": [{"name": "Holder", "args": {"guestURL": str(wasm)}}]}],
    })
    registry = in_tree_registry()
    register_wasm_plugins(registry, cfg)
    sim = Simulation(cfg, registry)
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    pods = [make_pod("hold-1").uid("uid-hold").obj()]
    if with_free_pod:
        pods.append(make_pod("free-1").uid("uid-free").obj())
    sim.apply({"Node": [node], "Pod": pods})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    phases = {p.name: (p.phase, p.node, p.attempts) for p in result.pods}
    failed = [e.message for e in result.events if e.reason == "FailedScheduling" and e.regarding == "default/hold-1"]
    return phases, failed, result.extra_summary["wasm"]["Holder"]


def test_a_guest_rejects_a_waiting_pod_it_found(tmp_path: Path) -> None:
    phases, failed, counters = run(tmp_path, with_free_pod=True)
    assert phases["free-1"] == ("Scheduled", "n1", 1)
    # hold-1 was rejected while waiting ("removed" is the framework's RejectWaitingPod message),
    # then scheduled on its second attempt.
    assert phases["hold-1"] == ("Scheduled", "n1", 2)
    assert len(failed) == 1 and "removed" in failed[0], failed
    assert counters["live"] == counters["idle"] and counters["binding"] == 0 and counters["scheduling"] == 0


def test_without_the_rejecting_pod_the_wait_times_out(tmp_path: Path) -> None:
    phases, failed, counters = run(tmp_path, with_free_pod=False)
    # Nobody rejects it: every attempt waits the full minute (simulated) and times out. The second
    # attempt comes from the pod's own PodScheduled=False update (the guest registers for all events).
    assert phases["hold-1"] == ("Unschedulable", None, 2)
    assert len(failed) == 2, failed
    assert all("rejected due to timeout after waiting 1m0s at plugin Holder" in m for m in failed), failed
    assert counters["live"] == counters["idle"] and counters["binding"] == 0
