"""Hot reload (docs/abi.md §16.2): with `reloadInterval` set, a wasm plugin's guestURL is checked every
interval and a changed module replaces the running one (WasmPlugin.reload_module) without a restart.

What "changed" means per source, so that an unchanged one costs a stat or one small request:
- a file (plain path or file:) — the identity of what the path resolves to now (device, inode, size,
  modification time). A ConfigMap or image volume swaps a symlink (`..data`) to a new directory; the
  path then resolves to another inode, so the swap is seen even when size and time are equal.
- http(s) — a conditional GET with the last ETag / Last-Modified; 304 means unchanged.
- oci:// by tag — the manifest digest the tag points to (one HEAD, wasm/oci/pull.py `resolve`); by digest
  — never changes.
Then the bytes decide: a module with the running one's SHA-256 (a touched file, a re-uploaded object)
is not reloaded, nor one whose reload already failed, until the source changes again.

A failed reload keeps the running module and is reported once per module: one error line naming the
plugin and the reason, a Warning event (reason `WasmPluginReloadFailed`) regarding the scheduler's
leader-election Lease, and `wasmsched_wasm_reloads_total{plugin,result="failure"}`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from wasmsched.util.klog import quote
from wasmsched.wasm import loader
from wasmsched.wasm.errors import WasmLoadError

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle
    from wasmsched.metrics.metrics import SchedulerMetrics
    from wasmsched.wasm.engine import Runtime
    from wasmsched.wasm.oci.options import OciOptions
    from wasmsched.wasm.versions import Versions

log = logging.getLogger("wasmsched.wasm")

RELOAD_FAILED_REASON = "WasmPluginReloadFailed"
RELOADED_REASON = "WasmPluginReloaded"


class ReloadTarget(Protocol):
    """What the reloader needs of its plugin (wasm/plugin.py's WasmPlugin, which imports this module)."""

    name: str

    @property
    def versions(self) -> Versions: ...

    @property
    def handle(self) -> Handle | None: ...

    def scheduler_metrics(self) -> SchedulerMetrics | None: ...

    def reload_module(self, data: bytes, runtime: Runtime, objects: Any) -> Any: ...


class GuestSource(Protocol):
    url: str

    def fetch(self) -> bytes:
        """The module's bytes now (the first load); remembers what changed() compares against."""
        ...

    def changed(self) -> bytes | None:
        """The module's bytes when the source changed since the last fetch or change, else None; raises
        WasmLoadError when the source cannot be read."""
        ...


class FileSource:
    def __init__(self, url: str, base_dir: str | os.PathLike[str] | None) -> None:
        self.url = url
        self.path = loader.local_path(url, base_dir)
        self._identity: tuple[int, ...] | None = None

    def _stat(self) -> tuple[int, ...]:
        try:
            st = os.stat(self.path)  # follows symlinks: a swapped ..data link resolves to another inode
        except OSError as e:
            raise loader.load_error(self.url, e) from e
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns

    def fetch(self) -> bytes:
        identity = self._stat()
        data = loader.read_file(self.url, self.path)
        self._identity = identity
        return data

    def changed(self) -> bytes | None:
        if self._stat() == self._identity:
            return None
        return self.fetch()


class HttpSource:
    def __init__(self, url: str) -> None:
        self.url = url
        self._etag: str | None = None
        self._last_modified: str | None = None

    def fetch(self) -> bytes:
        got = loader.http_get_if_changed(self.url, None, None)
        assert got is not None
        data, self._etag, self._last_modified = got
        return data

    def changed(self) -> bytes | None:
        got = loader.http_get_if_changed(self.url, self._etag, self._last_modified)
        if got is None:
            return None
        data, self._etag, self._last_modified = got
        return data


class OciSource:
    """A module in an OCI registry: pulled with the plugin's registry options; a tag is resolved each check."""

    def __init__(self, url: str, base_dir: str | os.PathLike[str] | None, oci: OciOptions | None) -> None:
        self.url = url
        self._base_dir = base_dir
        self._oci = oci
        self._digest: str | None = None
        # A digest reference names the same bytes for ever: nothing to poll.
        self._pinned = "@sha256:" in url

    def fetch(self) -> bytes:
        data, self._digest = loader.pull_guest(self.url, self._oci, self._base_dir)
        return data

    def changed(self) -> bytes | None:
        if self._pinned or loader.resolve_guest(self.url, self._oci, self._base_dir) == self._digest:
            return None
        return self.fetch()


class FixedSource:
    """A source that is fetched once (a scheme without a way to notice changes)."""

    def __init__(self, url: str, base_dir: str | os.PathLike[str] | None) -> None:
        self.url = url
        self._base_dir = base_dir

    def fetch(self) -> bytes:
        return loader.fetch_guest(self.url, None, self._base_dir)

    def changed(self) -> bytes | None:
        return None


def guest_source(url: str, base_dir: str | os.PathLike[str] | None, oci: OciOptions | None = None) -> GuestSource:
    """oci: an oci:// guestURL's registry options (the plugin's args)."""
    scheme = loader.scheme_of(url)
    if scheme in ("", "file"):
        return FileSource(url, base_dir)
    if scheme in ("http", "https"):
        return HttpSource(url)
    if scheme == "oci":
        return OciSource(url, base_dir, oci)
    return FixedSource(url, base_dir)


class Reloader:
    """Checks one plugin's source every `interval` seconds on a daemon thread; check() is one round."""

    def __init__(self, plugin: ReloadTarget, source: GuestSource, interval: float, runtime: Runtime,
                 objects: Any, event_object: Mapping[str, str] | None) -> None:
        self.plugin = plugin
        self.source = source
        self.interval = interval
        self._runtime = runtime
        self._objects = objects
        self._event_object = event_object
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # The SHA-256 of the module whose reload failed: not tried again until the source changes.
        self.failed_sha256: str | None = None
        self._source_error: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=f"wasm-reload-{self.plugin.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:  # never let the poller die: the next round tries again
                log.exception('"Unexpected error checking a wasm plugin\'s guestURL" plugin="%s"', self.plugin.name)

    def check(self) -> str | None:
        """One round: "success" or "failure" when a changed module was tried, None when nothing changed."""
        name = self.plugin.name
        try:
            data = self.source.changed()
        except WasmLoadError as e:
            # An unreachable source is not a new module: said once per distinct error, then quiet.
            if str(e) != self._source_error:
                self._source_error = str(e)
                log.warning('"Cannot check wasm plugin\'s guestURL for a new module; the running one is kept" '
                            'plugin="%s" err=%s', name, quote(str(e)))
            return None
        self._source_error = None
        if data is None:
            return None
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.plugin.versions.current.sha256 or digest == self.failed_sha256:
            return None
        try:
            self.plugin.reload_module(data, self._runtime, self._objects)
        except Exception as e:  # noqa: BLE001 - whatever fails, the running module is kept and it is reported
            self.failed_sha256 = digest
            text = str(e) if isinstance(e, WasmLoadError) else f"{type(e).__name__}: {e}"
            log.error('"Reload of wasm plugin failed; the running module is kept" plugin="%s" url="%s" '
                      'sha256="%s" err=%s', name, self.source.url, digest[:12], quote(text))
            self._report("failure", "Warning", RELOAD_FAILED_REASON,
                         f"wasm plugin {name}: reload of {self.source.url} (sha256 {digest[:12]}) failed, "
                         f"the running module is kept: {text}")
            return "failure"
        self.failed_sha256 = None
        log.info('"Reloaded wasm plugin" plugin="%s" url="%s" sha256="%s"', name, self.source.url, digest[:12])
        self._report("success", "Normal", RELOADED_REASON,
                     f"wasm plugin {name}: now runs {self.source.url} (sha256 {digest[:12]})")
        return "success"

    def _report(self, result: str, eventtype: str, reason: str, note: str) -> None:
        plugin = self.plugin
        metrics = plugin.scheduler_metrics()
        if metrics is not None:
            metrics.wasm_reload(plugin.name, result)
        handle = plugin.handle
        if handle is not None and self._event_object is not None:
            try:
                handle.event_recorder().eventf(self._event_object, None, eventtype, reason, "Reload", note[:1024])
            except Exception as e:  # noqa: BLE001 - an event is a report: failing to write one never fails the reload
                log.warning('"Cannot record the reload event" plugin="%s" err=%s', plugin.name, quote(str(e)))
