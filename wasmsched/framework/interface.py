"""Plugin interfaces per extension point and the Handle plugins get, as framework/interface.go.

Plugins subclass `Plugin` and the extension-point classes they implement; the runner
(framework/runtime/) finds the extension points of a plugin with isinstance once, at framework
creation. The docstring of each extension-point class and method is its contract: when it runs,
what each status means there, and what the plugin may change.

Common to all extension points:
- Status results follow Go: `None` means Success. An exception a plugin raises is an Error status
  (for PostBind and Unreserve, which return nothing, it is logged; from PreEnqueue and QueueSort,
  which run inside the queue, it propagates to the caller).
- Error is for unexpected failures: mostly the cycle is abandoned and the pod retried after
  backoff (each extension point below says what it does).
  Unschedulable / UnschedulableAndUnresolvable / Pending are rejections (the pod is unschedulable
  for an expected reason; it is requeued when an event the rejecting plugin registered may help,
  Pending without backoff). Wait is for Permit only; Skip only where the extension point says so.
- The pod must never be modified: it is shared with the queue and the cache. NodeInfos come from
  the snapshot, shared by every plugin and by later cycles, and must not be modified either (the
  framework hands out clones where pods are added or removed). A plugin keeps per-cycle data in
  the CycleState, written in PreFilter/PreScore (or Reserve) and read later in the same cycle.
- The scheduling cycle (PreFilter to Permit) runs on the scheduling thread, one pod at a time; the
  binding cycle (waiting on Permit, PreBind, Bind, PostBind, and Unreserve after a failure there)
  may run on binding threads, concurrently with later scheduling cycles.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import compress
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeAlias, runtime_checkable

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ClusterEventWithHint
from wasmsched.framework.status import Code, Status, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from wasmsched.util.intbounds import INT64_MAX

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.api.gvr import GroupVersionResource
    from wasmsched.api.labels import Selector
    from wasmsched.api.types import Pod
    from wasmsched.framework.nodetable import NodeColumns
    from wasmsched.framework.snapshot import Snapshot
    from wasmsched.framework.watched import WatchedObjects
    from wasmsched.metrics.metrics import SchedulerMetrics

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

MAX_TOTAL_SCORE = INT64_MAX


class NodeBatch:
    """The nodes one batch form answers for, in order: their NodeInfos and, when the snapshot keeps a node
    table (framework/nodetable.py), their rows in it (`columns`, None otherwise). Read only."""

    __slots__ = ("columns", "node_infos")

    def __init__(self, node_infos: Sequence[NodeInfo], columns: NodeColumns | None = None) -> None:
        self.node_infos = node_infos
        self.columns = columns

    def __len__(self) -> int:
        return len(self.node_infos)

    def without(self, positions: Iterable[int]) -> NodeBatch:
        """The batch less the nodes at `positions`."""
        keep = [True] * len(self.node_infos)
        for i in positions:
            keep[i] = False
        columns = self.columns
        if columns is not None:
            import numpy as np  # loaded with the node table

            columns = columns.take(np.array(keep, dtype=np.bool_))
        return NodeBatch(list(compress(self.node_infos, keep)), columns)


# FilterPlugin.filter_batch's answer: the positions in the batch of the nodes the plugin rejects, and their
# statuses (what `filter` returns for each); the nodes not in it pass. Empty: every node passes.
FilterVerdicts: TypeAlias = Mapping[int, Status]


def verdicts_of(statuses: Iterable[Status | None]) -> dict[int, Status]:
    """FilterVerdicts of per-node statuses in batch order: the positions and statuses of those not Success."""
    return {i: st for i, st in enumerate(statuses) if st is not None and st.code != Code.SUCCESS}


# ScorePlugin.score_batch's scores: one per node of the batch, in order (a list or an int64 array).
BatchScores: TypeAlias = "Sequence[int] | NDArray[np.int64]"


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


@dataclass(frozen=True, slots=True)
class PodCondition:
    """A pod condition the scheduler writes (v1.PodCondition's fields it sets)."""

    type: str
    status: str
    reason: str
    message: str


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
            self._scores = [PluginScore(n, v) for n, v in zip(self._names, self._values, strict=True)]
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

    def has(self, node_name: str) -> bool:
        """Whether the node has an explicit status (it was evaluated)."""
        return node_name in self.node_to_status

    def len(self) -> int:
        return len(self.node_to_status)

    def items(self) -> Iterable[tuple[str, Status]]:
        return self.node_to_status.items()

    def nodes_for_status_code(self, lister: Snapshot, code: Code) -> list[NodeInfo]:
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


class IncompletePluginError(TypeError):
    """A plugin class extends an extension point but leaves a method of it unimplemented.

    Raised when such a class is instantiated (and by `check_extension_points`), so a profile using
    the plugin fails when the framework is built instead of at the first call.
    """

    def __init__(self, cls: type, missing: Sequence[tuple[type, str]]) -> None:
        self.cls = cls
        self.missing = list(missing)
        parts = []
        for iface, method in self.missing:
            point = iface.__name__.removesuffix("Plugin")
            where = f"the {point} extension point" + (f" ({iface.__name__})" if point != iface.__name__ else "")
            parts.append(f"{method}() of {where}")
        super().__init__(f"{cls.__qualname__} does not implement {'; '.join(parts)}")


class Plugin(ABC):  # noqa: B024 - the extension-point subclasses declare the abstract methods; ABC gives them ABCMeta
    """Base of every plugin. `name` is the name it is registered and configured under.

    A plugin subclasses the extension-point classes below that it implements; the framework finds
    them with isinstance once, when it is built. Each extension-point class marks the methods a
    plugin must implement with @abstractmethod: a class that leaves one of them unimplemented cannot
    be instantiated (IncompletePluginError names the class, the extension point and the method).
    The other methods have a default that plugins may override.
    """

    name: str = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if cls.__abstractmethods__:
            missing = unimplemented_methods(cls)
            if missing:
                raise IncompletePluginError(cls, missing)
        return super().__new__(cls)


class PreEnqueuePlugin(Plugin):
    """PreEnqueue: gates a pod before it enters the active (or backoff) queue.

    Runs whenever the queue is about to make the pod schedulable: when the pod is added, and every
    time it is requeued after an event. It runs outside any scheduling cycle, under the queue's lock,
    so it must be cheap (no remote calls) and should not rely on the snapshot (it may be stale).
    """

    @abstractmethod
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """None/Success: the pod may be scheduled. Any other status keeps the pod out of the active
        queue, gated by this plugin, until an event this plugin registered (EnqueueExtensions) lets
        it be requeued; the remaining PreEnqueue plugins do not run. Unschedulable,
        UnschedulableAndUnresolvable and Pending are ordinary rejections; Error (or Skip, which
        means nothing here) gates the pod too and is logged as an error. The pod must not be
        modified."""
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    """QueueSort: the order of the active queue. Exactly one is enabled in a profile, and every
    profile must use the same one (the queue is shared)."""

    @abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True when `a` must be scheduled before `b`: a strict weak ordering, without side effects.
        Called under the queue's lock; neither argument may be modified."""
        raise NotImplementedError


@runtime_checkable
class QueueSortKey(Protocol):
    """Optional for a QueueSort plugin: when every profile's QueueSort plugin is of one class that has it,
    the queue orders by the key (tuple comparisons in C) instead of calling `less`."""

    def sort_key(self, qpi: QueuedPodInfo) -> Any:
        """A value whose `<` is `less` (less(a, b) == sort_key(a) < sort_key(b)) and which does not change
        while the pod is queued."""
        ...


class EnqueueExtensions(Plugin):
    """Which cluster events may make a pod this plugin rejected schedulable again.

    Only plugins that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve, Permit) are asked;
    any other plugin implementing this is ignored. Such a plugin without EnqueueExtensions is
    registered for every event, so pods it rejected are retried after any change.
    """

    @abstractmethod
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Called once, when the scheduler is built; the result must not depend on the cluster's
        state. Each event may carry a queueing hint `fn(pod, old_obj, new_obj) -> QueueingHint`
        that the queue calls for the pods this plugin rejected: QUEUE requeues the pod, QUEUE_SKIP
        leaves it unschedulable; a hint that raises counts as QUEUE. An exception here registers the
        plugin for every event (and is logged). An empty list means no event ever requeues the pods
        this plugin rejected: very likely a mistake."""
        raise NotImplementedError


class PreFilterExtensions(Protocol):
    """Incremental updates of the state a PreFilter plugin computed, for preemption and nominated
    pods: what the state would be with a pod added to or removed from a node.

    Called only after the plugin's PreFilter ran in this cycle (never when it returned Skip), on a
    clone of the CycleState and of the NodeInfo (which already has the pod added or removed),
    possibly several times for one node before Filter runs on it. Update only the plugin's own data
    in `state`; `node_info` and the pods must not be modified. Any status other than Success is an
    Error for the caller (the preemption attempt or the node's filtering fails)."""

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None: ...


class PreFilterPlugin(Plugin):
    """PreFilter: runs once at the start of a pod's scheduling cycle, before any Filter."""

    @abstractmethod
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        """Computes what the plugin's Filter/Score need (write it to `state`) and may narrow the
        candidates: a PreFilterResult with node_names restricts Filter to those nodes (results of
        all plugins are intersected); the other nodes count as UnschedulableAndUnresolvable, so
        preemption does not consider them either. None (or node_names None) keeps every node.

        `nodes` are all nodes of the snapshot. Statuses:
        - None/Success: continue.
        - Skip: the result is ignored, and this plugin's Filter and PreFilterExtensions are skipped
          for the rest of the cycle.
        - Unschedulable: the pod is unschedulable this cycle; the other PreFilter plugins still run
          (preemption, which runs next, needs their state).
        - UnschedulableAndUnresolvable: the pod is unschedulable and no further PreFilter runs;
          preemption cannot help on any node.
        - anything else (Error, Pending, Wait): the cycle fails with an Error; the pod is retried
          after backoff. An exception is an Error too.
        The pod and the NodeInfos must not be modified."""
        raise NotImplementedError

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The plugin's AddPod/RemovePod (usually `self`), or None when its state needs no update
        when pods are added or removed (the default)."""
        return None


class FilterPlugin(Plugin):
    """Filter: decides whether the pod can run on one node. Called for each candidate node (in
    batches through `filter_batch`), in the configured plugin order; a node is dropped at the first
    plugin that does not return Success, and the remaining plugins do not see it."""

    @abstractmethod
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """None/Success: the pod fits `node_info`. Otherwise:
        - Unschedulable: not on this node; preemption may make room here.
        - UnschedulableAndUnresolvable: not on this node, and preemption would not change that.
        - Pending: rejected like Unschedulable; the pod is requeued without backoff when an event
          this plugin registered arrives.
        - Error: the whole scheduling cycle fails (the pod is retried after backoff). Any other code
          (Skip, Wait) and any exception become an Error.
        Not called when this plugin's PreFilter returned Skip in this cycle.

        Look at the pods on the node through `node_info`, not the snapshot: with nominated pods or
        during preemption it is a modified clone (pods added or removed). `node_info` is otherwise
        the snapshot's shared object; neither it, the pod nor `state` may be modified (read what
        PreFilter wrote; `state` may be a clone)."""
        raise NotImplementedError

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        """Batch form: `filter` for every node of the batch at once, as FilterVerdicts (the rejected nodes'
        positions and statuses). The default asks `filter` node by node; a plugin may answer faster (one
        check per distinct value of what the answer depends on, the node table's columns), but the
        statuses must be `filter`'s. An exception, or a position outside the batch, fails every node of the
        batch with an Error."""
        return verdicts_of(self.filter(state, pod, ni) for ni in batch.node_infos)


class PostFilterPlugin(Plugin):
    """PostFilter: runs when no node fits the pod (PreFilter or Filter rejected it everywhere), in
    the configured order, typically to make room by preemption. The pod stays unschedulable in this
    cycle whatever the outcome; PostFilter can only prepare a later one."""

    @abstractmethod
    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """`filtered_node_status_map` has every node's status from PreFilter/Filter (nodes not
        listed take its absent_nodes_status); it may contain only UnschedulableAndUnresolvable nodes,
        which a preemption plugin must skip itself.
        - None/Success: done; no further PostFilter runs. A result with nominating_info (mode
          OVERRIDE) nominates that node for the pod.
        - Unschedulable (or Pending): this plugin could not help; the next one runs (an
          informational plugin goes first and always returns this). A nominating result is still
          remembered.
        - UnschedulableAndUnresolvable: stop; the remaining PostFilter plugins do not run.
        - Error (anything else, or an exception): stop; the error is logged.
        The pod and the nodes must not be modified; changes to the cluster go through the client."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    """PreScore: runs once per cycle before Score, with the nodes that passed Filter. Not run when
    only one node is feasible, or when the profile has no Score plugin (nothing is scored then)."""

    @abstractmethod
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Computes what Score needs (write it to `state`).
        - None/Success: continue.
        - Skip: this plugin's Score is skipped in this cycle.
        - anything else (rejections included) or an exception: the cycle fails with an Error.
        The pod and the NodeInfos must not be modified."""
        raise NotImplementedError


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """Called once per cycle with all the scores this plugin's Score gave (one NodeScore per
        node, in node order); updates `scores` in place, each into [MIN_NODE_SCORE, MAX_NODE_SCORE].
        Any status other than Success (or an exception) fails the cycle with an Error."""
        ...


class ScorePlugin(Plugin):
    """Score: ranks the feasible nodes. A node's total is the sum over Score plugins of the
    (normalized) score times the plugin's weight; the highest total wins, ties broken at random."""

    @abstractmethod
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The node's score and a status. Without ScoreExtensions the score must already be in
        [MIN_NODE_SCORE, MAX_NODE_SCORE], otherwise the cycle fails. Any status other than Success
        (rejections and Skip included) or an exception fails the cycle with an Error. Not called
        when this plugin's PreScore returned Skip. The pod, `node_info` (shared with the snapshot)
        and `state` must not be modified."""
        raise NotImplementedError

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        """Batch form: `score` for every node of the batch at once, one raw score per node in order (before
        NormalizeScore, which the framework runs after it); on a non-success status the scores are
        ignored. The default asks `score` node by node. An exception or scores of another count are the
        cycle's Error."""
        out = []
        for ni in batch.node_infos:
            s, st = self.score(state, pod, ni)
            if not_success(st):
                return [], st
            out.append(s)
        return out, None

    def score_extensions(self) -> ScoreExtensions | None:
        """The plugin's NormalizeScore (usually `self`), or None when its scores need no
        normalization (the default)."""
        return None

    def normalize_score_batch(self, state: CycleState, pod: Pod,
                              scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        """Batch form of the NormalizeScore of `score_extensions()` (optional), for scores `score_batch`
        gave as an array: the normalized scores as a new array, what `normalize_score` makes of them. None
        (the default): `normalize_score` over the nodes' NodeScores. An exception or scores of another
        count are the cycle's Error."""
        return None


class ReservePlugin(Plugin):
    """Reserve/Unreserve: keep a plugin's own bookkeeping in step with the pods it placed.

    Reserve runs once the scheduler has chosen a node and assumed the pod there (the cache counts it
    on the node); Unreserve undoes it if the pod does not end up bound.
    """

    @abstractmethod
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """`pod` is the assumed copy (spec.nodeName is `node_name`). Plugins run in order; at the
        first failure the rest do not run, Unreserve runs for every Reserve plugin and the pod is
        forgotten. Unschedulable, UnschedulableAndUnresolvable and Pending reject the pod (it is
        requeued for this plugin's events); anything else (Error, Skip, Wait, an exception) is an
        Error and the pod is retried after backoff. Do not modify `pod`."""
        raise NotImplementedError

    @abstractmethod
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undoes Reserve: called, in reverse plugin order, when Reserve or Permit fails, when the
        pod is rejected or times out while waiting on Permit, and when PreBind or Bind fails (then
        in the binding cycle, possibly on another thread). Must be idempotent and may be called
        even if this plugin's Reserve was not (an earlier one failed). Exceptions are logged."""
        raise NotImplementedError


class PermitPlugin(Plugin):
    """Permit: the last step of the scheduling cycle (after Reserve): allows, rejects or delays
    the binding of the pod to the chosen node."""

    @abstractmethod
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Returns (status, timeout in seconds); the timeout matters only with Wait.
        - None/Success: allowed by this plugin.
        - Wait: the pod waits (after the remaining Permit plugins ran and none rejected it) until
          this plugin calls `allow(name)` on it (Handle.get_waiting_pod), someone rejects it, or
          the timeout passes (capped at 15 minutes; a timeout rejects the pod as Unschedulable).
          The binding cycle starts only when every waiting plugin allowed it.
        - Unschedulable, UnschedulableAndUnresolvable, Pending: the pod is rejected at once; no
          further Permit runs; Unreserve runs.
        - anything else (Error, Skip, an exception): an Error; Unreserve runs.
        Do not modify `pod` (the assumed copy)."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    """PreBind: work that must happen before the pod is bound (e.g. provisioning). Runs in the
    binding cycle, possibly on a binding thread, after every Permit plugin allowed the pod.

    kube-scheduler's PreBindPreFlight is not modelled: every PreBind plugin runs for every pod (a
    plugin with nothing to do returns Success)."""

    @abstractmethod
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """None/Success: continue with the next PreBind plugin, then Bind. Unschedulable,
        UnschedulableAndUnresolvable or Pending reject the pod; anything else (Error, Skip, an
        exception) is an Error; either way the pod is not bound, Unreserve runs and the pod is
        requeued. The snapshot may change while this runs: use the pod, `state` and the client."""
        raise NotImplementedError


class BindPlugin(Plugin):
    """Bind: binds the pod to the node, after every PreBind plugin succeeded. Plugins are tried in
    the configured order; the first that does not return Skip handles the pod."""

    @abstractmethod
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """- Skip: this plugin does not handle the pod; the next Bind plugin is tried. When every
          plugin skips, binding fails with an Error.
        - None/Success: bound; the remaining Bind plugins are not called.
        - Unschedulable, UnschedulableAndUnresolvable, Pending: the pod is rejected; anything else
          (Error, an exception) is an Error. Either way Unreserve runs and the pod is requeued."""
        raise NotImplementedError


class PostBindPlugin(Plugin):
    """PostBind: informational, after the pod was bound (e.g. to clean up state kept for it)."""

    @abstractmethod
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Called for each PostBind plugin in order; nothing it does changes the outcome
        (exceptions are logged)."""
        raise NotImplementedError


# The extension-point classes, whose abstract methods a plugin extending them must implement.
@dataclass(frozen=True, slots=True)
class ExtensionPoint:
    """One extension point as configuration names it and as plugins implement it."""

    attr: str  # the field of config.Plugins / ProfilePlugins
    key: str  # the YAML key in KubeSchedulerConfiguration's `plugins`
    interface: type[Plugin] | None  # None for multiPoint, which enables a plugin at all it implements


# In the order of config.Plugins, which is the order kube-scheduler's mergePlugins walks them.
EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint("multi_point", "multiPoint", None),
    ExtensionPoint("pre_enqueue", "preEnqueue", PreEnqueuePlugin),
    ExtensionPoint("queue_sort", "queueSort", QueueSortPlugin),
    ExtensionPoint("pre_filter", "preFilter", PreFilterPlugin),
    ExtensionPoint("filter", "filter", FilterPlugin),
    ExtensionPoint("post_filter", "postFilter", PostFilterPlugin),
    ExtensionPoint("pre_score", "preScore", PreScorePlugin),
    ExtensionPoint("score", "score", ScorePlugin),
    ExtensionPoint("reserve", "reserve", ReservePlugin),
    ExtensionPoint("permit", "permit", PermitPlugin),
    ExtensionPoint("pre_bind", "preBind", PreBindPlugin),
    ExtensionPoint("bind", "bind", BindPlugin),
    ExtensionPoint("post_bind", "postBind", PostBindPlugin),
)

