"""The requests' transport (kube/transport.py) against a real kube-apiserver: many requests in flight on
one HTTP/2 connection, answers of any status, failures as CurlError, and a thread only while in use."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from wasmsched.devcluster import DevCluster
from wasmsched.kube import transport as transport_mod
from wasmsched.kube.api import ClientConnection, KubeApi, load_configuration
from wasmsched.kube.transport import CurlError, CurlTransport


def _threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "kube-transport")


def test_many_requests_share_one_http2_connection(dev_cluster: DevCluster, namespace: str) -> None:
    cfg = load_configuration(str(dev_cluster.kubeconfig))
    t = CurlTransport(cfg, "test")
    try:
        with ThreadPoolExecutor(32) as ex:
            replies = list(ex.map(lambda _: t.request("GET", f"/api/v1/namespaces/{namespace}",
                                                     ["Accept: application/json"], None, (5.0, 10.0)), range(200)))
        assert {r.status for r in replies} == {200}
        assert all(b'"kind":"Namespace"' in r.data for r in replies)
        assert replies[0].content_type == "application/json"
        # The requests were streams of HTTP/2 (on one connection: PIPEWAIT makes a request wait for it).
        import pycurl
        assert all(c.getinfo(pycurl.INFO_HTTP_VERSION) == pycurl.CURL_HTTP_VERSION_2_0 for c in t._free)
        missing = t.request("GET", f"/api/v1/namespaces/{namespace}/pods/nope", ["Accept: application/json"], None,
                            (5.0, 10.0))
        assert missing.status == 404 and b"NotFound" in missing.data
    finally:
        t.close()
    with pytest.raises(CurlError, match="closed"):
        t.request("GET", "/version", [], None, (1.0, 1.0))


def test_a_server_that_does_not_answer_is_a_transport_error(dev_cluster: DevCluster) -> None:
    cfg = load_configuration(str(dev_cluster.kubeconfig))
    cfg.host = "https://127.0.0.1:1"
    api = KubeApi(cfg, ClientConnection(qps=0))
    try:
        from wasmsched.api.errors import TransportError

        with pytest.raises(TransportError, match=r"127\.0\.0\.1:1\b"):
            api.request("GET", "/version", timeout=(2.0, 2.0))
    finally:
        api.close()


def test_the_transport_thread_ends_when_idle_and_comes_back(dev_cluster: DevCluster,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport_mod, "IDLE_EXIT_SECONDS", 0.2)
    before = _threads()
    t = CurlTransport(load_configuration(str(dev_cluster.kubeconfig)), "test")
    try:
        assert _threads() == before  # nothing started before the first request
        assert t.request("GET", "/version", [], None, (5.0, 10.0)).status == 200
        deadline = time.monotonic() + 10
        while _threads() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _threads() == before
        assert t.request("GET", "/version", [], None, (5.0, 10.0)).status == 200
    finally:
        t.close()


@pytest.mark.parametrize("content_type", ["application/vnd.kubernetes.protobuf", "application/json"])
def test_create_sends_bindings_and_events_in_the_configured_content_type(dev_cluster: DevCluster, namespace: str,
                                                                          content_type: str) -> None:
    """client-go sends protobuf unless clientConnection.contentType says JSON; the server takes both."""
    from wasmsched.api.types import Binding
    from wasmsched.kube.client_cluster import EventBroadcaster, _event_message

    api = KubeApi(load_configuration(str(dev_cluster.kubeconfig)), ClientConnection(qps=0, content_type=content_type))
    admin = dev_cluster.kube_api()
    try:
        node = f"tp-{content_type.rsplit('/', 1)[1].replace('.', '-')}-"
        dev_cluster.create_nodes(1, prefix=node, wait_ready=False)
        pod = admin.request_json("POST", f"/api/v1/namespaces/{namespace}/pods", body={
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]}})
        b = Binding()
        b.metadata.name, b.metadata.namespace, b.metadata.uid = "p", namespace, pod["metadata"]["uid"]
        b.target.apiVersion, b.target.kind, b.target.name = "v1", "Node", f"{node}0"
        api.create(f"/api/v1/namespaces/{namespace}/pods/p/binding", b, "v1", "Binding")
        assert admin.request_json("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"]["nodeName"] == f"{node}0"
        events = EventBroadcaster(api, instance="test")
        events.eventf(_pod_ref(namespace, pod), None, "Normal", "Scheduled", "Binding", "assigned p")
        ev = events._queue.get_nowait()
        assert ev is not None
        api.create(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", _event_message(ev), "events.k8s.io/v1",
                   "Event")
        got = admin.request_json("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
        assert [(e["reason"], e["note"], e["regarding"]["name"], e["reportingController"]) for e in got] == [
            ("Scheduled", "assigned p", "p", "default-scheduler")]
        assert got[0]["eventTime"].endswith("Z") and len(got[0]["eventTime"]) == len("2026-01-01T00:00:00.000000Z")
    finally:
        api.close()


def _pod_ref(namespace: str, pod: dict[str, object]) -> object:
    from wasmsched.api.types import Pod

    p = Pod()
    meta = pod["metadata"]
    assert isinstance(meta, dict)
    p.metadata.name, p.metadata.namespace, p.metadata.uid = "p", namespace, meta["uid"]
    return p
