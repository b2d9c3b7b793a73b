"""The guest call as the imports see it: the per-call values of docs/abi.md §4.2 (`CallContext`) and
the instance whose call runs on this thread (`RunningInstance`).

The instance (wasm/instance.py) sets both; the imports (wasm/host.py, WASI's wasm/wasi.py) read the
values and record failures on the instance through this narrow interface, so neither side imports
the other's module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from wasmsched.wasm import native
from wasmsched.wasm.errors import HostFunctionFailure
from wasmsched.wasm.snapshot_sync import Mirror

if TYPE_CHECKING:
    from wasmsched.api.types import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.types import NodeInfo
    from wasmsched.wasm.encoding import FilteredNodes


@dataclass(slots=True)
class CallContext:
    """The per-call values of §4.2, fixed at call start, and the results the guest sets."""

    export: str
    pod: Pod | None = None
    node_name: str = ""
    target_pod: Pod | None = None
    filtered_nodes: FilteredNodes | None = None
    node_statuses: Mapping[str, int] | None = None
    node_scores: Sequence[tuple[str, int]] | None = None
    # §14 [+] v2 per-call values
    node_info: NodeInfo | None = None  # filter/score/addpod/removepod on one node: the NodeInfo passed
    cycle_state: CycleState | None = None  # the framework's CycleState of the call
    cycle_state_id: int = 0
    released_states: Sequence[int] = ()
    hint_event: int = 0
    old_object: bytes | None = None
    new_object: bytes | None = None
    queued_pod_info: bytes | None = None  # §15.2, queuesort's
    # results
    sort_key: bytes | None = None  # §15.2
    pods_to_activate: list[str] | None = None  # §15.4: keys handle.activate named, activated after the call
    status_reason: str = ""
    node_names: list[str] | None = None
    nominated_node_name: str = ""
    normalized_score_list: bytes | None = None
    cluster_events: bytes | None = None
    cluster_events_with_hints: bytes | None = None
    node_scores_result: bytes | None = None  # §17: the scores a successful scorenodes left, 8 bytes per node
    _encoded: dict[str, bytes] | None = None

    def encoded(self, key: str, make: Callable[[], bytes]) -> bytes:
        # §5 stability: a repeated getter in one call returns the same bytes.
        if self._encoded is None:
            self._encoded = {}
        v = self._encoded.get(key)
        if v is None:
            v = self._encoded[key] = make()
        return v


class RunningInstance(Protocol):
    """What an import may read and write of the instance whose call (or instantiation) is running."""

    # The call's values; None during instantiation (`_start`), where no call is running.
    ctx: CallContext | None
    # A host-side failure's trap kind (docs/abi.md §10), which the call's error names instead of the trap's.
    host_failure: str | None
    # KeyboardInterrupt or SystemExit raised inside an import: the call raises it again once unwound.
    interrupt: BaseException | None
    # How the running call's time limit is named in its timeout text (`timeout after <deadline_text>`).
    deadline_text: str
    # What the instance's guest has been sent of the snapshot (docs/abi.md §14.1).
    mirror: Mirror

    @property
    def deadline(self) -> int | None:
        """The running call's deadline on time.monotonic_ns() (None: no limit)."""
        ...


def running() -> RunningInstance | None:
    """The instance whose call runs on this thread (the native host's owner of it), None outside calls."""
    inst: RunningInstance | None = native.current_owner()
    return inst


def current() -> RunningInstance:
    """running() inside an import, where a call always runs."""
    inst: RunningInstance | None = native.current_owner()
    if inst is None:  # pragma: no cover - only guest code calls imports, always inside a call
        raise HostFunctionFailure("import called outside a guest call")
    return inst
