"""PodShapes: what is read of a pod's spec and status, shared by the pods of one shape."""

from __future__ import annotations

from wasmsched.api.types import Pod
from wasmsched.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.pod_shape import PodShapes, read_pod_shape
from wasmsched.framework.types import PodInfo
from wasmsched.plugins.helper.podmemo import shape_memoized
from wasmsched.plugins.noderesources import BalancedAllocation, Fit
from wasmsched.plugins.prioritysort import PrioritySort
from wasmsched.scheduler.queue import SchedulingQueue
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle

SELECTOR_KEYS: MemoKey[list[str]] = MemoKey("node selector keys")


def replica(name: str, cpu: str = "100m", namespace: str = "default") -> Pod:
    return (make_pod(name).namespace(namespace).uid(name).label("app", name).req(cpu=cpu, memory="500Mi")
            .host_port(8080).toleration("spot", "true", "PreferNoSchedule").obj())


def test_pods_differing_only_in_metadata_share_a_shape() -> None:
    shapes = PodShapes()
    a, b = replica("a"), replica("b", namespace="other")
    assert shapes.of(a) is shapes.of(b)
    assert shapes.of(replica("c", cpu="200m")) is not shapes.of(a)  # another spec
    running = replica("d")
    running.status.containerStatuses.add(name="c0")
    assert shapes.of(running) is not shapes.of(a)  # another status
    assert len(shapes) == 3


def test_a_shape_holds_what_a_pod_info_reads_itself() -> None:
    shapes = PodShapes()
    pod = replica("a")
    shared, own = PodInfo(pod, shapes.of(replica("first"))), PodInfo(pod)
    for attr in ("requests", "non_zero_requests", "host_ports"):
        assert getattr(shared, attr) == getattr(own, attr), attr
    assert shared.host_ports == [("0.0.0.0", "TCP", 8080)]
    assert read_pod_shape(pod) == own.shape


def test_the_oldest_shapes_are_dropped_past_capacity() -> None:
    shapes = PodShapes(capacity=2)
    first = shapes.of(replica("a", cpu="1"))
    shapes.of(replica("b", cpu="2"))
    shapes.of(replica("c", cpu="3"))
    assert len(shapes) == 2
    assert shapes.of(replica("d", cpu="1")) is not first  # read again


def test_plugins_compute_once_per_shape() -> None:
    shapes = PodShapes()
    calls: list[str] = []

    def compute(p: Pod) -> list[str]:
        calls.append(p.metadata.name)
        return list(p.spec.nodeSelector)

    states = []
    for name in ("a", "b", "c"):
        state = CycleState()
        pod = replica(name)
        state.pod_info = PodInfo(pod, shapes.of(pod))
        states.append((state, pod))
        assert shape_memoized(state, pod, SELECTOR_KEYS, compute) == []
    assert calls == ["a"]
    # Not the cycle's pod: computed, not kept.
    other = replica("x")
    assert shape_memoized(states[0][0], other, SELECTOR_KEYS, compute) == [] and calls == ["a", "x"]
    # The plugins' requests agree with an unshared PodInfo's.
    handle = FakeHandle()
    for pl in (Fit(NodeResourcesFitArgs(), handle), BalancedAllocation(NodeResourcesBalancedAllocationArgs(), handle)):
        lists = [pl.scorer.pod_resource_request_list(state, pod) for state, pod in states]
        alone = CycleState()
        alone.pod_info = PodInfo(states[0][1])
        assert lists[0] is lists[1] is lists[2]
        assert lists[0] == pl.scorer.pod_resource_request_list(alone, states[0][1]) == [100, 500 * 1024 * 1024]


def test_the_queue_shares_shapes_among_replicas() -> None:
    q = SchedulingQueue(PrioritySort().less, lambda: 0.0)
    for name in ("a", "b"):
        q.add(replica(name))
    q.add(replica("c", cpu="3"))
    infos = [q.pop() for _ in range(3)]
    by_name = {qpi.pod.metadata.name: qpi.pod_info for qpi in infos if qpi is not None}
    assert by_name["a"].shape is by_name["b"].shape is not by_name["c"].shape
    assert len(q.pod_shapes) == 2
