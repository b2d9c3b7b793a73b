"""A bound pod's status updates by its kubelet (KWOK here): what they cost the informer's handlers.

Issue 23: a pod sees ADDED, MODIFIED for its binding and two or three MODIFIED for its status; the
status updates change nothing the scheduler reads of the pod's requests, so neither the cache nor the
event extractors read the requests again (resources.same_request_inputs)."""

from __future__ import annotations

import pytest

from wasmsched.api.resources import same_request_inputs
from wasmsched.api.types import Pod
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.events import pod_scheduling_properties_change
from wasmsched.testing.builders import make_node, make_pod


def _bound() -> Pod:
    p = make_pod("p").uid("u").req(cpu="100m", memory="500Mi").node("n1").obj()
    p.metadata.resourceVersion = "2"
    return p


def _copy(p: Pod, rv: str) -> Pod:
    c = Pod()
    c.CopyFrom(p)
    c.metadata.resourceVersion = rv
    return c


def _running(p: Pod) -> Pod:
    """What the kubelet writes first: phase, IPs, start time, a container status without resources."""
    r = _copy(p, "3")
    r.status.phase, r.status.podIP, r.status.hostIP = "Running", "10.0.0.1", "10.1.1.1"
    r.status.startTime.seconds = 1000
    cs = r.status.containerStatuses.add()
    cs.name, cs.image, cs.ready = r.spec.containers[0].name, "pause", False
    cs.state.running.startedAt.seconds = 1000
    return r


def _ready(p: Pod) -> Pod:
    r = _copy(p, "4")
    r.status.containerStatuses[0].ready = True
    for t in ("Initialized", "Ready", "ContainersReady"):
        c = r.status.conditions.add()
        c.type, c.status = t, "True"
    return r


def test_kubelet_status_updates_keep_the_request_inputs() -> None:
    bound = _bound()
    running = _running(bound)
    ready = _ready(running)
    assert same_request_inputs(running, bound) and same_request_inputs(ready, running)


@pytest.mark.parametrize("change", ["spec", "actuated", "allocated", "infeasible"])
def test_what_the_requests_are_read_from_is_a_change(change: str) -> None:
    old = _running(_bound())
    new = _copy(old, "5")
    cs = new.status.containerStatuses[0]
    if change == "spec":
        new.spec.containers[0].resources.requests["cpu"].string = "200m"
    elif change == "actuated":
        cs.resources.requests["cpu"].string = "200m"
    elif change == "allocated":
        cs.allocatedResources["cpu"].string = "200m"
    else:
        c = new.status.conditions.add()
        c.type, c.status, c.reason = "PodResizePending", "True", "Infeasible"
    assert not same_request_inputs(new, old)


def test_a_status_without_resources_counts_when_a_resize_is_infeasible() -> None:
    # With an infeasible resize a container status without allocated resources changes the requests.
    old = _bound()
    for p in (old,):
        c = p.status.conditions.add()
        c.type, c.status, c.reason = "PodResizePending", "True", "Infeasible"
    new = _running(old)
    assert not same_request_inputs(new, old)


def test_a_status_update_of_a_bound_pod_is_a_general_update_only() -> None:
    bound = _bound()
    running = _running(bound)
    assert pod_scheduling_properties_change(running, bound, False) == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)]
    resized = _copy(running, "5")
    resized.spec.containers[0].resources.requests["cpu"].string = "50m"
    assert pod_scheduling_properties_change(resized, running, False) == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)]


def test_the_cache_keeps_what_it_computed_across_status_updates() -> None:
    cache = Cache()
    cache.add_node(make_node("n1").capacity(cpu="4", memory="16Gi", pods="110").obj())
    bound = _bound()
    cache.add_pod(bound)
    first = cache.nodes["n1"].pods[0]
    running = _running(bound)
    cache.update_pod(bound, running)
    pi = cache.nodes["n1"].pods[0]
    # The new object, with the shape (requests, ports, plugin memos) computed for the first one.
    assert pi.pod is running and pi.shape is first.shape and pi.requests == first.requests
    resized = _copy(running, "5")
    resized.spec.containers[0].resources.requests["cpu"].string = "200m"
    cache.update_pod(running, resized)
    pi = cache.nodes["n1"].pods[0]
    assert pi.pod is resized and pi.shape is not first.shape and pi.requests.milli_cpu == 200
