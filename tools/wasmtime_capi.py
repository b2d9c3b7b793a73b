"""The C API headers of the wasmtime release the Python package pins, for the native host
(wasmsched/wasm/_host.c), fetched from the crate registry.

The headers ship in the `wasmtime-c-api-impl` crate of the same version as the `wasmtime` wheel
(pyproject.toml pins it). `cargo fetch` downloads the crate (from crates.io, or cargo's cache) into
a scratch package under the cache directory; its `include/` is copied beside it, with the
`wasmtime/conf.h` that CMake would configure. The result is cached outside the source tree:
`${WASMSCHED_CACHE:-~/.cache/wasmsched}/wasmtime-capi/<version>/include`.

    python tools/wasmtime_capi.py     # prints the include directory
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATE = "wasmtime-c-api-impl"
# What the wheel's library is built with (wasmtime-py builds the C API with its defaults); only
# declarations depend on these, and _host.c uses none of the optional ones.
FEATURES = ("WAT", "CACHE", "PARALLEL_COMPILATION", "WASI", "LOGGING", "COREDUMP", "ADDR2LINE", "DEMANGLE",
            "THREADS", "GC", "GC_DRC", "GC_NULL", "ASYNC", "CRANELIFT", "POOLING_ALLOCATOR", "PROFILING",
            "COMPONENT_MODEL")


class CapiError(Exception):
    """The headers cannot be had; the text says what is needed."""


def pinned_version(pyproject: Path = ROOT / "pyproject.toml") -> str:
    m = re.search(r'"wasmtime==([0-9][^"]*)"', pyproject.read_text())
    if m is None:
        raise CapiError(f"{pyproject}: no wasmtime==<version> pin in [project] dependencies")
    return m.group(1)


def cache_root() -> Path:
    base = os.environ.get("WASMSCHED_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wasmsched")
    return Path(base) / "wasmtime-capi"


def include_dir(version: str | None = None) -> Path:
    """The include directory for `version` (default: the pinned one), fetched on first use."""
    version = version or pinned_version()
    dest = cache_root() / version
    inc = dest / "include"
    if (inc / "wasmtime.h").is_file() and (inc / "wasmtime" / "conf.h").is_file():
        return inc
    cargo = shutil.which("cargo")
    if cargo is None:
        raise CapiError(f"building wasmsched's native wasm host needs wasmtime {version}'s C API headers from the "
                        f"crate {CRATE} {version}: cargo (Rust) is not on PATH")
    scratch = dest / "fetch"
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "Cargo.toml").write_text(
        f'[package]\nname = "wasmsched-capi-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{CRATE} = "={version}"\n')
    (scratch / "lib.rs").write_text("")
    try:
        subprocess.run([cargo, "fetch", "--quiet"], cwd=scratch, check=True, capture_output=True, text=True)
        meta = subprocess.run([cargo, "metadata", "--format-version", "1"], cwd=scratch, check=True,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as e:
        raise CapiError(f"cargo could not fetch the crate {CRATE} {version} (the wasmtime C API headers) from the "
                        f"crate registry: {(e.stderr or '').strip()[-2000:]}") from e
    pkgs = [p for p in json.loads(meta)["packages"] if p["name"] == CRATE and p["version"] == version]
    if not pkgs:
        raise CapiError(f"cargo metadata did not list {CRATE} {version}")
    src = Path(pkgs[0]["manifest_path"]).parent / "include"
    tmp = dest / "include.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp)
    conf_in = (tmp / "wasmtime" / "conf.h.in").read_text()
    conf = re.sub(r"#cmakedefine (WASMTIME_FEATURE_(\w+))",
                  lambda m: f"#define {m.group(1)}" if m.group(2) in FEATURES else f"/* #undef {m.group(1)} */",
                  conf_in)
    (tmp / "wasmtime" / "conf.h").write_text(conf)
    shutil.rmtree(inc, ignore_errors=True)
    tmp.rename(inc)
    return inc


def main() -> None:
    try:
        print(include_dir())
    except CapiError as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
