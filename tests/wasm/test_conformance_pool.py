"""docs/abi.md §13 items 49-60 (Pool): instances pinned to pods, serialized calls, hand-off to the binding
cycle, release, discard and bounds.

The guest (tests/wat/cyclestate/pod_fingerprint.wat) stores the pod's uid in `prefilter` and traps in
every other export unless the current pod is that pod, or if another call on the instance is running;
so a call on the wrong instance or an overlapping call is a trap (and a `discarded` count), never a
silent pass. Tests drive the plugin's framework methods the way the scheduler does and observe the §8
hooks: pool.pinned_instance_id(key), pool.counters(), instance globals.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeScore
from wasmsched.framework.status import Code, Status, is_skip, is_success
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.plugins.registry import Registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.instance import GuestInstance
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

from .harness import WasmHandle, compile_wat, load, wat_source

PROBE = "cyclestate/pod_fingerprint"


def probe_wat(without: tuple[str, ...] = ()) -> str:
    """The fingerprint guest with the given exports turned into internal functions."""
    text = wat_source(PROBE)
    for name in without:
        marker = f'(func (export "{name}")'
        assert marker in text
        text = text.replace(marker, f"(func $unexported_{name}")
    return text


class RendezvousHandle(WasmHandle):
    """A guest whose `rendezvous` global is set blocks in handle.get_waiting_pod("rv") until released."""

    def __init__(self, pods: list[Pod] | None = None, nodes: list[Node] | None = None) -> None:
        super().__init__(pods=pods, nodes=nodes)
        self.entered = threading.Event()
        self.release = threading.Event()

    def get_waiting_pod(self, uid: str) -> Any:
        if uid == "rv":
            self.entered.set()
            assert self.release.wait(10)
            return None
        return super().get_waiting_pod(uid)


NODES = [make_node(f"n{i}").capacity(cpu="4", pods="10").obj() for i in (1, 2, 3)]


class Env:
    def __init__(self, tmp_path: Path, wat: str | None = None, **args: Any) -> None:
        self.handle = RendezvousHandle(nodes=NODES)
        self.plugin: WasmPlugin = load(wat or probe_wat(), tmp_path, handle=self.handle, name="probe", **args)
        self.pool = self.plugin.pool
        lister = self.handle.snapshot_shared_lister()
        self.node_infos: list[NodeInfo] = lister.list()
        self.states: dict[str, CycleState] = {}

    def ni(self, name: str = "n1") -> NodeInfo:
        return next(n for n in self.node_infos if n.name == name)

    def state(self, pod: Pod) -> CycleState:
        return self.states.setdefault(get_pod_key(pod), CycleState())

    def pinned(self, pod: Pod) -> int | None:
        return self.pool.pinned_instance_id(get_pod_key(pod))

    def inst(self, pod: Pod) -> GuestInstance:
        iid = self.pinned(pod)
        assert iid is not None
        inst = self.pool.instance(iid)
        assert inst is not None
        return inst

    def prefilter(self, pod: Pod) -> Status | None:
        self.states[get_pod_key(pod)] = CycleState()
        _, st = self.plugin.pre_filter(self.state(pod), pod, self.node_infos)
        return st

    def schedule(self, pod: Pod, node: str = "n1") -> None:
        """A successful scheduling cycle up to Permit; the pod's cycle is then handed to binding."""
        ok(self.prefilter(pod))
        self.scheduling_calls(pod, node)
        self.plugin.scheduling_cycle_done(pod, True)

    def scheduling_calls(self, pod: Pod, node: str = "n1") -> None:
        p, s = self.plugin, self.state(pod)
        for ni in self.node_infos:
            ok(p.filter(s, pod, ni))
        ok(p.pre_score(s, pod, self.node_infos))
        for ni in self.node_infos:
            _, st = p.score(s, pod, ni)
            ok(st)
        ok(p.normalize_score(s, pod, [NodeScore(ni.name, 0) for ni in self.node_infos]))
        ok(p.reserve(s, pod, node))
        st, _ = p.permit(s, pod, node)
        ok(st)

    def bind_all(self, pod: Pod, node: str = "n1") -> None:
        """PreBind, Bind (the guest answers Skip), PostBind, and the end of the binding cycle."""
        p, s = self.plugin, self.state(pod)
        ok(p.pre_bind(s, pod, node))
        st = p.bind(s, pod, node)
        assert is_skip(st), st
        p.post_bind(s, pod, node)
        p.binding_cycle_done(pod)

    def counters(self) -> dict[str, int]:
        return self.pool.counters()


