"""Pod request calculation, after component-helpers resource helpers_test.go and NodeInfo's non-zero view."""

from typing import Any

import pytest

from wasmsched.api.convert import dict_to_message
from wasmsched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_extended_resource_name,
    is_scalar_resource_name,
    node_allocatable,
    pod_nonzero_requests,
    pod_requests,
    pod_requests_with_defaults,
)
from wasmsched.api.types import Node, Pod


def container(
    name: str, requests: dict[str, Any] | None = None, restart: str | None = None
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name}
    if requests is not None:
        c["resources"] = {"requests": requests}
    if restart:
        c["restartPolicy"] = restart
    return c


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None, **spec: Any) -> Pod:
    body: dict[str, Any] = {"containers": containers, **spec}
    if init:
        body["initContainers"] = init
    return dict_to_message({"spec": body}, Pod)


Mi = 1024 * 1024


@pytest.mark.parametrize(
    ("p", "want"),
    [
        (
            pod([container("a", {"cpu": "1", "memory": "1Gi"}), container("b", {"cpu": "500m"})]),
            {"cpu": 1500, "memory": 1024 * Mi},
        ),
        (pod([]), {}),
        (pod([container("a")]), {}),
        # init containers: the max of the largest init container and the sum of regular containers
        (
            pod(
                [container("a", {"cpu": "1"})],
                init=[container("i1", {"cpu": "2"}), container("i2", {"cpu": "500m", "memory": "1Gi"})],
            ),
            {"cpu": 2000, "memory": 1024 * Mi},
        ),
        # sidecar (restartable init container) adds to the pod total
        (
            pod([container("a", {"cpu": "1"})], init=[container("s", {"cpu": "1"}, "Always")]),
            {"cpu": 2000},
        ),
        # init container after a sidecar runs beside it: 1 (sidecar) + 2 (init) = 3 > 1 + 1
        (
            pod(
                [container("a", {"cpu": "1"})],
                init=[container("s", {"cpu": "1"}, "Always"), container("i", {"cpu": "2"})],
            ),
            {"cpu": 3000},
        ),
        # init container before the sidecar does not see it
        (
            pod(
                [container("a", {"cpu": "1"})],
                init=[container("i", {"cpu": "2"}), container("s", {"cpu": "1"}, "Always")],
            ),
            {"cpu": 2000},
        ),
        # several sidecars accumulate for later init containers (KEP-753 example)
        (
            pod(
                [container("a", {"cpu": "1"})],
                init=[
                    container("s1", {"cpu": "1"}, "Always"),
                    container("s2", {"cpu": "2"}, "Always"),
                    container("i", {"cpu": "5"}),
                ],
            ),
            {"cpu": 8000},
        ),
        # overhead is added
        (
            pod([container("a", {"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"}),
            {"cpu": 1250, "memory": 120 * Mi},
        ),
        # extended resources and rounding up of fractional units
        (
            pod([container("a", {"nvidia.com/gpu": "1", "ephemeral-storage": "1.5"})]),
            {"nvidia.com/gpu": 1, "ephemeral-storage": 2},
        ),
        # exact summation before rounding: 3 x 0.3m = 0.9m -> 1m
        (pod([container(n, {"cpu": "0.3m"}) for n in "abc"]), {"cpu": 1}),
        # pod-level requests replace cpu/memory/hugepages, extended resources still summed
        (
            pod(
                [container("a", {"cpu": "1", "memory": "1Gi", "example.com/foo": "3"})],
                resources={"requests": {"cpu": "3", "memory": "2Gi"}},
                overhead={"cpu": "1"},
            ),
            {"cpu": 4000, "memory": 2048 * Mi, "example.com/foo": 3},
        ),
    ],
)
def test_pod_requests(p: Pod, want: dict[str, int]) -> None:
    assert pod_requests(p) == want


def test_exclude_overhead_and_skip_pod_level() -> None:
    p = pod([container("a", {"cpu": "1"})], overhead={"cpu": "1"}, resources={"requests": {"cpu": "5"}})
    assert pod_requests(p, exclude_overhead=True) == {"cpu": 5000}
    assert pod_requests(p, skip_pod_level=True) == {"cpu": 2000}


def test_status_resources_take_the_max() -> None:
    p = pod([container("a", {"cpu": "1"})])
    p.status.containerStatuses.add(name="a")
    p.status.containerStatuses[0].allocatedResources["cpu"].string = "2"
    assert pod_requests(p) == {"cpu": 2000}
    assert pod_requests(p, use_status_resources=False) == {"cpu": 1000}
    cond = p.status.conditions.add()
    cond.type = "PodResizePending"
    cond.reason = "Infeasible"
    p.spec.containers[0].resources.requests["cpu"].string = "3"
    # an infeasible resize ignores the spec
    assert pod_requests(p) == {"cpu": 2000}


@pytest.mark.parametrize(
    ("p", "cpu", "mem"),
    [
        (pod([container("a")]), DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
        (pod([container("a"), container("b")]), 2 * DEFAULT_MILLI_CPU_REQUEST, 2 * DEFAULT_MEMORY_REQUEST),
        (
            pod([container("a", {"cpu": "1"}), container("b")]),
            1000 + DEFAULT_MILLI_CPU_REQUEST,
            2 * DEFAULT_MEMORY_REQUEST,
        ),
        (pod([container("a", {"cpu": "0", "memory": "0"})]), 0, 0),
        (pod([container("a", {"cpu": "1", "memory": "1Gi"})]), 1000, 1024 * Mi),
        (pod([container("a")], init=[container("i", {"cpu": "2"})]), 2000, DEFAULT_MEMORY_REQUEST),
        # pod-level requests: defaults only for what neither level sets
        (pod([container("a")], resources={"requests": {"cpu": "2"}}), 2000, DEFAULT_MEMORY_REQUEST),
    ],
)
def test_nonzero_requests(p: Pod, cpu: int, mem: int) -> None:
    assert pod_nonzero_requests(p) == (cpu, mem)


def test_requests_with_defaults() -> None:
    p = pod([container("a", {"cpu": "1"}), container("b")])
    assert pod_requests_with_defaults(p) == {"cpu": 1100, "memory": 2 * DEFAULT_MEMORY_REQUEST}


def test_node_allocatable() -> None:
    node = dict_to_message(
        {"status": {"allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110", "nvidia.com/gpu": "4"}}},
        Node,
    )
    assert node_allocatable(node) == {"cpu": 3900, "memory": 15 * 1024 * Mi, "pods": 110, "nvidia.com/gpu": 4}


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("pods", False, False),
        ("ephemeral-storage", False, False),
        ("nvidia.com/gpu", True, True),
        ("example.com/foo", True, True),
        ("kubernetes.io/something", False, True),
        ("requests.example.com/foo", False, False),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("example.com/bad name", False, False),
    ],
)
def test_resource_name_kinds(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar
