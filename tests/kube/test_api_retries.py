"""KubeApi retries a request as client-go's rest.Request does (with_retry.go): a 429 or 5xx that carries
Retry-After is sent again after that many seconds, up to MAX_RETRIES times and within a whole-request
timeout; a 5xx without it is not; a GET whose connection ended under it is sent again at once, a POST is
not (it may have been done). Each retry is counted in rest_client_request_retries_total."""

from __future__ import annotations

import socket
import struct
import threading
import time as real_time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes import client as kclient

from wasmsched.api.errors import ApiError, TransportError, is_too_many_requests
from wasmsched.kube import api as kube_api
from wasmsched.kube.api import MAX_RETRIES, REQUEST_RETRIES, REQUESTS, KubeApi
from wasmsched.metrics.metrics import SchedulerMetrics

# An answer: (status, headers) or "reset" (the connection closed with a RST, nothing answered).
Answer = tuple[int, dict[str, str]] | str


class _Server:
    """A plain-HTTP server on 127.0.0.1 answering each request with the next scripted answer (the last
    one from then on), counting requests by method."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.seen.append(self.command)
                i = len(server.seen) - 1
                answer = server.answers[min(i, len(server.answers) - 1)]
                if answer == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                assert not isinstance(answer, str)
                status, headers = answer
                body = (b'{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":"TooManyRequests"}'
                        % status if status >= 300 else b"{}")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[list[Answer]], tuple[_Server, KubeApi]]]:
    made: list[tuple[_Server, KubeApi]] = []

    def make(answers: list[Answer]) -> tuple[_Server, KubeApi]:
        srv = _Server(answers)
        api = KubeApi(kclient.Configuration(host=srv.url))
        made.append((srv, api))
        return srv, api

    yield make
    for srv, api in made:
        api.close()
        srv.close()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """kube/api.py's sleeps, recorded and not slept: its clock jumps ahead instead."""
    slept: list[float] = []
    offset = [0.0]

    def sleep(s: float) -> None:
        slept.append(s)
        offset[0] += s

    monkeypatch.setattr(kube_api, "time", SimpleNamespace(monotonic=lambda: real_time.monotonic() + offset[0],
                                                          sleep=sleep))
    return slept


def _retries(api: KubeApi) -> dict[tuple[str, str], int]:
    host = api.host.split("://", 1)[1]
    return {(code, verb): n for (code, verb, h), n in REQUEST_RETRIES.counts().items() if h == host}


def test_a_429_with_retry_after_is_sent_again_after_that_long(serve: Any, sleeps: list[float]) -> None:
    srv, api = serve([(429, {"Retry-After": "1"}), (429, {"Retry-After": "2"}), (201, {})])
    data, _ = api.request("POST", "/api/v1/namespaces/d/pods/p/binding", body={"kind": "Binding"})
    assert data == b"{}"
    assert srv.seen == ["POST"] * 3
    assert sleeps == [1, 2]
    assert _retries(api) == {("429", "POST"): 2}


def test_a_5xx_with_retry_after_is_retried_up_to_max_retries_then_its_error_is_raised(
        serve: Any, sleeps: list[float]) -> None:
    srv, api = serve([(503, {"Retry-After": "1"})])
    with pytest.raises(ApiError) as e:
        api.request("PUT", "/apis/coordination.k8s.io/v1/namespaces/k/leases/l", body={})
    assert e.value.status == 503
    assert len(srv.seen) == MAX_RETRIES + 1
    assert sleeps == [1] * MAX_RETRIES
    assert _retries(api) == {("503", "PUT"): MAX_RETRIES}


@pytest.mark.parametrize("answer", [(500, {}), (429, {}), (409, {"Retry-After": "1"})])
def test_no_retry_without_retry_after_or_for_other_codes(serve: Any, sleeps: list[float], answer: Answer) -> None:
    srv, api = serve([answer, (201, {})])
    with pytest.raises(ApiError):
        api.request("POST", "/api/v1/namespaces/d/pods", body={})
    assert len(srv.seen) == 1 and sleeps == [] and _retries(api) == {}


def test_retries_stop_at_a_whole_request_timeout(serve: Any, sleeps: list[float]) -> None:
    srv, api = serve([(429, {"Retry-After": "2"})])
    with pytest.raises(ApiError) as e:
        api.request("GET", "/apis/coordination.k8s.io/v1/namespaces/k/leases/l", timeout=5.0)
    assert is_too_many_requests(e.value)
    # sent at 0 s, 2 s and 4 s: a fourth at 6 s would be past the 5 s deadline
    assert len(srv.seen) == 3 and sleeps == [2, 2]


def test_a_get_whose_connection_was_reset_is_sent_again_a_post_is_not(serve: Any, sleeps: list[float]) -> None:
    srv, api = serve(["reset", "reset", (200, {})])
    data, _ = api.request("GET", "/api/v1/nodes")
    assert data == b"{}" and srv.seen == ["GET"] * 3 and sleeps == []
    assert _retries(api) == {("<error>", "GET"): 2}

    srv, api = serve(["reset", (201, {})])
    with pytest.raises(TransportError):
        api.request("POST", "/api/v1/namespaces/d/pods/p/binding", body={})
    assert srv.seen == ["POST"] and _retries(api) == {}


def test_a_get_that_keeps_being_reset_ends_as_a_transport_error(serve: Any, sleeps: list[float]) -> None:
    srv, api = serve(["reset"])
    with pytest.raises(TransportError):
        api.request("GET", "/api/v1/nodes")
    assert len(srv.seen) == MAX_RETRIES + 1


def test_a_refused_connection_is_not_retried(sleeps: list[float]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    api = KubeApi(kclient.Configuration(host=f"http://127.0.0.1:{port}"))
    try:
        t0 = real_time.monotonic()
        with pytest.raises(TransportError):
            api.request("GET", "/api/v1/nodes")
        assert _retries(api) == {} and real_time.monotonic() - t0 < 5
    finally:
        api.close()


def test_requests_and_retries_are_exposed_as_kube_s_metrics(serve: Any, sleeps: list[float]) -> None:
    _, api = serve([(429, {"Retry-After": "1"}), (201, {})])
    api.request("POST", "/api/v1/namespaces/d/events", body={})
    with KubeApi(kclient.Configuration(host="http://127.0.0.1:1")) as refused, pytest.raises(TransportError):
        refused.request("GET", "/api/v1/nodes")
    metrics = SchedulerMetrics()
    metrics.watch_requests(REQUESTS, REQUEST_RETRIES)
    host = api.host.split("://", 1)[1]
    text = metrics.render().decode()
    assert f'rest_client_request_retries_total{{code="429",host="{host}",verb="POST"}} 1.0' in text
    # every attempt, as client-go counts them: the 429, then the 201
    assert f'rest_client_requests_total{{code="429",host="{host}",method="POST"}} 1.0' in text
    assert f'rest_client_requests_total{{code="201",host="{host}",method="POST"}} 1.0' in text
    assert 'rest_client_requests_total{code="<error>",host="127.0.0.1:1",method="GET"}' in text
