"""Ports of dynamicresources_test.go's core cases (pod claims, PreEnqueue/PreFilter/Filter/Reserve/
PreBind/PostFilter)."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import DeviceClass, Pod, ResourceClaim, ResourceSlice
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import QueueingHint
from wasmsched.framework.interface import NodeToStatus
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.dynamicresources import DynamicResources
from wasmsched.testing.builders import NodeWrapper, PodWrapper
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

NS = "default"
POD_NAME = "my-pod"
POD_UID = "1234"
RESOURCE_NAME = "my-resource"
CLAIM_NAME = POD_NAME + "-" + RESOURCE_NAME
CLASS_NAME = "my-resource-class"
DRIVER = "some-driver"
NODE = "worker"


def pod_with_claim_name() -> Pod:
    p = PodWrapper(POD_NAME, NS).uid(POD_UID).obj()
    c = p.spec.resourceClaims.add()
    c.name = RESOURCE_NAME
    c.resourceClaimName = CLAIM_NAME
    return p


def pod_with_claim_template(in_status: bool) -> Pod:
    p = PodWrapper(POD_NAME, NS).uid(POD_UID).obj()
    c = p.spec.resourceClaims.add()
    c.name = RESOURCE_NAME
    c.resourceClaimTemplateName = "template"
    if in_status:
        s = p.status.resourceClaimStatuses.add()
        s.name = RESOURCE_NAME
        s.resourceClaimName = CLAIM_NAME
    return p


def device_class(selector: str = "") -> DeviceClass:
    dc = DeviceClass()
    dc.metadata.name = CLASS_NAME
    if selector:
        dc.spec.selectors.add().cel.expression = selector
    return dc


def pending_claim(count: int = 1, selector: str = "") -> ResourceClaim:
    c = ResourceClaim()
    c.metadata.name = CLAIM_NAME
    c.metadata.namespace = NS
    c.metadata.uid = "claim-uid"
    c.metadata.resourceVersion = "1"
    ref = c.metadata.ownerReferences.add()
    ref.apiVersion, ref.kind, ref.name, ref.uid, ref.controller = "v1", "Pod", POD_NAME, POD_UID, True
    r = c.spec.devices.requests.add()
    r.name = "req-1"
    r.exactly.deviceClassName = CLASS_NAME
    r.exactly.allocationMode = "ExactCount"
    r.exactly.count = count
    if selector:
        r.exactly.selectors.add().cel.expression = selector
    return c


def allocated_claim(node: str = NODE) -> ResourceClaim:
    c = pending_claim()
    c.metadata.finalizers.append("resource.kubernetes.io/delete-protection")
    res = c.status.allocation.devices.results.add()
    res.request, res.driver, res.pool, res.device = "req-1", DRIVER, node, "instance-1"
    t = c.status.allocation.nodeSelector.nodeSelectorTerms.add()
    f = t.matchFields.add()
    f.key, f.operator = "metadata.name", "In"
    f.values.append(node)
    return c


def node_slice(node: str = NODE, devices: int = 1, attrs: dict[str, Any] | None = None) -> ResourceSlice:
    s = ResourceSlice()
    s.metadata.name = f"{node}-slice"
    s.spec.driver = DRIVER
    s.spec.nodeName = node
    s.spec.pool.name = node
    s.spec.pool.resourceSliceCount = 1
    for i in range(devices):
        d = s.spec.devices.add()
        d.name = f"instance-{i + 1}"
        for k, v in (attrs or {}).items():
            a = d.attributes[k]
            if isinstance(v, bool):
                a.bool = v
            elif isinstance(v, int):
                a.int = v
            else:
                a.string = v
    return s


def setup(objects: list[Any], nodes: list[str] = (NODE,)) -> tuple[DynamicResources, FakeHandle, list[NodeInfo]]:  # type: ignore[assignment]
    node_objs = [NodeWrapper(n).obj() for n in nodes]
    h = FakeHandle(nodes=node_objs, client=RecordingClient(objects=objects))
    return DynamicResources(h), h, [NodeInfo(n) for n in node_objs]


def claim_in(h: FakeHandle) -> ResourceClaim:
    return next(o for o in h.client().objects if isinstance(o, ResourceClaim) and o.metadata.name == CLAIM_NAME)


def test_empty_pod_skips() -> None:
    pl, _, nodes = setup([])
    pod = PodWrapper(POD_NAME, NS).obj()
    assert pl.pre_enqueue(pod) is None
    _, st = pl.pre_filter(CycleState(), pod, nodes)
    assert st is not None and st.code == Code.SKIP


@pytest.mark.parametrize(
    ("name", "pod", "claims", "want"),
    [
        (
            "missing-claim",
            pod_with_claim_template(False),
            [allocated_claim()],
            'pod "default/my-pod": ResourceClaim not created yet',
        ),
        (
            "wrong-claim",
            pod_with_claim_template(True),
            ["wrong-owner"],
            "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
        ),
        (
            "deleted-claim",
            pod_with_claim_template(True),
            ["deleted"],
            'resourceclaim "my-pod-my-resource" is being deleted',
        ),
        ("no-claim-object", pod_with_claim_name(), [], 'could not find ResourceClaim "default/my-pod-my-resource"'),
    ],
)
def test_pre_enqueue_rejections(name: str, pod: Pod, claims: list[Any], want: str) -> None:
    objs: list[Any] = []
    for spec in claims:
        c = spec
        if spec == "wrong-owner":
            c = allocated_claim()
            c.metadata.ownerReferences[0].uid += "123"
        elif spec == "deleted":
            c = allocated_claim()
            c.metadata.deletionTimestamp.seconds = 1
        objs.append(c)
    pl, _, nodes = setup(objs)
    st = pl.pre_enqueue(pod)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == [want]
    _, st = pl.pre_filter(CycleState(), pod, nodes)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == [want]


def test_claim_template_allocated_reserves_in_prebind() -> None:
    pl, h, nodes = setup([allocated_claim(), device_class()])
    pod = pod_with_claim_template(True)
    cs = CycleState()
    _, st = pl.pre_filter(cs, pod, nodes)
    assert st is None
    assert pl.filter(cs, pod, nodes[0]) is None
    assert pl.reserve(cs, pod, NODE) is None
    assert pl.pre_bind(cs, pod, NODE) is None
    claim = claim_in(h)
    assert [r.uid for r in claim.status.reservedFor] == [POD_UID]
    assert claim.status.reservedFor[0].resource == "pods"
    assert h.client().updates == [("ResourceClaim", f"{NS}/{CLAIM_NAME}", "status")]


def test_no_resources() -> None:
    pl, _, nodes = setup([pending_claim(), device_class()])
    pod = pod_with_claim_name()
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    st = pl.filter(cs, pod, nodes[0])
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["cannot allocate all claims"]
    _, pst = pl.post_filter(cs, pod, NodeToStatus())
    assert pst is not None and pst.code == Code.UNSCHEDULABLE and pst.reasons == []


def test_with_resources_reserve_prebind() -> None:
    pl, h, nodes = setup([pending_claim(), device_class(), node_slice()])
    pod = pod_with_claim_name()
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    assert pl.filter(cs, pod, nodes[0]) is None
    assert pl.reserve(cs, pod, NODE) is None
    pending = pl.get_pending_allocation("claim-uid")
    assert pending is not None and pending.devices.results[0].device == "instance-1"
    # Another pod's PreFilter sees the in-flight allocation's device as taken.
    assert pl.list_all_allocated_devices() == {pl.list_all_allocated_devices().pop()}
    assert pl.pre_bind(cs, pod, NODE) is None
    claim = claim_in(h)
    assert claim.status.allocation.devices.results[0].device == "instance-1"
    assert claim.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values == [NODE]
    assert claim.status.allocation.HasField("allocationTimestamp")
    assert "resource.kubernetes.io/delete-protection" in claim.metadata.finalizers
    assert [r.uid for r in claim.status.reservedFor] == [POD_UID]
    assert pl.get_pending_allocation("claim-uid") is None
    assert [u[2] for u in h.client().updates] == ["", "status"]


def test_in_flight_claim_other_pod_waits() -> None:
    pl, _, nodes = setup([pending_claim(), device_class(), node_slice()])
    pod = pod_with_claim_name()
    cs = CycleState()
    pl.pre_filter(cs, pod, nodes)
    assert pl.filter(cs, pod, nodes[0]) is None
    assert pl.reserve(cs, pod, NODE) is None
    _, st = pl.pre_filter(CycleState(), pod, nodes)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["resource claim default/my-pod-my-resource is in the process of being allocated"]
    pl.unreserve(cs, pod, NODE)
    assert pl.get_pending_allocation("claim-uid") is None


def test_exhausted_resources_in_informer_cache() -> None:
    other = allocated_claim()
    other.metadata.name, other.metadata.uid = "other-claim", "other-uid"
    pl, _, nodes = setup([pending_claim(), other, device_class(), node_slice()])
    pod = pod_with_claim_name()
    cs = CycleState()
    pl.pre_filter(cs, pod, nodes)
    st = pl.filter(cs, pod, nodes[0])
    assert st is not None and st.reasons == ["cannot allocate all claims"]


def test_missing_class() -> None:
    pl, _, nodes = setup([pending_claim()])
    _, st = pl.pre_filter(CycleState(), pod_with_claim_name(), nodes)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == [f"request req-1: device class {CLASS_NAME} does not exist"]


def test_wrong_topology_and_postfilter_deallocates() -> None:
    pl, h, nodes = setup([allocated_claim("other-node"), device_class()])
    pod = pod_with_claim_name()
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    st = pl.filter(cs, pod, nodes[0])
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["resourceclaim not available on the node"]
    _, pst = pl.post_filter(cs, pod, NodeToStatus())
    assert pst is not None and pst.code == Code.UNSCHEDULABLE
    assert pst.reasons == ["deallocation of ResourceClaim completed"]
    assert not claim_in(h).status.HasField("allocation")


def test_good_topology() -> None:
    pl, _, nodes = setup([allocated_claim(), device_class()])
    pod = pod_with_claim_name()
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    assert pl.filter(cs, pod, nodes[0]) is None


@pytest.mark.parametrize(
    ("name", "claim_sel", "class_sel", "want"),
    [
        (
            "claim-parameters-CEL-runtime-error",
            'device.attributes["dra.example.com"].nosuchattr',
            "",
            "claim default/my-pod-my-resource: selector #0 on device some-driver/worker/instance-1: CEL runtime error: "
            "no such key: nosuchattr. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
            "check with has() for optional fields",
        ),
        (
            "class-parameters-CEL-runtime-error",
            "",
            'device.attributes["dra.example.com"].nosuchattr',
            "class my-resource-class: selector #0 on device some-driver/worker/instance-1: CEL runtime error: "
            "no such key: nosuchattr. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
            "check with has() for optional fields",
        ),
    ],
)
def test_cel_runtime_errors(name: str, claim_sel: str, class_sel: str, want: str) -> None:
    pl, _, nodes = setup([pending_claim(selector=claim_sel), device_class(class_sel), node_slice()])
    pod = pod_with_claim_name()
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    st = pl.filter(cs, pod, nodes[0])
    assert st is not None and st.code == Code.ERROR and st.reasons == [want]


def test_selector_picks_matching_device() -> None:
    s = node_slice(devices=2)
    s.spec.devices[0].attributes["model"].string = "a"
    s.spec.devices[1].attributes["model"].string = "b"
    pl, _, nodes = setup([pending_claim(selector='device.attributes["some-driver"].model == "b"'), device_class(), s])
    pod = pod_with_claim_name()
    cs = CycleState()
    pl.pre_filter(cs, pod, nodes)
    assert pl.filter(cs, pod, nodes[0]) is None
    assert pl.reserve(cs, pod, NODE) is None
    assert pl.get_pending_allocation("claim-uid").devices.results[0].device == "instance-2"


def test_queueing_hints() -> None:
    pl, _, _ = setup([pending_claim()])
    pod = pod_with_claim_name()
    claim = pending_claim()
    assert pl.is_schedulable_after_claim_change(pod, None, claim) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_claim_change(pod, claim, claim) == QueueingHint.QUEUE_SKIP
    alloc = allocated_claim()
    assert pl.is_schedulable_after_claim_change(pod, claim, alloc) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_claim_change(pod, alloc, claim) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_claim_change(pod, claim, None) == QueueingHint.QUEUE_SKIP
    assert pl.is_schedulable_after_claim_change(pod, alloc, None) == QueueingHint.QUEUE
    unrelated = pending_claim()
    unrelated.metadata.uid = "other"
    assert pl.is_schedulable_after_claim_change(pod, None, unrelated) == QueueingHint.QUEUE_SKIP
    assert (
        pl.is_schedulable_after_target_pod_update(pod, None, pod_with_claim_template(False)) == QueueingHint.QUEUE_SKIP
    )


def test_args_defaults_and_validation() -> None:
    from wasmsched.config.args import DynamicResourcesArgs

    a = DynamicResourcesArgs.default()
    assert (a.filter_timeout, a.binding_timeout) == (10.0, 600.0)
    b = DynamicResourcesArgs.from_dict({"filterTimeout": "1m30s", "bindingTimeout": "500ms"})
    assert b.filter_timeout == 90.0
    assert [e.detail for e in b.validate()] == ["must be at least 1 second"]
    assert [e.detail for e in DynamicResourcesArgs(filter_timeout=-1.0).validate()] == ["must be zero or positive"]
