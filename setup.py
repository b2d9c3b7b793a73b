"""Build hook: the Kubernetes protobuf modules (wasmsched/api/gen) are generated, not committed.

Metadata and everything else are in pyproject.toml. Building a wheel (`pip install .`, `make dist`)
first runs tools/gen_protos.py, which needs Go (`go mod download` of the pinned k8s.io modules,
from the module proxy or the module cache) and protoc from grpcio-tools (a build requirement).
If generating is not possible (no Go, no network and the modules not in the cache), modules already
generated for the pinned version are used; without those the build fails saying what it needs.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
NEEDS = (
    "building wasmsched generates its Kubernetes protobuf modules (wasmsched/api/gen) with "
    "tools/gen_protos.py, which needs Go on PATH (`go mod download` of k8s.io/api and "
    "k8s.io/apimachinery {version}: network access to the Go module proxy, or a module cache that "
    "has them) and grpcio-tools; or install a wheel built by `make dist`"
)


def _generator() -> ModuleType:
    path = ROOT / "tools" / "gen_protos.py"
    spec = importlib.util.spec_from_file_location("wasmsched_gen_protos", path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise SystemExit(f"error: {path} is missing; " + NEEDS.format(version="(its pinned version)"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def generate_protos() -> None:
    gen = _generator()
    needs = NEEDS.format(version=gen.K8S_VERSION)
    version_file = ROOT / gen.OUT_PKG / "VERSION"
    generated = version_file.is_file() and version_file.read_text().strip() == gen.K8S_VERSION
    if shutil.which("go") is None:
        if generated:
            print(f"go not found: using the modules already generated in {gen.OUT_PKG}", file=sys.stderr)
            return
        raise SystemExit(f"error: go not found; {needs}")
    try:
        gen.main()
        return
    except subprocess.CalledProcessError as e:
        # `go mod download -json` reports a module's failure in its JSON output
        detail = "\n".join(re.findall(r'"Error":\s*"(.*)"', e.stdout or "")) or (e.stderr or "").strip()
        error = f"{' '.join(e.cmd)} failed: {detail}\n"
    except ImportError as e:
        error = f"{e}; "
    except SystemExit as e:  # the generator's own errors (a module not downloadable, protoc failing)
        error = f"{e}; "
    if generated:
        print(f"{error}using the modules already generated in {gen.OUT_PKG}", file=sys.stderr)
        return
    raise SystemExit(f"error: {error}{needs}")


class BuildPyWithProtos(build_py):
    """build_py that generates wasmsched/api/gen first and then packages it too: its packages did not
    exist yet when the package list was computed."""

    def run(self) -> None:
        generate_protos()
        packages = find_packages(where=str(ROOT), include=["wasmsched*"])
        self.packages = self.distribution.packages = packages
        self.__dict__.pop("data_files", None)  # computed on first use from the packages: again
        super().run()


setup(cmdclass={"build_py": BuildPyWithProtos})
