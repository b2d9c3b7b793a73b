"""Port of imagelocality/image_locality_test.go."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.plugins import imagelocality
from wasmsched.plugins.imagelocality import ImageLocality
from wasmsched.plugins.imagelocality.image_locality import normalized_image_name
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.fake_handle import FakeHandle

MB = 1024 * 1024

Images = list[tuple[list[str], int]]  # (names, size in MB)


def make_image_node(name: str, images: Images) -> Node:
    node = Node()
    node.metadata.name = name
    for names, size in images:
        img = node.status.images.add()
        img.names.extend(names)
        img.sizeBytes = size * MB
    return node


def make_pod_spec(containers: list[str], init: list[str] | None = None, volumes: list[str] | None = None) -> Pod:
    pod = Pod()
    pod.metadata.name = "p"
    for i, image in enumerate(init or []):
        c = pod.spec.initContainers.add()
        c.name, c.image = f"init{i}", image
    for i, image in enumerate(containers):
        c = pod.spec.containers.add()
        c.name, c.image = f"c{i}", image
    for i, ref in enumerate(volumes or []):
        v = pod.spec.volumes.add()
        v.name = f"v{i}"
        v.volumeSource.image.reference = ref
    return pod


TEST_40_250 = make_pod_spec(["gcr.io/40", "gcr.io/250"])
TEST_40_300 = make_pod_spec(["gcr.io/40", "gcr.io/300"])
TEST_MIN_MAX = make_pod_spec(["gcr.io/10", "gcr.io/4000"])
TEST_300_600_900 = make_pod_spec(["gcr.io/300", "gcr.io/600", "gcr.io/900"])
TEST_30_40 = make_pod_spec(["gcr.io/30", "gcr.io/40"])
TEST_30_INIT_300 = make_pod_spec(["gcr.io/30"], init=["gcr.io/300"])

NODE_40_300_2000: Images = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
]
NODE_250_10: Images = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900: Images = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)]
NODE_300_600_900: Images = [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600),
                            (["gcr.io/900:latest"], 900)]
NODE_4000_30: Images = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40: Images = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]
NODE_NO_IMAGES: Images = []


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "expected"),
    [
        ("two images spread on two nodes, prefer the larger image one", TEST_40_250,
         [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [0, 5]),
        ("two images on one node, prefer this node", TEST_40_300,
         [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [7, 0]),
        ("if exceed limit, use limit", TEST_MIN_MAX,
         [("node1", NODE_4000_30), ("node2", NODE_250_10)], [MAX_NODE_SCORE, 0]),
        ("if exceed limit, use limit (with node which has no images present)", TEST_MIN_MAX,
         [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NODE_NO_IMAGES)], [66, 0, 0]),
        ("pod with multiple large images, node2 is preferred", TEST_300_600_900,
         [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NODE_NO_IMAGES)], [32, 36, 0]),
        ("pod with multiple small images", TEST_30_40,
         [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], [1, 0]),
        ("include InitContainers: two images spread on two nodes, prefer the larger image one", TEST_30_INIT_300,
         [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [6, 0]),
        # Not in kube's table above: an image volume counts like a container image, in the score and in the
        # per-image threshold (100 * (300M/2 - 23M) / (1000M * 2 - 23M) = 6).
        ("image volume counts like a container image", make_pod_spec(["gcr.io/30"], volumes=["gcr.io/300"]),
         [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [6, 0]),
        # A pod without any image: clamped to the minimum, score 0 (no division by zero).
        ("pod without images", make_pod_spec([]), [("node1", NODE_40_300_2000)], [0]),
    ],
)
def test_image_locality_priority(name: str, pod: Pod, nodes: list[tuple[str, Images]],
                                 expected: list[int]) -> None:
    snapshot = new_snapshot([], [make_image_node(n, images) for n, images in nodes])
    pl = imagelocality.new(None, FakeHandle(snapshot=snapshot))
    assert isinstance(pl, ImageLocality)
    state = CycleState()
    got = []
    for ni in snapshot.list():
        score, status = pl.score(state, pod, ni)
        assert status is None
        got.append(score)
    assert got == expected
    batch, status = batch_scores(pl, state, pod, snapshot.list())
    assert status is None
    assert batch == expected
    assert pl.score_extensions() is None


@pytest.mark.parametrize(
    ("name", "image", "expected"),
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@sha256:" + "0" * 64, "root@sha256:" + "0" * 64),
    ],
)
def test_normalized_image_name(name: str, image: str, expected: str) -> None:
    assert normalized_image_name(image) == expected


@pytest.mark.parametrize("num_images", range(6))
def test_no_image_state_scores_zero_for_any_number_of_images(num_images: int) -> None:
    """What score_columns answers without looking at the pod when no node has an image state."""
    from wasmsched.plugins.imagelocality.image_locality import calculate_priority

    assert calculate_priority(0, num_images) == 0
