"""docs/abi.md §13 conformance, Events (items 42-44) and klog (items 45-48), with §7 and §11 details.

Uses the import probe guest (tests/wat/conformance_b/import_probe.wat) driven by `Probe` from
test_conformance_imports: `enqueue` sends `result.cluster_events`, other exports call `k8s.io/klog`.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import Any

import pytest

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ClusterEvent, ClusterEventWithHint
from wasmsched.framework.status import Code
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.util.klog import KlogHandler
from wasmsched.wasm import guest_log as guest_lines
from wasmsched.wasm.plugin import WasmPlugin

from .harness import WasmHandle, load
from .test_conformance_imports import MEM_END, START_GETTERS, Probe, nodes_of, probe_plugin

GUEST_LOGGER = "wasmsched.wasm.guest"
ALL = 32767  # kube 1.37's ActionType All
DEFAULT_EVENTS = {
    ("Pod", ALL), ("Node", ALL), ("storage.k8s.io/CSINode", ALL), ("PersistentVolume", ALL),
    ("PersistentVolumeClaim", ALL), ("storage.k8s.io/StorageClass", ALL),
}
FILTER_ONLY = '(module (memory (export "memory") 1 1) (func (export "filter") (result i32) (i32.const 0)))'


def records(gvk_actions: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack("<II", g, a) for g, a in gvk_actions)


def pairs(events: list[ClusterEventWithHint]) -> list[tuple[str, int]]:
    return [(e.event.resource, int(e.event.action_type)) for e in events]


def enqueue(plugin: WasmPlugin, *payloads: bytes, trap: bool = False) -> list[ClusterEventWithHint]:
    """Runs EventsToRegister with `enqueue` sending each payload via result.cluster_events (in order)."""
    probe = Probe(plugin)
    ops: list[tuple[Any, ...]] = []
    addr = 0x1000
    for p in payloads:
        probe.write(addr, p)
        ops.append(("result.cluster_events", addr, len(p)))
        addr += 0x400
    if trap:
        ops.append(("unreachable",))
    probe.script(*ops)
    return plugin.events_to_register()


# ----- 42-44: cluster events -----------------------------------------------------------------------------


def test_42_two_records(tmp_path: Path) -> None:
    """Item 42: 01000000 01000000 02000000 02000000 -> [{Node,Add}, {PersistentVolume,Delete}]."""
    plugin = probe_plugin(tmp_path)
    payload = bytes.fromhex("01000000" "01000000" "02000000" "02000000")
    evs = enqueue(plugin, payload)
    assert pairs(evs) == [("Node", 1), ("PersistentVolume", 2)]
    assert all(isinstance(e, ClusterEventWithHint) and e.queueing_hint_fn is None for e in evs)
    assert evs[0].event == ClusterEvent("Node", 1)


def test_42_last_setter_wins(tmp_path: Path) -> None:
    """§4.1: with two result.cluster_events calls the last one wins."""
    plugin = probe_plugin(tmp_path)
    evs = enqueue(plugin, records([(0, 1)]), records([(1, 2), (3, 1)]))
    assert pairs(evs) == [("Node", 2), ("PersistentVolumeClaim", 1)]


def test_43_trailing_partial_record_ignored(tmp_path: Path) -> None:
    """Item 43: 8 bytes + 3 extra -> 1 event."""
    plugin = probe_plugin(tmp_path)
    evs = enqueue(plugin, records([(0, 2)]) + b"\x01\x00\x00")
    assert pairs(evs) == [("Pod", 2)]


@pytest.mark.parametrize("case", ["no-call", "short", "empty"])
def test_43_nothing_sent_gives_default_list(tmp_path: Path, case: str) -> None:
    """Item 43: `enqueue` without a result.cluster_events call, or < 8 bytes sent -> the 6-entry default list."""
    plugin = probe_plugin(tmp_path)
    payloads = {"no-call": (), "short": (b"\x01\x00\x00\x00\x01\x00\x00",), "empty": (b"",)}[case]
    evs = enqueue(plugin, *payloads)
    assert len(evs) == 6
    assert set(pairs(evs)) == DEFAULT_EVENTS
    assert int(plugin.pool.instances()[0].get_global("calls")) == 1  # the guest was entered


def test_43_no_enqueue_export_gives_default_list(tmp_path: Path) -> None:
    """Item 43: a guest without `enqueue` -> the default list."""
    plugin = load(FILTER_ONLY, tmp_path)
    evs = plugin.events_to_register()
    assert len(evs) == 6 and set(pairs(evs)) == DEFAULT_EVENTS
    assert plugin.counters()["created"] == 1


def test_43_enqueue_trap_gives_default_list_and_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Item 43 / §10: an `enqueue` trap -> default list, no exception; error log `failed enqueue`."""
    caplog.set_level(logging.INFO, logger="wasmsched.wasm")
    plugin = probe_plugin(tmp_path)
    evs = enqueue(plugin, records([(1, 1)]), trap=True)  # events sent before the trap do not count
    assert len(evs) == 6 and set(pairs(evs)) == DEFAULT_EVENTS
    failed = [r for r in caplog.records if r.levelno == logging.ERROR and "failed enqueue" in r.getMessage()]
    assert failed, [r.getMessage() for r in caplog.records]
    assert "unreachable" in failed[0].getMessage()
    assert plugin.counters()["discarded"] == 1
    # the plugin still works afterwards, on a fresh instance (whose empty script sends nothing)
    evs = plugin.events_to_register()
    assert len(evs) == 6 and set(pairs(evs)) == DEFAULT_EVENTS
    assert plugin.counters()["created"] == 2
    assert int(plugin.pool.instances()[0].get_global("calls")) == 1


