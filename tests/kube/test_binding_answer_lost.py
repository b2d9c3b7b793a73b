"""A binding whose answer never came (the connection broke after the server bound the pod): the scheduler
asks the server whether it was done, and a pod on the chosen node is bound, with its Scheduled event and
count, where kube-scheduler would unreserve it and lose both (kube/client_cluster.py `_bound_after_all`)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from wasmsched.api.types import Pod
from wasmsched.kube import client_cluster
from wasmsched.kube.api import TransportError
from wasmsched.kube.client_cluster import KubeCluster


class LostAnswerApi:
    """create() binds the pod (or not) and then raises TransportError; get() fails `down` times first."""

    def __init__(self, bound_to: str | None, uid: str = "u-1", down: int = 0) -> None:
        self.bound_to, self.uid, self.down = bound_to, uid, down
        self.gets = 0

    def create(self, path: str, obj: Any, api_version: str, kind: str) -> None:
        assert kind == "Binding" and path.endswith("/pods/p/binding")
        raise TransportError("POST .../binding: Connection reset by peer")

    def get(self, resource: Any, namespace: str, name: str, *, timeout: float) -> Pod | None:
        assert 1.0 <= timeout <= client_cluster.BINDING_CONFIRM_SECONDS
        self.gets += 1
        if self.gets <= self.down:
            raise TransportError("Could not connect to server")
        pod = Pod()
        pod.metadata.name, pod.metadata.namespace, pod.metadata.uid = name, namespace, self.uid
        if self.bound_to:
            pod.spec.nodeName = self.bound_to
        return pod


def _cluster(api: LostAnswerApi) -> KubeCluster:
    return KubeCluster(cast(Any, api), cast(Any, None), cast(Any, None))


def test_a_pod_the_server_bound_to_the_node_is_bound() -> None:
    api = LostAnswerApi(bound_to="n1")
    _cluster(api).post_binding("ns", "p", "u-1", "n1")
    assert api.gets == 1


def test_the_server_is_asked_again_while_it_cannot_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_cluster.time, "sleep", lambda _s: None)
    api = LostAnswerApi(bound_to="n1", down=3)
    _cluster(api).post_binding("ns", "p", "u-1", "n1")
    assert api.gets == 4


@pytest.mark.parametrize("api", [LostAnswerApi(bound_to=None), LostAnswerApi(bound_to="n2"),
                                 LostAnswerApi(bound_to="n1", uid="another")],
                         ids=["not-bound", "on-another-node", "a-recreated-pod"])
def test_otherwise_the_binding_failed(api: LostAnswerApi) -> None:
    with pytest.raises(TransportError, match="reset by peer"):
        _cluster(api).post_binding("ns", "p", "u-1", "n1")


def test_a_server_that_never_answers_fails_it_after_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    monkeypatch.setattr(client_cluster.time, "sleep", sleep)
    monkeypatch.setattr(client_cluster.time, "monotonic", lambda: now[0])
    api = LostAnswerApi(bound_to="n1", down=10**6)
    with pytest.raises(TransportError, match="reset by peer"):
        _cluster(api).post_binding("ns", "p", "u-1", "n1")
    assert now[0] <= client_cluster.BINDING_CONFIRM_SECONDS and api.gets >= 25