def ok(st: Status | None) -> None:
    assert is_success(st), st.message() if st else st


def g(inst: GuestInstance, name: str) -> int:
    return int(inst.get_global(name))


def pod(name: str) -> Pod:
    return make_pod(name).obj()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.plugin.close()


# ----- 49 --------------------------------------------------------------------------------------------


def test_49_prefilter_filter_score_reserve_permit_run_on_one_instance(env: Env) -> None:
    # Item 49. First make a second, idle instance A that holds another pod's state: a call for P
    # that took "any idle instance" would land on A and trap (uid mismatch).
    x, p = pod("x"), pod("p")
    env.schedule(x)
    ok(env.prefilter(p))
    a, b = env.inst(x), env.inst(p)
    assert a.id != b.id
    env.bind_all(x)
    assert env.counters()["idle"] == 1 and env.pinned(x) is None
    a_checks = g(a, "checks")

    s = env.state(p)
    ids = [env.pinned(p)]
    ok(env.plugin.filter(s, p, env.ni("n1")))
    ids.append(env.pinned(p))
    _, st = env.plugin.score(s, p, env.ni("n2"))
    ok(st)
    ids.append(env.pinned(p))
    ok(env.plugin.reserve(s, p, "n2"))
    ids.append(env.pinned(p))
    st, _ = env.plugin.permit(s, p, "n2")
    ok(st)
    ids.append(env.pinned(p))

    assert ids == [b.id] * 5
    assert g(b, "prefilters") == 1 and g(b, "checks") == 4  # filter, score, reserve, permit all on b
    assert g(a, "checks") == a_checks
    assert env.counters()["discarded"] == 0


# ----- 50 --------------------------------------------------------------------------------------------


def test_50_concurrent_filters_for_one_pod_never_overlap(env: Env) -> None:
    # Item 50. The guest sets `busy` on entry, calls a host import `spin` times, traps if `busy` was
    # already set, clears it on exit: 8 threads filtering the same pod at once must never make it trap.
    p = pod("p")
    ok(env.prefilter(p))
    inst = env.inst(p)
    inst.set_global("spin", 3000)
    barrier = threading.Barrier(8)
    results: list[Status | None] = [Status.error("not run")] * 8

    def run(i: int) -> None:
        barrier.wait()
        results[i] = env.plugin.filter(env.state(p), p, env.node_infos[i % len(env.node_infos)])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [r.message() if r else None for r in results] == [None] * 8
    assert g(inst, "checks") == 8 and g(inst, "busy") == 0
    assert env.pinned(p) == inst.id
    assert env.counters()["discarded"] == 0 and env.counters()["live"] == 1


# ----- 51 --------------------------------------------------------------------------------------------


