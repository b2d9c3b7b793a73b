"""DefaultBinder (defaultbinder/default_binder.go): Bind."""

from __future__ import annotations

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BindPlugin, Handle
from wasmsched.framework.status import Status

NAME = "DefaultBinder"


class DefaultBinder(BindPlugin):
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # The client posts the Binding (namespace, name and UID of the pod; target Node node_name).
        try:
            self.handle.client().bind(pod, node_name)
        except Exception as err:  # noqa: BLE001 - any client failure is the bind's Error status
            return Status.error(err)
        return None
