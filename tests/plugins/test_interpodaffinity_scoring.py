"""Ports of interpodaffinity/scoring_test.go (TestPreferredAffinity)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import InterPodAffinityArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE as MAX
from wasmsched.framework.status import Code, is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import interpodaffinity
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

from .util import fill_pod_affinity_term, score_each
from .util import labeled_node as N

Expr = tuple[str, str, list[str]]
Affinity = Callable[[Pod], None]
NAMESPACES = {
    "subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"}, "subteam2.team2": {"team": "team2"},
}


def _term(t: Any, exprs: list[Expr], tk: str, namespaces: list[str] | None = None,
          ns_selector: list[Expr] | None = None) -> None:
    fill_pod_affinity_term(t, exprs, tk, namespaces)
    if ns_selector is not None:
        t.namespaceSelector.SetInParent()
        for k, op, vals in ns_selector:
            r = t.namespaceSelector.matchExpressions.add()
            r.key, r.operator = k, op
            r.values.extend(vals)


def preferred(kind: str, *terms: tuple[int, list[Expr], str, dict[str, Any]]) -> Affinity:
    def apply(p: Pod) -> None:
        for w, exprs, tk, kw in terms:
            wt = getattr(p.spec.affinity, kind).preferredDuringSchedulingIgnoredDuringExecution.add()
            wt.weight = w
            _term(wt.podAffinityTerm, exprs, tk, **kw)
    return apply


def required(*terms: tuple[list[Expr], str]) -> Affinity:
    def apply(p: Pod) -> None:
        for exprs, tk in terms:
            _term(p.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.add(), exprs, tk)
    return apply


def both(*parts: Affinity) -> Affinity:
    def apply(p: Pod) -> None:
        for a in parts:
            a(p)
    return apply


NS_SEL = {"namespaces": ["subteam2.team2"], "ns_selector": [("team", "In", ["team1"])]}
STAY_S1_REGION = preferred("podAffinity", (5, [("security", "In", ["S1"])], "region", {}))
STAY_S2_REGION = preferred("podAffinity", (6, [("security", "In", ["S2"])], "region", {}))
AFFINITY3 = preferred(
    "podAffinity",
    (8, [("security", "NotIn", ["S1"]), ("security", "In", ["S2"])], "region", {}),
    (2, [("security", "Exists", []), ("wrongkey", "DoesNotExist", [])], "region", {}))
HARD = required(([("security", "In", ["S1", "value2"])], "region"),
                ([("security", "Exists", []), ("wrongkey", "DoesNotExist", [])], "region"))
AWAY_S1_AZ = preferred("podAntiAffinity", (5, [("security", "In", ["S1"])], "az", {}))
AWAY_S2_AZ = preferred("podAntiAffinity", (5, [("security", "In", ["S2"])], "az", {}))
STAY_S1_AWAY_S2 = both(preferred("podAffinity", (8, [("security", "In", ["S1"])], "region", {})),
                       preferred("podAntiAffinity", (5, [("security", "In", ["S2"])], "az", {})))
AFFINITY_NS_SEL = preferred("podAffinity", (5, [("security", "In", ["S1"])], "region", NS_SEL))
ANTI_AFFINITY_NS_SEL = preferred("podAntiAffinity", (5, [("security", "In", ["S1"])], "region", NS_SEL))
INVALID_AFFINITY = preferred("podAffinity", (8, [("security", "In", ["{{.bad-value.}}"])], "region", {}))

_n = iter(range(10**9))


def P(labels: dict[str, str] | None = None, node: str = "", affinity: Affinity | None = None, ns: str = "") -> Pod:
    p = Pod()
    p.metadata.name = f"pod{next(_n)}"
    p.metadata.uid = p.metadata.name
    p.metadata.namespace = ns
    p.metadata.labels.update(labels or {})
    p.spec.nodeName = node
    if affinity is not None:
        affinity(p)
    return p


S1, S2 = {"security": "S1"}, {"security": "S2"}
CHINA, INDIA, AZ1, AZ2 = {"region": "China"}, {"region": "India"}, {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
SKIP, ERROR = "skip", "error"

CASES: list[tuple[str, Pod, list[Pod], list[Node], Any]] = [
    ("all nodes are same priority as Affinity is nil", P(S1), [],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], SKIP),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to others",
     P(S1, affinity=STAY_S1_REGION), [P(S1, "node1"), P(S2, "node2"), P(S1, "node3")],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [MAX, 0, 0]),
    (("All the nodes that have the same topology key & label value with one of them has an existing pod that "
     "match the affinity rules, have the same score"), P(affinity=STAY_S1_REGION), [P(S1, "node1")],
     [N("node1", **CHINA), N("node2", **CHINA_AZ1), N("node3", **INDIA)], [MAX, MAX, 0]),
    (("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has "
     "more matches will get high score"), P(S1, affinity=STAY_S2_REGION),
     [P(S2, "node1"), P(S2, "node1"), P(S2, "node2"), P(S2, "node3"), P(S2, "node4"), P(S2, "node5")],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **CHINA), N("node4", **CHINA), N("node5", **INDIA)],
     [MAX, 0, MAX, MAX, 0]),
    (("Affinity: different Label operators and values for pod affinity scheduling preference, including some "
     "match failures"), P(S1, affinity=AFFINITY3), [P(S1, "node1"), P(S2, "node2"), P(S1, "node3")],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [20, MAX, 0]),
    (("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
     "symmetry"), P(S2), [P(S1, "node1", STAY_S1_REGION), P(S2, "node2", STAY_S2_REGION)],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [0, MAX, 0]),
    ("Affinity symmetry with namespace selector", P(S1, ns="subteam1.team1"),
     [P(S1, "node1", AFFINITY_NS_SEL), P(S2, "node2", STAY_S2_REGION)],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [MAX, 0, 0]),
    ("AntiAffinity symmetry with namespace selector", P(S1, ns="subteam1.team1"),
     [P(S1, "node1", ANTI_AFFINITY_NS_SEL), P(S2, "node2", STAY_S2_REGION)],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [0, MAX, MAX]),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     P(S1), [P(S1, "node1", HARD), P(S2, "node2", HARD)],
     [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)], [MAX, MAX, 0]),
    ("Anti Affinity: pod that does not match existing pods in node will get high score",
     P(S1, affinity=AWAY_S1_AZ), [P(S1, "node1"), P(S2, "node2")], [N("node1", **AZ1), N("node2", **CHINA)],
     [0, MAX]),
    (("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
     "comparing to others"), P(S1, affinity=AWAY_S1_AZ), [P(S1, "node1"), P(S1, "node2")],
     [N("node1", **AZ1), N("node2", **CHINA)], [0, MAX]),
    (("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
     "unmatches will get high score"), P(S1, affinity=AWAY_S1_AZ), [P(S1, "node1"), P(S1, "node1"), P(S2, "node2")],
     [N("node1", **AZ1), N("node2", **INDIA)], [0, MAX]),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     P(S2), [P(S1, "node1", AWAY_S2_AZ), P(S2, "node2", AWAY_S1_AZ)], [N("node1", **AZ1), N("node2", **AZ2)],
     [0, MAX]),
    (("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
     "affinity & anti affinity"), P(S1, affinity=STAY_S1_AWAY_S2), [P(S1, "node1"), P(S1, "node2")],
     [N("node1", **CHINA), N("node2", **AZ1)], [MAX, 0]),
    (("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
     "pods have the same labels"), P(S1, affinity=STAY_S1_AWAY_S2),
     [P(S1, "node1"), P(S1, "node1"), P(S1, "node2"), P(S1, "node3"), P(S1, "node3"), P(S1, "node4"),
      P(S1, "node5")],
     [N("node1", **CHINA_AZ1), N("node2", **INDIA), N("node3", **CHINA), N("node4", **CHINA),
      N("node5", **INDIA)], [MAX, 0, MAX, MAX, 0]),
    (("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
     "in both pod affinity & anti affinity & symmetry"), P(S1, affinity=STAY_S1_AWAY_S2),
     [P(S1, "node1"), P(S2, "node2"), P(None, "node3", STAY_S1_AWAY_S2), P(None, "node4", AWAY_S1_AZ)],
     [N("node1", **CHINA), N("node2", **AZ1), N("node3", **INDIA), N("node4", **AZ2)], [MAX, 0, MAX, 0]),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity", P(S1),
     [P(S1, "node1"), P(None, "node2", STAY_S1_AWAY_S2)], [N("node1", **CHINA), N("node2", **CHINA)], [0, 0]),
    ("invalid Affinity fails PreScore", P(affinity=INVALID_AFFINITY), [],
     [N("node1", **CHINA), N("node2", **CHINA)], (ERROR, 'Invalid value: "{{.bad-value.}}"')),
]


def _run(p: Pod, pods: list[Pod], nodes: list[Node], args: InterPodAffinityArgs | None = None) -> Any:
    h = FakeHandle(pods=pods, nodes=nodes, client=RecordingClient(namespaces=NAMESPACES))
    pl: Any = interpodaffinity.new(args, h)
    snap = h.snapshot_shared_lister()
    infos = cast(list[NodeInfo], [snap.get(n.metadata.name) for n in nodes])
    state = CycleState()
    st = pl.pre_score(state, p, infos)
    if st is not None:
        if st.code == Code.ERROR:
            return ERROR, st.message()
        assert is_skip(st)
        return SKIP
    scores = score_each(pl, state, p, infos)
    assert pl.score_extensions().normalize_score(state, p, scores) is None
    return [s.score for s in scores]


@pytest.mark.parametrize("name,p,pods,nodes,want", CASES, ids=[c[0][:90] for c in CASES])
def test_preferred_affinity(name: str, p: Pod, pods: list[Pod], nodes: list[Node], want: Any) -> None:
    got = _run(p, pods, nodes)
    if isinstance(want, tuple):
        # An Error status whose message holds want's text, as kube's test checks it.
        assert got[0] == ERROR and want[1] in got[1], got
    else:
        assert got == want


def test_ignore_preferred_terms_of_existing_pods() -> None:
    # With ignorePreferredTermsOfExistingPods, a pod without preferred terms skips PreScore.
    got = _run(P(S2), [P(S1, "node1", STAY_S1_REGION), P(S2, "node2", STAY_S2_REGION)],
               [N("node1", **CHINA), N("node2", **INDIA)],
               InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True))
    assert got == SKIP


def test_hard_pod_affinity_weight_zero_ignores_required_terms() -> None:
    got = _run(P(S1), [P(S1, "node1", HARD), P(S2, "node2", HARD)],
               [N("node1", **CHINA), N("node2", **INDIA), N("node3", **AZ1)],
               InterPodAffinityArgs(hard_pod_affinity_weight=0))
    assert got == SKIP
