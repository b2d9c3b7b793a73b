"""The native wasm host (wasmsched/wasm/_host.c) built with AddressSanitizer and UndefinedBehaviorSanitizer,
for the guest fuzz (tests/wasm/fuzz_host.py): a separate build, never the package's own extension.

The extension is compiled as setup.py compiles it (the same headers, the pinned wasmtime's C API), plus
`-fsanitize=address,undefined`, into `~/.cache/wasmsched/host-sanitized/<hash of the source and flags>/`
(outside the checkout, beside the C API headers; `WASMSCHED_CACHE` moves both). CPython is
not built with ASan, so the process that loads it must have libasan first (LD_PRELOAD) and must not let
ASan take SIGSEGV, SIGBUS and SIGFPE: wasmtime turns those into traps (a guest's out-of-bounds access
lands on a guard page). `sanitizer_env()` gives that environment; `install()`, run in that process before
anything imports wasmsched.wasm.native, makes the sanitized build be `wasmsched.wasm._host`.

    python tools/host_sanitized.py     # builds if needed, prints the extension's path
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "wasmsched" / "wasm" / "_host.c"
MODULE = "wasmsched.wasm._host"
# -O1 keeps the stack traces readable and is fast enough for a million calls; recover=all would let a run go
# on after an UB report, but the fuzz counts the first one as a failure anyway, with its stack.
CFLAGS = ("-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
          "-Wall", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-fPIC", "-shared")
# handle_*=0: wasmtime's own signal handlers must see guest faults; detect_leaks=0: CPython's interned
# objects and wasmtime's process-lifetime allocations are not leaks worth reporting.
ASAN_OPTIONS = ("detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1:"
                "abort_on_error=0:exitcode=86:print_summary=1")
UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1:exitcode=87"
# What a report looks like on stderr (the fuzz counts these).
REPORT_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: UndefinedBehaviorSanitizer",
                  "SUMMARY: AddressSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")


class SanitizedBuildError(Exception):
    """The sanitized extension cannot be built; the text says what is missing."""


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise SanitizedBuildError("building the sanitized native host needs a C compiler (gcc) on PATH")
    return cc


def runtime_library(name: str = "libasan.so") -> str:
    """The compiler's sanitizer runtime (libasan.so), to preload into an uninstrumented Python."""
    out = subprocess.run([_compiler(), f"-print-file-name={name}"], check=True, capture_output=True,
                         text=True).stdout.strip()
    if not os.path.isabs(out) or not os.path.exists(out):
        raise SanitizedBuildError(f"the C compiler has no {name} (Debian: the libgcc-<version>-dev package "
                                  "that gcc depends on ships it)")
    return os.path.realpath(out)


def build() -> Path:
    """The sanitized extension, compiled if its source or flags changed since the cached build."""
    capi = _load_tool("wasmtime_capi")
    try:
        inc = capi.include_dir()
    except capi.CapiError as e:
        raise SanitizedBuildError(str(e)) from None
    py_inc = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    cc = _compiler()
    key = hashlib.sha256(SOURCE.read_bytes() + "\0".join((cc, str(inc), py_inc, *CFLAGS)).encode()).hexdigest()[:16]
    out_dir = capi.cache_root().parent / "host-sanitized" / key
    out = out_dir / f"_host{suffix}"
    if out.is_file():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    cmd = [cc, *CFLAGS, f"-I{inc}", f"-I{py_inc}", str(SOURCE), "-o", str(tmp), "-ldl"]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if r.returncode != 0:
        raise SanitizedBuildError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()[-4000:]}")
    tmp.rename(out)
    return out


def sanitizer_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a Python process that loads the sanitized extension."""
    env = dict(os.environ if base is None else base)
    preload = runtime_library("libasan.so")
    env["LD_PRELOAD"] = f"{preload} {env['LD_PRELOAD']}" if env.get("LD_PRELOAD") else preload
    env["ASAN_OPTIONS"] = ASAN_OPTIONS
    env["UBSAN_OPTIONS"] = UBSAN_OPTIONS
    env["PYTHONMALLOC"] = "malloc"  # Python objects in ASan-checked allocations, not pymalloc arenas
    return env


def install(path: Path) -> None:
    """Makes the extension at path be wasmsched.wasm._host in this process (before native.py imports it)."""
    if MODULE in sys.modules:
        raise RuntimeError(f"{MODULE} is already imported: install the sanitized build first")
    importlib.import_module(MODULE.rpartition(".")[0])  # the package (its __init__ imports nothing of the host)
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
    if spec is None:
        raise RuntimeError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = mod
    loader.exec_module(mod)


def reports(stderr: str) -> list[str]:
    """The sanitizer report lines in a process's stderr."""
    return [line for line in stderr.splitlines() if any(m in line for m in REPORT_MARKERS)]


def _load_tool(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"wasmsched_tool_{name}", ROOT / "tools" / f"{name}.py")
    if spec is None or spec.loader is None:
        raise SanitizedBuildError(f"tools/{name}.py is missing")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    try:
        print(build())
    except SanitizedBuildError as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
