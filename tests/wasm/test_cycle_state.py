"""The cycle-state contract (docs/abi.md §8) under the real scheduler.

Cycle state lives in guest memory, so every call must run on the instance pinned to its pod. The guest
tests/wat/cyclestate/pod_fingerprint.wat stores the pod's uid in `prefilter` and, in every other export
(filter, postfilter, prescore, score, normalizescore, reserve, unreserve, permit, prebind, bind, postbind,
addpod, removepod), traps unless the current pod is that pod, or if another call on the same instance is
still running. A wrongly shared instance therefore fails loudly: an Error status, a discarded instance, a
"Guest call failed" log.

The scenario runs hundreds of pods through wasmsched's scheduler (Simulation) with the guest enabled in
multiPoint next to the default plugins, and mixes in everything that moves instances around:
- binding cycles running in parallel with scheduling (the scheduler's binding workers);
- Permit Wait: the guest holds pods whose uid starts with "w"; a test plugin (Referee) lets those labelled
  allow=true go when the next pod reaches Permit, the others time out (Unreserve), and are then rejected
  by the Referee's PreFilter (after the guest's), so the guest's PostFilter runs for them;
- pods deleted while they wait at Permit (their instance is released; the late Unreserve is a no-op);
- binding failures: a test Bind plugin (FlakyBinder) fails the first Bind of pods labelled flaky=true
  (Unreserve on the binding instance, then a retry);
- preemption: high-priority pods on full nodes, so DefaultPreemption runs RemovePod/AddPod/Filter for the
  preemptor; hopeless pods reach the guest's PostFilter.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BindPlugin, PermitPlugin, PreFilterPlugin
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.registry import Registry
from wasmsched.simulator.simulation import Simulation, SimulationResult
from wasmsched.testing.builders import make_node, make_pod, make_priority_class
from wasmsched.wasm.call_context import CallContext
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.errors import GuestCallError
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

from .harness import WasmHandle, compile_wat, load

GUEST = "cyclestate/pod_fingerprint"
PLUGIN = "CycleState"
N_NODES = 20
N_LOW = 200
N_HIGH = 60
N_HOPELESS = 5
LOW_CPU, HIGH_CPU = "200m", "400m"
NODE_CPU = "2200m"  # 20 x 2.2 = 44 CPUs: all low pods fit; the high pods need preemption
GAVE_UP = "referee: timed out at Permit before"


class Referee(PreFilterPlugin, PermitPlugin):
    """Permit: lets every pod labelled allow=true that waits at the guest's Permit go.
    PreFilter (after the guest's): rejects pods labelled timeout=true once they have timed out, so pods
    that time out do not requeue each other forever (each timeout frees space: an event for the others)."""

    name = "Referee"

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.allowed = 0
        self.attempts: dict[str, int] = {}

    def pre_filter(self, state: Any, pod: Pod, nodes: Any) -> tuple[None, Status | None]:
        if pod.metadata.labels.get("timeout") != "true":
            return None, None
        n = self.attempts[pod.metadata.uid] = self.attempts.get(pod.metadata.uid, 0) + 1
        if n > 1:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [GAVE_UP])
        return None, None

    def permit(self, state: Any, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        def allow(wp: Any) -> None:
            if wp.get_pod().metadata.labels.get("allow") == "true":
                self.allowed += 1
                wp.allow(PLUGIN)

        self.handle.iterate_over_waiting_pods(allow)
        return None, 0.0


class FlakyBinder(BindPlugin):
    """Bind: fails the first attempt of pods labelled flaky=true; otherwise Skip (DefaultBinder binds)."""

    name = "FlakyBinder"

    def __init__(self) -> None:
        self.failed: set[str] = set()
        self.lock = threading.Lock()

    def bind(self, state: Any, pod: Pod, node_name: str) -> Status | None:
        if pod.metadata.labels.get("flaky") == "true":
            with self.lock:
                if pod.metadata.uid not in self.failed:
                    self.failed.add(pod.metadata.uid)
                    return Status.error("flaky binder: first attempt fails")
        return Status.skip()


class Scenario:
    def __init__(self, tmp_path: Path) -> None:
        path = compile_wat(GUEST, tmp_path / "guest")
        runtime = Runtime(cache_dir=tmp_path / "cache")
        self.wasm: list[WasmPlugin] = []
        self.referees: list[Referee] = []
        self.binders: list[FlakyBinder] = []

        def wasm_factory(args: Any, handle: Any) -> WasmPlugin:
            self.wasm.append(new_wasm_plugin(PLUGIN, args, handle, runtime=runtime))
            return self.wasm[-1]

        def referee_factory(args: Any, handle: Any) -> Referee:
            self.referees.append(Referee(handle))
            return self.referees[-1]

        def binder_factory(args: Any, handle: Any) -> FlakyBinder:
            self.binders.append(FlakyBinder())
            return self.binders[-1]

        registry = Registry()
        registry.register(PLUGIN, wasm_factory)
        registry.register("Referee", referee_factory)
        registry.register("FlakyBinder", binder_factory)
        cfg = config_from_dict({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": PLUGIN}, {"name": "Referee"}, {"name": "FlakyBinder"}]},
                    # The guest's Bind (Skip) and FlakyBinder run before DefaultBinder.
                    "bind": {"enabled": [{"name": PLUGIN}, {"name": "FlakyBinder"}]},
                },
                "pluginConfig": [{"name": PLUGIN, "args": {"guestURL": str(path), "timeout": "5s"}}],
            }],
        })
        self.sim = Simulation(cfg, registry)
        self.low: list[Pod] = []
        self.high: list[Pod] = []
        self.hopeless: list[Pod] = []
        self.deleted: list[Pod] = []

    @property
    def plugin(self) -> WasmPlugin:
        (p,) = self.wasm
        return p

    def guest_total(self, name: str) -> int:
        return sum(int(i.get_global(name)) for i in self.plugin.pool.instances())

    def run(self) -> SimulationResult:
        sim = self.sim
        nodes = [make_node(f"node-{i:02d}").capacity(cpu=NODE_CPU, memory="64Gi", pods="110").obj()
                 for i in range(N_NODES)]
        for i in range(N_LOW):
            name = f"low-{i:03d}"
            w = make_pod(name).req(cpu=LOW_CPU).priority(0)
            if i % 10 == 3 and i < N_LOW - 10:
                w.uid(f"w-allow-{name}").label("allow", "true")  # waits; the next pod's Permit allows it
            elif i % 25 == 7:
                w.uid(f"w-timeout-{name}").label("timeout", "true")  # waits until the Permit timeout
            elif i % 9 == 5:
                w.label("flaky", "true")  # first Bind fails
            self.low.append(w.obj())
        sim.apply({"Node": nodes, "Pod": self.low})
        # Stop mid-way (no simulated time passed: the timeout pods met so far all wait at Permit) and
        # delete two waiting pods: their binding instances are released, their late Unreserve is a no-op.
        sim.run_until_quiet(max_cycles=150)
        waiting = [p for p in self.low if p.metadata.uid.startswith("w-timeout-")
                   and self.waiting(p)]
        assert len(waiting) >= 4, [p.metadata.name for p in waiting]
        for p in waiting[1:3]:
            sim.cluster.delete_pod(p, "deleted by the test while waiting")
            self.deleted.append(p)
        sim.run_until_quiet()

        self.high = [make_pod(f"high-{i:03d}").req(cpu=HIGH_CPU).priority_class("high").obj() for i in range(N_HIGH)]
        # Priority 0 cannot preempt priority 0: these stay pending and reach the guest's PostFilter.
        self.hopeless = [make_pod(f"hopeless-{i}").req(cpu="1500m").priority(0).obj() for i in range(N_HOPELESS)]
        sim.apply({"PriorityClass": [make_priority_class("high", 100)], "Pod": self.high + self.hopeless})
        return sim.run_until_quiet()

    def waiting(self, pod: Pod) -> bool:
        fwk = next(iter(self.sim.scheduler.profiles.values()))
        return fwk.get_waiting_pod(pod.metadata.uid) is not None


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    logging.getLogger("wasmsched.wasm").addHandler(handler := _Collect())
    sc = Scenario(tmp_path_factory.mktemp("cyclestate"))
    try:
        result = sc.run()
        yield sc, result, handler.records
    finally:
        logging.getLogger("wasmsched.wasm").removeHandler(handler)
        sc.sim.scheduler.close()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


def _phases(result: SimulationResult) -> dict[str, tuple[str, str]]:
    return {p.name: (p.phase, p.message) for p in result.pods}


def test_no_call_ever_ran_on_another_pod_s_instance(scenario: Any) -> None:
    sc, result, errors = scenario
    c = sc.plugin.counters()
    assert c["discarded"] == 0, c
    assert errors == []  # no "Guest call failed", "failed unreserve", "failed postbind"
    bad = [(p.name, p.message) for p in result.pods if p.phase == "Error"
           or "wasm" in p.message or "discarded" in p.message]
    assert bad == []


def test_no_instance_leaks(scenario: Any) -> None:
    sc, _, _ = scenario
    c = sc.plugin.counters()
    assert c["scheduling"] == 0 and c["binding"] == 0, c
    assert c["live"] == c["idle"], c
    assert c["live"] <= sc.plugin.args.max_instances
    assert sc.sim.scheduler.bindings_in_flight() == 0


def test_expected_pods_are_scheduled(scenario: Any) -> None:
    sc, result, _ = scenario
    phases = _phases(result)
    assert len(phases) == N_LOW + N_HIGH + N_HOPELESS
    # Every high-priority pod lands, most of them by preempting low-priority pods.
    assert all(phases[p.metadata.name][0] == "Scheduled" for p in sc.high), \
        [(p.metadata.name, phases[p.metadata.name]) for p in sc.high if phases[p.metadata.name][0] != "Scheduled"]
    preempted = [n for n, (ph, msg) in phases.items() if ph == "Preempted" and "deleted by the test" not in msg]
    assert len(preempted) >= 40, len(preempted)
    assert all(n.startswith("low-") for n in preempted)
    for p in sc.hopeless:
        assert phases[p.metadata.name][0] == "Unschedulable"
    for p in sc.deleted:
        assert phases[p.metadata.name] == ("Preempted", "deleted by the test while waiting")
    for p in sc.low:
        uid, (phase, msg) = p.metadata.uid, phases[p.metadata.name]
        if p in sc.deleted:
            continue
        if uid.startswith("w-timeout-"):
            assert phase == "Unschedulable", (p.metadata.name, phase, msg)
            assert GAVE_UP in msg
            timeouts = [e for e in result.events if e.reason == "FailedScheduling"
                        and e.regarding == f"default/{p.metadata.name}"
                        and f"rejected due to timeout after waiting 100ms at plugin {PLUGIN}" in e.message]
            assert timeouts, p.metadata.name
        else:
            # Allowed waiters, flaky binds and plain pods all bind; some were preempted afterwards.
            assert phase in ("Scheduled", "Preempted"), (p.metadata.name, phase, msg)


def test_every_path_was_exercised(scenario: Any) -> None:
    sc, _, _ = scenario
    total = {e: sc.guest_total(f"n_{e}") for e in (
        "filter", "postfilter", "prescore", "score", "normalizescore", "reserve", "unreserve", "permit",
        "prebind", "bind", "postbind", "addpod", "removepod")}
    assert all(v > 0 for v in total.values()), total
    # Every successful binding ran the guest's PreBind, Bind and PostBind on the pod's own instance.
    bound_low = sum(1 for p in sc.low if p.metadata.uid not in {d.metadata.uid for d in sc.deleted}
                    and not p.metadata.uid.startswith("w-timeout-"))
    assert total["postbind"] == bound_low + N_HIGH
    assert total["bind"] == total["postbind"] + len(sc.binders[0].failed)
    # Unreserve: each flaky first Bind, each Permit timeout (the deleted pods' Unreserve was a no-op).
    assert len(sc.binders[0].failed) >= 15
    assert total["unreserve"] >= len(sc.binders[0].failed) + 4
    assert sc.referees[0].allowed >= 15
    assert total["addpod"] >= 50 and total["removepod"] >= 50  # preemption's dry runs
    assert sc.guest_total("prefilters") >= N_LOW + N_HIGH + N_HOPELESS
    assert sc.guest_total("busy") == 0
    assert sc.plugin.counters()["created"] >= 2  # binding cycles overlapped scheduling cycles


def test_the_guest_traps_on_another_pod_s_call(tmp_path: Path) -> None:
    # The guard the scenario relies on: a call whose current pod is not the stored one traps.
    handle = WasmHandle(nodes=[make_node("n1").obj()])
    plugin = load(GUEST, tmp_path, handle=handle, name=PLUGIN)
    try:
        p, q = make_pod("p").obj(), make_pod("q").obj()
        _, st = plugin.pre_filter(CycleState(), p, [])
        assert st is None
        inst = plugin.pool.instance(plugin.pool.pinned_instance_id(p.metadata.uid) or -1)
        assert inst is not None
        assert inst.call(CallContext("filter", pod=p, node_name="n1")) == 0
        for export in ("filter", "reserve", "unreserve", "bind", "addpod"):
            with pytest.raises(GuestCallError, match="unreachable"):
                inst.call(CallContext(export, pod=q, node_name="n1", target_pod=p))
            inst.set_global("busy", 0)
    finally:
        plugin.close()
