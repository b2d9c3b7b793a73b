"""Port of nodeports/node_ports_test.go."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status, is_skip
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins import nodeports
from wasmsched.plugins.nodeports import ERR_REASON, NodePorts, fits
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

CONFLICT = Status(Code.UNSCHEDULABLE, [ERR_REASON])
SKIP = Status(Code.SKIP)


def new_pod(host: str, *host_port_infos: str) -> Pod:
    """A pod on `host` with one container exposing "PROTO/IP/PORT" host ports."""
    pod = make_pod("p").node(host).obj()
    c = pod.spec.containers.add()
    c.name = "c"
    for info in host_port_infos:
        proto, ip, port = info.split("/")
        p = c.ports.add()
        p.hostIP, p.hostPort, p.protocol = ip, int(port), proto
    return pod


def new_node_info(*host_port_infos: str) -> NodeInfo:
    return NodeInfo(None, [PodInfo(new_pod("m1", *host_port_infos))])


def init_container_pod(sidecar: bool) -> Pod:
    pod = make_pod("p").obj()
    c = pod.spec.initContainers.add()
    c.name = "init"
    if sidecar:
        c.restartPolicy = "Always"
    p = c.ports.add()
    p.containerPort, p.hostPort, p.protocol = 8001, 8001, "TCP"
    return pod


def _plugin() -> NodePorts:
    pl = nodeports.new(None, FakeHandle())
    assert isinstance(pl, NodePorts)
    return pl


@pytest.mark.parametrize(
    ("name", "pod", "node_info", "want_pre_filter", "want_filter"),
    [
        ("skip filter", Pod(), NodeInfo(), SKIP, None),
        ("other port", new_pod("m1", "UDP/127.0.0.1/8080"), new_node_info("UDP/127.0.0.1/9090"), None, None),
        ("same udp port", new_pod("m1", "UDP/127.0.0.1/8080"), new_node_info("UDP/127.0.0.1/8080"), None,
         CONFLICT),
        ("same tcp port", new_pod("m1", "TCP/127.0.0.1/8080"), new_node_info("TCP/127.0.0.1/8080"), None,
         CONFLICT),
        ("different host ip", new_pod("m1", "TCP/127.0.0.1/8080"), new_node_info("TCP/127.0.0.2/8080"), None,
         None),
        ("different protocol", new_pod("m1", "UDP/127.0.0.1/8080"), new_node_info("TCP/127.0.0.1/8080"), None,
         None),
        ("second udp port conflict", new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
         new_node_info("UDP/127.0.0.1/8080"), None, CONFLICT),
        ("first tcp port conflict", new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
         new_node_info("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), None, CONFLICT),
        ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/0.0.0.0/8001"),
         new_node_info("TCP/127.0.0.1/8001"), None, CONFLICT),
        ("TCP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
         new_node_info("TCP/127.0.0.1/8001"), None, CONFLICT),
        ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("m1", "TCP/127.0.0.1/8001"),
         new_node_info("TCP/0.0.0.0/8001"), None, CONFLICT),
        ("second different protocol", new_pod("m1", "UDP/127.0.0.1/8001"), new_node_info("TCP/0.0.0.0/8001"),
         None, None),
        ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "UDP/127.0.0.1/8001"),
         new_node_info("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), None, CONFLICT),
        ("non-sidecar initContainer using hostPort", init_container_pod(False), new_node_info("TCP/0.0.0.0/8001"),
         SKIP, None),
        ("TCP hostPort conflict from sidecar initContainer", init_container_pod(True),
         new_node_info("TCP/0.0.0.0/8001"), None, CONFLICT),
        # Not in kube's table: an unset hostIP and protocol mean 0.0.0.0 and TCP.
        ("defaults for hostIP and protocol", new_pod("m1", "/" + "/8001"), new_node_info("TCP/127.0.0.1/8001"),
         None, CONFLICT),
    ],
)
def test_node_ports(name: str, pod: Pod, node_info: NodeInfo, want_pre_filter: Status | None,
                    want_filter: Status | None) -> None:
    pl = _plugin()
    state = CycleState()
    result, status = pl.pre_filter(state, pod, [])
    assert result is None
    assert status == want_pre_filter
    if is_skip(status):
        return
    assert pl.filter(state, pod, node_info) == want_filter
    assert filter_statuses(pl, state, pod, [node_info]) == [want_filter]


def test_pre_filter_disabled() -> None:
    ni = NodeInfo(make_node("n").obj())
    status = _plugin().filter(CycleState(), Pod(), ni)
    assert status is not None and status.code == Code.ERROR
    assert status.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_state_clone_is_shared() -> None:
    state = CycleState()
    _plugin().pre_filter(state, new_pod("m1", "TCP/127.0.0.1/80"), [])
    clone = state.clone()
    assert clone.read("PreFilterNodePorts") is state.read("PreFilterNodePorts")


POD_WITH_HOST_PORT = make_pod("p").host_port(8080).obj()


@pytest.mark.parametrize(
    ("name", "old", "want"),
    [
        ("backoff-wrong-old-object", "not-a-pod", QueueingHint.QUEUE),
        ("skip-queue-on-unscheduled", make_pod("d").obj(), QueueingHint.QUEUE_SKIP),
        ("skip-queue-on-non-hostport", make_pod("d").node("fake-node").obj(), QueueingHint.QUEUE_SKIP),
        ("skip-queue-on-unrelated-hostport", make_pod("d").node("fake-node").host_port(8081).obj(),
         QueueingHint.QUEUE_SKIP),
        ("queue-on-released-hostport", make_pod("d").node("fake-node").host_port(8080).obj(), QueueingHint.QUEUE),
        # Not in kube's table: a nominated (not yet bound) pod's ports count too.
        ("queue-on-nominated-pod-hostport", make_pod("d").nominated_node("n").host_port(8080).obj(),
         QueueingHint.QUEUE),
    ],
)
def test_is_schedulable_after_assigned_pod_deleted(name: str, old: object, want: QueueingHint) -> None:
    assert _plugin().is_schedulable_after_assigned_pod_deleted(POD_WITH_HOST_PORT, old, None) == want


@pytest.mark.parametrize(
    ("desc", "pod", "existing", "expect"),
    [
        ("non-conflicting ports", new_pod("p", "TCP/127.0.0.1/80"), new_node_info("TCP/127.0.0.1/9090"), True),
        ("multiple non-conflicting ports",
         new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
         new_node_info("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"), True),
        ("same ports on different protocols", new_pod("m1", "TCP/127.0.0.1/80"), new_node_info("UDP/127.0.0.1/80"),
         True),
        ("conflicting ports", new_pod("m1", "TCP/127.0.0.1/80"), new_node_info("TCP/127.0.0.1/80"), False),
        ("multiple ports, some conflicting",
         new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
         new_node_info("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"), False),
    ],
)
def test_fits(desc: str, pod: Pod, existing: NodeInfo, expect: bool) -> None:
    assert fits(pod, existing) is expect


def test_events_to_register() -> None:
    events = [(e.event.resource, e.event.action_type, e.queueing_hint_fn is None)
              for e in _plugin().events_to_register()]
    assert events == [
        (EventResource.ASSIGNED_POD, ActionType.DELETE, False),
        (EventResource.NODE, ActionType.ADD, True),
    ]
