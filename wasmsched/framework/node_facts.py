"""Plain-Python copies of what Filter and Score read from a node object, made once per node version.

Reading a protobuf field costs a few hundred nanoseconds (`node.spec.taints`, a label lookup in
`node.metadata.labels`), which dominates per-node loops over thousands of nodes. The copies are
kept in the NodeInfo's memo, which is replaced whenever the node object changes; the `node`
reference is also compared, so a NodeInfo whose `node` was swapped some other way is never
served stale facts. The node table (`framework/nodetable.py`) and the plugins read the same copy.
"""

from __future__ import annotations

from wasmsched.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
)
from wasmsched.api.types import Node, Taint
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.types import NodeInfo

TaintKey = tuple[tuple[str, str, str], ...]


class NodeFacts:
    """Read-only facts of one node object."""

    __slots__ = (
        "do_not_schedule_key",
        "do_not_schedule_taints",
        "fields",
        "labels",
        "node",
        "prefer_no_schedule_key",
        "prefer_no_schedule_taints",
        "taints",
        "taints_key",
        "unschedulable",
    )

    def __init__(self, node: Node) -> None:
        self.node = node
        self.labels: dict[str, str] = dict(node.metadata.labels)
        name = node.metadata.name
        # The field set node affinity's matchFields sees (only a non-empty metadata.name).
        self.fields: dict[str, str] = {"metadata.name": name} if name else {}
        self.taints: tuple[Taint, ...] = tuple(node.spec.taints)
        # All taints by (key, value, effect): equal keys are equal taint lists (the node table's taint ids).
        self.taints_key: TaintKey = tuple((t.key, t.value, t.effect) for t in self.taints)
        # The taints Filter checks (NoSchedule, NoExecute), in the node's order.
        self.do_not_schedule_taints = tuple(
            t for t in self.taints if t.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE))
        self.prefer_no_schedule_taints = tuple(t for t in self.taints if t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE)
        # What toleration checks read of the taints: equal keys give equal answers.
        self.do_not_schedule_key: TaintKey = tuple((t.key, t.value, t.effect) for t in self.do_not_schedule_taints)
        self.prefer_no_schedule_key: TaintKey = tuple(
            (t.key, t.value, t.effect) for t in self.prefer_no_schedule_taints)
        self.unschedulable = bool(node.spec.unschedulable)


def node_facts(ni: NodeInfo, node: Node) -> NodeFacts:
    """The facts of `node`, which must be `ni.node`: made once per node object and kept in the NodeInfo's
    memo (shared by its clones, replaced with the node object), for the node table and the plugins alike."""
    memo = ni.memo()
    f = memo.get(FACTS_KEY)
    if f is None or f.node is not node:
        f = NodeFacts(node)
        memo[FACTS_KEY] = f
    return f


# The facts' entry in NodeInfo.memo(); hot loops may read it directly, checking `.node`.
FACTS_KEY: MemoKey[NodeFacts] = MemoKey("node_facts")
