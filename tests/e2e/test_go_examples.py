"""The Go guest examples (examples/<name>, built with the standard Go toolchain and the SDK in sdk/go)
run in `simulate` and produce the placements their READMEs promise.

Each README has a "## Run it" section whose console block starts with the `wasmsched simulate` command
and continues with its output; these tests run the command and compare every pod's phase and node.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import run_cli
from tests.go_guests import MODULE_CACHE, ROOT, builds_go, run_ok
from wasmsched.wasm import abi
from wasmsched.wasm.engine import Runtime

EXAMPLES = ["nodenumber", "imagelocality", "advanced", "interpodaffinity", "noderesourcetopology", "coscheduling"]


@pytest.fixture(scope="session")
@builds_go
def examples_built() -> None:
    """`make examples` (cached by make and go)."""
    run_ok(["make", "-s", "examples"], ROOT)


@pytest.fixture
def built(examples_built: None) -> None:
    """The examples, built."""


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch, built: None) -> None:
    """READMEs' commands use repo-relative paths, guestURL included."""
    monkeypatch.chdir(ROOT)


def run_it_block(example: str) -> list[str]:
    """The console block of the README's "## Run it" section: command line first, then output."""
    text = (ROOT / "examples" / example / "README.md").read_text()
    section = text.split("\n## Run it", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```console\n(.*?)```", section, re.DOTALL)
    assert m, f"examples/{example}/README.md: no console block under '## Run it'"
    return m.group(1).rstrip("\n").split("\n")


def table_rows(lines: list[str]) -> list[tuple[str, str, str, str]]:
    """(namespace, name, phase, node) of each row of simulate's table output."""
    start = next(i for i, line in enumerate(lines) if line.startswith("NAMESPACE"))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        ns, name, phase, node = line.split()[:4]
        rows.append((ns, name, phase, node))
    return rows


def summary(lines: list[str]) -> str:
    """The last line without its wall time, e.g. '20 scheduled, 5 unschedulable, 1 preempted'."""
    last = [line for line in lines if line.strip()][-1]
    return re.sub(r" in [0-9.]+s$", "", last)


def readme_command(lines: list[str]) -> list[str]:
    argv = shlex.split(lines[0].removeprefix("$ "))
    assert argv[0] == ".venv/bin/wasmsched", lines[0]
    return argv[1:]


@pytest.mark.parametrize("example", EXAMPLES)
def test_readme_placements(example: str, at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    lines = run_it_block(example)
    rc, out, err = run_cli(capsys, *readme_command(lines))
    assert rc == 0, err
    got = out.rstrip("\n").split("\n")
    assert table_rows(got) == table_rows(lines)
    assert summary(got) == summary(lines)


@pytest.mark.parametrize("example", EXAMPLES)
def test_pool_is_clean_after_the_run(example: str, at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = readme_command(run_it_block(example))
    rc, out, err = run_cli(capsys, *argv, "-o", "json")
    assert rc == 0, err
    wasm = json.loads(out)["summary"]["wasm"]
    assert wasm, "no wasm plugin ran"
    for counters in wasm.values():
        assert counters["discarded"] == 0
        assert counters["live"] == counters["idle"]
        assert counters["scheduling"] == counters["binding"] == 0


def test_nodenumber_metrics_show_the_pool_and_the_guest_calls(at_root: None, capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.txt"
    argv = readme_command(run_it_block("nodenumber"))
    rc, out, err = run_cli(capsys, *argv, "-o", "json", "--metrics", str(metrics))
    assert rc == 0, err
    counters = json.loads(out)["summary"]["wasm"]["NodeNumber"]
    text = metrics.read_text()
    for state in ("idle", "scheduling", "binding"):
        assert f'wasmsched_wasm_instances{{plugin="NodeNumber",state="{state}"}} {float(counters[state])}' in text
    assert f'wasmsched_wasm_instances_created_total{{plugin="NodeNumber"}} {float(counters["created"])}' in text
    assert "# TYPE wasmsched_wasm_guest_call_duration_seconds histogram" in text  # sampled: maybe no call yet
    assert "wasmsched_wasm_traps_total{" not in text


# exports/score links Score's batch form scorenodes beside score (docs/abi.md §17).
EXPECTED_EXPORTS = {
    "nodenumber": {"enqueue", "prefilter", "prescore", "score", "scorenodes"},
    "imagelocality": {"prefilter", "prescore", "score", "scorenodes"},
    "advanced": {"prefilter", "filter", "prescore", "score", "scorenodes", "reserve", "unreserve", "permit",
                 "postbind"},
    # ABI v2 (docs/abi.md §14): cyclestate_clone with AddPod/RemovePod, queueinghint with its hints.
    "interpodaffinity": {"enqueue", "prefilter", "filter", "addpod", "removepod", "prescore", "score", "scorenodes",
                         "normalizescore", "cyclestate_clone", "queueinghint"},
    # ABI v2 through handle.objects and the framework package's EventsToRegister: importing the package
    # links queueinghint, which the host never calls, as no event has a hint.
    "noderesourcetopology": {"enqueue", "prefilter", "filter", "score", "scorenodes", "queueinghint"},
    # ABI v2 §15: preenqueue and queuesort (abi.V2_EXPORTS must list them, with the host side of §15).
    "coscheduling": {"enqueue", "prefilter", "postfilter", "reserve", "unreserve", "permit", "postbind",
                     "queueinghint", "preenqueue", "queuesort"},
}


@pytest.mark.parametrize("example", EXAMPLES)
def test_only_the_needed_exports_are_in_the_module(example: str, built: None) -> None:
    """The scheduler activates an extension point when its export exists (docs/abi.md §2)."""
    module = Runtime(MODULE_CACHE).compile((ROOT / "examples" / example / f"{example}.wasm").read_bytes())
    names = {e.name for e in module.exports}
    assert names & {*abi.EXPORTS, *abi.V2_EXPORTS} == EXPECTED_EXPORTS[example]
    assert {"memory", "_initialize"} <= names


def readme_reverse_table() -> list[list[str]]:
    text = (ROOT / "examples" / "nodenumber" / "README.md").read_text()
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ") and "node-" in line]
    return [[c.strip() for c in row] for row in rows]


def test_nodenumber_readme_comparison_table(at_root: None, capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    """The README's table: default plugins, + NodeNumber, + NodeNumber with reverse."""
    cfg_path = ROOT / "examples" / "nodenumber" / "scheduler.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    args = cfg["profiles"][0]["pluginConfig"][0]["args"]
    args["guestConfig"] = '{"reverse": true}'
    args["guestURL"] = str(cfg_path.parent / args["guestURL"])  # relative to the original file's directory
    reverse = tmp_path / "reverse.yaml"
    reverse.write_text(yaml.safe_dump(cfg))
    demo = "examples/clusters/demo"
    columns = []
    for extra in ([], ["--config", str(cfg_path)], ["--config", str(reverse)]):
        rc, out, err = run_cli(capsys, "simulate", "-o", "json", *extra, demo)
        assert rc == 0, err
        columns.append({p["name"]: p["node"] for p in json.loads(out)["pods"]})
    table = readme_reverse_table()
    assert len(table) == 5
    for pod, *nodes in table:
        assert [col[pod] for col in columns] == nodes, pod


def test_nodenumber_logs_in_prescore_and_records_an_event_only_without_digit(
        at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "-v", "2", "simulate", "-o", "json", "--config",
                           "examples/nodenumber/scheduler.yaml", "examples/clusters/demo")
    assert rc == 0, err
    assert '"prescore" pod="shop/cache-1" digit="1" nodes="5" plugin="NodeNumber"' in err
    events = [e for e in json.loads(out)["events"] if e["reason"] == "NodeNumber"]
    # One event, for the one pod scored whose name ends in no digit; none per attempt.
    assert events == [{"type": "Normal", "reason": "NodeNumber", "regarding": "default/scratch",
                       "message": "no node favoured: the pod's name does not end in a digit"}]


def test_demo_config_works_from_any_directory(built: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """guestURL is relative to the configuration file, so the demo runs from any working directory."""
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--config",
                           str(ROOT / "examples" / "nodenumber" / "scheduler.yaml"),
                           str(ROOT / "examples/clusters/demo"))
    assert rc == 0, err
    assert json.loads(out)["summary"]["wasm"]["NodeNumber"]["created"] >= 1


def test_make_demo_runs_the_nodenumber_readme_command() -> None:
    assert run_it_block("nodenumber")[0].removeprefix("$ ") in run_ok(["make", "-n", "demo"], ROOT)


def markdown_table(example: str, header_start: str) -> list[list[str]]:
    """Body rows of the README table whose header row starts with header_start."""
    lines = (ROOT / "examples" / example / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def imagelocality_configs(tmp_path: Path) -> dict[str, list[str]]:
    """--config arguments: no ImageLocality, the in-tree one (defaults), the wasm one, and both."""
    wasm_cfg = ROOT / "examples" / "imagelocality" / "scheduler.yaml"
    cfg = yaml.safe_load(wasm_cfg.read_text())
    none = {"apiVersion": cfg["apiVersion"], "kind": cfg["kind"], "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}}]}
    both = yaml.safe_load(wasm_cfg.read_text())
    del both["profiles"][0]["plugins"]["multiPoint"]["disabled"]
    args = both["profiles"][0]["pluginConfig"][0]["args"]
    args["guestURL"] = str(wasm_cfg.parent / args["guestURL"])  # relative to the original file's directory
    paths = {}
    for name, doc in (("none", none), ("both", both)):
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(doc))
    return {"none": ["--config", str(paths["none"])], "in-tree": [], "wasm": ["--config", str(wasm_cfg)],
            "both": ["--config", str(paths["both"])]}


def test_imagelocality_readme_comparison_table(at_root: None, capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    configs = imagelocality_configs(tmp_path)
    columns = []
    for name in ("none", "in-tree", "wasm"):
        rc, out, err = run_cli(capsys, "simulate", "-o", "json", *configs[name], "examples/imagelocality/cluster")
        assert rc == 0, err
        columns.append({p["name"]: p["node"] for p in json.loads(out)["pods"]})
    table = markdown_table("imagelocality", "| pod |")
    assert len(table) == 7
    for pod, _on, *nodes in table:
        assert [col[pod] for col in columns] == nodes, pod


@pytest.mark.parametrize("cluster", ["examples/imagelocality/cluster", "examples/clusters/demo"])
def test_imagelocality_scores_equal_the_in_tree_plugin(cluster: str, at_root: None,
                                                       capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Both plugins enabled with weight 1: every explained node score is the same."""
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--explain",
                           *imagelocality_configs(tmp_path)["both"], cluster)
    assert rc == 0, err
    pairs = 0
    for pod in json.loads(out)["pods"]:
        for node, scores in (pod.get("scores") or {}).items():
            assert scores["ImageLocalityWasm"] == scores["ImageLocality"], (pod["name"], node)
            pairs += 1
    assert pairs >= 20
    assert any(scores["ImageLocality"] > 0 for pod in json.loads(out)["pods"]
               for scores in (pod.get("scores") or {}).values())


def test_advanced_postbind_events_carry_prefilter_state(at_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's TeamPlaced events, recorded in PostBind (binding cycle) from PreFilter's state."""
    text = (ROOT / "examples" / "advanced" / "README.md").read_text()
    promised = [json.loads(line) for line in text.split("### Events", 1)[1].splitlines() if line.startswith("{")]
    assert len(promised) == 6
    rc, out, err = run_cli(capsys, *readme_command(run_it_block("advanced")), "-o", "json")
    assert rc == 0, err
    got = [e for e in json.loads(out)["events"] if e["reason"] == "TeamPlaced"]
    # Binding cycles run concurrently, so the events' order may vary.
    assert sorted(got, key=lambda e: e["regarding"]) == sorted(promised, key=lambda e: e["regarding"])


def test_a_guest_panic_at_load_is_one_line_and_whole_with_v2(built: None, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Bad input is one line on stderr; the guest's panic and stack trace come with -v 2."""
    cfg = yaml.safe_load((ROOT / "examples/nodenumber/scheduler.yaml").read_text())
    args = cfg["profiles"][0]["pluginConfig"][0]["args"]
    args["guestURL"] = str(ROOT / "examples/nodenumber/nodenumber.wasm")
    args["guestConfig"] = '{"reverse": 3}'
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(cfg))
    demo = str(ROOT / "examples/clusters/demo")
    rc, out, err = run_cli(capsys, "simulate", "--config", str(path), demo)
    assert (rc, out) == (2, "")
    assert err.count("\n") == 1, err
    assert "instantiate error: panic: plugin.Set: NodeNumber: decoding guestConfig" in err
    assert re.search(r" \[\d+ more lines with -v 2\]\n$", err), err
    rc, _, err = run_cli(capsys, "-v", "2", "simulate", "--config", str(path), demo)
    assert rc == 2
    assert "goroutine 1 [running]:" in err
