"""A few hundred pods through the scheduler with a wasm plugin at every extension point: at the end no
instance is pinned, none leaked, none discarded, and close() frees them all (issue 13: no instance leak
over a long run; bench/soak.py is the long run, this is its fast check).

The guest is the pool tests' fingerprint probe (tests/wat/cyclestate/pod_fingerprint.wat): every call
on an instance that is not pinned to the current pod traps, and a trap discards the instance, so a call
routed to the wrong instance shows as `discarded`. The pods take every path that pins or releases an
instance: bound (the hand-off to the binding cycle), unschedulable (a failed cycle, PostFilter),
preempting (victims deleted after their binding cycles), and preempted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wasmsched.config import config_from_dict
from wasmsched.plugins.registry import Registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod, make_priority_class
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

from .harness import compile_wat, wat_source

N_NODES = 20  # 4 CPUs each: 80 CPUs
N_LOW = 240  # 250m each, priority 0: 60 CPUs
N_TOO_BIG = 30  # 8 CPUs each: never fit, preemption cannot help
N_HIGH = 60  # 1 CPU each, priority 1000: 20 fit in what is left, 40 preempt 4 low pods each


def test_hundreds_of_pods_leave_no_instance_pinned_or_leaked(tmp_path: Path) -> None:
    path = compile_wat(wat_source("cyclestate/pod_fingerprint"), tmp_path / "guest")
    runtime = Runtime(cache_dir=tmp_path / "cache")
    plugins: list[WasmPlugin] = []

    def factory(args: Any, handle: Any) -> WasmPlugin:
        plugins.append(new_wasm_plugin("probe", args, handle, runtime=runtime))
        return plugins[-1]

    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      # The guest's Bind answers Skip: it runs, then DefaultBinder binds.
                      "plugins": {"multiPoint": {"enabled": [{"name": "probe"}]},
                                  "bind": {"enabled": [{"name": "probe"}]}},
                      "pluginConfig": [{"name": "probe", "args": {"guestURL": str(path)}}]}]})
    sim = Simulation(cfg, Registry({"probe": factory}))
    nodes = [make_node(f"node-{i}").capacity(cpu="4", pods="110").obj() for i in range(N_NODES)]
    pods = ([make_pod(f"low-{i}").req(cpu="250m").obj() for i in range(N_LOW)]
            + [make_pod(f"big-{i}").req(cpu="8").obj() for i in range(N_TOO_BIG)])
    sim.apply({"Node": nodes, "Pod": pods})
    sim.run_until_quiet()
    # After the low pods are bound (else the queue's priority order would schedule the high ones first).
    sim.apply({"PriorityClass": [make_priority_class("high", 1000)],
               "Pod": [make_pod(f"high-{i}").req(cpu="1").priority_class("high").obj() for i in range(N_HIGH)]})
    result = sim.run_until_quiet()
    (plugin,) = plugins
    try:
        phases: dict[str, int] = {}
        for p in result.pods:
            key = f"{p.name.split('-')[0]}:{p.phase}"
            phases[key] = phases.get(key, 0) + 1
        assert phases == {"low:Scheduled": N_LOW - 4 * 40, "low:Preempted": 4 * 40,
                          "big:Unschedulable": N_TOO_BIG, "high:Scheduled": N_HIGH}, phases
        c = plugin.counters()
        assert c["discarded"] == 0, c  # no call ran on another pod's instance
        assert c["scheduling"] == 0 and c["binding"] == 0, c  # nothing pinned once quiet
        assert c["live"] == c["idle"], c
        # Binding cycles run before the next scheduling cycle (simulate defers them): one instance for
        # the scheduling cycle, at most one more for the binding cycle it handed off.
        assert c["created"] <= 2, c
    finally:
        result.scheduler.close()
    assert plugin.counters()["live"] == 0