@pytest.mark.parametrize(("action", "want"), [
    (63, 32767), (60, 32764), (61, 32765), (40, 40), (32767, 32767), (1, 1), (2, 2), (4, 4), (32, 32),
    (62, 32766), (0x10001, 1), (0x8000 | 60, 32764),
])
def test_44_action_mapping(tmp_path: Path, action: int, want: int) -> None:
    """Item 44: guest Update (60) / All (63) widen to the framework's 32764 / 32767; bits >= 32768 dropped."""
    plugin = probe_plugin(tmp_path)
    evs = enqueue(plugin, records([(0, action)]))
    assert pairs(evs) == [("Pod", want)]


def test_44_gvk_mapping(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Item 44 / §7: GVK 0..10 -> framework resources (5 -> resource.k8s.io/ResourceClaim); >= 11 -> `*`,
    with one warning per unknown GVK."""
    caplog.set_level(logging.INFO, logger="wasmsched.wasm")
    plugin = probe_plugin(tmp_path)
    gvks = [*range(13), 11, 0xFFFFFFFF]
    evs = enqueue(plugin, records([(g, 1) for g in gvks]))
    assert [r for r, _ in pairs(evs)] == [
        "Pod", "Node", "PersistentVolume", "PersistentVolumeClaim", "resource.k8s.io/PodSchedulingContext",
        "resource.k8s.io/ResourceClaim", "storage.k8s.io/StorageClass", "storage.k8s.io/CSINode",
        "storage.k8s.io/CSIDriver", "storage.k8s.io/CSIStorageCapacity", "*", "*", "*", "*", "*",
    ]
    assert all(a == 1 for _, a in pairs(evs))
    enqueue(plugin, records([(11, 1)]))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name.startswith("wasmsched.wasm")]
    assert len(warnings) == 3  # GVKs 11, 12, 0xFFFFFFFF, each once despite repeats and a second call


# ----- 45-48: klog ---------------------------------------------------------------------------------------


@pytest.fixture
def guest_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    # The CLI's setup_logging (run in-process by other tests) stops propagation at "wasmsched"; pytest's
    # caplog attaches to such non-propagating loggers itself, so records arrive either way.
    caplog.set_level(logging.DEBUG, logger=GUEST_LOGGER)
    return caplog


def guest_records(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == GUEST_LOGGER]


class Klog:
    """Lays out strings in probe memory and runs klog calls from `filter`."""

    def __init__(self, tmp_path: Path, name: str = "wasm", **args: Any) -> None:
        self.handle = WasmHandle(nodes=[make_node("n1").obj()])
        self.plugin = load("conformance_b/import_probe", tmp_path, handle=self.handle, name=name, **args)
        self.pod = make_pod("p").obj()
        self.probe = Probe(self.plugin, self.pod)
        self._addr = 0x1000
        self.ops: list[tuple[Any, ...]] = []

    def _put(self, data: bytes) -> tuple[int, int]:
        addr = self._addr
        self.probe.write(addr, data)
        self._addr += len(data) + 16
        return addr, len(data)

    def log(self, severity: int, msg: bytes) -> Klog:
        self.ops.append(("log", severity, *self._put(msg)))
        return self

    def logs(self, severity: int, msg: bytes, kvs: bytes | None) -> Klog:
        kv = self._put(kvs) if kvs is not None else (0, 0)
        self.ops.append(("logs", severity, *self._put(msg), *kv))
        return self

    def raw(self, *op: Any) -> Klog:
        self.ops.append(op)
        return self

    def run(self) -> list[int]:
        self.probe.script(*self.ops)
        self.ops = []
        self._addr = 0x1000
        st = self.plugin.filter(CycleState(), self.pod, nodes_of(self.handle)[0])
        assert st is None, st  # klog never fails a call
        return self.probe.results()


def test_45_log_info_strips_one_newline(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """Item 45: logSeverity 0: log(0, "hello\\n") -> info `"hello"` (one trailing \\n stripped)."""
    k = Klog(tmp_path)
    k.log(0, b"hello\n").run()
    recs = guest_records(guest_log)
    assert len(recs) == 1
    level, msg = recs[0]
    assert level == logging.INFO
    assert msg.startswith('"hello"')
    guest_log.clear()
    k.log(0, b"two\n\n").run()
    (level, msg), = guest_records(guest_log)
    assert msg.startswith('"two\\n"')  # only one newline stripped; the other is quoted


def test_45_record_carries_plugin_name(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """§11: records carry the plugin name, the message and the pairs."""
    Klog(tmp_path, name="my-guest").logs(0, b"msg", b"a\0b\0").run()
    (_, msg), = guest_records(guest_log)
    assert "my-guest" in msg and '"msg"' in msg and 'a="b"' in msg


def test_45_log_severity_levels(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """§11: severities 0 info, 1 warning, 2 error, 3 fatal (logged at error)."""
    Klog(tmp_path).log(0, b"i").log(1, b"w").log(2, b"e").log(3, b"f").run()
    assert [(lvl, m.split(" ")[0]) for lvl, m in guest_records(guest_log)] == [
        (logging.INFO, '"i"'), (logging.WARNING, '"w"'), (logging.ERROR, '"e"'), (logging.ERROR, '"f"')]


def test_46_threshold_applies_to_log_and_logs(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """Item 46: logSeverity 2: log(0/1,…), logs(0/1,…) suppressed; log(2,…), logs(2,…) emitted at error."""
    k = Klog(tmp_path, logSeverity=2)
    k.log(0, b"l0").logs(0, b"s0", b"k\0v\0").log(1, b"l1").logs(1, b"s1", b"k\0v\0")
    k.log(2, b"l2").logs(2, b"s2", b"k\0v\0").logs(2, b"s2b", None).run()
    recs = guest_records(guest_log)
    assert [m.split(" ")[0] for _, m in recs] == ['"l2"', '"s2"', '"s2b"']
    assert all(level == logging.ERROR for level, _ in recs)
    assert 'k="v"' in recs[1][1]


def test_46_out_of_range_severities(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """§11: out-of-range severities compare numerically and log at the nearest level."""
    Klog(tmp_path, logSeverity=1).log(-1, b"neg").log(0, b"zero").log(7, b"seven").logs(-3, b"negs", None).run()
    recs = guest_records(guest_log)
    assert [(lvl, m.split(" ")[0]) for lvl, m in recs] == [(logging.ERROR, '"seven"')]
    guest_log.clear()
    Klog(tmp_path, logSeverity=-5).log(-1, b"neg").log(-9, b"low").run()
    recs = guest_records(guest_log)
    assert [(lvl, m.split(" ")[0]) for lvl, m in recs] == [(logging.INFO, '"neg"')]


def test_47_logs_keeps_empty_values(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """Item 47: logs(0,"m","k\\0\\0k2\\0v2\\0") -> k="", k2="v2" (empty entries kept, pairs not shifted)."""
    Klog(tmp_path).logs(0, b"m", b"k\0\0k2\0v2\0").run()
    (level, msg), = guest_records(guest_log)
    assert level == logging.INFO
    assert msg.startswith('"m" k="" k2="v2"')


def test_47_logs_without_kvs_acts_as_log(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """Item 47: logs with kvs_len 0 acts as log (same record, one trailing newline stripped)."""
    Klog(tmp_path).log(1, b"same\n").logs(1, b"same\n", None).run()
    recs = guest_records(guest_log)
    assert len(recs) == 2
    assert recs[0] == recs[1]
    assert recs[0][0] == logging.WARNING and recs[0][1].startswith('"same"')


def test_47_logs_odd_key_and_trailing_bytes(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """§11: an odd last key gets (MISSING); bytes after the last 0x00 are ignored."""
    Klog(tmp_path).logs(0, b"m", b"a\0b\0odd\0").logs(0, b"m2", b"a\0b\0junk").run()
    (_, m1), (_, m2) = guest_records(guest_log)
    assert 'a="b"' in m1 and "odd=" in m1 and "(MISSING)" in m1
    assert 'a="b"' in m2 and "junk" not in m2


def test_47_unreadable_klog_message_dropped_no_trap(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """§4.2 / §11: an unreadable klog message (or kvs) is dropped; klog never traps."""
    k = Klog(tmp_path)
    k.raw("log", 0, MEM_END - 2, 10).raw("logs", 0, 0x100, 1, MEM_END - 1, 8).log(0, b"after").run()
    recs = guest_records(guest_log)
    assert [m.split(" ")[0] for _, m in recs] == ['"after"']
    assert k.plugin.counters()["discarded"] == 0


@pytest.mark.parametrize("configured", [0, 2, 3])
def test_48_severity_returns_configured_value(tmp_path: Path, configured: int) -> None:
    """Item 48: severity() -> the configured logSeverity, in calls and in `_start`."""
    k = Klog(tmp_path, logSeverity=configured)
    assert k.raw("severity").run() == [configured]
    start = load(START_GETTERS, tmp_path / "start", logSeverity=configured)
    assert int(start.pool.instances()[0].get_global("g_severity")) == configured


def test_48_fatal_logs_at_error_and_process_continues(tmp_path: Path, guest_log: pytest.LogCaptureFixture) -> None:
    """Item 48: log(3,…) -> error level; the host never exits, the instance stays usable."""
    k = Klog(tmp_path)
    k.log(3, b"fatal!").logs(3, b"fatal2", b"k\0v\0").run()
    recs = guest_records(guest_log)
    assert [(lvl, m.split(" ")[0]) for lvl, m in recs] == [(logging.ERROR, '"fatal!"'), (logging.ERROR, '"fatal2"')]
    iid = k.probe.inst.id
    k.probe.set_status(Code.UNSCHEDULABLE)
    k.probe.script()
    st = k.plugin.filter(CycleState(), k.pod, nodes_of(k.handle)[0])
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert k.probe.inst.id == iid and k.plugin.counters()["discarded"] == 0


# ----- the guest line sink (the CLI's logging): lines written natively -------------------------------------


@pytest.fixture
def cli_logging(tmp_path: Path) -> Any:
    """The CLI's logging set-up (cli/logs.py), its handler, the guest line sink, writing to a file instead
    of stderr."""
    from wasmsched.cli.logs import setup_logging

    root = logging.getLogger("wasmsched")
    saved = (root.handlers[:], root.level, root.propagate, guest_lines.sink())
    setup_logging(0)
    out = open(tmp_path / "stderr.log", "w", encoding="utf-8")  # noqa: SIM115 - closed by the fixture
    handler = guest_lines.sink()
    assert isinstance(handler, KlogHandler) and root.handlers == [handler]
    handler.setStream(out)
    guest_lines.set_sink(handler)  # again: the native host takes the new stream's descriptor
    yield out
    root.handlers[:], level, root.propagate, sink = saved
    root.setLevel(level)
    guest_lines.set_sink(sink)
    out.close()


def _klog_script(k: Klog) -> None:
    k.log(0, b"plain\n").log(1, b'quote " backslash \\ tab \t nl \n end').log(2, b"caf\xc3\xa9 \x01\x1f \x7f")
    k.logs(0, b"with pairs", b"k\0v\0empty\0\0odd\0").logs(3, b"keep newline\n", b"a\0b \"c\"\0")
    k.logs(0, b"no pairs\n", None).log(0, b"bad utf-8 \xff\xfe").logs(0, b"m", b"k\0\xc3(\0")


def test_native_lines_are_the_python_handlers_lines(tmp_path: Path, cli_logging: Any) -> None:
    """With the CLI's sink, guest lines are formatted and written natively (wasm/_host.c); each is the line
    util/klog.py's KlogFormatter makes of the record Host.guest_record makes, timestamps aside (the
    formats are compared byte for byte, times included, in test_klog_native.py)."""
    from wasmsched.wasm import host, native

    k = Klog(tmp_path)
    _klog_script(k)
    k.run()
    cli_logging.flush()
    native_lines = (tmp_path / "stderr.log").read_text(encoding="utf-8").splitlines()
    native.set_log_sink(-1, b"IWEE")  # now every line goes through Python, to the same sink
    _klog_script(k)
    k.run()
    cli_logging.flush()
    python_lines = (tmp_path / "stderr.log").read_text(encoding="utf-8").splitlines()[len(native_lines):]

    def untimed(lines: list[str]) -> list[str]:
        return [line[0] + line[line.index(" ", 22):] for line in lines]  # drop "MMDD hh:mm:ss.uuuuuu"

    assert len(native_lines) == 8
    assert untimed(native_lines) == untimed(python_lines)
    assert native_lines[0].endswith(f' {host.GUEST_LINE_SOURCE}] "plain" plugin="wasm"')


def test_with_a_sink_guest_lines_go_to_it_alone(tmp_path: Path, cli_logging: Any,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The sink is where guest lines go, those written natively and those Python formats (not UTF-8):
    not to the guest logger's handlers too."""
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    Klog(tmp_path).log(0, b"native").log(0, b"python \xff").run()
    cli_logging.flush()
    lines = (tmp_path / "stderr.log").read_text(encoding="utf-8").splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == ['"native" plugin="wasm"', '"python \ufffd" plugin="wasm"']
    assert guest_records(caplog) == []


def test_without_a_sink_guest_lines_are_the_guest_loggers_records(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """An embedder (or a test) that registers no sink gets guest lines as records of the
    `wasmsched.wasm.guest` logger, for its own handlers; nothing is written natively."""
    caplog.set_level(logging.INFO, logger=GUEST_LOGGER)
    assert guest_lines.sink() is None
    Klog(tmp_path).log(0, b"seen").run()
    assert [m for _, m in guest_records(caplog)] == ['"seen" plugin="wasm"']
