"""simulate --report: the page's data agree with the -o json output and with --explain's full form, the page is
self-contained, and its file is checked before the run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import ROOT, page_data
from wasmsched.cli.main import main
from wasmsched.config import load_config
from wasmsched.embedded.generate import generate
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.report import html
from wasmsched.report.data import report_document
from wasmsched.scheduler.algorithm import SUMMARY_BEST_NODES, SUMMARY_NODE_NAMES
from wasmsched.scheduler.explain import explain_document
from wasmsched.simulator.simulation import Simulation

DEMO = ROOT / "examples" / "clusters" / "demo"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_summary_and_pods_equal_the_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "demo.html"
    code, out, _ = run_cli(capsys, "simulate", str(DEMO), "--report", str(page), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    data = page_data(page)
    s = data["summary"]
    assert s["pods"] == len(doc["pods"])
    for phase in ("Scheduled", "Unschedulable", "Preempted", "Ignored", "Running"):
        assert s.get(phase, 0) == doc["summary"][phase.lower()], phase
    strings, names = data["strings"], data["nodes"]["names"]
    pods = data["pods"]
    got = [(strings[pods["namespace"][i]], n, strings[pods["phase"][i]],
            names[pods["node"][i]] if pods["node"][i] >= 0 else None, strings[pods["message"][i]])
           for i, n in enumerate(pods["name"])]
    assert got == [(p["namespace"], p["name"], p["phase"], p["node"], p["message"]) for p in doc["pods"]]
    assert s["nodes"] == 12 and names == sorted(names)


def test_report_names_the_preemption_victims_and_the_plugins(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "demo.html"
    code, out, _ = run_cli(capsys, "simulate", str(DEMO), "--report", str(page), "-o", "json")
    assert code == 0
    preempted = [f"{p['namespace']}/{p['name']}" for p in json.loads(out)["pods"] if p["phase"] == "Preempted"]
    data = page_data(page)
    victims = [v for vs in data["pods"]["victims"] for v in vs]
    assert preempted and sorted(victims) == sorted(preempted)
    profile = data["profiles"][0]
    assert profile["schedulerName"] == "default-scheduler"
    assert "NodeResourcesFit" in profile["extensionPoints"]["filter"]
    assert profile["weights"]["TaintToleration"] == 3
    timed = {(t["plugin"], t["extension_point"]) for t in data["plugins"]["time"]}
    assert ("NodeResourcesFit", "Filter") in timed and ("DefaultBinder", "Bind") in timed
    assert data["plugins"]["rejected"]["NodeResourcesFit"] > 0


def _groups(explain: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    """--explain's full Filter verdicts counted per (plugin, code, reasons)."""
    return Counter((st["plugin"], st["code"], ", ".join(st["reasons"]))
                   for st in explain["filter"].values() if st != "ok")


@pytest.mark.parametrize("spec", [(40, 160), (4, 400)])
def test_summarised_explanations_equal_the_full_ones(spec: tuple[int, int]) -> None:
    """The summary form (what a report keeps) counts the same verdicts and keeps the same best nodes as the
    full form of --explain, over pods that fit, pods PreFilter restricts to a zone (the generator's
    nodeSelectors), and pods that no longer fit."""
    docs = []
    for explain, summary in ((True, False), (False, True)):
        sim = Simulation(load_config(None), in_tree_registry(), explain=explain, explain_summary=summary)
        sim.apply(generate(*spec))
        result = sim.run_until_quiet()
        docs.append((result, report_document(sim, result, title="t", config=None, metrics=None)))
        sim.scheduler.close()
    (full, _), (_, data) = docs
    strings, names = data["strings"], data["nodes"]["names"]
    phases = Counter(p.phase for p in full.pods)
    assert phases["Scheduled"] and (spec[1] < 400 or phases["Unschedulable"]), phases
    for i, p in enumerate(full.pods):
        ex = explain_document(p.explain)
        s = data["pods"]["explain"][i]
        assert data["pods"]["name"][i] == p.name
        want = _groups(ex)
        got = Counter({(strings[g[1]], strings[g[2]], strings[g[3]]): g[0] for g in s["filter"]})
        assert got == want, p.name
        for g in s["filter"]:
            assert len(g[4]) == min(g[0], SUMMARY_NODE_NAMES)
        assert s["passed"] == sum(1 for st in ex["filter"].values() if st == "ok")
        assert s["passed"] + s["notEvaluated"] + sum(want.values()) == len(names)
        best = sorted(ex["scores"], key=lambda n: (-ex["scores"][n]["total"], n))[:SUMMARY_BEST_NODES]
        assert [names[n] for n in s["scores"]["nodes"]] == best
        assert s["scores"]["totals"] == [ex["scores"][n]["total"] for n in best]


def test_page_is_self_contained_and_escapes_what_it_shows(tmp_path: Path) -> None:
    hostile = "</script><script>alert(1)</script><!--"
    doc = {"format": "wasmsched.report/v1", "title": hostile, "strings": [hostile]}
    page = html.render(doc)
    data = page.split('<script id="report-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data  # nothing in it ends the element or changes how the parser reads it
    assert "<script>alert(1)" not in page
    assert "&lt;/script&gt;" in page  # the title, escaped
    assert "<script src" not in page and "<link" not in page
    assert "default-src 'none'" in page  # the page may load nothing, should a library try
    path = tmp_path / "r.html"
    html.write(path, doc)
    assert page_data(path)["strings"] == [hostile]


def test_report_file_is_checked_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "simulate", str(DEMO), "--report", str(tmp_path / "no" / "r.html"))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: --report {tmp_path / 'no' / 'r.html'}: {tmp_path / 'no'} is not a "
                                        "directory"]


@pytest.mark.parametrize("flag", ["--report", "--metrics"])
def test_an_unwritable_output_file_is_refused_before_the_run(flag: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Opening fails where the directory checks pass (procfs); an existing file keeps its bytes."""
    code, out, err = run_cli(capsys, "simulate", str(DEMO), flag, "/proc/wasmsched-report")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: {flag} /proc/wasmsched-report: ")
    kept = tmp_path / "kept"
    kept.write_text("before")
    code, _, _ = run_cli(capsys, "simulate", str(tmp_path / "none"), flag, str(kept))
    assert code == 2 and kept.read_text() == "before"
