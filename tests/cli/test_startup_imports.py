"""`simulate` start-up imports only what a simulation needs (issue 13: start-up <= 150 ms).

The kubernetes client, the Prometheus client, the HTTPS server, the wasm host (wasmtime and its ctypes
bindings), package metadata and the test helpers (`wasmsched.testing`) each cost tens of milliseconds to
import; a run that does not use them must not load them. A fresh interpreter runs the command, then
reports which of them are in sys.modules. Behaviour, not timing: a heavy import that comes back into
the path fails here whatever the machine's speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.wasm.harness import LAST_DIGIT_WAT, compile_wat

# Top-level packages and wasmsched modules that a `simulate` without wasm plugins or --metrics never needs.
HEAVY = ("kubernetes", "prometheus_client", "wasmtime", "pydantic", "requests", "urllib3", "cryptography",
         "importlib.metadata", "http.client", "ssl", "wasmsched.kube", "wasmsched.metrics.metrics",
         "wasmsched.testing", "wasmsched.devcluster.cluster", "wasmsched.wasm.plugin", "wasmsched.wasm.engine",
         "wasmsched.wasm.abi", "wasmsched.wasm.host", "wasmsched.wasm.module_cache", "wasmsched.cli.run",
         "wasmsched.cli.snapshot", "wasmsched.cli.cache", "wasmsched.cli.devcluster")

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-1, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests: {cpu: 100m, memory: 100Mi}
"""

PROBE = """\
import json, sys
from wasmsched.cli.main import main
argv = json.loads(sys.argv[1])
code = main(argv) if argv else 0
heavy = json.loads(sys.argv[2])
loaded = sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in sys.modules))
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def _loaded(argv: list[str]) -> list[str]:
    """The HEAVY modules a fresh interpreter holds after `main(argv)` (argv empty: after importing main)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr
    return list(report["loaded"])


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    p = tmp_path / "cluster.yaml"
    p.write_text(CLUSTER)
    return p


def test_importing_the_cli_loads_no_heavy_module() -> None:
    # Nor any other subcommand's module: main imports the one given.
    assert _loaded([]) == []


def test_simulate_loads_no_heavy_module(cluster: Path) -> None:
    assert _loaded(["simulate", str(cluster)]) == []


def test_simulate_generate_loads_no_heavy_module() -> None:
    assert _loaded(["simulate", "--generate", "nodes=2,pods=3", "-o", "json"]) == []


def test_a_wasm_plugin_still_loads_the_wasm_host(cluster: Path, tmp_path: Path) -> None:
    """The other side: the lazy import still happens when a profile configures a guest."""
    compile_wat(LAST_DIGIT_WAT.read_text(), tmp_path, "lastdigit.wasm")
    config = tmp_path / "scheduler.yaml"
    config.write_text("""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{name: LastDigit}]
  pluginConfig:
  - name: LastDigit
    args: {guestURL: lastdigit.wasm}
""")
    loaded = _loaded(["simulate", "--config", str(config), str(cluster)])
    assert {"wasmtime", "wasmsched.wasm.plugin"} <= set(loaded)
