"""Helpers shared by the benchmarks in bench/: the Go programs they compare against (built into a cache
outside the checkout), KSWE's guests, scheduler_perf's SchedulingBasic workload, the machine's load and
the results file."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wasmsched" / "bench"

# KSWE's modules that a program building against a checkout replaces with the checkout's directories.
KSWE_MODULES = {
    "sigs.k8s.io/kube-scheduler-wasm-extension/scheduler": "scheduler",
    "sigs.k8s.io/kube-scheduler-wasm-extension/kubernetes/proto": "kubernetes/proto",
}
# The NodeNumber guest of KSWE's own scheduler_perf, else its example (the same plugin).
KSWE_NODENUMBER = ("internal/e2e/scheduler_perf/wasm/nodenumber/main.wasm", "examples/nodenumber/main.wasm")


def go_cache_binary(component: str) -> Path:
    """A component of tools/kube/build.sh (bench-kube, kube-oracle, ...), built when its key changed."""
    proc = subprocess.run([str(ROOT / "tools" / "kube" / "build.sh"), "--print-dir", component],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"tools/kube/build.sh {component} failed:\n{proc.stderr[-3000:]}")
    for line in proc.stdout.splitlines():
        if line.startswith(f"{component}="):
            return Path(line.split("=", 1)[1])
    raise RuntimeError(f"tools/kube/build.sh --print-dir {component} printed no path")


def kswe_guest(kswe: Path) -> Path:
    for rel in KSWE_NODENUMBER:
        if (kswe / rel).is_file():
            return (kswe / rel).resolve()
    raise SystemExit(f"--kswe {kswe}: no NodeNumber guest ({' or '.join(KSWE_NODENUMBER)})")


def _tree_hash(h: Any, root: Path) -> None:
    for p in sorted(root.rglob("*")):
        if p.is_file() and (p.suffix == ".go" or p.name in ("go.mod", "go.sum")) and not p.name.endswith("_test.go"):
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())


def build_kswe_program(name: str, module: Path, kswe: Path) -> Path:
    """Builds the Go program in `module` (bench/<dir>, whose go.mod replaces KSWE's modules with some
    checkout) against the checkout `kswe`, into CACHE/<name>-<key>/<name>. The key covers the program's
    sources, the checkout's Go sources and the Go version; go.mod is rewritten in a temporary -modfile,
    never in the tree. Raises RuntimeError with go's output when the build fails."""
    kswe = kswe.resolve()
    for rel in KSWE_MODULES.values():
        if not (kswe / rel / "go.mod").is_file():
            raise RuntimeError(f"--kswe {kswe}: {rel}/go.mod not found (expected a KSWE checkout)")
    go = os.environ.get("GO", "go")
    h = hashlib.sha256()
    _tree_hash(h, module)
    for rel in KSWE_MODULES.values():
        _tree_hash(h, kswe / rel)
    h.update(subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout.encode())
    out_dir = CACHE / f"{name}-{h.hexdigest()[:16]}"
    binary = out_dir / name
    if binary.is_file():
        return binary
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench: building {name} against {kswe} into {out_dir} (minutes the first time)", file=sys.stderr)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        modfile = Path(tmp) / "go.mod"
        shutil.copy(module / "go.mod", modfile)
        shutil.copy(module / "go.sum", Path(tmp) / "go.sum")
        edits = [f"-replace={mod}={kswe / rel}" for mod, rel in KSWE_MODULES.items()]
        edit = subprocess.run([go, "mod", "edit", *edits, str(modfile)], capture_output=True, text=True, check=False)
        if edit.returncode != 0:
            raise RuntimeError(f"go mod edit {modfile} failed:\n{edit.stderr}")
        proc = subprocess.run(
            ["nice", "-n", "19", go, "build", f"-modfile={modfile}", "-mod=readonly", "-trimpath",
             "-ldflags=-s -w", "-o", str(binary) + ".tmp", "."],
            cwd=module, capture_output=True, text=True, env={**os.environ, "CGO_ENABLED": "0"}, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"building {name} failed:\n{proc.stderr[-3000:]}")
    os.replace(str(binary) + ".tmp", binary)
    print(f"bench: built {name} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return binary


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write_results(path: Path, doc: dict[str, Any]) -> None:
    """The benchmark's JSON, with the machine it ran on."""
    full = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **doc}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(full, indent=2) + "\n")
    print(f"wrote {path}")


def scheduling_basic(nodes: int, pods: int) -> tuple[list[Any], list[Any]]:
    """bench/kube's makeNode/makePod: the same names, sizes and containers."""
    from wasmsched.api.types import Node, Pod

    node_objs = []
    for i in range(nodes):
        n = Node()
        n.metadata.name = f"node-{i:05d}"
        n.metadata.uid = f"node-uid-{i}"
        n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name
        for k, v in (("cpu", "32"), ("memory", "256Gi"), ("pods", "110")):
            n.status.capacity[k].string = v
            n.status.allocatable[k].string = v
        cond = n.status.conditions.add()
        cond.type, cond.status = "Ready", "True"
        n.status.phase = "Running"
        node_objs.append(n)
    pod_objs = []
    for j in range(pods):
        p = Pod()
        p.metadata.name = f"pod-{j:06d}"
        p.metadata.namespace = "default"
        p.metadata.uid = f"pod-uid-{j}"
        p.spec.schedulerName = "default-scheduler"
        c = p.spec.containers.add()
        c.name, c.image = "pause", "registry.k8s.io/pause:3.10.2"
        c.ports.add().containerPort = 80
        for k, v in (("cpu", "100m"), ("memory", "500Mi")):
            c.resources.requests[k].string = v
            c.resources.limits[k].string = v
        pod_objs.append(p)
    return node_objs, pod_objs
