"""ImageLocality (imagelocality/image_locality.go): Score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, BatchScores, Handle, NodeBatch, ScorePlugin
from wasmsched.framework.status import Status
from wasmsched.framework.types import ImageStateSummary, NodeInfo
from wasmsched.plugins.helper.columns import by_projection

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

NAME = "ImageLocality"

# Bounds of the image score range: a reasonable size range for compressed container images in
# registries (90%ile of dockerhub images); the upper bound is per image.
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

DEFAULT_IMAGE_TAG = "latest"

def normalized_image_name(name: str) -> str:
    """The CRI-compliant name: ":latest" is added when the reference has no tag (or digest)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":" + DEFAULT_IMAGE_TAG
    return name


def pod_images(pod: Pod) -> list[str]:
    """Normalized images whose locality counts: init containers, containers, then image volumes."""
    names = [normalized_image_name(c.image) for c in pod.spec.initContainers]
    names.extend(normalized_image_name(c.image) for c in pod.spec.containers)
    names.extend(
        normalized_image_name(v.volumeSource.image.reference)
        for v in pod.spec.volumes
        if v.volumeSource.HasField("image")
    )
    return names


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image size scaled by how far it has spread, against the "node heating" problem."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(image_states: Mapping[str, ImageStateSummary], images: Sequence[str],
                     total_num_nodes: int) -> int:
    total = 0
    f_total = float(total_num_nodes)
    for name in images:
        state = image_states.get(name)
        if state is not None:
            total += int(float(state.size) * (float(state.num_nodes) / f_total))  # scaled_image_score
    return total


def calculate_priority(sum_scores: int, num_images: int) -> int:
    """Scale the clamped sum into [0, MaxNodeScore]; the upper clamp is per image."""
    if sum_scores <= MIN_THRESHOLD:
        return 0  # clamped up to MIN_THRESHOLD: 0 / (max_threshold - MIN_THRESHOLD), whatever the divisor's sign
    # The operands have one sign (both negative only for a sum without images): Go's division is Python's floor.
    max_threshold = MAX_CONTAINER_THRESHOLD * num_images
    if sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def image_locality_score(image_states: Mapping[str, ImageStateSummary], images: Sequence[str],
                         total_num_nodes: int) -> int:
    """A node's score, from its image states, the pod's images (pod_images) and the number of nodes: what
    `score` returns for a node, and what the batch form computes per node (the pod's images and the node count
    read once) or per distinct combination of the nodes' states of those images (the node table's)."""
    return calculate_priority(sum_image_scores(image_states, images, total_num_nodes), len(images))


class ImageLocality(ScorePlugin):
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _total_num_nodes(self) -> int:
        return len(self.handle.snapshot_shared_lister().list())

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return image_locality_score(node_info.image_states, pod_images(pod), self._total_num_nodes()), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        if batch.columns is not None:
            return self._score_columns(pod, batch.columns), None
        images = pod_images(pod)
        total = self._total_num_nodes()
        # A score depends on the node's states of the pod's images only: the nodes with none of them score alike.
        none = image_locality_score({}, images, total)
        scores = []
        for ni in batch.node_infos:
            states = ni.image_states
            scores.append(none if states.keys().isdisjoint(images) else image_locality_score(states, images, total))
        return scores, None

    def _score_columns(self, pod: Pod, columns: NodeColumns) -> NDArray[np.int64]:
        """A node's score depends on its image states of the pod's images only: image_locality_score once per
        distinct combination of them (by_projection)."""
        import numpy as np

        table = columns.table
        if not table.image_rows:
            # No node has an image state: each node's sum is 0, which calculate_priority scores 0 whatever the
            # pod's images (not read, then).
            return np.zeros(len(columns.rows), dtype=np.int64)
        images = pod_images(pod)
        total = self._total_num_nodes()
        names = sorted(set(images))

        def score(states: list[ImageStateSummary | None]) -> int:
            present = {name: st for name, st in zip(names, states, strict=True) if st is not None}
            return image_locality_score(present, images, total)

        answers, which = by_projection(columns, [table.image_ids(name) for name in names], score)
        return np.array(answers, dtype=np.int64)[which]
