"""Generate the Kubernetes protobuf Python modules from the pinned k8s.io Go modules.

The .proto files come from `go mod download` of k8s.io/api and k8s.io/apimachinery at the pinned
version; protoc is the one grpcio-tools ships. The import paths `k8s.io/...` are not valid Python
package names, so the files are staged under `wasmsched/api/gen/k8s_io/...` with their imports
rewritten; proto package names (k8s.io.api.core.v1, ...) and so the wire format are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

K8S_VERSION = "v0.37.2"
MODULES = {"k8s.io/api": K8S_VERSION, "k8s.io/apimachinery": K8S_VERSION}
ROOTS = [
    "k8s.io/api/apps/v1/generated.proto",
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/events/v1/generated.proto",
    "k8s.io/api/policy/v1/generated.proto",
    "k8s.io/api/resource/v1/generated.proto",
    "k8s.io/api/scheduling/v1/generated.proto",
    "k8s.io/api/storage/v1/generated.proto",
]
REPO = Path(__file__).resolve().parent.parent
OUT_PKG = "wasmsched/api/gen"
IMPORT_RE = re.compile(r'^import\s+"([^"]+)";', re.MULTILINE)


def module_dirs() -> dict[str, Path]:
    args = ["go", "mod", "download", "-json"] + [f"{m}@{v}" for m, v in MODULES.items()]
    env = dict(os.environ, GOFLAGS="-mod=mod", GO111MODULE="on")
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    dirs: dict[str, Path] = {}
    for doc in re.split(r"(?<=\})\s*(?=\{)", out.stdout.strip()):
        info = json.loads(doc)
        if info.get("Error"):
            raise SystemExit(f"go mod download {info['Path']}: {info['Error']}")
        dirs[info["Path"]] = Path(info["Dir"])
    return dirs


def source_path(dirs: dict[str, Path], proto: str) -> Path:
    for mod, d in dirs.items():
        if proto.startswith(mod + "/"):
            return d / proto[len(mod) + 1 :]
    raise SystemExit(f"no module provides {proto}")


def staged_name(proto: str) -> str:
    return f"{OUT_PKG}/k8s_io/{proto[len('k8s.io/'):]}"


def closure(dirs: dict[str, Path]) -> dict[str, str]:
    todo, seen = list(ROOTS), {}
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        text = source_path(dirs, p).read_text()
        seen[p] = text
        todo.extend(IMPORT_RE.findall(text))
    return seen


def main() -> int:
    dirs = module_dirs()
    files = closure(dirs)
    digest = hashlib.sha256(
        json.dumps([K8S_VERSION, sorted(files.items())], sort_keys=True).encode()
        + Path(__file__).read_bytes()
    ).hexdigest()
    stamp = REPO / OUT_PKG / ".stamp"
    if stamp.exists() and stamp.read_text() == digest and "--force" not in sys.argv:
        return 0
    out = REPO / OUT_PKG
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as tmp:
        for proto, text in files.items():
            rewritten = IMPORT_RE.sub(lambda m: f'import "{staged_name(m.group(1))}";', text)
            dest = Path(tmp) / staged_name(proto)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(rewritten)
        from grpc_tools import protoc  # type: ignore[import-untyped]

        args = ["protoc", f"-I{tmp}", f"--python_out={REPO}", f"--pyi_out={REPO}"]
        args += [staged_name(p) for p in sorted(files)]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
    for d in [out, *[p for p in out.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    (out / "VERSION").write_text(K8S_VERSION + "\n")
    stamp.write_text(digest)
    print(f"generated {len(files)} Kubernetes proto modules ({K8S_VERSION}) into {OUT_PKG}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
