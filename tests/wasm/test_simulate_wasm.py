"""End-to-end `wasmsched simulate` with wasm plugins (docs/abi.md §2 loading, §8 counters, §9 config, §10 texts).

A KubeSchedulerConfiguration file enables WAT guests (compiled into tmp_path) as wasm plugins next to the
default plugins; the cluster is manifests written into tmp_path; the CLI runs in this process (one test
runs the installed `wasmsched` console script).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.cli.main import main
from wasmsched.wasm import loader
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.plugin import new_wasm_plugin

from .harness import LAST_DIGIT_WAT, compile_wat

NODE_NAME_ENDS_IN_0 = {"plugin": "lastdigit", "code": "Unschedulable", "reasons": ["node name ends in 0"]}
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}


@pytest.fixture(scope="module", autouse=True)
def runtime(process_runtime: Runtime) -> Runtime:
    return process_runtime


# ----- helpers ------------------------------------------------------------------------------------

def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`wasmsched ARGV...` in this process. main() configures the "wasmsched" logger (own handler, no
    propagation); that is undone afterwards so later tests' caplog still sees wasmsched's records."""
    logger = logging.getLogger("wasmsched")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    capsys.readouterr()
    try:
        rc = main(list(argv))
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    out, err = capsys.readouterr()
    return rc, out, err


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": dict(CAPACITY), "allocatable": dict(CAPACITY)}}


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


def write_cluster(tmp_path: Path, nodes: list[str], pods: list[str]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([node(n) for n in nodes] + [pod(p) for p in pods], sort_keys=False))
    return path


def write_config(tmp_path: Path, plugins: list[tuple[str, int | None, dict[str, Any]]]) -> Path:
    """plugins: (name, weight or None, args) enabled in multiPoint, in this order, next to the defaults."""
    enabled = [{"name": n, **({"weight": w} if w is not None else {})} for n, w, _ in plugins]
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": enabled}},
            "pluginConfig": [{"name": n, "args": args} for n, _, args in plugins],
        }],
    }
    path = tmp_path / "scheduler.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture
def last_digit(tmp_path: Path) -> Path:
    return compile_wat(LAST_DIGIT_WAT.read_text(), tmp_path / "guests", "score_last_digit.wasm")


@pytest.fixture
def eventf_guest(tmp_path: Path) -> Path:
    return compile_wat("e2e/prescore_eventf", tmp_path / "guests", "prescore_eventf.wasm")


def simulate(capsys: pytest.CaptureFixture[str], cfg: Path, cluster: Path, *extra: str) -> dict[str, Any]:
    rc, out, err = run_cli(capsys, "simulate", "--config", str(cfg), "--output", "json", *extra, str(cluster))
    assert rc == 0, f"exit code {rc}, stderr:\n{err}"
    doc: dict[str, Any] = json.loads(out)
    return doc


def placements(doc: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {p["name"]: (p["phase"], p["node"]) for p in doc["pods"]}


def assert_idle_pool(c: dict[str, int]) -> None:
    assert c["created"] >= 1, c
    assert c["discarded"] == 0, c
    assert c["live"] == c["idle"], c
    assert c["scheduling"] == 0, c
    assert c["binding"] == 0, c


# ----- placements and the summary -----------------------------------------------------------------

def test_pods_go_to_the_highest_digit_node(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           last_digit: Path) -> None:
    cluster = write_cluster(tmp_path, ["node-1", "node-2", "node-3", "node-4"], ["p-1", "p-2", "p-3"])
    cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": str(last_digit)})])
    doc = simulate(capsys, cfg, cluster)
    assert placements(doc) == dict.fromkeys(("p-1", "p-2", "p-3"), ("Scheduled", "node-4"))
    assert doc["summary"]["scheduled"] == 3
    wasm = doc["summary"]["wasm"]
    assert set(wasm) == {"lastdigit"}
    assert_idle_pool(wasm["lastdigit"])
    # A filter+score guest (nothing in the binding cycle): one instance serves every pod.
    assert wasm["lastdigit"]["created"] == 1

    # Control: without the guest the default plugins spread the same pods over the equal nodes.
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(cluster))
    assert rc == 0, err
    plain = json.loads(out)
    assert len({p["node"] for p in plain["pods"]}) == 3
    assert "wasm" not in plain["summary"]


