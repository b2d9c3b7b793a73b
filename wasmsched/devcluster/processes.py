"""Background processes of a dev cluster: started in their own session (they outlive `dev-cluster up`),
output to a log file, stopped later by PID — only if the PID still runs the binary that was started."""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

# How long a component gets to exit on SIGTERM before SIGKILL: the apiserver drains requests and etcd
# syncs its WAL, both well under this on a dev machine.
STOP_GRACE_SECONDS = 10.0
_POLL_SECONDS = 0.05


# Ports are picked below the kernel's ephemeral range (ip_local_port_range), in a band this wide.
_PORT_BAND = 10000
_PORT_TRIES = 200


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(taken: Collection[int] = ()) -> int:
    """A TCP port free on 127.0.0.1 now, for a component started later, other than those `taken`. It is
    chosen at random below the ephemeral range: a port from that range (the kernel's own pick) can meanwhile
    become the local port of an outgoing connection -- kube-apiserver opens many to etcd -- and the
    component would then fail to listen on it. The kernel's pick only when that band is too small or full."""
    low = _ephemeral_low()
    first = max(1024, low - _PORT_BAND)
    if low - first >= 100:
        rng = random.Random()
        for _ in range(_PORT_TRIES):
            port = rng.randrange(first, low)
            if port not in taken and _bindable(port):
                return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in taken:
            return port


def free_ports(n: int) -> list[int]:
    """`n` distinct free ports (free_port): nothing listens on them until their components start, so
    picking each alone could pick one twice (etcd's peer port and KWOK's did, one cluster in a thousand)."""
    ports: list[int] = []
    for _ in range(n):
        ports.append(free_port(ports))
    return ports


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: the kernel sends SIGTERM when the thread that started it
    # dies, however it dies (a test run killed by its timeout leaves no control plane behind).
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def start(argv: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None,
          die_with_parent: bool = False) -> int:
    """Starts argv in a new session (no controlling terminal, its own process group), stdout and stderr
    appended to log_path; returns the PID. It outlives this process unless die_with_parent (Linux only)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    preexec = _die_with_parent if die_with_parent and sys.platform == "linux" else None
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True, preexec_fn=preexec,  # noqa: PLW1509
                                env=dict(env) if env is not None else None)
    return proc.pid


def _reap(pid: int) -> None:
    # A child of this process (the tests' fixture starts the cluster in-process) stays a zombie until waited.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] == "Z"


def running(pid: int, program: str | None = None) -> bool:
    """Whether pid is a live process (not a zombie) and, when /proc tells and program is given, runs program
    (argv[0]): a recorded PID reused by something else is not ours."""
    _reap(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # someone else's process: not one we started
    if _zombie(pid):
        return False
    if program is not None:
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
        except FileNotFoundError:
            return False
        except OSError:
            return True  # no /proc (not Linux): trust the PID
        # Empty while the kernel is still setting up a process that has just exec'd (the moment Popen
        # returns): it is the one we started.
        return argv0 in (program, "")
    return True


def _wait_gone(pid: int, program: str | None, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while running(pid, program):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


def stop(pid: int, program: str | None = None, grace: float = STOP_GRACE_SECONDS) -> bool:
    """SIGTERM to pid's process group, SIGKILL after `grace` seconds; returns False when it was not running."""
    if not running(pid, program):
        return False
    try:
        # Started in its own session, it leads its process group: signal the group, so anything it spawned
        # goes too. A process that is not a group leader is signalled alone.
        group = os.getpgid(pid) == pid
    except ProcessLookupError:
        return True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            if group:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
        except ProcessLookupError:
            return True
        if _wait_gone(pid, program, grace):
            return True
    raise OSError(f"process {pid} ({program}) still runs after SIGKILL")
