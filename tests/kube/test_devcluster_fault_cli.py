"""`wasmsched dev-cluster restart-apiserver | stop-etcd | continue-etcd | proxy`: the faults of issue 29's
scenarios, from the command line, on a running dev cluster."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wasmsched.api.errors import ApiError, TransportError
from wasmsched.devcluster import DevCluster, processes
from wasmsched.kube.api import KubeApi, load_configuration


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", *args], capture_output=True,
                          text=True, check=False, timeout=timeout)


def test_restart_apiserver_from_the_cli(dev_cluster: DevCluster) -> None:
    d = str(dev_cluster.directory)
    pid = dev_cluster.pids["kube-apiserver"]
    out = _cli("restart-apiserver", "--dir", d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("kube-apiserver restarted in ") and dev_cluster.server in out.stdout
    assert not processes.running(pid)
    new_pid = DevCluster.load(dev_cluster.directory).pids["kube-apiserver"]
    assert new_pid != pid and processes.running(new_pid)
    # The fixture's object, started before, sees the new process too: its down() stops it, its own restart
    # stops it before starting another on the port.
    assert dev_cluster.pids["kube-apiserver"] == new_pid
    assert "kube-apiserver" in dev_cluster.running()
    with dev_cluster.kube_api() as api:
        api.request_json("GET", "/api/v1/namespaces/default")


def test_stop_etcd_stalls_the_api_server_until_continue_etcd(dev_cluster: DevCluster, namespace: str) -> None:
    d = str(dev_cluster.directory)
    out = _cli("stop-etcd", "--dir", d)
    assert out.returncode == 0, out.stderr
    assert "etcd stopped (SIGSTOP" in out.stdout
    try:
        with dev_cluster.kube_api() as api, pytest.raises((TransportError, ApiError)):
            # a write must reach etcd (a read may be served from the watch cache)
            api.request_json("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                             body={"metadata": {"name": "stalled"}}, timeout=3.0)
    finally:
        cont = _cli("continue-etcd", "--dir", d)
    assert cont.returncode == 0, cont.stderr
    assert "etcd continued" in cont.stdout
    with dev_cluster.kube_api() as api:
        deadline = time.monotonic() + 60
        while True:
            try:
                api.request_json("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                                 body={"metadata": {"name": "after"}}, timeout=10.0)
                break
            except (TransportError, ApiError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def test_the_fault_commands_name_a_missing_cluster(tmp_path: Path) -> None:
    for cmd in ("restart-apiserver", "stop-etcd", "continue-etcd", "proxy"):
        out = _cli(cmd, "--dir", str(tmp_path / "none"), timeout=60)
        assert out.returncode == 2, (cmd, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
        assert "no dev cluster in" in out.stderr and "dev-cluster up" in out.stderr


@pytest.mark.parametrize(("flag", "value", "says"), [("--reset-fraction", "1.5", "between 0 and 1"),
                                                      ("--latency", "-1", "must be >= 0"),
                                                      ("--port", "70000", "between 0 and 65535")])
def test_proxy_refuses_bad_flags(tmp_path: Path, flag: str, value: str, says: str) -> None:
    out = _cli("proxy", "--dir", str(tmp_path), flag, value, timeout=60)
    assert out.returncode == 2 and flag in out.stderr and says in out.stderr


def test_proxy_adds_latency_black_holes_and_resets_on_signals(dev_cluster: DevCluster) -> None:
    d = dev_cluster.directory
    proc = subprocess.Popen([sys.executable, "-m", "wasmsched", "dev-cluster", "proxy", "--dir", str(d),
                             "--latency", "0.3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "black hole on / off" in line:
                break
        text = "".join(lines)
        assert text.startswith("proxy https://127.0.0.1:") and f"-> {dev_cluster.server}" in text, text
        kubeconfig = d / "proxy.kubeconfig"
        assert f"--kubeconfig {kubeconfig}" in text

        def get(api: KubeApi, timeout: float = 10.0) -> float:
            t0 = time.monotonic()
            api.request_json("GET", "/api/v1/namespaces/default", timeout=timeout)
            return time.monotonic() - t0

        with KubeApi(load_configuration(str(kubeconfig))) as api:
            assert get(api) >= 0.3  # one round trip at least, through the proxy's delay

            proc.send_signal(signal.SIGUSR2)
            assert proc.stdout.readline().strip() == "black hole on"
            with pytest.raises(TransportError):
                get(api, timeout=2.0)
            proc.send_signal(signal.SIGUSR2)
            assert proc.stdout.readline().strip() == "black hole off"
            get(api)

            proc.send_signal(signal.SIGUSR1)
            reset = proc.stdout.readline().strip()
            assert reset.startswith("reset ") and reset != "reset 0 connections", reset
            get(api)  # a new connection
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert out.startswith("proxy stopped: ") and "connections accepted" in out
        assert not kubeconfig.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