def test_explain_shows_wasm_scores_and_filter_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     last_digit: Path) -> None:
    cluster = write_cluster(tmp_path, ["node-1", "node-2", "node-3", "node-4", "node-10"], ["p-1"])
    cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": f"file://{last_digit}"})])
    doc = simulate(capsys, cfg, cluster, "--explain")
    (p,) = doc["pods"]
    assert (p["phase"], p["node"]) == ("Scheduled", "node-4")
    assert p["filter"] == {"node-1": "ok", "node-2": "ok", "node-3": "ok", "node-4": "ok",
                           "node-10": NODE_NAME_ENDS_IN_0}
    scores = p["scores"]
    assert set(scores) == {"node-1", "node-2", "node-3", "node-4"}
    for n, entry in scores.items():
        digit = int(n[-1])
        assert entry["lastdigit"] == 10 * digit * 5, entry  # the guest's score x the configured weight
        assert entry["total"] == sum(v for k, v in entry.items() if k != "total")
        assert "TaintToleration" in entry and "NodeResourcesFit" in entry  # the defaults still score
    # Equal nodes: the default plugins score them the same, the guest decides.
    assert scores["node-4"]["total"] - scores["node-1"]["total"] == 150
    assert_idle_pool(doc["summary"]["wasm"]["lastdigit"])


def test_all_nodes_rejected_by_the_guest(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         last_digit: Path) -> None:
    """The guest's filter reason reaches the pod's FailedScheduling message."""
    cluster = write_cluster(tmp_path, ["node-10", "node-20"], ["p-1"])
    cfg = write_config(tmp_path, [("lastdigit", None, {"guestURL": str(last_digit)})])
    doc = simulate(capsys, cfg, cluster)
    (p,) = doc["pods"]
    assert p["phase"] == "Unschedulable"
    assert p["message"].startswith("0/2 nodes are available: 2 node name ends in 0.")
    failed = [e for e in doc["events"] if e["reason"] == "FailedScheduling"]
    assert failed and failed[0]["regarding"] == "default/p-1" and failed[0]["message"] == p["message"]
    assert_idle_pool(doc["summary"]["wasm"]["lastdigit"])


# ----- several wasm plugins -----------------------------------------------------------------------

def test_two_wasm_plugins_and_one_module_under_two_names(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          last_digit: Path, eventf_guest: Path) -> None:
    cluster = write_cluster(tmp_path, ["node-1", "node-2", "node-3", "node-10"], ["p-1", "p-2"])
    cfg = write_config(tmp_path, [
        ("digit-a", 5, {"guestURL": str(last_digit)}),
        ("digit-b", 2, {"guestURL": f"file://{last_digit}"}),  # the same .wasm under another name
        ("evt", None, {"guestURL": str(eventf_guest)}),
    ])
    doc = simulate(capsys, cfg, cluster, "--explain")
    assert placements(doc) == {"p-1": ("Scheduled", "node-3"), "p-2": ("Scheduled", "node-3")}
    for p in doc["pods"]:
        # The first rejecting filter plugin in the profile's order is reported.
        assert p["filter"]["node-10"] == {**NODE_NAME_ENDS_IN_0, "plugin": "digit-a"}
        for n, entry in p["scores"].items():
            digit = int(n[-1])
            assert entry["digit-a"] == 10 * digit * 5
            assert entry["digit-b"] == 10 * digit * 2
            assert "evt" not in entry  # a PreScore-only guest does not score
    wasm = doc["summary"]["wasm"]
    assert set(wasm) == {"digit-a", "digit-b", "evt"}
    for c in wasm.values():
        assert_idle_pool(c)
    # Both PreScore calls of evt recorded the guest's event.
    assert sum(1 for e in doc["events"] if e["reason"] == "GuestSaysHello") == 2


# ----- guest events -------------------------------------------------------------------------------

def test_eventf_events_in_json_output(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      eventf_guest: Path) -> None:
    cluster = write_cluster(tmp_path, ["node-1", "node-2"], ["evt-pod"])
    cfg = write_config(tmp_path, [("evt", None, {"guestURL": str(eventf_guest)})])
    doc = simulate(capsys, cfg, cluster)
    assert placements(doc)["evt-pod"][0] == "Scheduled"
    node_name = placements(doc)["evt-pod"][1]
    evs = [e for e in doc["events"] if e["regarding"] == "default/evt-pod"]
    assert evs == [
        {"type": "Normal", "reason": "GuestSaysHello", "regarding": "default/evt-pod",
         "message": "hello from the guest"},
        {"type": "Normal", "reason": "Scheduled", "regarding": "default/evt-pod",
         "message": f"Successfully assigned default/evt-pod to {node_name}"},
    ]
    assert_idle_pool(doc["summary"]["wasm"]["evt"])


# ----- load-time errors ---------------------------------------------------------------------------

NO_EXPORTS_WAT = '(module (memory (export "memory") 1 1))'


def _missing(tmp_path: Path, guest: Path) -> tuple[dict[str, Any], str]:
    url = str(tmp_path / "missing.wasm")
    return {"guestURL": url}, f"wasm: error reading guestURL {url}: "


