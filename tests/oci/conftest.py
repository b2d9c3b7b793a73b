"""A CNCF distribution registry on 127.0.0.1 for the OCI guest tests, and the oras CLI.

Both binaries are built by `make oci-tools` (tools/kube/build.sh registry oras) into the shared cache;
$WASMSCHED_REGISTRY_BIN and $WASMSCHED_ORAS_BIN override them. A missing binary fails the test (never a
skip): the interoperability these tests check is not optional. The registry stores in tmp, listens on a
free port, and requires a user (htpasswd with a bcrypt hash, the only format distribution accepts).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import pytest
import urllib3
import yaml

from tests.wasm.conftest import process_runtime  # noqa: F401 - the e2e test's runtime, as in tests/wasm
from wasmsched.devcluster.certs import Pki, write_pki

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tools" / "kube" / "build.sh"
USER = "scheduler"
PASSWORD = "s3cret-pw"


def tool_binary(name: str, env: str) -> Path:
    """The binary build.sh built for `name` (or $env): fails the test loudly when it is not there."""
    if os.environ.get(env):
        path = Path(os.environ[env])
        if not path.is_file():
            pytest.fail(f"${env}: {path}: no such file")
        return path
    out = subprocess.run([str(BUILD_SCRIPT), "--print-dir", "--no-build", name], capture_output=True, text=True,
                         check=False)
    for line in out.stdout.splitlines():
        key, _, built = line.partition("=")
        if key == name and Path(built).is_file():
            return Path(built)
    pytest.fail(f"{name} is not built: run `make oci-tools` (tools/kube/build.sh {name})\n{out.stderr.strip()}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_docker_config(path: Path, registry: str, user: str, password: str) -> Path:
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"auths": {registry: {"auth": auth}}}))
    return path


@dataclass
class RunningRegistry:
    host: str  # 127.0.0.1:PORT
    storage: Path
    config_json: Path  # a docker config.json with the right credentials
    proc: subprocess.Popen[bytes]
    log: Path

    def ref(self, repo_tag: str) -> str:
        return f"oci://{self.host}/{repo_tag}"

    def blob_path(self, digest: str) -> Path:
        """Where distribution's filesystem driver keeps a blob (manifests are blobs too)."""
        hexdigest = digest.removeprefix("sha256:")
        return self.storage / "docker" / "registry" / "v2" / "blobs" / "sha256" / hexdigest[:2] / hexdigest / "data"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_registry(tmp: Path, tls: Pki | None = None) -> RunningRegistry:
    """Started and answering; with tls, HTTPS with the Pki's serving certificate (127.0.0.1, ::1, localhost)."""
    binary = tool_binary("registry", "WASMSCHED_REGISTRY_BIN")
    tmp.mkdir(parents=True, exist_ok=True)
    htpasswd = tmp / "htpasswd"
    htpasswd.write_bytes(USER.encode() + b":" + bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)) + b"\n")
    port = free_port()
    config = {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(tmp / "storage")}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}", "secret": "wasmsched-test"},
        "auth": {"htpasswd": {"realm": "wasmsched-test", "path": str(htpasswd)}},
    }
    if tls is not None:
        config["http"]["tls"] = {"certificate": str(tls.serving_cert), "key": str(tls.serving_key)}  # type: ignore[index]
    (tmp / "config.yml").write_text(yaml.safe_dump(config))
    log = tmp / "registry.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(binary), "serve", str(tmp / "config.yml")], stdout=out, stderr=subprocess.STDOUT)
    host = f"127.0.0.1:{port}"
    reg = RunningRegistry(host, tmp / "storage", write_docker_config(tmp / "docker" / "config.json", host, USER,
                                                                      PASSWORD), proc, log)
    deadline = time.monotonic() + 30
    http = urllib3.PoolManager(retries=False, timeout=2.0, ca_certs=str(tls.ca_cert) if tls else None)
    scheme = "https" if tls else "http"
    while True:
        if proc.poll() is not None:
            pytest.fail(f"registry exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if http.request("GET", f"{scheme}://{host}/v2/").status == 401:
                return reg
        except urllib3.exceptions.HTTPError:
            pass
        if time.monotonic() > deadline:
            reg.stop()
            pytest.fail(f"registry did not answer on {host} within 30 s:\n{log.read_text()}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def oci_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRegistry]:
    """One registry for a test module; tests use their own repositories."""
    reg = start_registry(tmp_path_factory.mktemp("registry"))
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture
def own_oci_registry(tmp_path: Path) -> Iterator[RunningRegistry]:
    """A registry of the test's own, which the test may stop."""
    reg = start_registry(tmp_path / "registry")
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture
def oci_tls_registry(tmp_path: Path) -> Iterator[tuple[RunningRegistry, Pki]]:
    """A registry of the test's own on HTTPS, with its PKI (ca_cert is what caFile names)."""
    pki = write_pki(tmp_path / "pki")
    reg = start_registry(tmp_path / "registry", tls=pki)
    try:
        yield reg, pki
    finally:
        reg.stop()


@pytest.fixture(scope="session")
def oras() -> Path:
    return tool_binary("oras", "WASMSCHED_ORAS_BIN")


@pytest.fixture
def oci_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh OCI blob cache for the test (what a freshly installed scheduler has)."""
    path = tmp_path / "oci-cache"
    monkeypatch.setenv("WASMSCHED_OCI_CACHE_DIR", str(path))
    return path
