"""The wasmtime side: one Engine per process with a native epoch ticker, modules compiled once and
cached on disk by content hash (wasm/module_cache.py), and the trap texts of docs/abi.md §10.

Reads like wasmtime's embedding API: `Runtime` owns the Engine; `Runtime.compile` gives a Module;
`wasm/instance.py` makes one Store per instance from an InstancePre.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from pathlib import Path

import wasmtime

from wasmsched.util.klog import V0, quote
from wasmsched.wasm import interrupt, native
from wasmsched.wasm.encoding import PodEncoder
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.module_cache import ModuleCache

log = logging.getLogger("wasmsched.wasm")

# docs/abi.md §9: the epoch ticks at most every 10 ms, so a deadline fires within limit + 50 ms.
EPOCH_TICK_SECONDS = 0.005
# Every store has an epoch-deadline callback (wasm/_host.c) that runs after this many ticks of guest
# execution: other threads get the GIL, a pending Ctrl-C stops the guest (wasm/interrupt.py), and a
# call past its deadline stops with `timeout after <timeout>`.
SLICE_TICKS = 2
WASM_MAGIC = b"\x00asm"
# Cranelift takes about 0.5-1 s per MB of wasm (a 17 MB Go guest: 7-19 s): from this size on, the user is
# told at -v 0.
SLOW_COMPILE_BYTES = 1 << 20



@functools.cache
def _wasmtime_version() -> str:
    # Package metadata costs ~10 ms to import and read: only when the disk cache is used.
    import importlib.metadata

    return importlib.metadata.version("wasmtime")


_TRAP_KINDS = {
    wasmtime.TrapCode.UNREACHABLE: "unreachable",
    wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS: "out of bounds memory access",
    wasmtime.TrapCode.HEAP_MISALIGNED: "out of bounds memory access",
    wasmtime.TrapCode.INTEGER_DIVISION_BY_ZERO: "integer divide by zero",
    wasmtime.TrapCode.INTEGER_OVERFLOW: "integer overflow",
    wasmtime.TrapCode.BAD_CONVERSION_TO_INTEGER: "invalid conversion to integer",
    wasmtime.TrapCode.BAD_SIGNATURE: "indirect call type mismatch",
    wasmtime.TrapCode.TABLE_OUT_OF_BOUNDS: "invalid table access",
    wasmtime.TrapCode.INDIRECT_CALL_TO_NULL: "invalid table access",
    wasmtime.TrapCode.STACK_OVERFLOW: "stack overflow",
}


class Runtime:
    """The process's wasmtime Engine (epoch interruption on, ticking) and the modules compiled on it.

    A Runtime is a compile cache: in memory by content hash, and on disk under cache_dir, at most
    cache_max_bytes there (None: wasm/module_cache.py's defaults, from the environment).
    """

    def __init__(self, cache_dir: Path | None = None, cache_max_bytes: int | None = None) -> None:
        self.engine = _ENGINE.get()
        self.disk_cache = ModuleCache(cache_dir, cache_max_bytes)
        self._modules: dict[str, wasmtime.Module] = {}
        self._lock = threading.Lock()
        self.compiled = 0  # modules compiled by Cranelift in this process
        self.loaded_from_cache = 0  # modules deserialized from the disk cache
        # Shared by every plugin on this runtime, so a pod is serialized once however many guests read it.
        self.pods = PodEncoder()

    # ----- modules ------------------------------------------------------------------------------

    def compile(self, wasm: bytes, origin: str | None = None) -> wasmtime.Module:
        """The Module for these bytes: from memory, else from the disk cache, else compiled (and cached).

        origin: where the bytes were read (loader.guest_origin), for the log lines and so that the cache
        replaces an older build of the same guest (wasm/module_cache.py)."""
        if not wasm.startswith(WASM_MAGIC):
            # wasmtime would parse anything else as WebAssembly text; guests are binaries (docs/abi.md §1).
            raise WasmLoadError(f"wasm: error compiling guest: not a WebAssembly binary (starts with {wasm[:8]!r},"
                                r" expected b'\x00asm')")
        digest = hashlib.sha256(wasm).hexdigest()
        with self._lock:
            mod = self._modules.get(digest)
        if mod is not None:
            return mod
        mod = self._load_cached(digest)
        if mod is None:
            mod = self._compile_and_store(wasm, digest, origin)
        with self._lock:
            return self._modules.setdefault(digest, mod)

    @staticmethod
    def _cache_key(digest: str) -> str:
        # The engine's settings and wasmtime's version decide whether a compiled artifact is valid.
        return f"{digest}-wasmtime-{_wasmtime_version()}"

    def _load_cached(self, digest: str) -> wasmtime.Module | None:
        path = self.disk_cache.find(self._cache_key(digest))
        if path is None:
            return None
        try:
            mod = wasmtime.Module.deserialize_file(self.engine, str(path))
        except wasmtime.WasmtimeError as e:
            log.info('"Ignoring stale compiled module in cache" path="%s" err="%s"', path, _first_line(str(e)))
            return None
        self.disk_cache.used(path)
        self.loaded_from_cache += 1
        log.info('"Loaded compiled wasm guest from the cache" path=%s', quote(path))
        return mod

    def _compile_and_store(self, wasm: bytes, digest: str, origin: str | None) -> wasmtime.Module:
        # A Go guest takes 10-20 s to compile, once: a silent pause that long looks like a hang, so a
        # large guest is announced at the default verbosity, before and after.
        level = V0 if len(wasm) >= SLOW_COMPILE_BYTES else logging.INFO
        guest = origin or f"sha256:{digest[:12]}"
        log.log(level, '"Compiling wasm guest; the compiled module is cached for later runs" guest=%s bytes=%d',
                quote(guest), len(wasm))
        start = time.monotonic()
        try:
            mod = wasmtime.Module(self.engine, wasm)
        except wasmtime.WasmtimeError as e:
            raise WasmLoadError(f"wasm: error compiling guest: {_first_line(str(e))}") from e
        seconds = time.monotonic() - start
        self.compiled += 1
        artifact = mod.serialize()
        path = self.disk_cache.store(self._cache_key(digest), artifact, origin)
        log.log(level, '"Compiled wasm guest" guest=%s duration="%.1fs" compiledBytes=%d cache=%s',
                quote(guest), seconds, len(artifact), quote(path if path is not None else "(not cached)"))
        return mod


class _ProcessEngine:
    """The process's one Engine (docs/abi.md: one Engine per process) and the thread advancing its epoch.

    Every Runtime shares it. The Engine lives as long as the process: a ticker racing an Engine's
    finalization on another thread would touch freed memory.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: wasmtime.Engine | None = None

    def get(self) -> wasmtime.Engine:
        with self._lock:
            if self._engine is None:
                cfg = wasmtime.Config()
                cfg.epoch_interruption = True
                engine = wasmtime.Engine(cfg)
                native.init(EPOCH_TICK_SECONDS, SLICE_TICKS)
                # A native thread: guest code holds the GIL, so a Python ticker could not run while it spins.
                native.start_epoch_ticker(engine, EPOCH_TICK_SECONDS)
                self._engine = engine
                interrupt.install()
            return self._engine


_ENGINE = _ProcessEngine()
_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process's Runtime (ABI: one Engine per process)."""
    global _default  # noqa: PLW0603 - the lazily created process-wide Runtime, set once under _default_lock
    with _default_lock:
        if _default is None:
            _default = Runtime()
        return _default


# ----- trap texts (docs/abi.md §10) --------------------------------------------------------------------


def trap_text(e: native.GuestFault, timeout_text: str, host_failure: str | None = None) -> str:
    """`wasm error: <kind>` plus the stack trace, for any failure of guest code.

    e carries (kind, code, message, frames) from the native host: kind "trap" (code: wasmtime's trap
    code), "exit" (code: proc_exit's status), "timeout" (the call's deadline passed) or "error".
    """
    kind_name, code, message, frames = e.args
    if host_failure is not None:
        kind = host_failure
    elif kind_name == "exit":
        kind = f"guest exited with code {code}"
    elif kind_name == "timeout" or (kind_name == "trap" and code == wasmtime.TrapCode.INTERRUPT.value):
        kind = f"timeout after {timeout_text}"
    elif kind_name == "trap" and code is not None and wasmtime.TrapCode(code) in _TRAP_KINDS:
        kind = _TRAP_KINDS[wasmtime.TrapCode(code)]
    else:
        kind = _cause(message)
    text = f"wasm error: {kind}"
    names = [f"{module or 'guest'}.{func or f'$f{index}'}" for module, func, index in frames]
    if names:
        text += "\nwasm stack trace:" + "".join(f"\n\t{f}" for f in names)
    return text


def _cause(msg: str) -> str:
    # wasmtime's text is "error while executing at wasm backtrace: ... Caused by: <cause>".
    if "Caused by:" in msg:
        msg = msg.rsplit("Caused by:", 1)[1]
    return _first_line(msg.strip()).removeprefix("wasm trap: ")


def _first_line(s: str) -> str:
    s = s.strip()
    return s.splitlines()[0] if s else s