def _not_wasm(tmp_path: Path, guest: Path) -> tuple[dict[str, Any], str]:
    bad = tmp_path / "not.wasm"
    bad.write_text("this is not a wasm module\n")
    return {"guestURL": str(bad)}, "wasm: error compiling guest: "


def _sha_mismatch(tmp_path: Path, guest: Path) -> tuple[dict[str, Any], str]:
    pin = "ab" * 32
    actual = hashlib.sha256(guest.read_bytes()).hexdigest()
    return ({"guestURL": str(guest), "guestSHA256": pin},
            f"wasm: guestSHA256 mismatch for {guest}: expected {pin}, got {actual}")


def _no_exports(tmp_path: Path, guest: Path) -> tuple[dict[str, Any], str]:
    path = compile_wat(NO_EXPORTS_WAT, tmp_path / "guests", "no_exports.wasm")
    return {"guestURL": str(path)}, "wasm: guest does not export any plugin functions"


def _bad_args(tmp_path: Path, guest: Path) -> tuple[dict[str, Any], str]:
    return ({"guestURL": str(guest), "timeout": 5},
            'failed to decode into lastdigit PluginConfig: timeout: expected a duration string')


@pytest.mark.parametrize("case", [_missing, _not_wasm, _sha_mismatch, _no_exports, _bad_args],
                         ids=["missing-file", "not-wasm", "sha256-mismatch", "no-plugin-exports", "bad-args"])
def test_load_errors_exit_2_naming_the_plugin(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              last_digit: Path, case: Any) -> None:
    args, text = case(tmp_path, last_digit)
    cluster = write_cluster(tmp_path, ["node-1"], ["p-1"])
    cfg = write_config(tmp_path, [("lastdigit", 5, args)])
    rc, out, err = run_cli(capsys, "simulate", "--config", str(cfg), "--output", "json", str(cluster))
    assert rc == 2, err
    assert out == ""
    assert err.startswith("error: "), err
    assert 'plugin "lastdigit"' in err or "lastdigit PluginConfig" in err, err
    assert text in err, err


