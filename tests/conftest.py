"""Suite-wide set-up: compiled wasm modules are cached in the tests' own directory, not the user's cache;
tests that build Go guests are marked `go` (tests/go_guests.py)."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from tests import go_guests
from wasmsched.wasm import guest_log

# Longest test files first (tests/durations.py).
pytest_plugins = ["tests.durations"]

# Compiled wasm modules: the tests' own cache, kept across runs (tests/go_guests.py MODULE_CACHE);
# pytest-xdist workers and the CLIs the tests start inherit the variable.
os.environ.setdefault("WASMSCHED_CACHE_DIR", str(go_guests.MODULE_CACHE))
# The cache of guests pulled from OCI registries (wasm/oci/store.py) is the run's own, as the tests are of pulls,
# and removed when the run ends (by the process that made it: the workers inherit the variable).
if "WASMSCHED_OCI_CACHE_DIR" not in os.environ:
    _OCI_CACHE_DIR = tempfile.mkdtemp(prefix="wasmsched-test-oci-cache-")
    os.environ["WASMSCHED_OCI_CACHE_DIR"] = _OCI_CACHE_DIR
    atexit.register(shutil.rmtree, _OCI_CACHE_DIR, ignore_errors=True)

# Fixtures that need binaries of tools/kube/build.sh: the control plane, kube-oracle, the OCI registry and oras.
# And chromium, which `make browser` installs (tests/report).
BUILT_BINARY_FIXTURES = frozenset({"kube_binaries", "kube_oracle", "oci_registry", "own_oci_registry",
                                   "oci_tls_registry", "oras", "helm_binary", "chromium"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks `go` every test whose fixtures (their closure: also those requested through other fixtures)
    include one decorated with @builds_go, and `kube` every test that needs the control-plane binaries
    (the kube_binaries fixture of tests/kube/conftest.py, which dev_cluster uses) or kube-oracle (the
    kube_oracle fixture of tests/differential/conftest.py) or the OCI registry or oras (tests/oci/conftest.py)
    or helm (helm_binary, tests/kube/test_helm_chart.py)."""
    for item in items:
        if BUILT_BINARY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker("kube")
        if not isinstance(item, pytest.Function) or item.get_closest_marker(go_guests.GO_MARKER) is not None:
            continue
        defs = item._fixtureinfo.name2fixturedefs
        for name in item.fixturenames:
            if any(go_guests.fixture_builds_go(d.func) for d in defs.get(name, ())):
                item.add_marker(go_guests.GO_MARKER)
                break


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    go_guests.current_item[:] = [item]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    go_guests.current_item.clear()


@pytest.fixture(autouse=True)
def _restore_wasmsched_logger() -> Iterator[None]:
    """`wasmsched` CLI runs install their own handler, stop propagation and register it as the sink of
    guest lines (wasmsched/cli/logs.py); undo that after each test so later tests' caplog still sees
    records. Every test starts without a sink, also after a module fixture's CLI run: guest lines are
    then the guest logger's records."""
    root = logging.getLogger("wasmsched")
    saved = (list(root.handlers), root.level, root.propagate)
    if guest_log.sink() is not None:
        guest_log.set_sink(None)
    yield
    root.handlers[:], root.level, root.propagate = saved
    if guest_log.sink() is not None:
        guest_log.set_sink(None)
