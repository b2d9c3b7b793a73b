"""Port of defaultbinder/default_binder_test.go."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.plugins import defaultbinder
from wasmsched.plugins.defaultbinder import DefaultBinder
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

TEST_NODE = "foohost.kubernetes.mydomain.com"


class _FailingClient(RecordingClient):
    def bind(self, pod: Pod, node_name: str) -> None:
        raise RuntimeError("binding error")


@pytest.mark.parametrize(
    ("name", "client", "want_binding", "want_error"),
    [
        ("successful", RecordingClient(), [("foo", TEST_NODE)], None),
        ("binding error", _FailingClient(), [], "binding error"),
    ],
)
def test_default_binder(name: str, client: RecordingClient, want_binding: list[tuple[str, str]],
                        want_error: str | None) -> None:
    pod = make_pod("foo", "ns").obj()
    pl = defaultbinder.new(None, FakeHandle(client=client))
    assert isinstance(pl, DefaultBinder)
    status = pl.bind(CycleState(), pod, TEST_NODE)
    if want_error is None:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.ERROR
        assert status.message() == want_error
    assert client.bindings == want_binding
