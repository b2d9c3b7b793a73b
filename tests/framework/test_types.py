"""Ported from kube-scheduler's framework/types_test.go and interface_test.go: NodeInfo, PodInfo,
HostPortInfo, Resource, QueuedPodInfo, PreFilterResult and Status."""

from __future__ import annotations

import pytest

from wasmsched.framework.interface import NodeToStatus, PreFilterResult
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.framework.status import (
    Code,
    Status,
    code_of,
    is_rejected,
    is_skip,
    is_success,
    is_wait,
    not_success,
)
from wasmsched.framework.types import HostPortInfo, NodeInfo, PodInfo, QueuedPodInfo, Resource, get_pod_key
from wasmsched.testing.builders import make_node, make_pod

# ----- Status -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "status", "code", "message", "success", "rejected"), [
    # TestStatus
    ("success status", Status(), Code.SUCCESS, "", True, False),
    ("error status", Status.error("unknown error"), Code.ERROR, "unknown error", False, False),
    ("unschedulable", Status.unschedulable("a", "b"), Code.UNSCHEDULABLE, "a, b", False, True),
    ("unresolvable", Status.unresolvable("x"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x", False, True),
    ("pending", Status(Code.PENDING, ["p"]), Code.PENDING, "p", False, True),
    ("wait", Status(Code.WAIT, ["w"]), Code.WAIT, "w", False, False),
    ("skip", Status.skip(), Code.SKIP, "", False, False),
])
def test_status(name: str, status: Status, code: int, message: str, success: bool, rejected: bool) -> None:
    assert status.code == code
    assert status.message() == message
    assert is_success(status) == success
    assert is_rejected(status) == rejected


def test_status_helpers() -> None:
    assert is_success(None) and code_of(None) == Code.SUCCESS
    assert not_success(Status.error("x"))
    # Code names are kube's (used in metrics and messages).
    assert [str(c) for c in Code] == ["Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable",
                                            "Wait", "Skip", "Pending"]
    e = ValueError("boom")
    st = Status.error(e)
    assert st.as_error() is e and st.message() == "boom"
    assert Status.unschedulable("a", plugin="P").plugin == "P"
    assert str(Status.unschedulable("a", "b")) == "Unschedulable: a, b"


# ----- PreFilterResult ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "receiver", "arg", "want"), [
    # TestPreFilterResultMerge
    ("all nil", None, None, None),
    ("nil receiver empty input", None, set(), set()),
    ("empty receiver nil input", set(), None, set()),
    ("empty receiver empty input", set(), set(), set()),
    ("nil receiver populated input", None, {"node1"}, {"node1"}),
    ("empty receiver populated input", set(), {"node1"}, set()),
    ("populated receiver nil input", {"node1"}, None, {"node1"}),
    ("populated receiver empty input", {"node1"}, set(), set()),
    ("populated receiver and input", {"node1", "node2"}, {"node2", "node3"}, {"node2"}),
])
def test_pre_filter_result_merge(name: str, receiver: set[str] | None, arg: set[str] | None,
                                 want: set[str] | None) -> None:
    got = PreFilterResult(receiver).merge(PreFilterResult(arg))
    assert got.node_names == want
    assert got.all_nodes() == (want is None)


def test_pre_filter_result_merge_does_not_alias() -> None:
    a = PreFilterResult({"n1"})
    merged = a.merge(None)
    merged.node_names.add("n2")  # type: ignore[union-attr]
    assert a.node_names == {"n1"}


def test_node_to_status_absent_nodes() -> None:
    snap = new_snapshot([], [make_node(n).obj() for n in ("n1", "n2", "n3")])
    m = NodeToStatus({"n1": Status.unschedulable("x"), "n2": Status.unresolvable("y")})
    assert m.get("n3").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # default absent status
    assert [ni.name for ni in m.nodes_for_status_code(snap, Code.UNSCHEDULABLE)] == ["n1"]
    assert [ni.name for ni in m.nodes_for_status_code(snap, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)] == ["n2", "n3"]
    m.absent_nodes_status = Status.unschedulable("absent")
    assert [ni.name for ni in m.nodes_for_status_code(snap, Code.UNSCHEDULABLE)] == ["n1", "n3"]


# ----- Resource / PodInfo -------------------------------------------------------------------------


