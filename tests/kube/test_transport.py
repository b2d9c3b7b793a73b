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
