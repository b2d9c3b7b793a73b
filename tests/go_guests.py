"""Shared by the tests that build Go guests (examples/, tests/go/, the tutorial) and load them.

Such tests carry the `go` marker (`make test-fast` deselects them): a fixture that builds Go or needs
the examples' .wasm is decorated with @builds_go, and tests/conftest.py marks every test that requests
it, directly or through other fixtures. A Go build from a test without the marker fails (run_ok,
build_go_guest), so a new test cannot forget it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from wasmsched.util.files import cache_dir

ROOT = Path(__file__).resolve().parents[1]
# The compiled-module cache of every test run (tests/conftest.py), kept across runs and clones outside the
# checkout: compiling a 17 MB Go guest takes ~25 CPU seconds, and a suite loads a dozen of them. An entry
# is keyed by the module's sha256 and wasmtime's version, so a cache shared this way is never stale, and
# the examples build reproducibly (GO_WASM_BUILD), so a clean clone hits. Not the user's cache
# (~/.cache/wasmsched/modules). Tests of the cache itself use their own directories.
MODULE_CACHE = cache_dir("WASMSCHED_TEST_CACHE_DIR", "test-modules")
# As the Makefile's GO_WASM_BUILD: reproducible bytes keep the module cache hitting.
GO_WASM_BUILD = ["go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false"]


GO_MARKER = "go"
_BUILDS_GO = "_builds_go"
F = TypeVar("F", bound=Callable[..., object])
# The test being set up or run (tests/conftest.py keeps it), for the marker check of the builds.
current_item: list[pytest.Item] = []


def builds_go(fixture_function: F) -> F:
    """Under @pytest.fixture: the tests requesting this fixture get the `go` marker."""
    setattr(fixture_function, _BUILDS_GO, True)
    return fixture_function


def fixture_builds_go(fixture_function: object) -> bool:
    return bool(getattr(fixture_function, _BUILDS_GO, False))


def _check_marked(what: str) -> None:
    item = current_item[-1] if current_item else None
    if item is not None and item.get_closest_marker(GO_MARKER) is None:
        pytest.fail(f"{item.nodeid} runs {what} but is not marked `{GO_MARKER}`: decorate the fixture that "
                    "builds with @builds_go (tests/go_guests.py), or mark the test", pytrace=False)


@contextlib.contextmanager
def _builds_serialized() -> Iterator[None]:
    """One build at a time across pytest-xdist workers: two workers' module fixtures may build the same
    guest into the same file, and one would load what the other is still writing."""
    lock = ROOT / ".cache" / "go-builds.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_ok(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Runs argv in cwd (env added to the environment); fails the test with its output unless it succeeds.
    go commands and make (but `make -n`) need the `go` marker, and run one at a time."""
    builds = argv[0] == "go" or (argv[0] == "make" and "-n" not in argv)
    if builds:
        _check_marked(" ".join(argv))
    with _builds_serialized() if builds else contextlib.nullcontext():
        proc = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{' '.join(argv)} in {cwd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def build_go_guest(guest_dir: Path, out: Path) -> None:
    run_ok([*GO_WASM_BUILD, "-o", str(out), "."], guest_dir, {"GOOS": "wasip1", "GOARCH": "wasm"})


def build_example(name: str) -> Path:
    """`make examples/NAME/NAME.wasm` (cached by make and go); the module's path. Needs the `go` marker."""
    run_ok(["make", "-s", f"examples/{name}/{name}.wasm"], ROOT)
    return ROOT / "examples" / name / f"{name}.wasm"

