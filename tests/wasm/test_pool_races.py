"""Pool bookkeeping under concurrency that the checklist does not spell out (docs/abi.md §8 "no leaks")."""

from __future__ import annotations

import threading
import time
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

    def slow_create():  # type: ignore[no-untyped-def]
        time.sleep(0.05)
        return create()

    pool._create = slow_create
    p = make_pod("p").obj()
    results = []
    threads = [threading.Thread(target=lambda: results.append(plugin.filter(CycleState(), p, NodeInfo(node))))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
