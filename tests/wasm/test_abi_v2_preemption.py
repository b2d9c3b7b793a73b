"""docs/abi.md §14.4 under the real scheduler: preemption's dry runs change copies of a guest's cycle
state, as they change copies of an in-tree plugin's CycleState.

The guest tests/wat/v2/preemption_counter.wat and the Python plugin `Counter` below hold the same
state: a counter PreFilter sets to 0, AddPod raises and RemovePod lowers; Filter rejects when it is
below -2. Every node holds two low-priority pods, so a dry run on a node removes two (-2, fits) and puts
one back. On a shared state (ABI v1, or a guest without `cyclestate_clone`) what one dry run left
makes the next node's dry run fail, so preemption sees fewer candidates and may pick another node
or other victims.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterPlugin, PreFilterExtensions, PreFilterPlugin
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.defaultpreemption import default_preemption
from wasmsched.plugins.registry import Registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod, make_priority_class
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import new_wasm_plugin

from .harness import WAT_DIR, compile_wat

KEY = "Counter"


class _Count:
    def __init__(self, n: int = 0) -> None:
        self.n = n

    def clone(self) -> _Count:
        return _Count(self.n)


class Counter(PreFilterPlugin, PreFilterExtensions, FilterPlugin):
    name = KEY

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[None, Status | None]:
        state.write(KEY, _Count())
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        state.read(KEY).n += 1
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        state.read(KEY).n -= 1
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE) if state.read(KEY).n < -2 else None


def _run(tmp_path: Path, guest: str | None, offset: int = 0) -> dict[str, tuple[str, str]]:
    """Each pod's (phase, node) after the preemptors ran, with the counter as `guest` (WAT text) or in Python.
    DefaultPreemption's random offset into the candidate nodes is fixed at `offset`, so that the outcome is
    the same from run to run."""
    saved = default_preemption.get_offset_rand
    default_preemption.get_offset_rand = lambda n: offset % n
    try:
        return _run_with_offset(tmp_path, guest)
    finally:
        default_preemption.get_offset_rand = saved


def _run_with_offset(tmp_path: Path, guest: str | None) -> dict[str, tuple[str, str]]:
    registry = Registry()
    args: list[dict[str, Any]] = []
    if guest is None:
        registry.register(KEY, lambda a, h: Counter())
    else:
        path = compile_wat(guest, tmp_path / "guest")
        runtime = Runtime(cache_dir=tmp_path / "cache")
        registry.register(KEY, lambda a, h: new_wasm_plugin(KEY, a, h, runtime=runtime))
        args = [{"name": KEY, "args": {"guestURL": str(path), "timeout": "5s"}}]
    cfg = config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": KEY}]}},
                      "pluginConfig": args}],
    })
    sim = Simulation(cfg, registry)
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="8Gi", pods="110").obj() for i in range(4)]
    # Node i's pods have priorities 40-10i and 41-10i: the last node's victims are the cheapest.
    values = [40 - 10 * i + j for i in range(4) for j in range(2)]
    classes = [make_priority_class(f"p{v}", v) for v in values]
    low = [make_pod(f"low-{i}-{j}").req(cpu="1").priority_class(f"p{40 - 10 * i + j}").node(f"n{i}").obj()
           for i in range(4) for j in range(2)]
    sim.apply({"PriorityClass": classes, "Node": nodes, "Pod": low})
    sim.run_until_quiet()
    high = [make_pod(f"high-{k}").req(cpu="1").priority_class("high").obj() for k in range(3)]
    sim.apply({"PriorityClass": [make_priority_class("high", 1000)], "Pod": high})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    return {p.name: (p.phase, p.node or "") for p in result.pods}


@pytest.fixture(scope="module")
def python_outcome(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    return _run(tmp_path_factory.mktemp("python"), None)


def test_a_guest_that_clones_its_state_preempts_as_the_same_plugin_in_python(
        tmp_path: Path, python_outcome: dict[str, tuple[str, str]]) -> None:
    guest = (WAT_DIR / "v2" / "preemption_counter.wat").read_text()
    assert _run(tmp_path, guest) == python_outcome
    assert sum(phase == "Scheduled" for name, (phase, _) in python_outcome.items() if name.startswith("high")) == 3


def test_without_cyclestate_clone_the_dry_runs_share_one_state_and_preemption_differs(
        tmp_path: Path, python_outcome: dict[str, tuple[str, str]]) -> None:
    v1 = (WAT_DIR / "v2" / "preemption_counter.wat").read_text().replace('(export "cyclestate_clone")', "")
    assert _run(tmp_path, v1) != python_outcome