# Every class a plugin may implement: the extension points' interfaces, and EnqueueExtensions where
# kube's interface.go has it (after QueueSort), which is the order missing methods are reported in.
_INTERFACES = tuple(ep.interface for ep in EXTENSION_POINTS if ep.interface is not None)
EXTENSION_POINT_CLASSES: tuple[type[Plugin], ...] = (*_INTERFACES[:2], EnqueueExtensions, *_INTERFACES[2:])


def unimplemented_methods(cls: type) -> list[tuple[type[Plugin], str]]:
    """(extension-point class, method) for every required method that `cls` claims, by subclassing
    (or registering with) an extension-point class, but does not implement."""
    missing: list[tuple[type[Plugin], str]] = []
    for iface in EXTENSION_POINT_CLASSES:
        if not issubclass(cls, iface):
            continue
        for method in sorted(iface.__abstractmethods__):
            impl = getattr(cls, method, None)
            if not callable(impl) or getattr(impl, "__isabstractmethod__", False):
                missing.append((iface, method))
    return missing


def check_extension_points(plugin: object) -> None:
    """Raises IncompletePluginError if `plugin` claims an extension point without implementing it.

    Instantiation already refuses such classes; the framework calls this on every plugin it builds
    so that no object gets past it another way (a class registered with an extension-point ABC).
    """
    missing = unimplemented_methods(type(plugin))
    if missing:
        raise IncompletePluginError(type(plugin), missing)


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

    # True when whatever reacts to a write (the embedded cluster's emulated controllers) has acted by the
    # time the write returns: a plugin waiting for another actor (VolumeBinding's PreBind) need not wait
    # in real time, as nothing more will happen. False for an API server.
    settles_synchronously: bool

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The current object (the informer cache's view); None when the pod no longer exists."""
        ...

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def delete_pod(self, pod: Pod, reason: str) -> None: ...

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None: ...

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        """Written before this returns (preemption's DisruptionTarget comes before the victim's deletion)."""
        ...

    def update_pod_status(self, pod: Pod, condition: PodCondition | None, nominating: NominatingInfo | None) -> None:
        """kube's updatePod after a failed attempt: the condition and the nomination (when its mode is
        Override) in one status write, nothing when nothing changes. May be written after this returns (a
        real API server's writes go through the API dispatcher); a failure is logged, not raised."""
        ...

    def list_pod_disruption_budgets(self) -> list[Any]: ...

    def get_namespace_labels(self, namespace: str) -> Mapping[str, str] | None: ...

    def list_in_namespace(self, kind: str, namespace: str) -> list[Any]:
        """The objects of one kind in one namespace, as the informer cache holds them (kube's listers'
        `X(namespace).List(labels.Everything())`). Kinds: "Service", "ReplicationController",
        "ReplicaSet", "StatefulSet"; empty when there are none. Read only."""
        ...

    def get_object(self, kind: str, key: str) -> Any | None:
        """One object of any kind of wasmsched.api.kinds.RESOURCES by its key ("namespace/name", or
        "name" when cluster-scoped), as the informer cache holds it (a lister's Get); None when absent.
        Read only: copy before changing it."""
        ...

    def list_objects(self, kind: str) -> list[Any]:
        """Every object of one kind, as the informer cache holds it (a lister's List). Read only."""
        ...

    def update_object(self, obj: Any, subresource: str = "") -> Any:
        """Replaces an object (PUT, or PUT of its "status" subresource), as the volume binder's and the
        DRA plugin's PreBind writes do; the object's resourceVersion guards against lost updates
        (ConflictError when it is stale). Returns the object as stored."""
        ...


# The framework's own hooks, optional for any plugin (the wasm plugin has them: its pool pins a guest
# instance to a pod from PreFilter to the end of its binding cycle). The framework finds the plugins that
# implement each one when it is built.


@runtime_checkable
class SchedulingCycleObserver(Protocol):
    def scheduling_cycle_done(self, pod: Pod, succeeded: bool) -> None:
        """The pod's scheduling cycle ended: `succeeded` when the pod was assumed and its binding cycle
        follows, False when it failed (after Unreserve, if it got that far)."""
        ...


@runtime_checkable
class BindingCycleObserver(Protocol):
    def binding_cycle_done(self, pod: Pod) -> None:
        """The pod's binding cycle ended (bound, or failed after Unreserve)."""
        ...


@runtime_checkable
class PodDeletionObserver(Protocol):
    def pod_deleted(self, pod: Pod) -> None:
        """A pod of the profile was deleted: release whatever is held for it."""
        ...


@runtime_checkable
class Closer(Protocol):
    def close(self) -> None:
        """The scheduler is shutting down."""
        ...


class PodNominator(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class PodActivator(Protocol):
    def activate(self, pods: Iterable[Pod]) -> None:
        """Moves each pod that is in the backoff queue or among the unschedulable pods to the active
        queue (kube's PodActivator.Activate); a pod being scheduled is activated if its attempt fails."""
        ...


class PodLister(Protocol):
    def list(self, namespace: str, selector: Selector) -> list[Pod]:
        """The pods of `namespace` ("": every namespace) that `selector` selects, scheduled or not, of any
        scheduler, in namespace/name order (kube's pod lister, `Pods(namespace).List(selector)`). Read only."""
        ...


class Handle(Protocol):
    """What plugins get from the framework (framework.Handle): passed to the plugin factory, to be
    kept by the plugin. One Handle per profile (the Framework itself)."""

    # The scheduler's clock (seconds; time.monotonic in `run`, the simulated clock in `simulate`).
    clock: Callable[[], float]

    def snapshot_shared_lister(self) -> Snapshot:
        """The NodeInfo snapshot, brought up to date at the start of each scheduling cycle and
        unchanged until the cycle ends (after Permit). Use it only in the scheduling cycle: in the
        binding cycle (PreBind, Bind, PostBind, Unreserve) the next cycle may be updating it, and in
        PreEnqueue and queueing hints it may be stale. Read only."""
        ...

    def client(self) -> ClusterClient:
        """Where the cluster's objects live (the API server or the embedded cluster): the way to
        change them (bind, delete victims, set conditions) and to read their current state."""
        ...

    def event_recorder(self) -> EventRecorder: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod waiting on Permit with this key (its uid, or namespace/name without one); a
        Permit plugin that returned Wait calls `allow` or `reject` on it."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Rejects the waiting pod (Unschedulable); False when no pod with this key is waiting."""
        ...

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None: ...

    def pod_nominator(self) -> PodNominator:
        """The pods nominated to nodes (by preemption) that are not bound yet."""
        ...

    def activate(self, pods: Iterable[Pod]) -> None:
        """kube's Handle.Activate (PodActivator)."""
        ...

    def pod_lister(self) -> PodLister:
        """Every pod the scheduler's informer holds (kube's SharedInformerFactory().Core().V1().Pods().Lister())."""
        ...

    def parallelize_until(self, pieces: int, fn: Callable[[int], None]) -> None:
        """Calls fn(0) .. fn(pieces-1); here one after another, on the calling thread."""
        ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        """AddPod of every PreFilter plugin with extensions (except those that returned Skip): for
        a preemption plugin simulating `pod_info_to_add` on `node_info` (a clone it already added
        the pod to) with a cloned `state`. The first failure is returned as an Error."""
        ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo,
                                            node_info: NodeInfo) -> Status | None:
        """RemovePod counterpart of run_pre_filter_extension_add_pod."""
        ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        """Every Filter plugin on `node_info`, first with the pods nominated to the node that have
        the same or a higher priority added (on clones of `node_info` and `state`), then, if that
        passed and some were added, without them. The status of the first plugin that failed."""
        ...

    def profile_name(self) -> str: ...

    def watched_objects(self, watch: Sequence[GroupVersionResource]) -> WatchedObjects:
        """Declares the resources a plugin reads besides pods and nodes (a wasm plugin's `args.watch`,
        docs/abi.md §14.2) and returns its view of their current objects as JSON. Call it in the plugin's
        factory: the backends fill what was declared when the scheduler starts (`run` starts an informer
        for each resource). Reading a resource not in `watch` raises ResourceNotWatchedError."""
        ...

    def scheduler_metrics(self) -> SchedulerMetrics | None:
        """Where kube-scheduler's metrics are recorded (preemption attempts and victims, wasm guest
        calls); None when the scheduler records none."""
        ...


# PluginFactory: (args, handle) -> Plugin. `args` are what the profile's pluginConfig gives the
# plugin, as the config loader decoded them: for an in-tree plugin that has args in kube-scheduler,
# an instance of its args class (config.args; factories take them with config.args.get_args, which
# also accepts None for the v1 defaults and a dict of YAML args); for other plugins the YAML value
# as written, or None. Plugins without args ignore them, as kube-scheduler's do.
PluginFactory = Callable[[Any, Handle], Plugin]
