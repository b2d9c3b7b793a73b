"""ABI v2's queue and gang imports (docs/abi.md §15): PreEnqueue and QueueSort exports, waiting pods
listed, allowed and rejected, the pods lister, activation, the scheduler's clock, and sharedInstance.

The guest is tests/wat/v2/gang.wat; the Go SDK's use of the same names is tested with the Coscheduling
guest (tests/e2e/test_coscheduling.py)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.scheduler.queue import SchedulingQueue
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import RecordingClient
from wasmsched.util.clock import SimClock
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.plugin import WasmPlugin

from .harness import WasmHandle, load


def _gang(tmp_path: Path, handle: Any = None, **args: Any) -> WasmPlugin:
    return load("v2/gang", tmp_path, handle if handle is not None else WasmHandle(), name="Gang",
                sharedInstance=True, **args)


def _inst(plugin: WasmPlugin) -> Any:
    (inst,) = plugin.pool.instances()
    return inst


def _framed(value: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(value):
        n = int.from_bytes(value[i:i + 4], "little")
        out.append(value[i + 4:i + 4 + n])
        i += 4 + n
    return out


# ----- §15.1 PreEnqueue ----------------------------------------------------------------------------


def test_preenqueue_lets_a_pod_in_or_gates_it_with_the_guests_reason(tmp_path: Path) -> None:
    plugin = _gang(tmp_path)
    pod = make_pod("p").uid("p").obj()
    assert plugin.pre_enqueue(pod) is None  # type: ignore[attr-defined]
    _inst(plugin).set_global("gate", 2)
    st = plugin.pre_enqueue(pod)  # type: ignore[attr-defined]
    assert st is not None and st.code == Code.UNSCHEDULABLE and st.message() == "gated by the test"
    _inst(plugin).set_global("gate", 9)  # outside the ABI's codes: an Error, which gates too (kube)
    st = plugin.pre_enqueue(pod)  # type: ignore[attr-defined]
    assert st is not None and st.code not in (Code.SUCCESS, Code.UNSCHEDULABLE)


def test_the_queue_keeps_a_pod_the_guest_gates_among_the_gated_ones(tmp_path: Path) -> None:
    plugin = _gang(tmp_path)
    _inst(plugin).set_global("gate", 3)
    queue = SchedulingQueue(lambda a, b: False, SimClock().now,
                            pre_enqueue={"default-scheduler": plugin.pre_enqueue})  # type: ignore[attr-defined]
    pod = make_pod("p").uid("p").obj()
    queue.add(pod)
    assert list(queue.gated_pods) == [get_pod_key(pod)] and queue.pop() is None
    assert _inst(plugin).get_global("pe_calls") == 1


# ----- §15.2 QueueSort ---------------------------------------------------------------------------


def _queue(plugin: WasmPlugin, clock: SimClock) -> SchedulingQueue:
    queue = SchedulingQueue(plugin.less, clock.now)  # type: ignore[attr-defined]
    queue.active_q.use_sort_key(plugin.sort_key)
    return queue


def test_queuesort_orders_by_the_guests_keys_with_one_call_per_pod_entering_the_queue(tmp_path: Path) -> None:
    plugin = _gang(tmp_path)
    queue = _queue(plugin, SimClock())
    names = ["m", "c", "x", "a", "b", "z", "k"]
    for name in names:
        queue.add(make_pod(name).uid(name).obj())
    popped = []
    while (qpi := queue.pop()) is not None:
        popped.append(qpi.pod.metadata.name)
    assert popped == sorted(names)
    # One guest call per pod, none per comparison.
    assert _inst(plugin).get_global("sort_calls") == len(names)


def test_queuesort_is_given_the_queued_pod_info_on_the_schedulers_clock(tmp_path: Path) -> None:
    clock = SimClock()
    handle = WasmHandle()
    handle.clock = clock.now
    before = time.time_ns()
    plugin = _gang(tmp_path, handle)
    clock.advance(100.0)
    qpi = QueuedPodInfo(PodInfo(make_pod("p").uid("p").obj()), timestamp=clock.now(), attempts=2)
    kind, key = plugin.sort_key(qpi)  # type: ignore[attr-defined]
    assert (kind, key) == (0, b"p")
    inst = _inst(plugin)
    info = json.loads(inst.read_memory(2048, inst.get_global("qpi_len")))
    assert info["attempts"] == 2 and info["initialAttemptTimestamp"] is None
    # The simulated clock as Unix time: the wall time the plugin was loaded, plus the 100 s simulated since.
    assert before + 100e9 <= info["timestamp"] <= time.time_ns() + 100e9


def test_a_pod_whose_key_fails_sorts_last_and_is_still_scheduled(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    plugin = _gang(tmp_path)
    queue = _queue(plugin, SimClock())
    queue.add(make_pod("b").uid("b").obj())
    _inst(plugin).set_global("fail", 1)
    with caplog.at_level(logging.ERROR):
        queue.add(make_pod("a").uid("a").obj())
    _inst(plugin).set_global("fail", 0)
    queue.add(make_pod("c").uid("c").obj())
    popped = []
    while (qpi := queue.pop()) is not None:
        popped.append(qpi.pod.metadata.name)
    assert popped == ["b", "c", "a"]
    assert any('"QueueSort failed, the pod sorts last" plugin="Gang" pod="default/a"' in r.getMessage()
               for r in caplog.records)


# ----- §15.3 waiting pods, §15.4 pods and activation, §15.5 clock --------------------------------


def _write(inst: Any, addr: int, glob: str, value: Any) -> None:
    data = json.dumps(value).encode()
    inst.write_memory(addr, data)
    inst.set_global(glob, len(data))


def test_a_guest_lists_allows_and_rejects_pods_waiting_at_permit(tmp_path: Path) -> None:
    handle = WasmHandle()
    plugin = _gang(tmp_path, handle)
    waiting = {n: handle.add_waiting_pod(make_pod(n).uid(n).obj(), plugin="Gang") for n in ("w2", "w1", "w3")}
    handle.add_waiting_pod(make_pod("w0").uid("w0").obj(), plugin="Other")
    results: dict[str, Any] = {}
    def recorder(name: str) -> Callable[[Any], None]:
        return lambda st: results.__setitem__(name, st)

    for name, wp in waiting.items():
        wp.on_done(recorder(name))
    inst = _inst(plugin)
    _write(inst, 3072, "allow_len", {"uid": "w1"})  # plugin: the caller's name
    _write(inst, 3584, "reject_len", {"uid": "w2", "plugin": "Gang", "message": "rejection in Unreserve"})
    pod = make_pod("x").uid("x").obj()
    plugin.pre_filter(CycleState(), pod, [])
    st, _ = plugin.permit(CycleState(), pod, "n1")  # type: ignore[attr-defined]
    assert st is None
    listed = _framed(inst.read_memory(8192, inst.get_global("wp_len")))
    pods = [(Pod.FromString(listed[i]).metadata.name, json.loads(listed[i + 1])) for i in range(0, len(listed), 2)]
    assert pods == [("w0", ["Other"]), ("w1", ["Gang"]), ("w2", ["Gang"]), ("w3", ["Gang"])]
    assert inst.get_global("allow_ret") == 1 and inst.get_global("reject_ret") == 1
    assert results["w1"] is None  # allowed by its only pending plugin: on to binding
    rejected = results["w2"]
    assert rejected.code == Code.UNSCHEDULABLE and rejected.plugin == "Gang"
    assert rejected.message() == "rejection in Unreserve"
    assert "w3" not in results
    # A pod that is not waiting: 0, nothing resolved.
    _write(inst, 3072, "allow_len", {"uid": "nope"})
    inst.set_global("reject_len", 0)
    plugin.permit(CycleState(), pod, "n1")  # type: ignore[attr-defined]
    assert inst.get_global("allow_ret") == 0 and "w3" not in results


def test_a_malformed_waiting_pod_query_fails_the_call(tmp_path: Path) -> None:
    plugin = _gang(tmp_path)
    inst = _inst(plugin)
    _write(inst, 3072, "allow_len", {"plugin": "Gang"})
    pod = make_pod("x").uid("x").obj()
    st, _ = plugin.permit(CycleState(), pod, "n1")  # type: ignore[attr-defined]
    assert st is not None and st.code == Code.ERROR
    assert "invalid query: uid is required" in st.message()


def test_a_guest_lists_pods_by_namespace_and_selector_and_activates_pods_after_the_call(tmp_path: Path) -> None:
    group = [make_pod(n, "ml").uid(n).label("scheduling.x-k8s.io/pod-group", "pg").obj() for n in ("b", "a")]
    others = [make_pod("c", "ml").uid("c").label("scheduling.x-k8s.io/pod-group", "other").obj(),
              make_pod("a", "web").uid("w").label("scheduling.x-k8s.io/pod-group", "pg").obj()]
    handle = WasmHandle()
    handle._client = RecordingClient(objects=[*group, *others])
    clock = SimClock()
    handle.clock = clock.now
    plugin = _gang(tmp_path, handle)
    inst = _inst(plugin)
    query = json.dumps({"namespace": "ml", "labelSelector": "scheduling.x-k8s.io/pod-group=pg"}).encode()
    inst.write_memory(1024, query)
    inst.set_global("query_len", len(query))
    _write(inst, 3840, "activate_len", ["ml/a", "ml/gone", "ml/b"])
    pod = make_pod("x").uid("x").obj()
    wall = time.time_ns()
    clock.advance(30.0)
    st, _ = plugin.permit(CycleState(), pod, "n1")  # type: ignore[attr-defined]
    assert st is None
    names = [Pod.FromString(b).metadata.name for b in _framed(inst.read_memory(24576, inst.get_global("pl_len")))]
    assert names == ["a", "b"]
    assert handle.activated == ["ml/a", "ml/b"]  # the unknown pod is left alone
    now = int.from_bytes(inst.read_memory(512, 8), "little")
    assert wall + 29e9 <= now <= time.time_ns() + 31e9
    # Every namespace, every pod.
    inst.write_memory(1024, b"{}")
    inst.set_global("query_len", 2)
    inst.set_global("activate_len", 0)
    plugin.permit(CycleState(), pod, "n1")  # type: ignore[attr-defined]
    assert len(_framed(inst.read_memory(24576, inst.get_global("pl_len")))) == 4


# ----- §15.6 sharedInstance ----------------------------------------------------------------------


def test_a_shared_instance_serves_every_pod_and_is_replaced_after_a_trap(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    plugin = _gang(tmp_path)
    state = CycleState()
    pods = [make_pod(n).uid(n).obj() for n in ("p1", "p2", "p3")]
    for pod in pods:
        plugin.pre_filter(state, pod, [])
        plugin.scheduling_cycle_done(pod, True)  # each pod's binding cycle still holds nothing
    for pod in pods:
        plugin.permit(state, pod, "n1")  # type: ignore[attr-defined]
    assert _inst(plugin).get_global("permits") == 3
    assert plugin.counters()["created"] == 1 and plugin.counters()["binding"] == 0
    # A trap (an out-of-bounds allow query) discards the instance and its state; the next call gets a new one.
    inst = _inst(plugin)
    inst.set_global("allow_len", 0x7FFFFFFF)
    st, _ = plugin.permit(state, pods[0], "n1")  # type: ignore[attr-defined]
    assert st is not None and st.code == Code.ERROR
    with caplog.at_level(logging.WARNING):
        assert plugin.pre_enqueue(pods[1]) is None  # type: ignore[attr-defined]
    assert plugin.counters()["created"] == 2 and _inst(plugin).get_global("pe_calls") == 1
    assert any("the plugin's state was lost" in r.getMessage() and 'plugin="Gang"' in r.getMessage()
               for r in caplog.records)


def test_shared_instance_refuses_more_than_one_instance(tmp_path: Path) -> None:
    with pytest.raises(WasmLoadError, match="sharedInstance requires maxInstances: 1"):
        _gang(tmp_path, maxInstances=2)
    with pytest.raises(WasmLoadError, match="sharedInstance: expected a boolean"):
        load("v2/gang", tmp_path, WasmHandle(), sharedInstance="yes")
