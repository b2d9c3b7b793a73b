"""Shared helpers for wasm host tests: compile WAT, load a guest as a plugin, a Handle with
recording events and pods put at Permit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import wasmtime

from wasmsched.api.types import Node, Pod
from wasmsched.framework.runtime.waiting_pods import WaitingPodImpl
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.framework.types import get_pod_key
from wasmsched.testing.fake_handle import FakeHandle
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

WAT_DIR = Path(__file__).resolve().parent.parent / "wat"
# The bundled WAT example, also the Filter/Score guest of the simulate tests and of bench/.
LAST_DIGIT_WAT = Path(__file__).resolve().parents[2] / "examples" / "wasm" / "last-digit" / "last_digit.wat"


def single_plugin_config(plugin: str, guest: Path, **args: Any) -> dict[str, Any]:
    """A KubeSchedulerConfiguration (as a dict) with the default profile plus `plugin` on every extension
    point, its guest at `guest`, a 100ms call timeout and `args`."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}},
            "pluginConfig": [{"name": plugin, "args": {"guestURL": str(guest), "timeout": "100ms", **args}}],
        }],
    }


def wat_source(name_or_text: str) -> str:
    """A WAT file of tests/wat by name (with or without .wat), or the text itself."""
    if "(module" in name_or_text:
        return name_or_text
    name = name_or_text if name_or_text.endswith(".wat") else name_or_text + ".wat"
    return (WAT_DIR / name).read_text()


def compile_wat(name_or_text: str, out_dir: Path, file_name: str = "guest.wasm") -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / file_name
    path.write_bytes(wasmtime.wat2wasm(wat_source(name_or_text)))
    return path


class RecordedGuestEvents:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str) -> None:
        self.events.append({"regarding": regarding, "related": related, "type": eventtype, "reason": reason,
                            "action": action, "note": note})


class WasmHandle(FakeHandle):
    """FakeHandle plus a recording event recorder and a way to put pods at Permit."""

    def __init__(self, pods: list[Pod] | None = None, nodes: list[Node] | None = None) -> None:
        super().__init__(pods=pods, nodes=nodes)
        self.recorder = RecordedGuestEvents()

    def set_cluster(self, pods: list[Pod], nodes: list[Node]) -> None:
        self._snapshot = new_snapshot(pods, nodes)

    def event_recorder(self) -> RecordedGuestEvents:  # type: ignore[override]
        return self.recorder

    def add_waiting_pod(self, pod: Pod, plugin: str = "p", timeout: float = 60.0) -> WaitingPodImpl:
        wp = WaitingPodImpl(pod, {plugin: (timeout, timeout)})
        self.waiting_pods.add(get_pod_key(pod), wp)
        return wp


def load(name_or_text: str, tmp_path: Path, handle: Any = None, name: str = "wasm", runtime: Runtime | None = None,
         **args: Any) -> WasmPlugin:
    """Compiles the WAT, loads it as plugin `name` with args (guestURL filled in)."""
    path = compile_wat(name_or_text, tmp_path)
    raw = {"guestURL": str(path), **args}
    rt = runtime or Runtime(cache_dir=tmp_path / "cache")
    return new_wasm_plugin(name, raw, handle, runtime=rt)