def test_51_after_hand_off_next_pod_gets_another_instance_and_binding_calls_stay_on_p(env: Env) -> None:
    # Item 51.
    p, q = pod("p"), pod("q")
    env.schedule(p)
    a = env.inst(p)
    assert env.counters() | {"created": 0} == {"created": 0, "discarded": 0, "live": 1, "idle": 0,
                                               "scheduling": 0, "binding": 1}
    ok(env.prefilter(q))
    b = env.inst(q)
    assert b.id != a.id
    assert env.pinned(p) == a.id

    a_checks, b_checks = g(a, "checks"), g(b, "checks")
    s = env.state(p)
    ok(env.plugin.pre_bind(s, p, "n1"))
    ok(env.plugin.filter(env.state(q), q, env.ni("n2")))  # Q's cycle goes on meanwhile, on b
    st = env.plugin.bind(s, p, "n1")
    assert st is not None and st.code == Code.SKIP
    env.plugin.post_bind(s, p, "n1")
    assert g(a, "checks") == a_checks + 3 and g(a, "n_bind") == 1
    assert g(b, "checks") == b_checks + 1 and g(b, "n_bind") == 0
    assert env.pinned(q) == b.id
    assert env.counters()["discarded"] == 0


# ----- 52 --------------------------------------------------------------------------------------------


def test_52_unreserve_after_hand_off_runs_on_p_s_instance_not_q_s(env: Env) -> None:
    # Item 52.
    p, q = pod("p"), pod("q")
    env.schedule(p)
    ok(env.prefilter(q))
    a, b = env.inst(p), env.inst(q)
    a_checks, b_checks = g(a, "checks"), g(b, "checks")
    env.plugin.unreserve(env.state(p), p, "n1")
    env.plugin.binding_cycle_done(p)
    assert g(a, "checks") == a_checks + 1
    assert g(b, "checks") == b_checks
    assert env.pinned(p) is None and env.pinned(q) == b.id
    c = env.counters()
    assert (c["discarded"], c["live"], c["idle"], c["scheduling"], c["binding"]) == (0, 2, 1, 1, 0)


def test_52_unreserve_in_a_failed_scheduling_cycle_runs_on_p_s_scheduling_instance(env: Env) -> None:
    # Item 52 (Reserve/Permit failure path: Unreserve before the hand-off).
    p = pod("p")
    ok(env.prefilter(p))
    env.scheduling_calls(p)
    a = env.inst(p)
    checks = g(a, "checks")
    env.plugin.unreserve(env.state(p), p, "n1")
    env.plugin.scheduling_cycle_done(p, False)
    assert g(a, "checks") == checks + 1
    c = env.counters()
    assert (c["discarded"], c["live"], c["idle"], c["scheduling"], c["binding"]) == (0, 1, 1, 0, 0)


# ----- 53 --------------------------------------------------------------------------------------------


def test_53_after_post_bind_the_instance_is_idle_and_reused(env: Env) -> None:
    # Item 53.
    p, q = pod("p"), pod("q")
    env.schedule(p)
    a = env.inst(p)
    env.bind_all(p)
    c = env.counters()
    assert (c["created"], c["live"], c["idle"], c["scheduling"], c["binding"]) == (1, 1, 1, 0, 0)
    ok(env.prefilter(q))
    assert env.pinned(q) == a.id
    assert env.counters()["created"] == 1


def test_53_post_bind_alone_releases_the_instance(env: Env) -> None:
    # Item 53: "after postbind returns" -> idle, before the framework's end-of-binding notice.
    p = pod("p")
    env.schedule(p)
    env.plugin.post_bind(env.state(p), p, "n1")
    c = env.counters()
    assert (c["idle"], c["binding"]) == (1, 0)


# ----- 54, 55: through the real scheduler ----------------------------------------------------------


