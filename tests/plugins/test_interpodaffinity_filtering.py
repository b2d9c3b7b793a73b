"""Ports of interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
preemption AddPod/RemovePod)."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, is_skip
from wasmsched.framework.types import PodInfo
from wasmsched.plugins import interpodaffinity
from wasmsched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF,
)
from wasmsched.plugins.interpodaffinity.filtering import (
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
)
from wasmsched.plugins.interpodaffinity.filtering import (
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
)
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

from .util import fill_pod_affinity_term, labeled_node

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
SKIP = "skip"

Expr = tuple[str, str, list[str]]  # (key, operator, values)


def P(labels: dict[str, str] | None = None, node: str = "", ns: str = "", name: str = "",
      aff: list[tuple[list[Expr], str]] | None = None, anti: list[tuple[list[Expr], str]] | None = None,
      aff_ns: list[str] | None = None, ns_selector: dict[str, str] | None = None) -> Pod:
    """A pod with required (anti-)affinity terms given as ([exprs], topologyKey)."""
    p = Pod()
    p.metadata.name = name or f"pod-{id(p)}"
    p.metadata.uid = p.metadata.name
    p.metadata.namespace = ns
    p.metadata.labels.update(labels or {})
    p.spec.nodeName = node
    for kind, terms in (("podAffinity", aff), ("podAntiAffinity", anti)):
        for exprs, tk in terms or []:
            t = getattr(p.spec.affinity, kind).requiredDuringSchedulingIgnoredDuringExecution.add()
            fill_pod_affinity_term(t, exprs, tk, aff_ns)
            if ns_selector is not None:
                t.namespaceSelector.SetInParent()
                t.namespaceSelector.matchLabels.update(ns_selector)
    return p


def In(k: str, *v: str) -> Expr:
    return (k, "In", list(v))


def NotIn(k: str, *v: str) -> Expr:
    return (k, "NotIn", list(v))


def Exists(k: str) -> Expr:
    return (k, "Exists", [])


POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = labeled_node("node1", region="r1", zone="z11")
EXISTING_POD = P(POD_LABEL, "node1", name="existing")

SINGLE_NODE: list[tuple[str, Pod, list[Pod], Any]] = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     P(), [], SKIP),
    (("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
     "matches the existing pod"), P(POD_LABEL2, aff=[([In("service", "securityscan", "value2")], "region")]),
     [EXISTING_POD], None),
    (("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
     "operator in labelSelector that matches the existing pod"),
     P(POD_LABEL2, aff=[([NotIn("service", "securityscan3", "value3")], "region")]), [EXISTING_POD], None),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     P(POD_LABEL2, aff=[([In("service", "securityscan", "value2")], "")], aff_ns=["DiffNameSpace"]),
     [P({"service": "securityscan"}, "node1", "ns")], (UU, AFF)),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     P(POD_LABEL, aff=[([In("service", "antivirusscan", "value2")], "")]), [EXISTING_POD], (UU, AFF)),
    (("satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnored"
     "DuringExecution"), P(POD_LABEL2, aff=[
         ([Exists("service"), ("wrongkey", "DoesNotExist", [])], "region"),
         ([In("service", "securityscan"), NotIn("service", "WrongValue")], "region")]), [EXISTING_POD], None),
    (("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
     "node because one of the matchExpression item don't match."), P(POD_LABEL2, aff=[
         ([Exists("service"), ("wrongkey", "DoesNotExist", [])], "region"),
         ([In("service", "securityscan2"), NotIn("service", "WrongValue")], "region")]), [EXISTING_POD],
     (UU, AFF)),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     P(POD_LABEL2, aff=[([In("service", "securityscan", "value2")], "region")],
       anti=[([In("service", "antivirusscan", "value2")], "node")]), [EXISTING_POD], None),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     P(POD_LABEL2, aff=[([In("service", "securityscan", "value2")], "region")],
       anti=[([In("service", "antivirusscan", "value2")], "node")]),
     [P(POD_LABEL, "node1", anti=[([In("service", "antivirusscan", "value2")], "node")])], None),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     P(POD_LABEL2, aff=[([In("service", "securityscan", "value2")], "region")],
       anti=[([In("service", "securityscan", "value2")], "zone")]), [EXISTING_POD], (U, ANTI)),
    (("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
     "existing pod"), P(POD_LABEL, aff=[([In("service", "securityscan", "value2")], "region")],
                       anti=[([In("service", "antivirusscan", "value2")], "node")]),
     [P(POD_LABEL, "node1", anti=[([In("service", "securityscan", "value2")], "zone")])], (U, EXISTING)),
    ("pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     P(POD_LABEL, aff=[([NotIn("service", "securityscan", "value2")], "region")]),
     [P({"service": "securityscan"}, "node2")], (UU, AFF)),
    (("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
     "doesn't satisfy PodAntiAffinity symmetry with the existing pod"), P(POD_LABEL),
     [P(POD_LABEL, "node1", anti=[([In("service", "securityscan", "value2")], "zone")])], (U, EXISTING)),
    (("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
     "satisfy PodAntiAffinity symmetry with the existing pod"), P(POD_LABEL),
     [P(POD_LABEL, "node1", anti=[([NotIn("service", "securityscan", "value2")], "zone")])], SKIP),
    (("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
     "incoming pod"), P(POD_LABEL, anti=[([Exists("service")], "region"), ([Exists("security")], "region")]),
     [P(POD_LABEL2, "node1", anti=[([Exists("security")], "zone")])], (U, ANTI)),
    (("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
     "AffinityTerms"), P(POD_LABEL, anti=[([Exists("service")], "zone"), ([Exists("security")], "zone")]),
     [P(POD_LABEL2, "node1", anti=[([Exists("security")], "zone")])], (U, ANTI)),
    (("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
     "AffinityTerms"), P(POD_LABEL2, anti=[([Exists("security")], "zone")]),
     [P(POD_LABEL, "node1", anti=[([Exists("service")], "zone"), ([Exists("security")], "zone")])],
     (U, EXISTING)),
    (("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
     "AffinityTerms"), P({"abc": "", "xyz": ""}, anti=[([Exists("abc")], "zone"), ([Exists("def")], "zone")]),
     [P({"def": "", "xyz": ""}, "node1", anti=[([Exists("abc")], "zone"), ([Exists("def")], "zone")])],
     (U, ANTI)),
    (("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
     "AffinityTerms"), P({"def": "", "xyz": ""}, anti=[([Exists("abc")], "zone"), ([Exists("def")], "zone")]),
     [P({"abc": "", "xyz": ""}, "node1", anti=[([Exists("abc")], "zone"), ([Exists("def")], "zone")])],
     (U, ANTI)),
    ("PodAffinity fails PreFilter with an invalid affinity label syntax",
     P(POD_LABEL, aff=[([In("service", "{{.bad-value.}}")], "region"),
                       ([In("service", "antivirusscan", "value2")], "node")]), [], (UU, "parsing pod")),
]


def _plugin(pods: list[Pod], nodes: list[Node], namespaces: dict[str, dict[str, str]] | None = None) -> Any:
    h = FakeHandle(pods=pods, nodes=nodes, client=RecordingClient(namespaces=namespaces))
    return interpodaffinity.new(None, h), h


@pytest.mark.parametrize("name,p,pods,want", SINGLE_NODE, ids=[c[0][:90] for c in SINGLE_NODE])
def test_required_affinity_single_node(name: str, p: Pod, pods: list[Pod], want: Any) -> None:
    try:
        PodInfo(p)
    except ValueError:
        # Our PodInfo parses terms eagerly; the plugin reports the same rejection from PreFilter.
        pl, h = _plugin([], [NODE1])
        bad = Pod()
        bad.CopyFrom(p)
        state = CycleState()
        _, st = pl.pre_filter(state, bad, h.snapshot_shared_lister().list())
        assert st is not None and st.code == UU and st.reasons[0].startswith(want[1])
        return
    pl, h = _plugin(pods, [NODE1])
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    if want == SKIP:
        assert is_skip(st)
        return
    assert st is None
    got = pl.filter(state, p, snap.get("node1"))
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (want[0], [want[1]])


# kube's test namespaces (SetupPluginWithInformers ... namespaces).
NAMESPACES = {
    "subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"}, "subteam2.team2": {"team": "team2"},
}
SVC_IN = [In("service", "securityscan", "value2")]
NS_CASES: list[tuple[str, Pod, list[Pod], Any]] = [
    ("affinity with NamespaceSelector",
     P(POD_LABEL2, aff=[(SVC_IN, "region")], ns_selector={"team": "team1"}),
     [P(POD_LABEL, "node1", "subteam1.team1")], None),
    ("affinity with non-matching NamespaceSelector",
     P(POD_LABEL2, aff=[(SVC_IN, "region")], ns_selector={"team": "team1"}),
     [P(POD_LABEL, "node1", "subteam1.team2")], (UU, AFF)),
    ("anti-affinity with matching NamespaceSelector",
     P(POD_LABEL2, ns="subteam1.team1", anti=[(SVC_IN, "zone")], ns_selector={"team": "team1"}),
     [P(POD_LABEL, "node1", "subteam2.team1")], (U, ANTI)),
    ("anti-affinity with matching all NamespaceSelector",
     P(POD_LABEL2, ns="subteam1.team1", anti=[(SVC_IN, "zone")], ns_selector={}),
     [P(POD_LABEL, "node1", "subteam2.team1")], (U, ANTI)),
    ("anti-affinity with non-matching NamespaceSelector",
     P(POD_LABEL2, ns="subteam1.team1", anti=[(SVC_IN, "zone")], ns_selector={"team": "team1"}),
     [P(POD_LABEL, "node1", "subteam1.team2")], None),
]


@pytest.mark.parametrize("name,p,pods,want", NS_CASES, ids=[c[0] for c in NS_CASES])
def test_required_affinity_namespace_selector(name: str, p: Pod, pods: list[Pod], want: Any) -> None:
    pl, h = _plugin(pods, [NODE1], NAMESPACES)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    assert st is None
    got = pl.filter(state, p, snap.get("node1"))
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (want[0], [want[1]])


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}
MULTI: list[tuple[str, Pod, list[Pod], list[Node], list[Any]]] = [
    (("A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
     "has an existing pod that matches the affinity rules"), P(aff=[([In("foo", "bar")], "region")]),
     [P({"foo": "bar"}, "node1", name="p1")],
     [labeled_node("node1", **CHINA), labeled_node("node2", **CHINA_AZ1), labeled_node("node3", **INDIA)],
     [None, None, (UU, AFF)]),
    (("The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of "
     "the collection should not be blocked from being scheduled onto any node"),
     P({"foo": "bar", "service": "securityscan"},
       aff=[([In("foo", "bar")], "zone"), ([In("service", "securityscan")], "zone")]),
     [P({"foo": "bar"}, "nodeA", name="p1")],
     [labeled_node("nodeA", zone="az1", hostname="h1"), labeled_node("nodeB", zone="az2", hostname="h2")],
     [None, None]),
    ("The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     P({"foo": "bar", "service": "securityscan"},
       aff=[([In("foo", "bar")], "zone"), ([In("service", "securityscan")], "zone")]),
     [P({"foo": "bar"}, "nodeA", name="p1")],
     [labeled_node("nodeA", zoneLabel="az1", hostname="h1"), labeled_node("nodeB", zoneLabel="az2", hostname="h2")],
     [(UU, AFF), (UU, AFF)]),
    (("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
     "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB."),
     P(anti=[([In("foo", "abc")], "region")]), [P({"foo": "abc"}, "nodeA")],
     [labeled_node("nodeA", region="r1", hostname="nodeA"), labeled_node("nodeB", region="r1", hostname="nodeB")],
     [(U, ANTI), (U, ANTI)]),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     P(anti=[([In("foo", "abc")], "region"), ([In("service", "securityscan")], "zone")]),
     [P({"foo": "abc", "service": "securityscan"}, "nodeA")],
     [labeled_node("nodeA", region="r1", zone="z1", hostname="nodeA"),
      labeled_node("nodeB", region="r1", zone="z2", hostname="nodeB")], [(U, ANTI), (U, ANTI)]),
    (("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
     "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC"),
     P(anti=[([In("foo", "abc")], "region")]), [P({"foo": "abc"}, "nodeA")],
     [labeled_node("nodeA", **CHINA), labeled_node("nodeB", **CHINA_AZ1), labeled_node("nodeC", **INDIA)],
     [(U, ANTI), (U, ANTI), None]),
    (("The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing "
     "pod that match the inter pod affinity rule but in different namespace)"),
     P({"foo": "123"}, ns="NS1", anti=[([In("foo", "bar")], "region")]),
     [P({"foo": "bar"}, "nodeA", "NS1"), P({}, "nodeC", "NS2", anti=[([In("foo", "123")], "region")])],
     [labeled_node("nodeA", **CHINA), labeled_node("nodeB", **CHINA_AZ1), labeled_node("nodeC", **INDIA)],
     [(U, ANTI), (U, ANTI), None]),
    (("Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector "
     "of the term is firstly checked, and then topologyKey of the term is also checked"),
     P({"foo": ""}), [P({}, "nodeA", anti=[([Exists("foo")], "invalid-node-label")])],
     [labeled_node("nodeA", region="r1", zone="z1", hostname="nodeA"),
      labeled_node("nodeB", region="r1", zone="z1", hostname="nodeB")], [SKIP]),
    ("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     P({}, "nodeA", anti=[([Exists("foo")], "invalid-node-label")]), [P({"foo": ""}, "nodeA")],
     [labeled_node("nodeA", region="r1", zone="z1", hostname="nodeA"),
      labeled_node("nodeB", region="r1", zone="z1", hostname="nodeB")], [None, None]),
]


@pytest.mark.parametrize("name,p,pods,nodes,want", MULTI, ids=[c[0][:90] for c in MULTI])
def test_required_affinity_multiple_nodes(name: str, p: Pod, pods: list[Pod], nodes: list[Node],
                                          want: list[Any]) -> None:
    pl, h = _plugin(pods, nodes)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    _, st = pl.pre_filter(state, p, snap.list())
    if want == [SKIP]:
        assert is_skip(st)
        return
    assert st is None
    got = filter_statuses(pl, state, p, [snap.get(n.metadata.name) for n in nodes])
    assert [None if s is None else (s.code, s.reasons[0]) for s in got] == want


def test_add_remove_pod_and_clone() -> None:
    # Preemption: removing the only matching pod frees the node from the incoming pod's anti-affinity, on
    # the clone only.
    victim = P({"foo": "abc"}, "nodeA", name="victim")
    nodes = [labeled_node("nodeA", region="r1"), labeled_node("nodeB", region="r2")]
    p = P(anti=[([In("foo", "abc")], "region")])
    pl, h = _plugin([victim], nodes)
    state = CycleState()
    snap = h.snapshot_shared_lister()
    pl.pre_filter(state, p, snap.list())
    ni = snap.get("nodeA")
    c = state.clone()
    assert pl.pre_filter_extensions().remove_pod(c, p, PodInfo(victim), ni) is None
    assert pl.filter(c, p, ni) is None
    st = pl.filter(state, p, ni)
    assert st is not None and st.reasons == [ANTI]
    assert pl.pre_filter_extensions().add_pod(c, p, PodInfo(victim), ni) is None
    st = pl.filter(c, p, ni)
    assert st is not None and st.reasons == [ANTI]


def test_filter_without_pre_filter_is_error() -> None:
    pl, h = _plugin([], [NODE1])
    st = pl.filter(CycleState(), P(), h.snapshot_shared_lister().get("node1"))
    assert st is not None and st.code == Code.ERROR
