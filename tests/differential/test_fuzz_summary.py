"""The fuzzer's summary names the seeds whose kube answers varied, so they can be asked again by hand."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.differential import fuzz
from tests.differential.fuzz import SeedResult


def test_summary_names_the_seeds_kube_answered_differently(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    results = [SeedResult(7, [], attempts=3), SeedResult(9, [], attempts=2, oracle_retried=1),
               SeedResult(8, [], attempts=4, diverged=1), SeedResult(5, [], attempts=1, oracle_retried=2)]

    def run(seeds: Iterable[int], jobs: int, modes: tuple[str, ...], binary: Path,
            swap: str | None = None) -> Iterator[SeedResult]:
        return iter(results)

    monkeypatch.setattr(fuzz, "run", run)
    monkeypatch.setattr(fuzz, "oracle_binary", lambda: Path("kube-oracle"))
    assert fuzz.main(["--seeds", "5:10", "--jobs", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fuzz-kube: 4 seeds (of 5..9), modes cycle,run: 0 with differences")
    assert out[0].endswith("10 scheduling attempts compared, 1 runs parted ways at a preemption kube could have "
                           "decided either way, 3 kube-oracle answers that changed when asked again")
    assert out[1:] == ["fuzz-kube: seeds where parted ways at a preemption: 8",
                       "fuzz-kube: seeds where kube answered differently: 5 9"]


def test_summary_is_one_line_when_kube_answered_alike(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(fuzz, "run", lambda *a: iter([SeedResult(0, [], attempts=1)]))
    monkeypatch.setattr(fuzz, "oracle_binary", lambda: Path("kube-oracle"))
    assert fuzz.main(["--seeds", "1", "--jobs", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