def _simulate(tmp_path: Path, wat: str, n_pods: int, bind_first: bool = False,
              one_at_a_time: bool = False) -> tuple[Any, WasmPlugin]:
    """n_pods pods on 5 nodes through the scheduler. one_at_a_time: each pod's binding cycle ends before
    the next pod's scheduling cycle starts (otherwise binding cycles run in parallel with scheduling)."""
    path = compile_wat(wat, tmp_path / "guest")
    runtime = Runtime(cache_dir=tmp_path / "cache")
    plugins: list[WasmPlugin] = []

    def factory(args: Any, handle: Any) -> WasmPlugin:
        plugins.append(new_wasm_plugin("probe", args, handle, runtime=runtime))
        return plugins[-1]

    profile: dict[str, Any] = {"schedulerName": "default-scheduler",
                               "plugins": {"multiPoint": {"enabled": [{"name": "probe"}]}},
                               "pluginConfig": [{"name": "probe", "args": {"guestURL": str(path)}}]}
    if bind_first:  # the guest's Bind (answering Skip) runs before DefaultBinder
        profile["plugins"]["bind"] = {"enabled": [{"name": "probe"}]}
    cfg = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                            "profiles": [profile]})
    sim = Simulation(cfg, Registry({"probe": factory}))
    nodes = [make_node(f"node-{i}").capacity(cpu="64", pods="110").obj() for i in range(5)]
    pods = [make_pod(f"p{i}").req(cpu="100m").obj() for i in range(n_pods)]
    sim.apply({"Node": nodes, "Pod": pods})
    if one_at_a_time:
        while sim.scheduler.schedule_one():
            assert sim.scheduler.wait_for_bindings(timeout=10)
    result = sim.run_until_quiet()
    (plugin,) = plugins
    return result, plugin


@pytest.mark.parametrize("one_at_a_time", [True, False], ids=["sequential", "parallel-binding"])
def test_54_bind_without_postbind_leaks_no_binding_instance(tmp_path: Path, one_at_a_time: bool) -> None:
    # Item 54: 100 pods bound through the scheduler by a guest exporting `bind` but not `postbind`
    # (kube-scheduler-wasm-extension's host kept every such instance in its binding set).
    result, plugin = _simulate(tmp_path, probe_wat(without=("postbind",)), 100, bind_first=True,
                               one_at_a_time=one_at_a_time)
    try:
        assert "postbind" not in plugin.exports
        assert result.count("Scheduled") == 100, [(p.name, p.phase, p.message) for p in result.pods][:5]
        c = plugin.counters()
        assert c["binding"] == 0 and c["scheduling"] == 0 and c["discarded"] == 0
        assert c["live"] == c["idle"], c
        if one_at_a_time:
            assert c["live"] <= 2, c
        else:
            # Binding cycles in flight legitimately hold one instance each; none may outlive its cycle.
            assert c["live"] <= plugin.args.max_instances, c
        assert sum(g(i, "n_bind") for i in plugin.pool.instances()) == 100  # the guest's bind ran for every pod
    finally:
        result.scheduler.close()


FILTER_ONLY = """
;; Only `filter`: every node fits.
(module
  (memory (export "memory") 1 1)
  (func (export "filter") (result i32) (i32.const 0)))
"""


def test_55_filter_only_guest_uses_one_instance_for_100_pods(tmp_path: Path) -> None:
    # Item 55.
    result, plugin = _simulate(tmp_path, FILTER_ONLY, 100)
    try:
        assert result.count("Scheduled") == 100
        c = plugin.counters()
        assert c["created"] == 1 and c["live"] == 1 and c["idle"] == 1
        assert c["binding"] == 0 and c["scheduling"] == 0
    finally:
        result.scheduler.close()


# ----- 56 --------------------------------------------------------------------------------------------


def test_56_after_a_failed_cycle_the_next_pod_gets_the_same_instance(env: Env) -> None:
    # Item 56. Another idle instance exists (it served pod x), so "same instance" is a real choice.
    x, p, q = pod("x"), pod("p"), pod("q")
    env.schedule(x)
    ok(env.prefilter(p))
    other = env.pinned(x)
    env.bind_all(x)
    ok(env.plugin.filter(env.state(p), p, env.ni()))
    a = env.pinned(p)
    assert a != other
    env.plugin.scheduling_cycle_done(p, False)
    assert env.counters()["binding"] == 0  # a failed cycle hands nothing to binding
    ok(env.prefilter(q))
    assert env.pinned(q) == a
    assert env.pinned(p) is None
    c = env.counters()
    assert (c["created"], c["live"], c["scheduling"], c["idle"]) == (2, 2, 1, 1)
    # P's retry re-pins (Q's cycle is over by then) and sees its own state again.
    ok(env.prefilter(p))
    ok(env.plugin.filter(env.state(p), p, env.ni()))
    assert env.counters()["discarded"] == 0