def test_endless_guest_url_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    monkeypatch.setattr(loader, "MAX_GUEST_BYTES", 1 << 20)
    cluster = write_cluster(tmp_path, ["node-1"], ["p-1"])
    cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": "/dev/zero"})])
    rc, out, err = run_cli(capsys, "simulate", "--config", str(cfg), str(cluster))
    assert (rc, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.endswith('initializing plugin "lastdigit": wasm: error reading guestURL /dev/zero: guest is larger '
                       'than 1048576 bytes\n'), err


@pytest.mark.parametrize(("verbosity", "log_severity", "info", "warning", "host_info"), [
    ("0", 0, True, True, False),   # guests' Info shows by default; the scheduler's own Info does not
    ("0", 1, False, True, False),  # logSeverity silences a guest
    ("0", 2, False, False, False),
    ("2", 0, True, True, True),
    ("2", 1, False, True, True),
])
def test_guest_klog_lines_at_default_verbosity(capsys: pytest.CaptureFixture[str], tmp_path: Path, verbosity: str,
                                               log_severity: int, info: bool, warning: bool, host_info: bool) -> None:
    guest = compile_wat("e2e/filter_klog", tmp_path / "guests", "filter_klog.wasm")
    cluster = write_cluster(tmp_path, ["node-1"], ["p-1"])
    cfg = write_config(tmp_path, [("klogger", None, {"guestURL": str(guest), "logSeverity": log_severity})])
    rc, out, err = run_cli(capsys, "-v", verbosity, "simulate", "--config", str(cfg), "-o", "json", str(cluster))
    assert rc == 0, err
    assert placements(json.loads(out)) == {"p-1": ("Scheduled", "node-1")}  # results stay on stdout
    lines = err.splitlines()
    assert any(ln.startswith("I") and ln.endswith('] "filtering" plugin="klogger"') for ln in lines) == info, err
    assert any(ln.startswith("W") and ln.endswith('] "careful" plugin="klogger"') for ln in lines) == warning, err
    assert any('"Loaded wasm plugin"' in ln for ln in lines) == host_info, err


@pytest.mark.parametrize("url", ["guests/score_last_digit.wasm", "file://guests/score_last_digit.wasm",
                                 "./guests/../guests/score_last_digit.wasm"])
def test_relative_guest_url_is_relative_to_the_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    conf_dir = tmp_path / "conf"
    compile_wat(LAST_DIGIT_WAT.read_text(), conf_dir / "guests", "score_last_digit.wasm")
    cluster = write_cluster(tmp_path, ["node-1", "node-2"], ["p-1"])
    cfg = write_config(conf_dir, [("lastdigit", 5, {"guestURL": url})])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    doc = simulate(capsys, cfg, cluster)
    assert placements(doc) == {"p-1": ("Scheduled", "node-2")}
    # The configuration file named by a relative path: its directory still is the base.
    monkeypatch.chdir(tmp_path)
    doc = simulate(capsys, Path("conf/scheduler.yaml"), cluster)
    assert placements(doc) == {"p-1": ("Scheduled", "node-2")}


def test_missing_relative_guest_url_names_the_path_tried(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = write_cluster(tmp_path, ["node-1"], ["p-1"])
    write_config(tmp_path / "conf", [("lastdigit", 5, {"guestURL": "guests/missing.wasm"})])
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(capsys, "simulate", "--config", "conf/scheduler.yaml", str(cluster))
    assert (rc, out) == (2, "")
    tried = tmp_path / "conf" / "guests" / "missing.wasm"
    assert err.endswith(f"wasm: error reading guestURL guests/missing.wasm: {tried}: No such file or directory\n"), err
    assert err.count("\n") == 1, err


def test_absolute_guest_url_is_unchanged(capsys: pytest.CaptureFixture[str], tmp_path: Path, last_digit: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = write_cluster(tmp_path, ["node-1", "node-2"], ["p-1"])
    cfg = write_config(tmp_path / "conf", [("lastdigit", 5, {"guestURL": f"file://{last_digit}"})])
    monkeypatch.chdir(tmp_path / "conf")
    assert placements(simulate(capsys, cfg, cluster)) == {"p-1": ("Scheduled", "node-2")}


def test_without_a_config_file_the_working_directory_is_the_base(tmp_path: Path, last_digit: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(last_digit.parent)
    plugin = new_wasm_plugin("lastdigit", {"guestURL": last_digit.name}, None)
    plugin.close()
    with pytest.raises(WasmLoadError, match=f"/nowhere/{last_digit.name}: No such file or directory$"):
        new_wasm_plugin("lastdigit", {"guestURL": last_digit.name}, None, base_dir=tmp_path / "nowhere")


def test_sha256_pin_in_upper_case_loads(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        last_digit: Path) -> None:
    pin = hashlib.sha256(last_digit.read_bytes()).hexdigest().upper()
    cluster = write_cluster(tmp_path, ["node-1", "node-2"], ["p-1"])
    cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": str(last_digit), "guestSHA256": pin})])
    doc = simulate(capsys, cfg, cluster)
    assert placements(doc) == {"p-1": ("Scheduled", "node-2")}


# ----- the installed command ----------------------------------------------------------------------

def test_console_script(tmp_path: Path, last_digit: Path) -> None:
    exe = Path(sys.executable).parent / "wasmsched"
    # pyproject's [project.scripts] entry, which any install of the package makes: missing, it is a packaging bug.
    assert exe.exists(), f"no wasmsched console script next to {sys.executable}"
    cluster = write_cluster(tmp_path, ["node-1", "node-2", "node-3", "node-10"], ["p-1", "p-2"])
    cfg = write_config(tmp_path, [("lastdigit", 5, {"guestURL": str(last_digit)})])
    env = {**os.environ, "WASMSCHED_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([str(exe), "simulate", "--config", str(cfg), "-o", "json", str(cluster)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert placements(doc) == {"p-1": ("Scheduled", "node-3"), "p-2": ("Scheduled", "node-3")}
    assert_idle_pool(doc["summary"]["wasm"]["lastdigit"])

    missing = write_config(tmp_path, [("lastdigit", 5, {"guestURL": str(tmp_path / "gone.wasm")})])
    proc = subprocess.run([str(exe), "simulate", "--config", str(missing), str(cluster)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert 'initializing plugin "lastdigit": wasm: error reading guestURL' in proc.stderr


def test_guest_url_on_an_in_tree_plugin_name_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "pluginConfig": [{"name": "PrioritySort", "args": {"guestURL": "x.wasm"}}]}],
    }))
    rc, out, err = run_cli(capsys, "simulate", "--config", str(cfg), str(write_cluster(tmp_path, ["node-1"], [])))
    assert rc == 2 and out == ""
    assert 'pluginConfig "PrioritySort": args carry guestURL, but "PrioritySort" is an in-tree plugin' in err


def test_counters_of_one_plugin_in_two_profiles_are_summed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           last_digit: Path) -> None:
    path = write_config(tmp_path, [("lastdigit", 5, {"guestURL": str(last_digit)})])
    cfg = yaml.safe_load(path.read_text())
    second = dict(cfg["profiles"][0], schedulerName="second-scheduler")
    cfg["profiles"].append(second)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", "--config", str(path),
                           str(write_cluster(tmp_path, ["node-1", "node-2"], ["p1"])))
    assert rc == 0, err
    # Each profile has its own plugin instance and pool; the summary adds them up by plugin name.
    counters = json.loads(out)["summary"]["wasm"]["lastdigit"]
    assert counters["created"] == 2 and counters["live"] == counters["idle"] == 2
