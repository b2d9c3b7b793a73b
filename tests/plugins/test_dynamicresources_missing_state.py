"""DynamicResources without its PreFilter state (another PreFilter plugin rejected the pod first, so
PostFilter still runs): kube returns CycleState.Read's error unwrapped, fwk.ErrNotFound, and its text
ends the FailedScheduling message (found by the differential fuzzer, tests/differential)."""

from __future__ import annotations

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeToStatus
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.dynamicresources import DynamicResources
from wasmsched.testing.builders import NodeWrapper, PodWrapper
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient


def test_post_filter_without_prefilter_state_is_kubes_not_found() -> None:
    node = NodeWrapper("node-1").obj()
    pl = DynamicResources(FakeHandle(nodes=[node], client=RecordingClient(objects=[])))
    pod = PodWrapper("p", "default").obj()
    _, st = pl.post_filter(CycleState(), pod, NodeToStatus())
    assert st is not None and st.code == Code.ERROR
    assert st.message() == "not found"
    st = pl.filter(CycleState(), pod, NodeInfo(node))
    assert st is not None and st.code == Code.ERROR and st.message() == "not found"
