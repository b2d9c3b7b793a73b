"""A bounded slice of the guest fuzz (tests/wasm/fuzz_host.py; `make fuzz-host` runs the long one): the native
host built with AddressSanitizer and UndefinedBehaviorSanitizer, every host import called with adversarial
arguments, no sanitizer report, no dead process, every outcome a documented one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.wasm import fuzz_host

SLICE_CALLS = 5000


def test_a_fuzz_slice_on_the_sanitized_host_ends_only_in_documented_outcomes() -> None:
    report = fuzz_host.run_sanitized(SLICE_CALLS, seed=29, chunk=SLICE_CALLS, timeout=240)
    assert report.ok(), report.summary()
    t = report.totals
    assert t.calls >= SLICE_CALLS
    # The slice reaches the outcomes it is meant to: calls returning, memory faults, refused input.
    assert t.outcomes["returned"] and t.outcomes["memory fault"] and t.outcomes["host failure"], report.summary()


def test_classify_knows_only_the_documented_kinds() -> None:
    fault = "wasm: filter error: wasm error: host function k8s.io/api.node failed: out of bounds memory access"
    assert fuzz_host.classify(fault) == "memory fault"
    assert fuzz_host.classify("wasm: score error: out\nwasm error: timeout after 50ms\nwasm stack trace:") == "timeout"
    assert fuzz_host.classify("wasm: bind error: wasm error: guest exited with code 3") == "exit"
    refused = ("wasm: filter error: wasm error: host function k8s.io/scheduler.handle.pods.list failed: "
               "invalid query JSON: Expecting value: line 1 column 1 (char 0)")
    assert fuzz_host.classify(refused) == "host failure"
    internal = ("wasm: filter error: wasm error: host function k8s.io/scheduler.handle.pods.list failed: "
                "'NoneType' object has no attribute 'pod'")
    assert fuzz_host.classify(internal) is None
    assert fuzz_host.classify("wasm: filter error: wasm error: unreachable") is None


def test_the_generated_guest_calls_every_import_of_the_abi() -> None:
    from wasmsched.wasm.abi import IMPORTS, WASI_FUNCTIONS
    wat = fuzz_host.guest_wat()
    for imp in IMPORTS:
        assert f'"{imp.module}" "{imp.name}"' in wat
    for name in WASI_FUNCTIONS:
        assert f'"wasi_snapshot_preview1" "{name}"' in wat
    assert wat.count("(call $imp") == len(IMPORTS) + len(WASI_FUNCTIONS)


def test_the_native_api_tests_pass_on_the_sanitized_host(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/wasm/test_native_api.py's misuse of every error branch, with ASan and UBSan watching."""
    rc = fuzz_host.pytest_sanitized([str(Path(__file__).parent / "test_native_api.py")])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert " passed" in out and "failed" not in out, out