# ----- 57 --------------------------------------------------------------------------------------------


def test_57_trap_discards_the_instance_until_the_next_prefilter(env: Env) -> None:
    # Item 57.
    p = pod("p")
    ok(env.prefilter(p))
    old = env.inst(p)
    old.set_global("marker", 42)
    old.set_global("trap_filter", 1)
    before = env.counters()
    st = env.plugin.filter(env.state(p), p, env.ni())
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: filter error: wasm error: unreachable")
    after = env.counters()
    assert after["discarded"] == before["discarded"] + 1
    assert after["live"] == 0 and env.pinned(p) is None and env.pool.instance(old.id) is None

    for call in (lambda: env.plugin.filter(env.state(p), p, env.ni("n2")),
                 lambda: env.plugin.score(env.state(p), p, env.ni())[1],
                 lambda: env.plugin.reserve(env.state(p), p, "n1")):
        st = call()
        assert st is not None and st.code == Code.ERROR
        assert "guest instance was discarded after a failure" in st.message()
    assert env.counters()["created"] == before["created"]  # guest not entered, nothing re-created
    env.plugin.unreserve(env.state(p), p, "n1")  # a no-op, no exception

    ok(env.prefilter(p))
    fresh = env.inst(p)
    assert fresh.id != old.id
    assert env.counters()["created"] == before["created"] + 1
    assert (g(fresh, "marker"), g(fresh, "trap_filter"), g(fresh, "prefilters"), g(fresh, "checks")) == (0, 0, 1, 0)
    ok(env.plugin.filter(env.state(p), p, env.ni()))


# ----- 58 --------------------------------------------------------------------------------------------


def test_58_pod_deleted_in_binding_frees_its_instance_and_later_unreserve_is_a_no_op(env: Env) -> None:
    # Item 58.
    p, q = pod("p"), pod("q")
    env.schedule(p)
    a = env.inst(p)
    env.plugin.pod_deleted(p)
    c = env.counters()
    assert (c["live"], c["idle"], c["binding"], c["scheduling"]) == (1, 1, 0, 0)
    assert env.pinned(p) is None
    ok(env.prefilter(q))  # Q reuses P's old instance
    assert env.pinned(q) == a.id
    checks = g(a, "checks")
    env.plugin.unreserve(env.state(p), p, "n1")  # must not enter the guest (Q's state would make it trap)
    env.plugin.binding_cycle_done(p)
    assert g(a, "checks") == checks
    c = env.counters()
    assert (c["discarded"], c["scheduling"], c["idle"]) == (0, 1, 0)


def test_58_pod_deleted_during_its_running_call_frees_the_instance_when_the_call_returns(env: Env) -> None:
    # Item 58 (and §8 "P deleted: idle once its running call returns").
    p = pod("p")
    env.schedule(p)
    a = env.inst(p)
    a.set_global("rendezvous", 1)
    out: list[Status | None] = []
    t = threading.Thread(target=lambda: out.append(env.plugin.pre_bind(env.state(p), p, "n1")))
    t.start()
    try:
        assert env.handle.entered.wait(10)
        env.plugin.pod_deleted(p)
        c = env.counters()
        assert (c["idle"], c["binding"]) == (0, 0)  # not idle while P's call still runs
    finally:
        env.handle.release.set()
        t.join(10)
    assert out == [None]
    c = env.counters()
    assert (c["live"], c["idle"], c["binding"], c["scheduling"], c["discarded"]) == (1, 1, 0, 0, 0)
    a.set_global("rendezvous", 0)


