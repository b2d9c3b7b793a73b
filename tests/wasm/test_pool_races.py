"""Pool bookkeeping under concurrency that the checklist does not spell out (docs/abi.md §8 "no leaks")."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.wasm.harness import WasmHandle, load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod

FILTER_AND_BIND = """(module (memory (export "memory") 1 1)
  (func (export "filter") (result i32) (i32.const 0))
  (func (export "bind") (result i32) (i32.const 0)))"""


def test_parallel_first_calls_of_a_pod_share_one_pin_and_leak_nothing(tmp_path: Path) -> None:
    node = make_node("n1").obj()
    plugin = load(FILTER_AND_BIND, tmp_path, WasmHandle(nodes=[node]), maxInstances=4)
    pool = plugin.pool
    # Q holds the only instance (in binding), so both of P's calls must create one, slowly.
    q = make_pod("q").obj()
    plugin.pre_filter(CycleState(), q, [])
    plugin.scheduling_cycle_done(q, True)
    create = pool._create
    # Each creation waits for the other one: the race (two creations for P with the pool's lock released, the
    # second to finish finding P pinned) then happens on every run, not only when the scheduler allows it.
    both_creating = threading.Barrier(2, timeout=10)
    overlapped: list[bool] = []

    def create_with_the_other():  # type: ignore[no-untyped-def]
        try:
            both_creating.wait()
            overlapped.append(True)
        except threading.BrokenBarrierError:
            overlapped.append(False)
        return create()

    pool._create = create_with_the_other
    p = make_pod("p").obj()
    results = []
    start = threading.Barrier(2, timeout=10)

    def first_call() -> None:
        start.wait()
        results.append(plugin.filter(CycleState(), p, NodeInfo(node)))

    threads = [threading.Thread(target=first_call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a first call of P never returned"
    assert overlapped == [True, True], "P's two first calls did not create their instances at the same time"
    assert results == [None, None]
    c = pool.counters()
    assert c["scheduling"] == 1 and c["binding"] == 1
    # The instance created by the losing call went back to idle instead of being dropped.
    assert c["live"] == c["idle"] + c["scheduling"] + c["binding"]
    plugin.scheduling_cycle_done(p, False)
    plugin.binding_cycle_done(q)
    c = pool.counters()
    assert c["live"] == c["idle"] == c["created"] - c["discarded"]
    assert pool.pinned_instance_id(get_pod_key(p)) is None