def test_resource_add_sub_clone() -> None:
    r = Resource.from_list({"cpu": 100, "memory": 200, "pods": 3, "example.com/gpu": 1})
    assert (r.milli_cpu, r.memory, r.allowed_pod_number, r.scalar_resources) == (100, 200, 3, {"example.com/gpu": 1})
    c = r.clone()
    c.add(Resource(10, 20, 0, 0, {"example.com/gpu": 2}))
    assert (c.milli_cpu, c.memory, c.scalar_resources["example.com/gpu"]) == (110, 220, 3)
    assert r.scalar_resources == {"example.com/gpu": 1}
    c.sub(r)
    assert (c.milli_cpu, c.memory, c.scalar_resources["example.com/gpu"]) == (10, 20, 2)
    assert r.get("cpu") == 100 and r.get("example.com/gpu") == 1 and r.get("unknown") == 0


def test_pod_info() -> None:
    p = (make_pod("p", "ns").uid("u").priority(5).res({"cpu": "500m", "memory": "1Gi"})
         .host_port(8080).pod_affinity("zone", {"a": "b"}).obj())
    pi = PodInfo(p)
    assert pi.key == "ns/p" and pi.uid == "u" and pi.priority == 5
    assert (pi.requests.milli_cpu, pi.requests.memory) == (500, 1 << 30)
    assert pi.host_ports == [("0.0.0.0", "TCP", 8080)]
    assert pi.has_affinity() and len(pi.required_affinity_terms) == 1
    empty = PodInfo(make_pod("q").container().obj())
    # Non-zero requests: a pod without requests counts 100m / 200Mi for spreading (GetNonzeroRequests).
    assert (empty.non_zero_requests.milli_cpu, empty.non_zero_requests.memory) == (100, 200 * 1024 * 1024)
    assert empty.priority == 0 and not empty.has_affinity()


def test_get_pod_key_prefers_uid() -> None:
    assert get_pod_key(make_pod("p", "ns").uid("abc").obj()) == "abc"
    assert get_pod_key(make_pod("p", "ns").uid("").obj()) == "ns/p"


def test_queued_pod_info_gated() -> None:
    q = QueuedPodInfo(PodInfo(make_pod("p").obj()))
    assert not q.gated()
    q.gating_plugin = "SchedulingGates"
    assert q.gated()
    assert q.pod is q.pod_info.pod


# ----- NodeInfo -----------------------------------------------------------------------------------


def _pod(name: str, node: str, cpu: str, mem: str, port: int = 0, pvc: str = "") -> PodInfo:
    w = make_pod(name, "node_info_cache_test").uid(name).node(node).res({"cpu": cpu, "memory": mem})
    if port:
        w.host_port(port)
    pod = w.obj()
    if pvc:
        v = pod.spec.volumes.add()
        v.name = pvc
        v.volumeSource.persistentVolumeClaim.claimName = pvc
    return PodInfo(pod)


def test_new_node_info() -> None:
    # TestNewNodeInfo
    node = make_node("test-node").res({"cpu": "1000m", "memory": "1Gi", "pods": "110"}).obj()
    pods = [_pod("test-1", "test-node", "100m", "500", 80), _pod("test-2", "test-node", "200m", "1Ki", 8080)]
    ni = NodeInfo(node, pods)
    assert ni.name == "test-node"
    assert (ni.requested.milli_cpu, ni.requested.memory) == (300, 1524)
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (300, 1524)
    assert ni.allocatable.milli_cpu == 1000 and ni.allocatable.allowed_pod_number == 110
    assert ni.used_ports.check_conflict("127.0.0.1", "TCP", 80)
    assert ni.used_ports.check_conflict("0.0.0.0", "TCP", 8080)
    assert [p.name for p in ni.pods] == ["test-1", "test-2"]


