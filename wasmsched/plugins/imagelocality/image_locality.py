"""ImageLocality (imagelocality/image_locality.go): Score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, BatchScores, Handle, NodeBatch, ScorePlugin
from wasmsched.framework.memo import MAX_MEMO_ENTRIES, MemoKey, token
from wasmsched.framework.status import Status
from wasmsched.framework.types import ImageStateSummary, NodeInfo
from wasmsched.plugins.helper.columns import by_projection
from wasmsched.plugins.helper.gomath import div_trunc

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

_MEMO_KEY: MemoKey[tuple[Mapping[str, ImageStateSummary], dict[int, int]]] = MemoKey("ImageLocality.scores")


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
    for name in images:
        state = image_states.get(name)
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_images: int) -> int:
    """Scale the clamped sum into [0, MaxNodeScore]; the upper clamp is per image."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_images
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # Go integer division (the divisor is negative for a pod without images).
    return div_trunc(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin):
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _total_num_nodes(self) -> int:
        return len(self.handle.snapshot_shared_lister().list())

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        images = pod_images(pod)
        total = self._total_num_nodes()
        return calculate_priority(sum_image_scores(node_info.image_states, images, total), len(images)), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        if batch.columns is not None:
            return self._score_columns(pod, batch.columns), None
        images = pod_images(pod)
        n = len(images)
        total = self._total_num_nodes()
        # Every sum below MIN_THRESHOLD (a node without any of the images) scores the same.
        low = calculate_priority(0, n)
        f_total = float(total)
        # A score depends on the node's image states (replaced, never mutated, when they change)
        # and on the pod's images and the node count: memoized per node under that key.
        pod_key = token(_MEMO_KEY, (tuple(images), total))
        out: list[int] = []
        append = out.append
        for ni in batch.node_infos:
            states = ni.image_states
            if not states:
                append(low)
                continue
            memo = ni.memo()
            entry = memo.get(_MEMO_KEY)
            if entry is None or entry[0] is not states:
                entry = (states, {})
                memo[_MEMO_KEY] = entry
            scores: dict[int, int] = entry[1]
            score = scores.get(pod_key)
            if score is None:
                # sum_image_scores with scaled_image_score inlined (same float operations).
                sum_scores = 0
                for name in images:
                    st = states.get(name)
                    if st is not None:
                        sum_scores += int(float(st.size) * (float(st.num_nodes) / f_total))
                score = low if sum_scores < MIN_THRESHOLD else calculate_priority(sum_scores, n)
                if len(scores) >= MAX_MEMO_ENTRIES:
                    scores.clear()
                scores[pod_key] = score
            append(score)
        return out, None

    def _score_columns(self, pod: Pod, columns: NodeColumns) -> NDArray[np.int64]:
        """A node's score depends on its image states of the pod's images only: one score per distinct
        combination of them."""
        import numpy as np

        table = columns.table
        if not table.image_rows:
            # No node has an image state: every node scores calculate_priority(0, n), which is 0 for any n.
            return np.zeros(len(columns.rows), dtype=np.int64)
        images = pod_images(pod)
        n = len(images)
        low = calculate_priority(0, n)
        names = sorted(set(images))
        total = self._total_num_nodes()

        def score(states: list[ImageStateSummary | None]) -> int:
            present = {name: st for name, st in zip(names, states, strict=True) if st is not None}
            return calculate_priority(sum_image_scores(present, images, total), n) if present else low

        answers, which = by_projection(columns, [table.image_ids(name) for name in names], score)
        return np.array(answers, dtype=np.int64)[which]
