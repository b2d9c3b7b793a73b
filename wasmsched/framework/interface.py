"""Plugin interfaces per extension point and the Handle plugins get, as framework/interface.go.

Plugins subclass `Plugin` and the extension-point classes they implement; the runner finds the
extension points of a plugin with isinstance once, at framework creation.
Status results follow Go: `None` means Success.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ClusterEventWithHint
from wasmsched.framework.status import Code, Status, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, QueuedPodInfo

if TYPE_CHECKING:
    from wasmsched.api.types import Pod
    from wasmsched.framework.snapshot import Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the candidates to; node_names None means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.all_nodes() else set(self.node_names or ()))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


class NominatingMode(IntEnum):
    NOOP = 0
    OVERRIDE = 1


@dataclass(slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: int = NominatingMode.NOOP


@dataclass(slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class PluginScore:
    name: str
    score: int


class NodePluginScores:
    """A node's weighted score per plugin and their total (framework.NodePluginScores).

    The per-plugin list is materialised only when read (explain output, tests): selecting a host
    needs just the totals, and building an object per node and plugin costs more than scoring.
    """

    __slots__ = ("_names", "_scores", "_values", "name", "total_score")

    def __init__(self, name: str, scores: list[PluginScore] | None = None, total_score: int = 0,
                 names: Sequence[str] = (), values: Sequence[int] = ()) -> None:
        self.name = name
        self.total_score = total_score
        self._scores = scores
        self._names = names
        self._values = values

    @property
    def scores(self) -> list[PluginScore]:
        if self._scores is None:
            self._scores = [PluginScore(n, v) for n, v in zip(self._names, self._values)]
        return self._scores

    def __repr__(self) -> str:
        return f"NodePluginScores({self.name!r}, total={self.total_score})"


class NodeToStatus:
    """Statuses of nodes that were filtered out (framework.NodeToStatus).

    Nodes without an explicit entry take `absent_nodes_status` (UnschedulableAndUnresolvable by
    default: they were excluded by PreFilterResult and preemption cannot help them).
    """

    __slots__ = ("absent_nodes_status", "node_to_status")

    def __init__(self, statuses: Mapping[str, Status] | None = None) -> None:
        self.node_to_status: dict[str, Status] = dict(statuses or {})
        self.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get(self, node_name: str) -> Status:
        return self.node_to_status.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        self.node_to_status[node_name] = status

    def len(self) -> int:
        return len(self.node_to_status)

    def items(self) -> Iterable[tuple[str, Status]]:
        return self.node_to_status.items()

    def nodes_for_status_code(self, lister: Snapshot, code: int) -> list[NodeInfo]:
        """Nodes whose status has `code`, absent nodes included when the absent status matches."""
        if self.absent_nodes_status.code == code:
            return [
                ni for ni in lister.list()
                if ni.name not in self.node_to_status or self.node_to_status[ni.name].code == code
            ]
        out = []
        for name, st in self.node_to_status.items():
            if st.code == code:
                ni = lister.get(name)
                if ni is not None:
                    out.append(ni)
        return out


class Plugin:
    """Base of every plugin. `name` is the name it is registered and configured under."""

    name: str = ""


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: Pod) -> Status | None:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        raise NotImplementedError


class EnqueueExtensions(Plugin):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        raise NotImplementedError


class PreFilterExtensions(Protocol):
    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None: ...


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        raise NotImplementedError

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError

    def filter_nodes(self, state: CycleState, pod: Pod,
                     node_infos: Sequence[NodeInfo]) -> list[Status | None]:
        """Batch form; plugins may override it with a faster whole-list implementation."""
        return [self.filter(state, pod, ni) for ni in node_infos]


class PostFilterPlugin(Plugin):
    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        raise NotImplementedError


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None: ...


class ScorePlugin(Plugin):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        raise NotImplementedError

    def score_nodes(self, state: CycleState, pod: Pod,
                    node_infos: Sequence[NodeInfo]) -> tuple[list[int], Status | None]:
        """Batch form; on a non-success status the scores are ignored."""
        out = []
        for ni in node_infos:
            s, st = self.score(state, pod, ni)
            if not_success(st):
                return [], st
            out.append(s)
        return out, None

    def score_extensions(self) -> ScoreExtensions | None:
        return None


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Returns (status, timeout in seconds); the timeout matters only with Wait."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError


class BindPlugin(Plugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise NotImplementedError


class CycleObserver(Protocol):
    """Optional hooks a plugin may implement to learn where a pod's cycle ends (the wasm pool)."""

    def scheduling_cycle_done(self, pod: Pod, succeeded: bool) -> None: ...

    def binding_cycle_done(self, pod: Pod) -> None: ...


class WaitingPod(Protocol):
    def get_pod(self) -> Pod: ...

    def get_pending_plugins(self) -> list[str]: ...

    def allow(self, plugin_name: str) -> None: ...

    def reject(self, plugin_name: str, msg: str) -> None: ...


class EventRecorder(Protocol):
    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str,
               note: str) -> None: ...


class ClusterClient(Protocol):
    """What the scheduler needs from where objects live (API server or the embedded cluster)."""

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The current object (the informer cache's view); None when the pod no longer exists."""
        ...

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def delete_pod(self, pod: Pod, reason: str) -> None: ...

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None: ...

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None: ...

    def list_pod_disruption_budgets(self) -> list[Any]: ...

    def get_namespace_labels(self, namespace: str) -> Mapping[str, str] | None: ...


class PodNominator(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class Handle(Protocol):
    """What plugins get from the framework (framework.Handle)."""

    def snapshot_shared_lister(self) -> Snapshot: ...

    def client(self) -> ClusterClient: ...

    def event_recorder(self) -> EventRecorder: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None: ...

    def pod_nominator(self) -> PodNominator: ...

    def parallelize_until(self, pieces: int, fn: Callable[[int], None]) -> None: ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo,
                                            node_info: NodeInfo) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None: ...

    def profile_name(self) -> str: ...


# PluginFactory: (args, handle) -> Plugin.  args is the decoded args object (or raw dict) or None.
PluginFactory = Callable[[Any, Handle], Plugin]
