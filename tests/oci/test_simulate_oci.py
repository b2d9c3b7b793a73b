"""End to end: `wasmsched simulate` with a KubeSchedulerConfiguration whose wasm plugin is pulled by oci://."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.wasm.test_simulate_wasm import placements, simulate, write_cluster, write_config
from wasmsched.wasm.engine import Runtime

from .conftest import RunningRegistry
from .helpers import last_digit_wasm, push_module


@pytest.fixture(autouse=True)
def runtime(process_runtime: Runtime) -> Runtime:
    return process_runtime


def test_simulate_with_a_guest_from_a_registry(oci_registry: RunningRegistry, tmp_path: Path, oci_cache: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pushed = push_module(oci_registry, "guests/lastdigit:v1", last_digit_wasm())
    # registryConfig relative to the configuration file, as guestURL paths are.
    (tmp_path / "docker.json").write_bytes(oci_registry.config_json.read_bytes())
    cluster = write_cluster(tmp_path, ["node-1", "node-2", "node-3", "node-4"], ["p-1", "p-2"])
    for url in (oci_registry.ref("guests/lastdigit:v1"),
                oci_registry.ref(f"guests/lastdigit@{pushed.manifest_digest}")):
        cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": url, "plainHTTP": True,
                                                        "registryConfig": "docker.json"})])
        doc = simulate(capsys, cfg, cluster)
        assert placements(doc) == dict.fromkeys(("p-1", "p-2"), ("Scheduled", "node-4"))
        assert set(doc["summary"]["wasm"]) == {"lastdigit"}
