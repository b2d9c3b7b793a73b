"""DefaultSelector (helper/spread.go), used for PodTopologySpread's system default constraints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.api.labels import Selector, compile_label_selector
from wasmsched.api.types import LabelSelector, Pod

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle


def default_selector(pod: Pod, handle: Handle | None) -> Selector:
    """The selector kube derives from the Services, ReplicationControllers, ReplicaSets and
    StatefulSets that match the pod (service label sets merged, controller selectors ANDed).

    wasmsched has no listers for those objects yet, so every lookup comes back empty and the
    result is what kube returns then: the empty label set's selector (matches everything, and
    is "empty"), which makes PodTopologySpread drop its system default constraints.
    """
    return compile_label_selector(LabelSelector())