# ----- 59 --------------------------------------------------------------------------------------------


def test_59_max_instances_bound_fails_after_the_timeout(tmp_path: Path) -> None:
    # Item 59.
    env = Env(tmp_path, maxInstances=1, timeout="200ms")
    try:
        p, q = pod("p"), pod("q")
        env.schedule(p)
        # The wait for a free instance is bounded by the call timeout (docs/abi.md §8): without a
        # bound this call would block for ever, as p's instance is held by its binding cycle.
        assert env.plugin.pool.wait_timeout == 0.2
        st = env.prefilter(q)
        assert st is not None and st.code == Code.ERROR
        assert "no guest instance available (maxInstances=1)" in st.message()
        c = env.counters()
        assert (c["live"], c["binding"], c["created"]) == (1, 1, 1)
        assert env.pinned(q) is None
        env.bind_all(p)  # P's binding cycle is unaffected
        ok(env.prefilter(q))
    finally:
        env.plugin.close()


class WaitSignallingCondition(threading.Condition):
    """A condition that tells when a thread starts waiting on it (the pool's, in place of its own)."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()  # with the lock held, which the wait then releases
        return super().wait(timeout)


def test_59_a_waiting_prefilter_gets_the_instance_released_meanwhile(tmp_path: Path) -> None:
    # Item 59 (the wait): Q waits for the only instance and gets it when P's binding cycle ends.
    # The wait's bound (the call timeout) is far past the joins below, so Q returns in time only if woken.
    env = Env(tmp_path, maxInstances=1, timeout="60s")
    try:
        p, q = pod("p"), pod("q")
        env.schedule(p)
        a = env.pinned(p)
        cv = env.pool._cv = WaitSignallingCondition()
        out: list[Status | None] = []
        t = threading.Thread(target=lambda: out.append(env.prefilter(q)))
        t.start()
        assert cv.waiting.wait(10), "Q's PreFilter did not wait for an instance"
        # Q holds the pool's lock until its wait releases it, and bind_all takes that lock to free the
        # instance: the release cannot come before Q waits, so Q gets the instance from the wait.
        env.bind_all(p)
        t.join(10)
        assert not t.is_alive(), "Q was not woken when P's instance was freed"
        assert out == [None]
        assert env.pinned(q) == a and env.counters()["created"] == 1
    finally:
        env.plugin.close()


# ----- 60 --------------------------------------------------------------------------------------------


def test_60_failed_creation_fails_only_the_call_that_needed_it(env: Env) -> None:
    # Item 60. The switch: the guest's _start traps while the snapshot has a node named
    # fail-instantiation, so creating an instance fails as a broken guest's would.
    p, q = pod("p"), pod("q")
    env.schedule(p)
    a = env.inst(p)
    env.handle.set_cluster([], [*NODES, make_node("fail-instantiation").obj()])
    st = env.prefilter(q)
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: prefilter error: failed to create a guest instance: failed to create a "
                                   "guest pool: wasm: instantiate error: wasm error: unreachable"), st.message()
    assert env.pinned(q) is None
    c = env.counters()
    assert (c["live"], c["binding"], c["created"], c["discarded"]) == (1, 1, 1, 0)

    checks = g(a, "checks")
    ok(env.plugin.pre_bind(env.state(p), p, "n1"))  # P's binding instance still works
    assert g(a, "checks") == checks + 1
    env.handle.set_cluster([], NODES)
    ok(env.prefilter(q))  # only the creation that needed the instance failed
    assert env.pinned(q) not in (None, a.id) and env.counters()["created"] == 2
    env.scheduling_calls(q)
    st = env.plugin.bind(env.state(p), p, "n1")
    assert is_skip(st)
    env.plugin.post_bind(env.state(p), p, "n1")
    assert g(a, "checks") == checks + 3
    assert env.counters()["idle"] == 1 and env.counters()["discarded"] == 0
