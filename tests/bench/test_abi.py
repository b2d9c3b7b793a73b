"""bench/abi.py's own logic: formatting, JSON, argument errors, and a wasmsched-only run on the empty
guest (no KSWE checkout, no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_abi", ROOT / "bench" / "abi.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_abi"] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


abi = _load()


def _row(key: str, ws: list[float], ks: list[float] | None) -> object:
    m = next(m for m in abi.MEASUREMENTS if m.key == key)
    return abi.Row(m, abi.Stats(ws), None if ks is None else abi.Stats(ks))


def test_format_ns_picks_the_unit() -> None:
    assert abi.format_ns(750.4) == "750 ns"
    assert abi.format_ns(10_900) == "10.90 us"
    assert abi.format_ns(34_710_000) == "34.71 ms"


def test_stats_are_min_and_median_of_the_rounds() -> None:
    s = abi.Stats([5.0, 1.0, 3.0, 9.0])
    assert (s.min_ns, s.median_ns) == (1.0, 4.0)
    with pytest.raises(ValueError):
        abi.Stats([])


def test_table_shows_both_hosts_and_the_ratio_of_medians() -> None:
    rows = [_row("empty_filter", [10_000.0, 11_000.0, 12_000.0], [700.0, 750.0, 800.0]),
            _row("empty_filter_batch", [4_000.0], None)]
    table = abi.format_table(rows, 1000)
    lines = table.splitlines()
    assert "over 1000 nodes" in lines[0]
    empty = next(line for line in lines if line.startswith("empty filter "))
    assert "10.00 us" in empty and "11.00 us" in empty and "700 ns" in empty and "750 ns" in empty
    assert empty.endswith("14.67x")
    batch = next(line for line in lines if line.startswith("empty filter, batch"))
    assert batch.split()[-3:] == ["-", "-", "-"]


def test_json_rows_and_host_overhead() -> None:
    rows = [_row("empty_filter", [10_000.0], [750.0]), _row("empty_filter_batch", [4_000.0], [500.0]),
            _row("cycle", [30e6], [20e6])]
    out = abi.results_json(rows, {"nodes": 1000})
    json.dumps(out)  # serialisable as it stands
    assert out["nodes"] == 1000
    first = out["rows"][0]
    assert (first["key"], first["call"], first["unit"]) == ("empty_filter", "filter", "call")
    assert first["wasmsched"]["median_ns"] == 10_000.0 and first["kswe"]["min_ns"] == 750.0
    assert out["host_overhead"]["per_call_ns"] == {"wasmsched": 10_000.0, "wasmsched_min": 10_000.0, "kswe": 750.0,
                                                   "target_ns": 300.0}
    assert out["host_overhead"]["per_node_in_batch_ns"]["wasmsched"] == 4_000.0
    assert out["host_overhead"]["cycle_ratio"]["ratio"] == pytest.approx(1.5)
    text = abi.format_targets(out["host_overhead"])
    assert "median 10.00 us, min 10.00 us (target <= 300 ns)" in text
    assert "1.50x of the medians, 1.50x of the mins (target <= 0.5x)" in text


def test_without_kswe_there_is_no_cycle_ratio() -> None:
    out = abi.results_json([_row("cycle", [30e6], None)], {})
    assert out["rows"][0]["kswe"] is None and out["rows"][0]["ratio_median"] is None
    assert "cycle_ratio" not in out["host_overhead"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--nodes", "5"], "--nodes 5: at least 9"),
    (["--rounds", "0"], "--rounds 0: at least 1"),
    (["--wasmsched-only"], "--wasmsched-only needs --kswe"),
    (["--gomaxprocs", "0"], "--gomaxprocs 0: at least 1"),
    (["--kswe", "/nonexistent/kswe"], "guest/testdata/filter/main.wasm is missing"),
])
def test_argument_errors_name_the_argument(argv: list[str], message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        abi.parse_args(argv)
    assert message in capsys.readouterr().err


def test_a_run_without_kswe_measures_the_empty_guest_on_wasmsched(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "abi.json"
    assert abi.main(["--nodes", "9", "--rounds", "2", "--round-ms", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "KSWE column left out: no --kswe PATH" in printed
    result = json.loads(out.read_text())
    assert result["kswe"] is None
    assert [r["key"] for r in result["rows"]] == ["empty_filter", "empty_filter_batch"]
    assert all(len(r["wasmsched"]["ns"]) == 2 and r["kswe"] is None for r in result["rows"])
