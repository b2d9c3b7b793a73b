"""The Go SDK (sdk/go) through the real host, in real wasm, at every extension point.

tests/go/allpoints is a guest built with the standard Go toolchain that implements every SDK
interface; its results depend on the pod's labels and annotations and on its guestConfig (see the
comment at the top of its main.go). Each test loads it afresh (the compiled module is cached) and
calls the plugin's extension points directly, checking statuses, reasons, scores, node names,
events and logs exactly, so that every decode and encode of the SDK meets the host's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.go_guests import MODULE_CACHE, ROOT, build_go_guest, builds_go
from tests.wasm.harness import WasmHandle
from wasmsched.api.types import Pod
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeScore, NodeToStatus, NominatingInfo, NominatingMode
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo, PodInfo, get_pod_key
from wasmsched.testing.batch import batch_scores, filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import abi
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

GUEST_DIR = ROOT / "tests" / "go" / "allpoints"
WASM = GUEST_DIR / "allpoints.wasm"
# Compiling the 17 MB Go guest takes seconds; the artifact is keyed by the module's sha256 and
# wasmtime's version, so a cache kept across runs is safe (the one tests/e2e/test_go_examples.py uses).
GUEST_LOGGER = "wasmsched.wasm.guest"
NAME = "allpoints"
CONFIG = '{"tag":"t1","scoreBase":3}'
MIN_INT32, MAX_INT32 = -(1 << 31), (1 << 31) - 1
MB = 1_000_000


@pytest.fixture(scope="module")
@builds_go
def runtime() -> Runtime:
    """Builds the guest (go's build cache makes a rebuild cheap) and returns a runtime caching its module."""
    build_go_guest(GUEST_DIR, WASM)
    return Runtime(cache_dir=MODULE_CACHE)


def cluster() -> WasmHandle:
    """n1 (zone a), n2 (zone b, img-a), n3 (zone a, img-a and img-b): img-a is on 2 nodes."""
    return WasmHandle(nodes=[
        make_node("n1").label("zone", "a").label("rack", "r1").obj(),
        make_node("n2").label("zone", "b").label("rack", "r2").image(5 * MB, "img-a").obj(),
        make_node("n3").label("zone", "a").label("rack", "r2").image(5 * MB, "img-a").image(40 * MB, "img-b").obj(),
    ])


@dataclass
class Guest:
    plugin: WasmPlugin
    handle: WasmHandle

    def node(self, name: str) -> NodeInfo:
        ni = self.handle.snapshot_shared_lister().get(name)
        return ni if ni is not None else NodeInfo(make_node(name).obj())  # a node outside the snapshot

    def nodes(self, *names: str) -> list[NodeInfo]:
        return [self.node(n) for n in names]

    def start(self, pod: Pod) -> None:
        """PreFilter: pins an instance to the pod and starts the guest's CycleState."""
        assert self.plugin.pre_filter(CycleState(), pod, self.nodes("n1", "n2", "n3")) == (None, None)

    def instance_id(self, pod: Pod) -> int | None:
        return self.plugin.pool.pinned_instance_id(get_pod_key(pod))


def load_guest(runtime: Runtime, handle: WasmHandle | None = None, config: str = CONFIG, **args: Any) -> Guest:
    h = handle if handle is not None else cluster()
    raw = {"guestURL": str(WASM), "guestConfig": config, **args}
    return Guest(new_wasm_plugin(NAME, raw, h, runtime=runtime), h)


@pytest.fixture
def guest(runtime: Runtime) -> Iterator[Guest]:
    g = load_guest(runtime)
    yield g
    g.plugin.close()


def pod(name: str, labels: dict[str, str] | None = None, image: str = "", **annotations: str) -> Pod:
    """A pod; annotation keys use '_' for '-' (prefilter_status= is "prefilter-status")."""
    w = make_pod(name).labels(labels or {})
    if image:
        w.container(image)
    p = w.obj()
    for k, v in annotations.items():
        p.metadata.annotations[k.replace("_", "-")] = v
    return p


def st(code: int, *reasons: str) -> Status:
    return Status(Code(code), list(reasons))


def same(got: Status | None, want: Status | None) -> bool:
    if got is None or want is None:
        return got is want
    return (got.code, got.message()) == (want.code, want.message())


def guest_logs(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == GUEST_LOGGER]


def ref(kind: str, name: str, uid: str, namespace: str = "", api_version: str = "v1") -> dict[str, str]:
    return {"Kind": kind, "APIVersion": api_version, "Name": name, "Namespace": namespace, "UID": uid,
            "ResourceVersion": ""}


# ----- module shape, guestConfig, klog at instantiation ---------------------------------------------------


def test_module_exports_all_fifteen_points(guest: Guest) -> None:
    plugin = guest.plugin
    # exports/prefilterextensions also links ABI v2's cyclestate_clone (docs/abi.md §14.4), exports/score
    # Score's batch form scorenodes (§17).
    assert set(plugin.exports) == {*abi.EXPORTS, "cyclestate_clone", "scorenodes"}
    for iface in (fw.PreFilterPlugin, fw.EnqueueExtensions, fw.FilterPlugin, fw.PostFilterPlugin,
                  fw.PreScorePlugin, fw.ScorePlugin, fw.ReservePlugin, fw.PermitPlugin, fw.PreBindPlugin,
                  fw.BindPlugin, fw.PostBindPlugin):
        assert isinstance(plugin, iface), iface.__name__
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.score_extensions() is plugin


def test_guest_config_reaches_the_constructor_and_klog_runs_in_initialize(
        runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    g = load_guest(runtime, config='{"tag":"cfg","zoneLabel":"rack","scoreBase":50}')
    assert guest_logs(caplog) == [
        (logging.INFO, '"allpoints configured" tag="cfg" zoneLabel="rack" scoreBase="50" plugin="allpoints"')]
    # The config drives behaviour: Filter compares the pod's zone with the node label zoneLabel names.
    p = pod("p", {"zone": "r2"}, image="img-b")
    g.start(p)
    assert g.plugin.filter(CycleState(), p, g.node("n3")) is None
    assert same(g.plugin.filter(CycleState(), p, g.node("n1")),
                st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'node n1 has rack="r1", pod wants "r2"'))
    assert g.plugin.pre_score(CycleState(), p, g.nodes("n1", "n3")) is None
    # scoreBase 50 + 10 x digit (+ img-b: 40 MB, on 1 node, on n3).
    assert batch_scores(g.plugin, CycleState(), p, g.nodes("n1", "n3")) == ([60, 50 + 30 + 40 + 1], None)


def test_empty_guest_config_uses_defaults(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    load_guest(runtime, config="")
    assert guest_logs(caplog) == [
        (logging.INFO, '"allpoints configured" tag="none" zoneLabel="zone" scoreBase="0" plugin="allpoints"')]


def test_bad_guest_config_fails_instantiation_with_the_constructor_error(runtime: Runtime) -> None:
    with pytest.raises(WasmLoadError) as e:
        load_guest(runtime, config="{")
    text = str(e.value)
    assert text.startswith("failed to create a guest pool: wasm: instantiate error: panic: plugin.Set: "
                           'allpoints: decoding guestConfig "{": unexpected end of JSON input'), text
    # A Go c-shared module aborts on an unrecovered panic: the trap follows the captured panic output.
    assert "\n\nwasm error: unreachable\n" in text


# ----- EnqueueExtensions ----------------------------------------------------------------------------------


def test_events_to_register_are_mapped_to_framework_events(guest: Guest) -> None:
    evs = guest.plugin.events_to_register()
    assert [(e.event.resource, int(e.event.action_type)) for e in evs] == [
        ("Node", 1), ("Pod", 32767), ("Node", 8), ("resource.k8s.io/ResourceClaim", 32764)]
    assert guest.plugin.counters()["idle"] == 1  # the borrowed instance went back


# ----- PreFilter ------------------------------------------------------------------------------------------


def test_prefilter_node_names(guest: Guest) -> None:
    result, status = guest.plugin.pre_filter(CycleState(), pod("p", nodes="n3,n1"), guest.nodes("n1", "n2", "n3"))
    assert status is None
    assert result is not None and result.node_names == {"n1", "n3"}


def test_prefilter_without_names_is_all_nodes(guest: Guest) -> None:
    assert guest.plugin.pre_filter(CycleState(), pod("p"), guest.nodes("n1")) == (None, None)


def test_prefilter_lists_the_snapshot_nodes(guest: Guest) -> None:
    """handle.NodeInfos().List(): nodes decoded from the host's NodeList, labels included."""
    result, status = guest.plugin.pre_filter(CycleState(), pod("p", nodes_with_label="rack=r2"), [])
    assert status is None
    assert result is not None and result.node_names == {"n2", "n3"}
    result, status = guest.plugin.pre_filter(CycleState(), pod("q", nodes_with_label="rack=r9"), [])
    assert result is None
    assert same(status, st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no node has label rack=r9"))


@pytest.mark.parametrize(("annotation", "want"), [
    ("2:not now", st(Code.UNSCHEDULABLE, "not now")),
    ("5:", st(Code.SKIP)),
    ("1:boom", st(Code.ERROR, "boom")),
    ("0:ignored", None),  # the SDK sends a reason only with a failure code
])
def test_prefilter_status(guest: Guest, annotation: str, want: Status | None) -> None:
    result, status = guest.plugin.pre_filter(CycleState(), pod("p", prefilter_status=annotation, nodes="n2"),
                                             guest.nodes("n1", "n2"))
    assert same(status, want)
    assert result is not None and result.node_names == {"n2"}


# ----- Filter ---------------------------------------------------------------------------------------------


def test_filter_uses_node_labels_from_the_host(guest: Guest) -> None:
    p = pod("p", {"zone": "a"}, reject="n3")
    guest.start(p)
    got = filter_statuses(guest.plugin, CycleState(), p, guest.nodes("n1", "n2", "n3", "ghost"))
    want = [
        None,
        st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'node n2 has zone="b", pod wants "a"'),
        st(Code.UNSCHEDULABLE, "node n3 rejected for p", "changes []"),
        st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'node "ghost" is not in the snapshot'),
    ]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert same(g, w), (g, w)


def test_filter_status_code_is_kept_verbatim(guest: Guest) -> None:
    p = pod("p", filter_status="-7:weird")
    guest.start(p)
    status = guest.plugin.filter(CycleState(), p, guest.node("n1"))
    assert status is not None and status.code == -7
    # The host says the code is outside the ABI's (docs/abi.md §6), then gives the guest's reason.
    assert status.message() == "wasm: filter returned status Code(-7), outside the ABI's status codes 0..6, weird"


def test_filter_needs_the_pods_own_cycle_state(guest: Guest) -> None:
    """CycleState lives in the guest: without PreFilter on this instance, Filter sees none (or another pod's)."""
    p, q = pod("p"), pod("q")
    assert same(guest.plugin.filter(CycleState(), p, guest.node("n1")),
                st(Code.ERROR, "no cycle state: PreFilter did not run"))
    guest.start(p)
    assert guest.plugin.filter(CycleState(), p, guest.node("n1")) is None
    # q without PreFilter takes over p's scheduling instance (p's cycle is over), state and all.
    assert same(guest.plugin.filter(CycleState(), q, guest.node("n1")),
                st(Code.ERROR, f"cycle state of pod {p.metadata.uid}, not of {q.metadata.uid}"))


# ----- PreFilterExtensions (AddPod / RemovePod) ------------------------------------------------------------


def test_add_and_remove_pod_see_target_and_current_pod(guest: Guest, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    p = pod("p", reject="n1")
    victim, other = PodInfo(pod("victim")), PodInfo(pod("other"))
    pl, n1 = guest.plugin, guest.node("n1")
    guest.start(p)
    rejected = st(Code.UNSCHEDULABLE, "node n1 rejected for p", "changes []")
    assert same(pl.filter(CycleState(), p, n1), rejected)
    assert pl.remove_pod(CycleState(), p, victim, n1) is None
    assert pl.filter(CycleState(), p, n1) is None  # room made on n1
    assert same(pl.filter(CycleState(), p, guest.node("n2")), None)
    assert pl.add_pod(CycleState(), p, victim, n1) is None  # undoes the removal
    assert same(pl.filter(CycleState(), p, n1), rejected)
    assert pl.add_pod(CycleState(), p, other, n1) is None
    assert same(pl.filter(CycleState(), p, n1),
                st(Code.UNSCHEDULABLE, "node n1 rejected for p", "changes [+other@n1]"))
    assert pl.remove_pod(CycleState(), p, victim, guest.node("n2")) is None  # elsewhere: no room on n1
    assert same(pl.filter(CycleState(), p, n1),
                st(Code.UNSCHEDULABLE, "node n1 rejected for p", "changes [+other@n1]"))
    assert same(pl.remove_pod(CycleState(), p, PodInfo(p), n1),
                st(Code.ERROR, "removepod: the target is the pod being scheduled"))
    assert [m for _, m in guest_logs(caplog) if m.startswith(('"addpod"', '"removepod"'))] == [
        f'"{point}" pod="default/p" target="default/{target}" node="{node}" plugin="allpoints"'
        for point, target, node in [("removepod", "victim", "n1"), ("addpod", "victim", "n1"),
                                    ("addpod", "other", "n1"), ("removepod", "victim", "n2")]]


def test_add_and_remove_pod_status(guest: Guest) -> None:
    p = pod("p", addpod_status="3:cannot add", removepod_status="2:cannot remove")
    guest.start(p)
    target = PodInfo(pod("victim"))
    assert same(guest.plugin.add_pod(CycleState(), p, target, guest.node("n1")),
                st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot add"))
    assert same(guest.plugin.remove_pod(CycleState(), p, target, guest.node("n1")),
                st(Code.UNSCHEDULABLE, "cannot remove"))


# ----- PostFilter -----------------------------------------------------------------------------------------


def test_postfilter_nominates_the_first_unschedulable_node(guest: Guest) -> None:
    p = pod("p")
    guest.start(p)
    m = NodeToStatus({"n3": st(Code.UNSCHEDULABLE), "n1": st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"),
                      "n2": st(Code.UNSCHEDULABLE, "full")})
    result, status = guest.plugin.post_filter(CycleState(), p, m)
    assert status is None
    assert result is not None and result.nominating_info == NominatingInfo("n2", NominatingMode.OVERRIDE)


def test_postfilter_without_candidate_reports_the_status_map(guest: Guest) -> None:
    p = pod("p")
    guest.start(p)
    m = NodeToStatus({"n2": st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), "n1": st(Code.ERROR, "e")})
    result, status = guest.plugin.post_filter(CycleState(), p, m)
    assert result is not None and result.nominating_info == NominatingInfo("", NominatingMode.NOOP)
    assert same(status, st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no preemption candidate",
                           "statuses [n1=Error n2=UnschedulableAndUnresolvable]",
                           "absent=UnschedulableAndUnresolvable"))
    result, status = guest.plugin.post_filter(CycleState(), p, NodeToStatus())
    assert same(status, st(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no preemption candidate", "statuses []",
                           "absent=UnschedulableAndUnresolvable"))


def test_postfilter_status_with_nomination(guest: Guest) -> None:
    p = pod("p", postfilter_status="1:boom")
    guest.start(p)
    result, status = guest.plugin.post_filter(CycleState(), p, NodeToStatus({"n1": st(Code.UNSCHEDULABLE)}))
    assert same(status, st(Code.ERROR, "boom"))
    assert result is not None and result.nominating_info == NominatingInfo("n1", NominatingMode.OVERRIDE)


# ----- PreScore / Score -----------------------------------------------------------------------------------


def test_prescore_and_score_share_state_and_read_image_states(guest: Guest) -> None:
    p = pod("p", image="img-a")
    guest.start(p)
    assert guest.plugin.pre_score(CycleState(), p, guest.nodes("n3", "n1", "n2")) is None
    # scoreBase 3 + 10 x digit + img-a (5 MB, on 2 nodes) where present.
    assert batch_scores(guest.plugin, CycleState(), p, guest.nodes("n1", "n2", "n3")) == (
        [13, 3 + 20 + 5 + 2, 3 + 30 + 5 + 2], None)


def test_score_of_a_node_prescore_did_not_get_fails(guest: Guest) -> None:
    p = pod("p")
    guest.start(p)
    assert same(guest.plugin.pre_score(CycleState(), p, []), None)
    score, status = guest.plugin.score(CycleState(), p, guest.node("n1"))
    assert score == 0
    assert same(status, st(Code.ERROR, "node n1 was not pre-scored (prescore got [])"))
    assert guest.plugin.pre_score(CycleState(), p, guest.nodes("n1", "n3")) is None
    score, status = guest.plugin.score(CycleState(), p, guest.node("n2"))
    assert (score, status is not None and status.message()) == (0, "node n2 was not pre-scored (prescore got [n1 n3])")


@pytest.mark.parametrize(("annotations", "want"), [
    ({"negative": "true"}, -23),
    ({"score": "5000000000"}, MAX_INT32),  # the SDK clamps to the ABI's int32
    ({"score": "-5000000000"}, MIN_INT32),
    ({"score": "-1", "negative": "true"}, 1),
])
def test_score_values_cross_the_abi(guest: Guest, annotations: dict[str, str], want: int) -> None:
    p = pod("p", **annotations)  # type: ignore[arg-type]
    guest.start(p)
    assert guest.plugin.pre_score(CycleState(), p, guest.nodes("n2")) is None
    assert guest.plugin.score(CycleState(), p, guest.node("n2")) == (want, None)


def test_prescore_and_score_status(guest: Guest) -> None:
    p = pod("p", prescore_status="5:", score_status="2:too far")
    guest.start(p)
    assert same(guest.plugin.pre_score(CycleState(), p, guest.nodes("n1")), st(Code.SKIP))
    scores, status = batch_scores(guest.plugin, CycleState(), p, guest.nodes("n1"))
    assert scores == []
    assert same(status, st(Code.UNSCHEDULABLE, "too far"))


# ----- NormalizeScore -------------------------------------------------------------------------------------


def test_normalize_score_is_applied_by_name(guest: Guest) -> None:
    p = pod("p", normalize_keep="n2")
    guest.start(p)
    scores = [NodeScore("n3", 30), NodeScore("n1", 10), NodeScore("n2", 20)]
    assert guest.plugin.normalize_score(CycleState(), p, scores) is None
    assert scores == [NodeScore("n3", 70), NodeScore("n1", 90), NodeScore("n2", 20)]


def test_normalize_score_status_leaves_scores(guest: Guest) -> None:
    p = pod("p", normalizescore_status="1:bad")
    guest.start(p)
    scores = [NodeScore("n1", 10), NodeScore("n2", 20)]
    assert same(guest.plugin.normalize_score(CycleState(), p, scores), st(Code.ERROR, "bad"))
    assert scores == [NodeScore("n1", 10), NodeScore("n2", 20)]


# ----- Reserve / Unreserve / klog -------------------------------------------------------------------------


def unreserve_log(node: str) -> str:
    return (f'"unreserve" err="unreserved" pod="default/p" node="{node}" reserved="{node}" prefilter="default/p@t1" '
            'plugin="allpoints"')


def test_reserve_and_unreserve_log_the_state(guest: Guest, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    p = pod("p")
    guest.start(p)
    assert guest.plugin.reserve(CycleState(), p, "n1") is None
    guest.plugin.unreserve(CycleState(), p, "n1")
    assert guest_logs(caplog) == [
        (logging.INFO, '"prefilter" pod="default/p" tag="t1" plugin="allpoints"'),
        (logging.INFO, '"reserved" pod="default/p" node="n1" prefilter="default/p@t1" plugin="allpoints"'),
        (logging.ERROR, unreserve_log("n1")),
        (logging.INFO, '"unreserve done for p" plugin="allpoints"'),
    ]
    assert guest.instance_id(p) is None  # Unreserve released the instance
    assert guest.plugin.counters()["idle"] == guest.plugin.counters()["live"] == 1


def test_log_severity_error_drops_info_in_the_guest(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    g = load_guest(runtime, logSeverity=2)
    p = pod("p")
    g.start(p)
    assert g.plugin.reserve(CycleState(), p, "n2") is None
    g.plugin.unreserve(CycleState(), p, "n2")
    assert guest_logs(caplog) == [
        (logging.ERROR, unreserve_log("n2")),
    ]


def test_reserve_status(guest: Guest) -> None:
    p = pod("p", reserve_status="2:no room")
    guest.start(p)
    assert same(guest.plugin.reserve(CycleState(), p, "n1"), st(Code.UNSCHEDULABLE, "no room"))


# ----- Permit ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("labels", "annotations", "want", "timeout"), [
    ({}, {}, None, 0.0),
    ({}, {"permit-status": "4:hold", "permit-timeout": "1500ms"}, st(Code.WAIT, "hold"), 1.5),
    ({}, {"permit-status": "4:", "permit-timeout": "2000h"}, st(Code.WAIT), 4294967.295),  # u32 ms, clamped
    ({}, {"permit-status": "4:", "permit-timeout": "-3s"}, st(Code.WAIT), 0.0),
    ({"deny": "yes"}, {"permit-timeout": "1s"}, st(Code.UNSCHEDULABLE, "denied on n2 by label deny=yes"), 0.0),
])
def test_permit(guest: Guest, labels: dict[str, str], annotations: dict[str, str], want: Status | None,
                timeout: float) -> None:
    p = pod("p", labels)
    for k, v in annotations.items():
        p.metadata.annotations[k] = v
    guest.start(p)
    status, got_timeout = guest.plugin.permit(CycleState(), p, "n2")
    assert same(status, want)
    assert got_timeout == pytest.approx(timeout)


def test_permit_rejects_a_waiting_pod(guest: Guest) -> None:
    """handle.GetWaitingPod (a pod larger than the SDK's 2048-byte first try) and RejectWaitingPod."""
    waiting = make_pod("w").uid("uid-w").obj()
    waiting.metadata.annotations["big"] = "x" * 3000
    wp = guest.handle.add_waiting_pod(waiting)
    results: list[Status | None] = []
    wp.on_done(results.append)
    p = pod("p", reject_waiting="uid-w")
    guest.start(p)
    assert guest.plugin.permit(CycleState(), p, "n1") == (None, 0.0)
    assert wp.done() and len(results) == 1 and results[0] is not None and results[0].code == Code.UNSCHEDULABLE
    assert guest.handle.recorder.events == [{
        "regarding": ref("Pod", "w", "uid-w", "default"),
        "related": ref("Pod", "p", p.metadata.uid, "default"),
        "type": "Warning", "reason": "Rejected", "action": "Permit",
        "note": "p rejected waiting pod default/w (uid uid-w, 3000 bytes of annotations): true",
    }]


def test_permit_with_no_such_waiting_pod(guest: Guest) -> None:
    p = pod("p", reject_waiting="nope")
    guest.start(p)
    status, _ = guest.plugin.permit(CycleState(), p, "n1")
    assert same(status, st(Code.UNSCHEDULABLE, "no waiting pod nope (rejected=false)"))
    assert guest.handle.recorder.events == []


# ----- PreBind / Bind / PostBind --------------------------------------------------------------------------


def reserved(g: Guest, p: Pod, node: str) -> None:
    """p through PreFilter and Reserve on node; the scheduling cycle succeeds (hand-off to binding)."""
    g.start(p)
    assert g.plugin.reserve(CycleState(), p, node) is None
    g.plugin.scheduling_cycle_done(p, True)


def test_bind_skips_by_default(guest: Guest) -> None:
    p = pod("p")
    reserved(guest, p, "n1")
    assert guest.plugin.pre_bind(CycleState(), p, "n1") is None
    assert same(guest.plugin.bind(CycleState(), p, "n1"), st(Code.SKIP))


@pytest.mark.parametrize(("annotations", "prebind", "bind"), [
    ({"bind-status": "0:"}, None, None),  # Success: this plugin bound the pod
    ({"prebind-status": "1:volume not ready", "bind-status": "2:busy"}, st(Code.ERROR, "volume not ready"),
     st(Code.UNSCHEDULABLE, "busy")),
])
def test_prebind_and_bind_status(guest: Guest, annotations: dict[str, str], prebind: Status | None,
                                 bind: Status | None) -> None:
    p = pod("p")
    p.metadata.annotations.update(annotations)
    reserved(guest, p, "n1")
    assert same(guest.plugin.pre_bind(CycleState(), p, "n1"), prebind)
    assert same(guest.plugin.bind(CycleState(), p, "n1"), bind)


def test_prebind_checks_the_reserved_node(guest: Guest) -> None:
    p = pod("p")
    reserved(guest, p, "n1")
    assert same(guest.plugin.pre_bind(CycleState(), p, "n2"), st(Code.ERROR, 'prebind on n2, but reserved "n1"'))


def test_postbind_event_with_an_unknown_node(guest: Guest) -> None:
    p = pod("p")
    reserved(guest, p, "ghost")
    guest.plugin.post_bind(CycleState(), p, "ghost")
    assert guest.handle.recorder.events == [{
        "regarding": ref("Pod", "p", p.metadata.uid, "default"), "related": None,
        "type": "Normal", "reason": "Bound", "action": "PostBind",
        "note": 'bound to ghost (prefilter default/p@t1, reserved ghost, tag t1): '
                'nodeinfo not found for node name "ghost"',
    }]


# ----- one pod through every point, state carried ---------------------------------------------------------


def test_state_is_carried_through_the_whole_cycle_on_the_pods_instance(guest: Guest) -> None:
    pl, h = guest.plugin, guest.handle
    # 5000 bytes of annotation: the pod does not fit the SDK's first 2048-byte buffer.
    p = pod("p", {"zone": "a"}, image="img-b", nodes="n1,n2,n3", reject="n1", big="x" * 5000)
    state = CycleState()
    result, status = pl.pre_filter(state, p, guest.nodes("n1", "n2", "n3"))
    assert status is None and result is not None and result.node_names == {"n1", "n2", "n3"}
    iid = guest.instance_id(p)
    assert iid is not None
    statuses = filter_statuses(pl, state, p, guest.nodes("n1", "n2", "n3"))
    assert [s.code if s else 0 for s in statuses] == [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0]
    assert pl.pre_score(state, p, guest.nodes("n3")) is None
    assert batch_scores(pl, state, p, guest.nodes("n3")) == ([3 + 30 + 40 + 1], None)
    scores = [NodeScore("n3", 74)]
    assert pl.normalize_score(state, p, scores) is None and scores == [NodeScore("n3", 26)]
    assert pl.reserve(state, p, "n3") is None
    assert pl.permit(state, p, "n3") == (None, 0.0)
    assert guest.instance_id(p) == iid
    pl.scheduling_cycle_done(p, True)

    # Another pod's scheduling cycle gets another instance; p's binding cycle keeps p's state.
    q = pod("q")
    guest.start(q)
    assert guest.instance_id(q) not in (None, iid)
    assert pl.counters() == {"created": 2, "discarded": 0, "live": 2, "idle": 0, "scheduling": 1, "binding": 1}
    assert pl.pre_bind(state, p, "n3") is None
    assert same(pl.bind(state, p, "n3"), st(Code.SKIP))
    pl.post_bind(state, p, "n3")
    assert h.recorder.events == [{
        "regarding": ref("Pod", "p", p.metadata.uid, "default"), "related": ref("Node", "n3", "node-uid-n3"),
        "type": "Normal", "reason": "Bound", "action": "PostBind",
        "note": "bound to n3 (prefilter default/p@t1, reserved n3, tag t1)",
    }]
    assert guest.instance_id(p) is None
    assert pl.counters()["binding"] == 0 and pl.counters()["idle"] == 1
