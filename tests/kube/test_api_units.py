"""KubeApi's error replies without a server: the Status a reply carries (JSON or protobuf) becomes the
ApiError kube's predicates read; a reply without one gets client-go's generic error for its code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as kclient

from tests.kube.test_codec import wrap
from wasmsched.api.errors import ApiError, StatusCause, StatusDetails, is_already_exists, is_conflict, is_invalid
from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.kinds import RESOURCES
from wasmsched.kube import api as kube_api
from wasmsched.kube import codec
from wasmsched.kube.api import KubeApi, _status_error


def _json_status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    st: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": message, "reason": reason, "code": code}
    if details is not None:
        st["details"] = details
    return json.dumps(st).encode()


def test_a_json_status_becomes_the_error_with_its_reason_message_and_details() -> None:
    body = _json_status(422, "Invalid", 'Pod "p" is invalid: spec.priority: Forbidden', {
        "name": "p", "kind": "Pod", "causes": [{"reason": "FieldValueForbidden", "message": "Forbidden",
                                                 "field": "spec.priority"}]})
    e = _status_error(422, "Unprocessable Entity", body, "application/json", "POST", "/api/v1/namespaces/d/pods")
    assert (e.status, e.reason, e.message, e.method, e.path) == (
        422, "Invalid", 'Pod "p" is invalid: spec.priority: Forbidden', "POST", "/api/v1/namespaces/d/pods")
    assert e.details == StatusDetails(name="p", kind="Pod",
                                      causes=(StatusCause("FieldValueForbidden", "Forbidden", "spec.priority"),))
    assert is_invalid(e)


def test_a_protobuf_status_becomes_the_same_error() -> None:
    st = meta_pb.Status(status="Failure", code=409, reason="AlreadyExists", message='pods "p" already exists',
                        details=meta_pb.StatusDetails(name="p", kind="pods", retryAfterSeconds=1))
    e = _status_error(409, "Conflict", wrap(st, "v1", "Status"), codec.PROTOBUF, "POST", "/api/v1/namespaces/d/pods")
    assert (e.status, e.reason, e.message) == (409, "AlreadyExists", 'pods "p" already exists')
    assert e.details == StatusDetails(name="p", kind="pods", retry_after_seconds=1)
    # the HTTP reason phrase ("Conflict") is not the Status's reason: this is no conflict
    assert is_already_exists(e) and not is_conflict(e)


def test_a_status_without_a_reason_keeps_none_and_the_code_decides() -> None:
    e = _status_error(409, "Conflict", _json_status(409, "", "x"), "application/json", "PUT", "/p")
    assert e.reason == "" and is_conflict(e)


@pytest.mark.parametrize(("data", "ctype"), [(b"<html>bad gateway</html>", "text/html"), (b"", None),
                                             (b'{"kind": "Pod"}', "application/json")])
def test_a_reply_that_is_no_status_gets_the_generic_error_of_its_code(data: bytes, ctype: str | None) -> None:
    e = _status_error(409, "Conflict", data, ctype, "POST", "/api/v1/namespaces")
    assert (e.status, e.reason, e.message) == (409, "AlreadyExists", "the server reported a conflict")
    e = _status_error(409, "Conflict", data, ctype, "PUT", "/api/v1/namespaces/x")
    assert (e.status, e.reason) == (409, "Conflict")


def test_request_json_raises_codec_error_for_a_reply_that_is_not_json(monkeypatch: pytest.MonkeyPatch) -> None:
    api = KubeApi(kclient.Configuration(host="https://127.0.0.1:1"))
    try:
        monkeypatch.setattr(api, "request", lambda *a, **kw: (b"not json", "application/json"))
        with pytest.raises(codec.CodecError, match="the reply is not JSON"):
            api.request_json("GET", "/api/v1/x")
    finally:
        api.close()


def test_kube_api_reexports_the_one_error_model() -> None:
    assert kube_api.ApiError is ApiError
    from wasmsched.api.errors import TransportError

    assert kube_api.TransportError is TransportError


def test_a_watch_left_early_closes_its_connection_before_the_pool_gets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The informer leaves a watch early when a handler raises or it stops; the rest of the stream (more
    events, the chunked body's end) is still coming on that connection, and a request that reused it
    would read those bytes as its own answer (BadStatusLine). So the response is closed, connection and
    all, before it is released to the pool."""
    calls: list[str] = []

    class Response:
        status, reason = 200, "OK"

        def __init__(self) -> None:
            self.headers = {"Content-Type": codec.PROTOBUF + ";stream=watch"}

        def read1(self, n: int = -1) -> bytes:
            return b""

        def close(self) -> None:
            calls.append("close")

        def release_conn(self) -> None:
            calls.append("release_conn")

    class Opened:
        status, reason, response = 200, "OK", Response()

    api = KubeApi(kclient.Configuration(host="https://127.0.0.1:1"))
    try:
        monkeypatch.setattr(api, "_open", lambda *a, **kw: Opened())
        with api.watch(RESOURCES["Pod"], "0", timeout_seconds=5):
            pass
    finally:
        api.close()
    assert calls[:2] == ["close", "release_conn"]


def test_a_listed_item_kept_does_not_keep_its_whole_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoded list's items share its arena: one node kept after a relist would keep the whole page of
    nodes alive. KubeApi.list copies each item out (client-go's meta.ExtractListWithAlloc)."""
    import gc

    from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core
    from wasmsched.util.heap import malloc_in_use, release_free_memory

    nodes = core.NodeList()
    nodes.metadata.resourceVersion = "7"
    for i in range(1000):
        n = nodes.items.add()
        n.metadata.name = f"node-{i}"
        for j in range(30):
            n.metadata.labels[f"label-{j}"] = "x" * 100  # ~4 MB in all
    body = wrap(nodes, "v1", "NodeList")
    del nodes, n

    def live() -> int:
        gc.collect()
        release_free_memory()
        got = malloc_in_use()
        assert got is not None
        return got

    api = KubeApi(kclient.Configuration(host="https://127.0.0.1:1"))
    try:
        monkeypatch.setattr(api, "request", lambda *a, **kw: (body, codec.PROTOBUF))
        before = live()
        items, rv = api.list(RESOURCES["Node"])
        assert rv == "7" and len(items) == 1000 and items[999].metadata.name == "node-999"
        kept = items[0]
        del items
        assert live() - before < 1 << 20  # one node's bytes, not the page's ~4 MB
        assert kept.metadata.labels["label-29"] == "x" * 100
    finally:
        api.close()
