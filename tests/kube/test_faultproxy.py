"""The fault proxy (wasmsched/devcluster/faultproxy.py) on a local echo server: bytes pass in order, latency,
resets of new connections, a black hole that holds bytes without closing, cut, an upstream that is down."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from wasmsched.devcluster.faultproxy import FaultProxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


@pytest.fixture
def echo() -> Iterator[socketserver.ThreadingTCPServer]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(echo: socketserver.ThreadingTCPServer) -> Iterator[FaultProxy]:
    with FaultProxy(("127.0.0.1", echo.server_address[1]), seed=1) as p:
        yield p


def _connect(p: FaultProxy) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", p.port), timeout=5)
    return s


def _roundtrip(s: socket.socket, data: bytes) -> bytes:
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_bytes_pass_in_order_and_latency_is_added(proxy: FaultProxy) -> None:
    with _connect(proxy) as s:
        big = bytes(range(256)) * 4096  # 1 MiB
        assert _roundtrip(s, big) == big
        proxy.latency = 0.2
        t = time.monotonic()
        assert _roundtrip(s, b"ping") == b"ping"
        assert 0.2 <= time.monotonic() - t < 1.0
        # a stream is delayed, not throttled
        t = time.monotonic()
        assert _roundtrip(s, big) == big
        assert time.monotonic() - t < 3.0


def test_resets_a_share_of_new_connections(proxy: FaultProxy) -> None:
    proxy.reset_fraction = 1.0
    with pytest.raises(OSError), _connect(proxy) as s:  # at connect or at the first read
        s.sendall(b"x")
        s.recv(1)
    assert proxy.stats.reset == 1
    proxy.reset_fraction = 0.0
    with _connect(proxy) as s:
        assert _roundtrip(s, b"ok") == b"ok"


def test_blackhole_holds_bytes_without_closing_then_lets_them_through(proxy: FaultProxy) -> None:
    with _connect(proxy) as s:
        assert _roundtrip(s, b"a") == b"a"
        proxy.blackhole = True
        s.sendall(b"held")
        s.settimeout(0.5)
        with pytest.raises(TimeoutError):
            s.recv(10)
        assert proxy.connections() == 1
        # new connections are held too
        with _connect(proxy) as s2:
            s2.sendall(b"new")
            s2.settimeout(0.5)
            with pytest.raises(TimeoutError):
                s2.recv(10)
            proxy.blackhole = False
            s2.settimeout(5)
            assert s2.recv(10) == b"new"
        s.settimeout(5)
        assert s.recv(10) == b"held"


def test_cut_resets_every_connection_and_a_down_upstream_resets_new_ones(
        proxy: FaultProxy, echo: socketserver.ThreadingTCPServer) -> None:
    conns = [_connect(proxy) for _ in range(3)]
    for s in conns:
        assert _roundtrip(s, b"x") == b"x"
    proxy.latency = 0.1  # with the proxy's threads blocked in recv() on both sides
    assert proxy.cut() == 3
    for s in conns:
        s.settimeout(2)
        with pytest.raises(ConnectionResetError):  # at once: not a timeout, not a clean EOF
            s.recv(1)
        s.close()
    echo.shutdown()
    echo.server_close()
    with pytest.raises(OSError), _connect(proxy) as s:  # the listener still accepts, and resets
        s.sendall(b"z")
        if not s.recv(1):
            raise ConnectionResetError
    assert proxy.stats.accepted == 4


def test_close_ends_the_accept_thread_and_a_second_close_does_nothing(echo: socketserver.ThreadingTCPServer) -> None:
    # A listener's close() does not wake accept() on Linux: the thread lived on, and each close() waited out
    # its 5 s join (twice per replica in the fault scenarios).
    p = FaultProxy(("127.0.0.1", echo.server_address[1]))
    with _connect(p) as s:
        assert _roundtrip(s, b"x") == b"x"
    p.close()
    assert not p._thread.is_alive()
    p.close()
    with pytest.raises(OSError):
        _connect(p)
