"""Build hooks: the Kubernetes protobuf modules (wasmsched/api/gen) are generated, not committed;
the native wasm host (wasmsched/wasm/_host.c) is compiled against wasmtime's C API headers.

Metadata and everything else are in pyproject.toml. Building a wheel (`pip install .`, `make dist`)
first runs tools/gen_protos.py, which needs Go (`go mod download` of the pinned k8s.io modules,
from the module proxy or the module cache) and protoc from grpcio-tools (a build requirement).
If generating is not possible (no Go, no network and the modules not in the cache), modules already
generated for the pinned version are used; without those the build fails saying what it needs.

The native host needs a C compiler and the C API headers of the pinned wasmtime release, which
tools/wasmtime_capi.py fetches with cargo from the crate registry (cached outside the tree). There is
no pure-Python fallback: without them the build fails saying what is missing.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
REPORT_DATA_FOLDERS = ["wasmsched.report.static", "wasmsched.report.templates", "wasmsched.report.vendor"]
NEEDS = (
    "building wasmsched generates its Kubernetes protobuf modules (wasmsched/api/gen) with "
    "tools/gen_protos.py, which needs Go on PATH (`go mod download` of k8s.io/api and "
    "k8s.io/apimachinery {version}: network access to the Go module proxy, or a module cache that "
    "has them) and grpcio-tools; or install a wheel built by `make dist`"
)


def _tool(name: str, missing: str) -> ModuleType:
    path = ROOT / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"wasmsched_{name.replace('/', '_')}", path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise SystemExit(f"error: {path} is missing; {missing}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _generator() -> ModuleType:
    return _tool("gen_protos", NEEDS.format(version="(its pinned version)"))


def native_host() -> Extension:
    """wasmsched.wasm._host, built against the pinned wasmtime's C API headers."""
    capi = _tool("wasmtime_capi", "it fetches the wasmtime C API headers the native wasm host is built with")
    try:
        inc = capi.include_dir()
    except capi.CapiError as e:
        raise SystemExit(f"error: {e}") from None
    return Extension("wasmsched.wasm._host", ["wasmsched/wasm/_host.c"], include_dirs=[str(inc)],
                     libraries=["dl"], extra_compile_args=["-O2", "-Wall", "-Wno-unused-parameter",
                                                           "-Wno-missing-field-initializers"])


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


def vendor_report_libraries() -> None:
    """The HTML report's libraries (tools/report/vendor.py: npm ci of the pinned versions), unless there."""
    vendor = _tool("report/vendor", "it installs the libraries the HTML report inlines")
    if vendor.main() != 0:
        raise SystemExit("error: the report's libraries could not be installed (tools/report/vendor.py)")


class BuildPyWithProtos(build_py):
    """build_py that generates wasmsched/api/gen first and then packages it too: its packages did not
    exist yet when the package list was computed."""

    def run(self) -> None:
        generate_protos()
        vendor_report_libraries()
        # The report's page files are package data of wasmsched.report (pyproject.toml); their folders are
        # listed too, as setuptools asks of every folder Python could import, or it warns for each.
        packages = find_packages(where=str(ROOT), include=["wasmsched*"]) + REPORT_DATA_FOLDERS
        self.packages = self.distribution.packages = packages
        self.__dict__.pop("data_files", None)  # computed on first use from the packages: again
        super().run()


setup(cmdclass={"build_py": BuildPyWithProtos}, ext_modules=[native_host()])