def test_node_info_add_remove_pod() -> None:
    # TestNodeInfoAddPod / TestNodeInfoRemovePod
    ni = NodeInfo(make_node("n").obj())
    a = _pod("a", "n", "100m", "500", 80, pvc="claim")
    b = _pod("b", "n", "200m", "1Ki", 8080, pvc="claim")
    g0 = ni.generation
    ni.add_pod_info(a)
    g1 = ni.generation
    assert g1 > g0
    ni.add_pod_info(b)
    assert ni.pvc_ref_counts == {"node_info_cache_test/claim": 2}
    assert ni.remove_pod(a.pod)
    assert ni.generation > g1
    assert (ni.requested.milli_cpu, ni.requested.memory) == (200, 1024)
    assert not ni.used_ports.check_conflict("0.0.0.0", "TCP", 80)
    assert ni.pvc_ref_counts == {"node_info_cache_test/claim": 1}
    assert not ni.remove_pod(a.pod)  # not there any more
    assert ni.remove_pod(b.pod)
    assert ni.pods == [] and ni.pvc_ref_counts == {} and len(ni.used_ports) == 0
    assert (ni.requested.milli_cpu, ni.requested.memory) == (0, 0)


def test_node_info_pod_with_other_volumes() -> None:
    p = make_pod("v").uid("v").obj()
    v = p.spec.volumes.add()
    v.name = "scratch"
    v.volumeSource.emptyDir.medium = "Memory"
    ni = NodeInfo(make_node("n").obj(), [PodInfo(p)])
    assert ni.pvc_ref_counts == {}
    assert ni.remove_pod(p)


def test_node_info_affinity_lists() -> None:
    ni = NodeInfo(make_node("n").obj())
    aff = PodInfo(make_pod("aff").uid("aff").pod_affinity("zone", {"a": "b"}).obj())
    anti = PodInfo(make_pod("anti").uid("anti").pod_anti_affinity("zone", {"a": "b"}).obj())
    plain = PodInfo(make_pod("plain").uid("plain").obj())
    for pi in (aff, anti, plain):
        ni.add_pod_info(pi)
    assert [p.name for p in ni.pods_with_affinity] == ["aff", "anti"]
    assert [p.name for p in ni.pods_with_required_anti_affinity] == ["anti"]
    ni.remove_pod(anti.pod)
    assert [p.name for p in ni.pods_with_affinity] == ["aff"]
    assert ni.pods_with_required_anti_affinity == []


def test_node_info_clone_is_independent() -> None:
    # TestNodeInfoClone
    ni = NodeInfo(make_node("n").obj(), [_pod("a", "n", "100m", "500", 80)])
    c = ni.clone()
    assert c.generation == ni.generation and c.name == "n"
    c.add_pod_info(_pod("b", "n", "200m", "1Ki", 8080))
    assert [p.name for p in ni.pods] == ["a"]
    assert ni.requested.milli_cpu == 100 and c.requested.milli_cpu == 300
    assert not ni.used_ports.check_conflict("0.0.0.0", "TCP", 8080)


def test_node_info_set_and_remove_node() -> None:
    ni = NodeInfo()
    assert ni.name == "" and ni.node is None
    g = ni.generation
    ni.set_node(make_node("n").res({"cpu": "2"}).obj())
    assert ni.name == "n" and ni.allocatable.milli_cpu == 2000 and ni.generation > g
    g = ni.generation
    ni.remove_node()
    assert ni.node is None and ni.generation > g


# ----- HostPortInfo -------------------------------------------------------------------------------


