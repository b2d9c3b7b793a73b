"""The dev cluster's pure pieces, without starting anything: PKI, tokens, kubeconfig, binaries' lookup,
command lines, KWOK's stages, node manifests, process bookkeeping."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from kubernetes import client, config

from wasmsched.devcluster import binaries, components, processes
from wasmsched.devcluster.certs import write_pki
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.devcluster.kwok_stages import STAGES_YAML
from wasmsched.devcluster.nodes import kwok_node
from wasmsched.devcluster.tokens import StaticTokens, write_token_auth_file


def test_serving_certificate_is_signed_by_the_ca_for_loopback_names(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    ca = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    cert = x509.load_pem_x509_certificate(pki.serving_cert.read_bytes())
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    key = serialization.load_pem_private_key(pki.serving_key.read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()  # type: ignore[union-attr]


def test_service_account_key_pair_matches_and_private_keys_are_0600(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    private = serialization.load_pem_private_key(pki.sa_private_key.read_bytes(), None)
    public = serialization.load_pem_public_key(pki.sa_public_key.read_bytes())
    assert isinstance(private, rsa.RSAPrivateKey) and isinstance(public, rsa.RSAPublicKey)
    assert private.public_key().public_numbers() == public.public_numbers()
    for p in (pki.ca_key, pki.serving_key, pki.sa_private_key):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p


def test_token_auth_file_puts_admin_in_masters_and_restricted_in_no_group(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    write_token_auth_file(path, StaticTokens(admin="a" * 32, restricted="r" * 32))
    assert path.read_text().splitlines() == [f'{"a" * 32},admin,admin,"system:masters"',
                                             f"{'r' * 32},restricted,restricted"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_kubeconfig_loads_with_the_official_client(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    path = tmp_path / "kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", pki.ca_cert, "tok")
    conf = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=conf)
    assert conf.host == "https://127.0.0.1:6443"
    assert conf.api_key == {"BearerToken": "Bearer tok"}
    assert conf.ssl_ca_cert is not None and Path(conf.ssl_ca_cert).read_bytes() == pki.ca_cert.read_bytes()


def test_binaries_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(binaries.BIN_ENV, raising=False)
    monkeypatch.delenv(binaries.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert binaries.bin_dir() == tmp_path / "xdg" / "wasmsched" / "kube" / binaries.KUBE_VERSION / "bin"
    monkeypatch.setenv(binaries.CACHE_ENV, str(tmp_path / "cache"))
    assert binaries.bin_dir() == tmp_path / "cache" / binaries.KUBE_VERSION / "bin"
    monkeypatch.setenv(binaries.BIN_ENV, str(tmp_path / "bin"))
    assert binaries.bin_dir() == tmp_path / "bin"


def test_missing_binaries_tell_to_run_make_kube(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(binaries.BIN_ENV, str(tmp_path))
    (tmp_path / "etcd").write_text("#!/bin/sh\n")
    (tmp_path / "etcd").chmod(0o755)
    with pytest.raises(binaries.BinariesMissingError) as e:
        binaries.find_binaries()
    assert "kube-apiserver, kube-controller-manager, kwok not found in" in str(e.value)
    assert "run `make kube`" in str(e.value)


def test_cli_up_without_binaries_exits_2_naming_make_kube(tmp_path: Path) -> None:
    env = {**os.environ, binaries.BIN_ENV: str(tmp_path / "nothing")}
    out = subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", "up", "--dir", str(tmp_path / "c")],
                         env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 2, out.stderr
    assert "run `make kube`" in out.stderr
    assert not (tmp_path / "c").exists()


def test_cli_down_where_nothing_runs_says_so_and_succeeds(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", "down", "--dir", str(tmp_path)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "nothing to do: no dev cluster in" in out.stdout


def _ports() -> components.Ports:
    return components.Ports(etcd_client=2379, etcd_peer=2380, apiserver=6443, controller_manager=10257, kwok=10247)


def test_every_listener_is_on_loopback(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    argv = [*components.etcd_argv(Path("/b/etcd"), tmp_path, _ports()),
            *components.kube_apiserver_argv(Path("/b/kube-apiserver"), pki, tmp_path / "t", tmp_path, _ports()),
            *components.kube_controller_manager_argv(Path("/b/kcm"), tmp_path / "k", tmp_path, _ports()),
            *components.kwok_argv(Path("/b/kwok"), tmp_path / "k", tmp_path / "s", _ports())]
    listeners = [a for a in argv if a.startswith(("--listen-", "--bind-address", "--server-address",
                                                  "--advertise-", "--initial-advertise"))]
    assert len(listeners) == 8
    for a in listeners:
        value = a.split("=", 1)[1]
        assert value.removeprefix("http://").startswith("127.0.0.1"), a


def test_extra_apiserver_args_come_last(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    argv = components.kube_apiserver_argv(Path("/b/kube-apiserver"), pki, tmp_path / "t", tmp_path, _ports(),
                                          ["--watch-cache=false"])
    assert argv[-1] == "--watch-cache=false"
    assert "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition" in argv
    assert any(a.startswith("--authorization-mode=") and "RBAC" in a for a in argv)


def test_kwok_stages_make_nodes_ready_pods_running_and_deleted_pods_gone() -> None:
    stages = {d["metadata"]["name"]: d for d in yaml.safe_load_all(STAGES_YAML)}
    assert set(stages) == {"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete",
                           "pod-delete"}
    assert all(d["kind"] == "Stage" and d["apiVersion"] == "kwok.x-k8s.io/v1alpha1" for d in stages.values())
    assert stages["pod-delete"]["spec"]["next"] == {"delete": True}
    assert stages["pod-delete"]["spec"]["selector"]["matchExpressions"] == [
        {"key": ".metadata.deletionTimestamp", "operator": "Exists"}]
    assert "phase: Running" in stages["pod-ready"]["spec"]["next"]["statusTemplate"]


def test_kwok_node_is_untainted_annotated_and_sized() -> None:
    node = kwok_node("n1")
    assert node["metadata"]["annotations"] == {components.KWOK_NODE_ANNOTATION: components.KWOK_NODE_ANNOTATION_VALUE}
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "n1"
    assert node["metadata"]["labels"]["kubernetes.io/os"] == "linux"
    assert node["status"]["allocatable"] == node["status"]["capacity"] == {"cpu": "32", "memory": "256Gi",
                                                                           "pods": "110"}
    assert "taints" not in node["spec"]
    assert kwok_node("n2", managed=False)["metadata"]["annotations"] == {}


def test_stop_terminates_a_started_process_and_only_once(tmp_path: Path) -> None:
    pid = processes.start([sys.executable, "-c", "import time; time.sleep(600)"], tmp_path / "logs" / "p.log")
    assert processes.running(pid, sys.executable)
    # Until the exec'd process' command line is readable, running() cannot tell whose it is (and says ours).
    deadline = time.monotonic() + 30
    while not Path(f"/proc/{pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not processes.running(pid, "/not/this/program")  # a reused PID running something else is not ours
    assert processes.stop(pid, sys.executable)
    assert not processes.running(pid)
    assert not processes.stop(pid, sys.executable)


def test_stop_kills_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    code = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ok', flush=True); " \
           "time.sleep(600)"
    log = tmp_path / "p.log"
    pid = processes.start([sys.executable, "-c", code], log)
    try:
        deadline = time.monotonic() + 30
        while "ok" not in log.read_text():  # the handler is installed
            assert processes.running(pid), f"the process exited before ignoring SIGTERM: {log.read_text()!r}"
            assert time.monotonic() < deadline, f"the process did not ignore SIGTERM within 30 s: {log.read_text()!r}"
            time.sleep(0.01)
        start = time.monotonic()
        assert processes.stop(pid, sys.executable, grace=0.5)
        assert time.monotonic() - start >= 0.5  # SIGTERM did not end it: the SIGKILL after the grace did
        assert not processes.running(pid)
    finally:
        if processes.running(pid):
            os.killpg(pid, signal.SIGKILL)


def test_die_with_parent_stops_the_process_when_its_starter_dies(tmp_path: Path) -> None:
    # A starter process starts a sleeper and dies without cleaning up (as pytest-timeout's os._exit).
    code = ("import os, sys; from pathlib import Path; from wasmsched.devcluster import processes; "
            "pid = processes.start([sys.executable, '-c', 'import time; time.sleep(600)'], "
            f"Path({str(tmp_path / 's.log')!r}), die_with_parent=True); print(pid, flush=True); os._exit(1)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    sleeper = int(out.stdout)
    deadline = time.monotonic() + 30
    while processes.running(sleeper, sys.executable) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes.running(sleeper, sys.executable)


def test_free_ports_are_below_the_ephemeral_range_and_bindable() -> None:
    # An ephemeral port may become an outgoing connection's local port before the component listens on it.
    low = processes._ephemeral_low()
    for _ in range(20):
        port = processes.free_port()
        assert low - 10000 <= port < low
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))


def test_free_port_falls_back_to_the_kernels_pick_without_room_below_the_range(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "_ephemeral_low", lambda: 1050)
    assert processes.free_port() >= 1050


def test_a_clusters_ports_are_distinct_even_when_the_random_pick_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing listens on a port until its component starts: a second pick of the same port is bindable too.
    picks = iter([24000, 24000, 24000, 24001, 24001, 24002, 24003, 24003, 24004])

    class Repeating:
        def randrange(self, _a: int, _b: int) -> int:
            return next(picks)

    monkeypatch.setattr(processes.random, "Random", Repeating)
    monkeypatch.setattr(processes, "_ephemeral_low", lambda: 32768)
    monkeypatch.setattr(processes, "_bindable", lambda _port: True)
    assert processes.free_ports(5) == [24000, 24001, 24002, 24003, 24004]
