"""A TCP proxy on 127.0.0.1 that injects network faults between a client (`wasmsched run`) and kube-apiserver.

TLS passes through untouched (the dev cluster's serving certificate is valid for 127.0.0.1, so a kubeconfig
pointing at the proxy's port verifies as one pointing at the server). What the driver can do, at any time:

- `latency`: seconds added to every round trip (half each way), bytes keep their order;
- `reset_fraction`: the share of new connections reset (RST), at once or, with `reset_within`, at a random
  moment within that many seconds of their start (a connection that dies in use);
- `drop_fraction`: the share of new connections closed cleanly (FIN) at once;
- `blackhole`: stop forwarding on every current and new connection without closing any (a partition: the
  peers see silence, not an error); clearing it lets what was held flow again;
- `cut()`: reset every current connection.

It is for tests and benches: one thread per direction and connection plus one for the delays, bounded by the
few connections one client opens.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass

_CHUNK = 65536


@dataclass
class ProxyStats:
    accepted: int = 0
    reset: int = 0  # new connections reset (at once or later)
    dropped: int = 0
    cut: int = 0  # connections reset by cut()


def _rst(sock: socket.socket) -> None:
    """Closes with a RST (SO_LINGER 0) rather than a FIN. close() alone does nothing while another thread is
    blocked in recv() on the socket (that call holds it open: no RST is sent, the peer waits for ever);
    shutdown(SHUT_RD) wakes that recv() without sending anything, and the RST goes once it has returned."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class _Pipe:
    """One direction of one connection: a reader that stamps chunks with when they may go and a writer that
    sends them then, so a delay adds latency without throttling a stream."""

    def __init__(self, proxy: FaultProxy, conn: _Conn, src: socket.socket, dst: socket.socket) -> None:
        self.proxy, self.conn, self.src, self.dst = proxy, conn, src, dst
        self.queue: deque[tuple[float, bytes | None]] = deque()
        self.cv = threading.Condition()

    def read(self) -> None:
        try:
            while not self.conn.closed:
                if not self.proxy._flowing.wait(0.5):
                    continue
                data = self.src.recv(_CHUNK)
                with self.cv:
                    self.queue.append((time.monotonic() + self.proxy.latency / 2, data or None))
                    self.cv.notify()
                if not data:
                    return
        except OSError:
            self.conn.close()
            with self.cv:
                self.cv.notify()

    def write(self) -> None:
        try:
            while True:
                with self.cv:
                    while not self.queue and not self.conn.closed:
                        self.cv.wait(0.5)
                    if self.conn.closed:
                        return
                    due, data = self.queue.popleft()
                while (left := due - time.monotonic()) > 0:
                    time.sleep(left)
                while not self.proxy._flowing.wait(0.5):
                    if self.conn.closed:
                        return
                if self.conn.closed:
                    return
                if data is None:
                    with contextlib.suppress(OSError):
                        self.dst.shutdown(socket.SHUT_WR)
                    self.conn.half_closed()
                    return
                self.dst.sendall(data)
        except OSError:
            self.conn.close()


class _Conn:
    def __init__(self, proxy: FaultProxy, client: socket.socket, server: socket.socket) -> None:
        self.proxy, self.client, self.server = proxy, client, server
        self.closed = False
        self._halves = 0
        self._lock = threading.Lock()
        self.pipes = (_Pipe(proxy, self, client, server), _Pipe(proxy, self, server, client))

    def start(self) -> None:
        for p in self.pipes:
            for target in (p.read, p.write):
                threading.Thread(target=target, daemon=True, name="faultproxy").start()

    def half_closed(self) -> None:
        with self._lock:
            self._halves += 1
            done = self._halves == 2
        if done:
            self.close(reset=False)

    def close(self, reset: bool = True) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.client, self.server):
            if reset:
                _rst(s)
            else:
                with contextlib.suppress(OSError):
                    s.close()
        for p in self.pipes:
            with p.cv:
                p.cv.notify_all()
        self.proxy._forget(self)


class FaultProxy:
    """Listens on 127.0.0.1:`port` (0: any free port) and forwards to `upstream` (host, port)."""

    def __init__(self, upstream: tuple[str, int], port: int = 0, seed: int | None = None) -> None:
        self.upstream = upstream
        self.latency = 0.0
        self.reset_fraction = 0.0
        self.reset_within = 0.0
        self.drop_fraction = 0.0
        self.stats = ProxyStats()
        self._rng = random.Random(seed)
        self._flowing = threading.Event()
        self._flowing.set()
        self._conns: set[_Conn] = set()
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(128)
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True, name="faultproxy-accept")
        self._thread.start()

    @classmethod
    def for_server(cls, server: str, seed: int | None = None) -> FaultProxy:
        """A proxy in front of an https://HOST:PORT server URL."""
        hostport = server.split("://", 1)[-1].rstrip("/")
        host, _, port = hostport.rpartition(":")
        return cls((host, int(port)), seed=seed)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def blackhole(self) -> bool:
        return not self._flowing.is_set()

    @blackhole.setter
    def blackhole(self, on: bool) -> None:
        if on:
            self._flowing.clear()
        else:
            self._flowing.set()

    def connections(self) -> int:
        with self._lock:
            return len(self._conns)

    def cut(self) -> int:
        """Resets every current connection; returns how many."""
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            c.close()
        self.stats.cut += len(conns)
        return len(conns)

    def clear(self) -> None:
        """No more faults (current connections keep going)."""
        self.latency = self.reset_fraction = self.reset_within = self.drop_fraction = 0.0
        self.blackhole = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Closing a listening socket does not wake a thread blocked in accept() on Linux; shutting it down
        # does (EINVAL), so the accept thread ends here rather than at the process's exit.
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
        self._flowing.set()
        self.cut()
        self._thread.join(5)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _forget(self, conn: _Conn) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.stats.accepted += 1
            try:
                self._handle(client)
            except OSError:
                _rst(client)

    def _handle(self, client: socket.socket) -> None:
        roll = self._rng.random()
        if roll < self.drop_fraction:
            self.stats.dropped += 1
            client.close()
            return
        reset = roll < self.drop_fraction + self.reset_fraction
        if reset and self.reset_within <= 0:
            self.stats.reset += 1
            _rst(client)
            return
        try:
            server = socket.create_connection(self.upstream, timeout=10)
        except OSError:
            _rst(client)  # the server is down
            return
        try:
            server.settimeout(None)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            _rst(server)
            raise
        conn = _Conn(self, client, server)
        with self._lock:
            self._conns.add(conn)
        conn.start()
        if reset:
            self.stats.reset += 1
            timer = threading.Timer(self._rng.uniform(0, self.reset_within), conn.close)
            timer.daemon = True
            timer.start()
