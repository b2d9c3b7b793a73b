"""NodeAffinity (nodeaffinity/node_affinity.go): PreFilter, Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.nodeaffinity import NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.types import Node, Pod
from wasmsched.config.args import NodeAffinityArgs
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    BatchScores,
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdicts,
    Handle,
    NodeBatch,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.columns import by_label_projection, by_node_labels
from wasmsched.plugins.helper.nodefacts import (
    LabelsAndFields,
    node_selector_matches,
    preferred_terms_score,
    required_node_affinity_matches,
)
from wasmsched.plugins.helper.normalize_score import default_normalize_score, normalized
from wasmsched.plugins.helper.objects import as_update

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NAME = "NodeAffinity"
# Status.unresolvable(reason), built directly in per-node loops.
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
PRE_SCORE_STATE_KEY = "PreScore" + NAME
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

OBJECT_NAME_FIELD = "metadata.name"


class _PreFilterState:
    __slots__ = ("required",)

    def __init__(self, required: RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:
        # Unaffected by pod additions or removals.
        return self


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredSchedulingTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self


class _LabelFacts:
    """What the nodefacts matchers read of a node, for a set of labels: matchFields are never read (the
    batch forms leave selectors with matchFields to the per-node function, node by node)."""

    __slots__ = ("fields", "labels")

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self.fields: dict[str, str] = {}


def _filter_reason(added: NodeSelectorMatcher | None, required: RequiredNodeAffinity, f: LabelsAndFields) -> str | None:
    """Filter's answer for a node (its facts: labels and fields): None when it fits, else the reason; what
    `filter` returns for a node, and what its batch forms compute once per distinct set of the values of the
    labels the selectors read. Parse errors never match (kube ignores them here for backwards compatibility)."""
    if added is not None and not node_selector_matches(added, f):
        return ERR_REASON_ENFORCED
    if not required_node_affinity_matches(required, f):
        return ERR_REASON_POD
    return None


def _score_count(added: PreferredSchedulingTerms | None, preferred: PreferredSchedulingTerms | None,
                 f: LabelsAndFields) -> int:
    """Score's raw score for a node (its facts): the weights of the matching preferred terms, the scheduler's
    (addedAffinity) and the pod's; what `score` returns for a node, and what its batch forms compute once per
    distinct set of the values of the labels the terms read."""
    count = 0
    if added is not None:
        count += preferred_terms_score(added, f)
    if preferred is not None:
        count += preferred_terms_score(preferred, f)
    return count


def _needs_name(keys: set[str], selector: Any) -> bool:
    """Adds the label keys `selector` (a RequiredNodeAffinity, NodeSelectorMatcher, PreferredSchedulingTerms
    or None) reads to `keys`; True when its answer may depend on the node name (matchFields)."""
    if selector is None:
        return False
    if isinstance(selector, RequiredNodeAffinity):
        if selector.label_selector is not None:
            keys.update(r.key for r in selector.label_selector.requirements)
        return _needs_name(keys, selector.node_selector)
    terms = [t.term for t in selector.terms] if isinstance(selector, PreferredSchedulingTerms) else selector.terms
    for term in terms:
        if term.match_fields:
            return True
        if term.match_labels is not None:
            keys.update(r.key for r in term.match_labels.requirements)
    return False


def _label_keys(*selectors: Any) -> list[str] | None:
    """The label keys the selectors read (see _needs_name), sorted; None when an answer may depend on the node's
    name, which leaves the batch forms to ask node by node."""
    keys: set[str] = set()
    for selector in selectors:
        if _needs_name(keys, selector):
            return None
    return sorted(keys)


def _aggregate(errors: Sequence[str]) -> str:
    # utilerrors.NewAggregate: one message alone, several as "[a, b]".
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _required_node_selector(pod: Pod) -> Any | None:
    spec = pod.spec
    if spec.HasField("affinity") and spec.affinity.HasField("nodeAffinity"):
        na = spec.affinity.nodeAffinity
        if na.HasField("requiredDuringSchedulingIgnoredDuringExecution"):
            return na.requiredDuringSchedulingIgnoredDuringExecution
    return None


def _pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | Status | None:
    """The pod's compiled preferred terms, None without any, or an Error status on parse errors."""
    spec = pod.spec
    if not (spec.HasField("affinity") and spec.affinity.HasField("nodeAffinity")):
        return None
    terms = spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution
    if not terms:
        return None
    compiled = PreferredSchedulingTerms.compile(terms)
    if compiled.errors:
        return Status.error(_aggregate(compiled.errors))
    return compiled


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: NodeAffinityArgs, handle: Handle | None = None) -> None:
        self.handle = handle
        self.args = args
        self.added_node_selector: NodeSelectorMatcher | None = None
        self.added_pref_sched_terms: PreferredSchedulingTerms | None = None
        added = args.added_affinity
        if added is not None:
            if added.HasField("requiredDuringSchedulingIgnoredDuringExecution"):
                sel = NodeSelectorMatcher.compile(added.requiredDuringSchedulingIgnoredDuringExecution)
                if sel.errors():
                    raise ValueError(
                        "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                        + _aggregate(sel.errors())
                    )
                self.added_node_selector = sel
            if added.preferredDuringSchedulingIgnoredDuringExecution:
                pref = PreferredSchedulingTerms.compile(added.preferredDuringSchedulingIgnoredDuringExecution)
                if pref.errors:
                    raise ValueError(
                        "parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                        + _aggregate(pref.errors)
                    )
                self.added_pref_sched_terms = pref

    # --- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Queueing hints are always on in 1.37, so UpdateNodeTaint is not registered.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_update(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        if self.added_node_selector is not None and not self.added_node_selector.match(modified):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.from_pod(pod)
        if not required.match(modified):
            return QueueingHint.QUEUE_SKIP
        if original is None:
            # A new node matching the pod's affinity.
            return QueueingHint.QUEUE
        # An update: only an unmatched -> matched change helps.
        if required.match(original):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        required_selector = _required_node_selector(pod)
        if required_selector is None and self.added_node_selector is None and not pod.spec.nodeSelector:
            # Filter has nothing to do with this pod.
            return None, Status.skip()

        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(RequiredNodeAffinity.from_pod(pod)))

        if required_selector is None or not required_selector.nodeSelectorTerms:
            return None, None

        # Narrow the candidates when every term pins node names through matchFields.
        node_names: set[str] | None = None
        for term in required_selector.nodeSelectorTerms:
            term_node_names: set[str] | None = None
            for r in term.matchFields:
                if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                    # Requirements within a term are ANDed: intersect.
                    values = set(r.values)
                    term_node_names = values if term_node_names is None else term_node_names & values
            if term_node_names is None:
                # A term without a node name requirement admits every node (terms are ORed).
                return None, None
            node_names = term_node_names if node_names is None else node_names | term_node_names
        if node_names is not None and not node_names:
            # Every term has conflicting node names: no node can match.
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            return s.required
        # PreFilter did not run (disabled): compute it here.
        return RequiredNodeAffinity.from_pod(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return None
        reason = _filter_reason(self.added_node_selector, self._required(state, pod), node_facts(node_info, node))
        return None if reason is None else Status.unresolvable(reason)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        added = self.added_node_selector
        required = self._required(state, pod)
        keys = _label_keys(added, required)
        if keys is None:
            # _filter_reason node by node (PreFilter's state read once).
            reasons: Sequence[str | None] = [
                _filter_reason(added, required, node_facts(ni, ni.node)) if ni.node is not None else None
                for ni in batch.node_infos]
            return {i: Status(_UNRESOLVABLE, [r]) for i, r in enumerate(reasons) if r is not None}

        # The answer depends on the values of the labels `keys` only: _filter_reason once per distinct set of them.
        def reason(labels: dict[str, str]) -> str | None:
            return _filter_reason(added, required, _LabelFacts(labels))

        if batch.columns is None:
            reasons = by_node_labels(batch.node_infos, keys, reason)
            return {i: Status(_UNRESOLVABLE, [r]) for i, r in enumerate(reasons) if r is not None}
        import numpy as np

        answers, which = by_label_projection(batch.columns, keys, reason)
        rejects = np.array([r is not None for r in answers], dtype=np.bool_)
        if not rejects.any():
            return {}
        return {i: Status(_UNRESOLVABLE, [answers[which[i]]]) for i in np.flatnonzero(rejects[which]).tolist()}

    # --- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred = _pod_preferred_node_affinity(pod)
        if isinstance(preferred, Status):
            return preferred
        if preferred is None and self.added_pref_sched_terms is None:
            # Score has nothing to do with this pod.
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def _preferred(self, state: CycleState, pod: Pod) -> PreferredSchedulingTerms | Status | None:
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except NotFoundError:
            # PreScore did not run (disabled): compute it here.
            return _pod_preferred_node_affinity(pod)
        if not isinstance(s, _PreScoreState):
            return Status.error(f"invalid PreScore state, got type {type(s).__name__}")
        return s.preferred

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        if node is None:
            return 0, None
        preferred = self._preferred(state, pod)
        if isinstance(preferred, Status):
            return 0, preferred
        return _score_count(self.added_pref_sched_terms, preferred, node_facts(node_info, node)), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        preferred = self._preferred(state, pod)
        if isinstance(preferred, Status):
            return [], preferred
        added = self.added_pref_sched_terms
        keys = _label_keys(added, preferred)
        if keys is None:
            # _score_count node by node (PreScore's state read once).
            return [_score_count(added, preferred, node_facts(ni, ni.node)) if ni.node is not None else 0
                    for ni in batch.node_infos], None

        # The count depends on the values of the labels `keys` only: _score_count once per distinct set of them.
        def count(labels: dict[str, str]) -> int:
            return _score_count(added, preferred, _LabelFacts(labels))

        if batch.columns is None:
            return [0 if c is None else c for c in by_node_labels(batch.node_infos, keys, count)], None
        import numpy as np

        answers, which = by_label_projection(batch.columns, keys, count)
        counts: NDArray[np.int64] = np.array(answers, dtype=np.int64)[which]
        return counts, None

    def normalize_score_batch(self, state: CycleState, pod: Pod,
                              scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        if len(scores) and scores.min() < 0:
            return None  # negative weights: Go's truncating division, per node
        import numpy as np

        return normalized(np, scores)

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)
