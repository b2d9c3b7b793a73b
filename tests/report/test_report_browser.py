"""The report pages in a real browser (headless Chromium): they open from file:// with no console error and no
network request, show the counts of the -o json output, find a pod by name with its Filter table, and every view
draws; a screenshot of each view is written under the test's temporary directory."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import ROOT
from wasmsched.cli.main import main

DEMO = ROOT / "examples" / "clusters" / "demo"
VIEWS = ("summary", "cluster", "pods", "plugins")


class Page:
    """A report opened in a new browser page, with what it logged and requested."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        start = time.perf_counter()
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        self.open_seconds = time.perf_counter() - start
        self.url = path.as_uri()

    def show(self, view: str, shots: Path) -> None:
        self.page.click(f"nav button[data-view={view}]")
        self.page.wait_for_selector(f"#view-{view}.active")
        self.page.wait_for_timeout(200)  # ECharts draws on the next animation frame
        self.page.screenshot(path=str(shots / f"{view}.png"), full_page=True)

    def counts(self, run: int = 0) -> dict[str, int]:
        found: dict[str, int] = self.page.eval_on_selector_all(
            f"#view-summary [data-count][data-run='{run}']",
            "els => Object.fromEntries(els.map(e => [e.dataset.count, Number(e.textContent)]))")
        return found

    def clean(self) -> None:
        assert self.errors == []
        assert self.requests == [self.url]  # the file itself, nothing else


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[Path, dict[str, Any]]:
    page = tmp_path / "report.html"
    assert main(["simulate", *argv, "--report", str(page), "-o", "json"]) == 0
    return page, json.loads(capsys.readouterr().out)


def check_report(chromium: Any, page: Path, doc: dict[str, Any], shots: Path, pod: str, plugin: str) -> Page:
    p = Page(chromium, page)
    shots.mkdir()
    for view in VIEWS:
        p.show(view, shots)
    counts = p.counts()
    s = doc["summary"]
    assert counts["pods"] == len(doc["pods"])
    for phase in ("Scheduled", "Unschedulable", "Preempted", "Running"):
        assert counts.get(phase, 0) == s[phase.lower()], phase
    p.show("pods", shots)
    p.page.fill("#pod-search", pod)
    table = p.page.wait_for_selector("#pod-detail .filter-table, #pod-detail .score-table", timeout=10_000)
    assert table is not None
    assert p.page.inner_text("#pod-detail h2").endswith(f"/{pod}")
    assert plugin in p.page.inner_text("#pod-detail")
    p.page.screenshot(path=str(shots / "pod.png"), full_page=True)
    p.clean()
    return p


def test_demo_report_in_a_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str], chromium: Any) -> None:
    page, doc = simulate(tmp_path, capsys, str(DEMO))
    p = check_report(chromium, page, doc, tmp_path / "shots", "train-huge", "NodeResourcesFit")
    # An unschedulable pod shows kube's FailedScheduling message and the verdicts behind it.
    train = next(x for x in doc["pods"] if x["name"] == "train-huge")
    assert train["message"] in p.page.inner_text("#pod-detail")
    assert "Insufficient nvidia.com/gpu" in p.page.inner_text("#pod-detail .filter-table")


def test_report_of_2000_nodes_in_a_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str], chromium: Any) -> None:
    page, doc = simulate(tmp_path, capsys, "--generate", "nodes=2000,pods=3000")
    p = check_report(chromium, page, doc, tmp_path / "shots", "pod-002999", "NodeResourcesFit")
    assert page.stat().st_size < 20 * 2**20
    # Thousands of nodes are drawn as heatmaps, one per resource.
    p.show("cluster", tmp_path / "shots")
    assert p.page.locator("#view-cluster h3", has_text="% requested per node (2000 nodes)").count() == 3
    print(f"2000 nodes, 3000 pods: {page.stat().st_size / 2**20:.1f} MiB, opened in {p.open_seconds:.2f} s")


def test_compare_report_in_a_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str], chromium: Any,
                                     nodenumber_wasm: Path) -> None:
    page = tmp_path / "compare.html"
    config = ROOT / "examples" / "nodenumber" / "scheduler.yaml"
    assert main(["compare", "--config", str(config), str(DEMO), "--report", str(page), "-o", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    p = Page(chromium, page)
    shots = tmp_path / "shots"
    shots.mkdir()
    p.show("changes", shots)
    assert p.page.inner_text("#view-changes h3 >> nth=1") == f"Pods that moved: {len(diff['moved'])}"
    p.page.wait_for_selector("#moved-table .tabulator-row")
    rows = p.page.locator("#moved-table .tabulator-row .tabulator-cell[tabulator-field=pod]").all_inner_texts()
    assert sorted(rows) == sorted(m[0] for m in diff["moved"])
    for view in VIEWS:
        p.show(view, shots)
    # Both runs side by side.
    assert p.counts(0)["Scheduled"] == diff["runs"][0]["summary"]["Scheduled"]
    assert p.counts(1)["Scheduled"] == diff["runs"][1]["summary"]["Scheduled"]
    p.clean()