@pytest.mark.parametrize(("added", "removed", "length"), [
    # TestHostPortInfo_AddRemove: "normal add case" (ports <= 0 are not host ports)
    ([("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
      ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82),
      ("TCP", "0.0.0.0", 0), ("TCP", "0.0.0.0", -1)], [], 8),
    # "empty ip and protocol add should work": "" is TCP on 0.0.0.0
    ([("", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82),
      ("", "", 79), ("UDP", "", 80), ("", "", 81), ("", "", 82), ("", "", 0), ("", "", -1)], [], 8),
    # "normal remove case"
    ([("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80)],
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80)], 0),
    # "empty ip and protocol remove should work"
    ([("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80)], [("", "", 79), ("UDP", "", 80)], 0),
    # A set, as kube's: a port two pods use is held once, and one removal frees it.
    ([("TCP", "0.0.0.0", 8080), ("TCP", "0.0.0.0", 8080)], [("TCP", "0.0.0.0", 8080)], 0),
    # unknown: no-op
    ([("TCP", "127.0.0.1", 79)], [("TCP", "1.2.3.4", 1)], 1),
])
def test_host_port_info_add_remove(added: list[tuple[str, str, int]], removed: list[tuple[str, str, int]],
                                   length: int) -> None:
    h = HostPortInfo()
    for proto, ip, port in added:
        h.add(ip, proto, port)
    for proto, ip, port in removed:
        h.remove(ip, proto, port)
    assert len(h) == length


@pytest.mark.parametrize(("name", "existing", "check", "want"), [
    # TestHostPortInfo_Check
    ("check a port which isn't in the HostPortInfo", [("127.0.0.1", "TCP", 80)], ("127.0.0.1", "TCP", 81), False),
    ("check another protocol", [("127.0.0.1", "TCP", 80)], ("127.0.0.1", "UDP", 80), False),
    ("check another ip", [("127.0.0.1", "TCP", 80)], ("127.0.0.2", "TCP", 80), False),
    ("check a port which is in the HostPortInfo", [("127.0.0.1", "TCP", 80)], ("127.0.0.1", "TCP", 80), True),
    ("check 0.0.0.0 against a specific IP", [("127.0.0.1", "TCP", 80)], ("0.0.0.0", "TCP", 80), True),
    ("check a specific IP against 0.0.0.0", [("0.0.0.0", "TCP", 80)], ("127.0.0.1", "TCP", 80), True),
    ("check 0.0.0.0 against 0.0.0.0", [("0.0.0.0", "TCP", 80)], ("0.0.0.0", "TCP", 80), True),
    ("check 0.0.0.0 against another port", [("0.0.0.0", "TCP", 80)], ("0.0.0.0", "TCP", 81), False),
])
def test_host_port_info_check(name: str, existing: list[tuple[str, str, int]], check: tuple[str, str, int],
                              want: bool) -> None:
    h = HostPortInfo()
    for e in existing:
        h.add(*e)
    assert h.check_conflict(*check) == want
    c = h.clone()
    c.add("9.9.9.9", "TCP", 9)
    assert not h.check_conflict("9.9.9.9", "TCP", 9)


def test_nil_safe_status_predicates() -> None:
    # None is Success, as a nil *Status in Go; every predicate takes None.
    cases: list[tuple[Status | None, tuple[bool, bool, bool, bool, bool]]] = [
        (None, (True, False, False, False, False)),
        (Status(), (True, False, False, False, False)),
        (Status.error("x"), (False, True, False, False, False)),
        (Status.unschedulable("x"), (False, True, True, False, False)),
        (Status.unresolvable("x"), (False, True, True, False, False)),
        (Status(Code.PENDING), (False, True, True, False, False)),
        (Status(Code.WAIT), (False, True, False, True, False)),
        (Status.skip(), (False, True, False, False, True)),
    ]
    for st, want in cases:
        assert (is_success(st), not_success(st), is_rejected(st), is_wait(st), is_skip(st)) == want, st


def test_code_outside_the_known_codes_is_kept_verbatim() -> None:
    # A guest may return any int32; the code is kept (as KSWE's host does) and shown as Code(n).
    c = Code(7)
    assert isinstance(c, Code) and int(c) == 7 and str(c) == "Code(7)"
    assert str(Status(c, ["r"])) == "Code(7): r"
    assert code_of(Status(c)) == 7


def test_pod_info_with_pod_equals_a_pod_info_of_the_assumed_copy() -> None:
    # prepare_for_binding_cycle reuses the queued PodInfo for the assumed copy (spec.nodeName set).
    pod = (make_pod("p").priority(7).req(cpu="1", memory="1Gi").container("side", "c2").host_port(8080)
           .pod_affinity("zone", {"a": "b"}).preferred_pod_anti_affinity(3, "host", {"c": "d"}).obj())
    pi = PodInfo(pod)
    assumed = type(pod)()
    assumed.CopyFrom(pod)
    assumed.spec.nodeName = "n1"
    fresh, reused = PodInfo(assumed), pi.with_pod(assumed)
    assert reused.pod is assumed and reused.memo() is not pi.memo() and not reused.memo()
    for attr in PodInfo.__slots__:
        if attr not in ("pod", "_cache"):
            # == first: dicts built from protobuf maps may list equal contents in another order.
            a, b = getattr(reused, attr), getattr(fresh, attr)
            assert a == b or repr(a) == repr(b), attr
