"""The native host's Python-facing API (wasmsched/wasm/_host.c through wasm/native.py) misused: each of its
error branches, driven directly with small WAT guests on the process Engine. What a guest can do is the
guest fuzz's (tests/wasm/fuzz_host.py); this is what Python code calling the extension can get wrong."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
import wasmtime

from wasmsched.wasm import native
from wasmsched.wasm.abi import EXPORTS, LIFECYCLE_EXPORTS, V2_EXPORTS
from wasmsched.wasm.engine import _ENGINE

FILTER = native.EXPORT_IDS["filter"]
SCORE = native.EXPORT_IDS["score"]
ON_ERROR: Callable[[BaseException], str] = lambda e: f"handler failed: {type(e).__name__}: {e}"  # noqa: E731

# "env.probe" (a Python handler) and get_config; filter calls probe(7) and returns its result, score
# loops for ever.
GUEST = """(module
  (import "env" "probe" (func $probe (param i32) (result i32)))
  (import "k8s.io/scheduler" "get_config" (func $config (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global (export "g32") (mut i32) (i32.const 5))
  (global (export "g64") (mut i64) (i64.const 6))
  (global (export "gf64") (mut f64) (f64.const 1.5))
  (global (export "const") i32 (i32.const 1))
  (global (export "ref") (mut funcref) (ref.null func))
  (func (export "filter") (result i32) (call $probe (i32.const 7)))
  (func (export "score") (result i64) (loop $l (br $l)) (i64.const 0))
  (func (export "config") (result i32) (call $config (i32.const 0) (i32.const 100))))"""


def engine() -> wasmtime.Engine:
    return _ENGINE.get()


def functype(params: str, result: bool) -> wasmtime.FuncType:
    kinds = {"i": wasmtime.ValType.i32, "I": wasmtime.ValType.i64}
    return wasmtime.FuncType([kinds[k]() for k in params], [wasmtime.ValType.i32()] if result else [])


def linker(probe: Callable[..., Any]) -> wasmtime.Linker:
    lk = wasmtime.Linker(engine())
    native.define_import(lk, "env", "probe", "i", True, native.H_PYTHON, probe, ON_ERROR, "probe fault")
    native.define_import(lk, "k8s.io/scheduler", "get_config", "ii", True, native.H_GET_CONFIG, None, ON_ERROR,
                         "config fault")
    return lk


def new_instance(wat: str, lk: wasmtime.Linker, config: bytes = b"cfg", results: bool = True
                 ) -> tuple[native.NativeInstance, wasmtime.Store, wasmtime.Module]:
    module = wasmtime.Module(engine(), bytes(wasmtime.wat2wasm(wat)))
    pre = lk.instantiate_pre(module)
    store = wasmtime.Store(engine())
    inst = native.NativeInstance(native.address(store), native.address(pre), (store, pre), None, None, config, 0, ())
    if results:
        for name, result in (*EXPORTS.items(), *V2_EXPORTS.items()):
            inst.set_func_result(native.EXPORT_IDS[name], native.RESULT_KINDS[result])
    return inst, store, module


def ready(probe: Callable[..., Any] = lambda caller, x: x) -> native.NativeInstance:
    inst, _, _ = new_instance(GUEST, linker(probe))
    inst.instantiate(0)
    return inst


# ----- the Caller after its import returned -------------------------------------------------------------


def test_a_caller_kept_past_its_import_refuses_every_use() -> None:
    kept: list[native.Caller] = []

    def probe(caller: native.Caller, x: int) -> int:
        kept.append(caller)
        return x

    inst = ready(probe)
    assert inst.call(FILTER, None, None, None, 0) == (7, None)
    (caller,) = kept
    for use in (lambda: caller.read(0, 4), lambda: caller.write(0, b"x"), lambda: caller.capture(b"out")):
        with pytest.raises(RuntimeError, match="after the import returned"):
            use()
    del inst
    gc.collect()
    with pytest.raises(RuntimeError, match="after the import returned"):
        caller.capture(b"the instance is gone")  # it once wrote into the freed instance's buffer


def test_caller_reads_and_writes_only_inside_memory() -> None:
    seen: dict[str, Any] = {}

    def probe(caller: native.Caller, x: int) -> int:
        end = 0x10000
        seen["zero"] = caller.read(end + 100, 0)  # nothing to read: no check needed
        seen["last"] = caller.read(end - 4, 4)
        seen["past"] = caller.read(end - 3, 4)
        seen["huge"] = caller.read(0, 0xFFFFFFFF)
        seen["wrapped"] = caller.read(-4, 4)  # an i32 as the guest passed it: 0xFFFFFFFC
        seen["write_end"] = caller.write(end - 2, b"ok")
        seen["write_past"] = caller.write(end - 1, b"no")
        seen["write_empty"] = caller.write(0xFFFFFFFF, b"")
        with pytest.raises(TypeError):
            caller.read("0", 4)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            caller.write(0, "text")  # type: ignore[arg-type]
        caller.capture(b"captured")
        return 0

    inst = ready(probe)
    assert inst.call(FILTER, None, None, None, 0) == (0, None)
    assert seen == {"zero": b"", "last": b"\0\0\0\0", "past": None, "huge": None, "wrapped": None,
                    "write_end": True, "write_past": False, "write_empty": True}
    assert inst.memory_read(0x10000 - 2, 2) == b"ok"
    assert inst.output() == b"captured"


# ----- memory from outside a call -----------------------------------------------------------------------


@pytest.mark.parametrize(("ptr", "n"), [(0x10000, 1), (0xFFFF, 2), (0, 0x10001), ((1 << 64) - 1, 2),
                                        ((1 << 64) - 0x10, 0x20)])
def test_memory_read_and_write_outside_memory_are_index_errors(ptr: int, n: int) -> None:
    inst = ready()
    with pytest.raises(IndexError, match="outside the guest's memory"):
        inst.memory_read(ptr, n)  # (1 << 64) - 1 + 2 once wrapped around to 1 and passed the check
    with pytest.raises(IndexError, match="outside the guest's memory"):
        inst.memory_write(ptr, b"x" * n)
    inst.memory_write(0xFFFF, b"z")
    assert inst.memory_read(0xFFFF, 1) == b"z" and inst.memory_read(0x10000, 0) == b""


def test_memory_of_an_instance_not_instantiated() -> None:
    inst, _, _ = new_instance(GUEST, linker(lambda c, x: x))
    assert inst.memory_pages() == 0
    with pytest.raises(IndexError):
        inst.memory_read(0, 1)
    with pytest.raises(IndexError):
        inst.memory_write(0, b"x")


# ----- globals --------------------------------------------------------------------------------------------


def test_globals_of_each_type_and_their_misuse() -> None:
    inst = ready()
    assert (inst.get_global("g32"), inst.get_global("g64"), inst.get_global("gf64")) == (5, 6, 1.5)
    inst.set_global("g32", 0xFFFFFFFF)  # masked to the i32's bits, read back signed
    inst.set_global("g64", -2)
    inst.set_global("gf64", 2)
    assert (inst.get_global("g32"), inst.get_global("g64"), inst.get_global("gf64")) == (-1, -2, 2.0)
    with pytest.raises(KeyError, match="no exported global nope"):
        inst.get_global("nope")
    with pytest.raises(KeyError, match="no exported global filter"):
        inst.get_global("filter")  # a function, not a global
    with pytest.raises(TypeError, match="only numeric globals"):
        inst.get_global("ref")
    with pytest.raises(TypeError, match="only numeric globals"):
        inst.set_global("ref", 0)
    with pytest.raises(TypeError):
        inst.set_global("g32", "1")
    with pytest.raises(TypeError):
        inst.set_global("gf64", "1.0")
    with pytest.raises(ValueError, match="immutable"):
        inst.set_global("const", 2)
    with pytest.raises(TypeError):
        inst.get_global(3)  # type: ignore[arg-type]
    assert inst.get_global("g32") == -1 and inst.get_global("const") == 1


# ----- the instance's life ------------------------------------------------------------------------------


def test_instantiate_twice_init_twice_and_calls_before_instantiation_are_refused() -> None:
    inst, _, module = new_instance(GUEST, linker(lambda c, x: x))
    with pytest.raises(RuntimeError, match="not instantiated"):
        inst.call(FILTER, None, None, None, 0)
    with pytest.raises(RuntimeError, match="not instantiated"):
        inst.call_nodes(FILTER, None, ["n"], 0)
    with pytest.raises(KeyError):
        inst.get_global("g32")
    inst.instantiate(0)
    with pytest.raises(RuntimeError, match="already instantiated"):
        inst.instantiate(0)
    with pytest.raises(RuntimeError, match="set before instantiation"):
        inst.set_func_result(FILTER, 2)
    pre = linker(lambda c, x: x).instantiate_pre(module)
    other = wasmtime.Store(engine())
    with pytest.raises(RuntimeError, match="already initialized"):
        inst.__init__(native.address(other), native.address(pre), (other, pre), None, None, b"", 0, ())  # type: ignore[misc]
    assert inst.call(FILTER, None, None, None, 0) == (7, None)  # still on its own store


def test_an_instance_never_initialized_refuses_to_run() -> None:
    inst = native.NativeInstance.__new__(native.NativeInstance)
    with pytest.raises(RuntimeError, match="not initialized"):
        inst.instantiate(0)
    with pytest.raises(RuntimeError, match="not instantiated"):
        inst.call(FILTER, None, None, None, 0)
    assert inst.memory_pages() == 0 and inst.export is None and inst.owner is None


def test_a_handler_calling_back_into_its_own_instance_is_refused() -> None:
    errors: list[BaseException] = []
    box: list[native.NativeInstance] = []

    def probe(caller: native.Caller, x: int) -> int:
        for again in (lambda: box[0].call(FILTER, None, None, None, 0),
                      lambda: box[0].call_nodes(FILTER, None, ["n"], 0)):
            try:
                again()
            except RuntimeError as e:
                errors.append(e)
        return x

    box.append(ready(probe))
    assert box[0].call(FILTER, None, None, None, 0) == (7, None)
    assert [str(e) for e in errors] == ["instance is already running a call"] * 2


def test_an_import_of_another_store_inside_a_call_is_served_without_this_instance() -> None:
    """A guest of another store, run by wasmtime-py from inside a handler: its get_config sees no instance
    (0, nothing written) instead of this instance's config and memory handle (a store mismatch aborts)."""
    got: list[int] = []
    lk = linker(lambda c, x: x)
    other_module = wasmtime.Module(engine(), bytes(wasmtime.wat2wasm(GUEST)))
    other_store = wasmtime.Store(engine())
    other_store.set_epoch_deadline(1 << 40)  # wasmtime-py's store: no epoch callback of ours
    other = lk.instantiate(other_store, other_module)
    config_fn = other.exports(other_store)["config"]
    assert isinstance(config_fn, wasmtime.Func)

    def probe(caller: native.Caller, x: int) -> int:
        got.append(config_fn(other_store))
        return x

    inst, _, _ = new_instance(GUEST, linker(probe), config=b"this instance's config")
    inst.instantiate(0)
    assert inst.call(FILTER, None, None, None, 0) == (7, None)
    assert got == [0]


def test_a_store_outliving_its_instance_stops_guest_code_at_the_epoch() -> None:
    """The store's epoch callback pointed at the Instance: freed, it must stop the guest, not read it."""
    lk = linker(lambda c, x: x)
    inst, store, module = new_instance(GUEST, lk)
    inst.instantiate(0)
    del inst
    gc.collect()
    with pytest.raises(wasmtime.WasmtimeError, match="its instance was closed"):
        # the store runs guest code through wasmtime-py now: the first epoch check stops it
        again = lk.instantiate(store, module)
        score = again.exports(store)["score"]
        assert isinstance(score, wasmtime.Func)
        score(store)


# ----- arguments of the wrong type or range ----------------------------------------------------------------


def test_call_arguments_of_the_wrong_type_or_range() -> None:
    inst = ready()
    bad: list[tuple[type[Exception], str, Callable[[], Any]]] = [
        (TypeError, "call\\(export_id", lambda: inst.call(FILTER, None, None, None)),  # type: ignore[call-arg]
        (TypeError, "", lambda: inst.call("filter", None, None, None, 0)),  # type: ignore[arg-type]
        (ValueError, "unknown export id", lambda: inst.call(99, None, None, None, 0)),
        (ValueError, "unknown export id", lambda: inst.call(-1, None, None, None, 0)),
        (ValueError, "guest does not export bind", lambda: inst.call(native.EXPORT_IDS["bind"], None, None, None, 0)),
        (TypeError, "expected bytes or None", lambda: inst.call(FILTER, "pod", None, None, 0)),  # type: ignore[arg-type]
        (TypeError, "node_name must be", lambda: inst.call(FILTER, None, 3, None, 0)),  # type: ignore[arg-type]
        (TypeError, "expected bytes or None", lambda: inst.call(FILTER, None, None, 1.0, 0)),  # type: ignore[arg-type]
        (TypeError, "", lambda: inst.call(FILTER, None, None, None, "0")),  # type: ignore[arg-type]
        (TypeError, "call_nodes\\(export_id", lambda: inst.call_nodes(FILTER, None, [])),  # type: ignore[call-arg]
        (TypeError, "", lambda: inst.call_nodes(FILTER, None, 5, 0)),  # type: ignore[arg-type]
        (TypeError, "node names must be str or bytes", lambda: inst.call_nodes(FILTER, None, ["a", 2], 0)),  # type: ignore[list-item]
        (ValueError, "unknown result slot", lambda: inst.result(99)),
        (ValueError, "unknown result slot", lambda: inst.result(-1)),
        (TypeError, "", lambda: inst.result("0")),  # type: ignore[arg-type]
        (ValueError, "export id out of range", lambda: inst.set_func_result(32, 1)),
        (ValueError, "result kind", lambda: inst.set_func_result(FILTER, 3)),
        (TypeError, "", lambda: inst.instantiate("0")),  # type: ignore[arg-type]
    ]
    for exc, match, fn in bad:
        with pytest.raises(exc, match=match or None):
            fn()
    assert inst.call(FILTER, None, "n", None, 0) == (7, None)  # none of it left the instance broken


def test_instance_constructor_arguments() -> None:
    module = wasmtime.Module(engine(), bytes(wasmtime.wat2wasm(GUEST)))
    pre = linker(lambda c, x: x).instantiate_pre(module)
    store = wasmtime.Store(engine())
    s, p = native.address(store), native.address(pre)
    with pytest.raises(TypeError, match="argv must be a tuple of bytes"):
        native.NativeInstance(s, p, None, None, None, b"", 0, ("a",))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native.NativeInstance(s, p, None, None, None, b"", 0, [b"a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native.NativeInstance(s, p, None, None, None, "config", 0, ())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="epoch_fn must be callable"):
        native.NativeInstance(s, p, None, None, 3, b"", 0, ())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a store and an InstancePre"):
        native.NativeInstance(0, p, None, None, None, b"", 0, ())


def test_call_nodes_keeps_its_own_copy_of_a_list_changed_during_the_call() -> None:
    names = ["a", "b", "c"]

    def probe(caller: native.Caller, x: int) -> int:
        names.clear()
        names.extend(str(i) for i in range(1000))  # the list's items move while the call goes on
        return 0

    inst = ready(probe)
    values, notes, failed, fault = inst.call_nodes(FILTER, None, names, 0)
    assert (values, notes, failed, fault) == (None, [], -1, None)


# ----- defining imports ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("handler", "kinds", "result", "fn", "slot", "aux", "error"), [
    (99, "i", True, None, 0, None, "unknown handler"),
    (native.H_PYTHON, "i", True, None, 0, None, "needs a Python function"),
    (native.H_PYTHON, "x", True, print, 0, None, "parameter kinds"),
    (native.H_NODE, "ii", True, print, 0, None, "not the ones the handler reads"),
    (native.H_NODE, "iiii", True, None, 0, None, "needs a Python function"),
    (native.H_GET_CONFIG, "ii", False, None, 0, None, "returns a result"),
    (native.H_GET_CONFIG, "i", True, None, 0, None, "not the ones the handler reads"),
    (native.H_RESULT, "ii", False, None, 99, None, "unknown result slot"),
    (native.H_RESULT, "ii", False, None, -1, None, "unknown result slot"),
    (native.H_RESULT, "ii", True, None, 0, None, "returns no result"),
    (native.H_KLOG, "ii", False, print, 0, b"t\0s", "H_KLOG serves"),
    (native.H_KLOG, "iii", False, print, 0, b"no terminator", "aux must be"),
    (native.H_KLOG_SEVERITY, "i", True, None, 0, None, "not the ones the handler reads"),
    (native.H_CLOCK_TIME_GET, "iii", True, None, 0, None, "not the ones the handler reads"),
    (native.H_FD_WRITE, "iii", True, None, 0, None, "not the ones the handler reads"),
])
def test_define_import_refuses_a_definition_its_handler_cannot_serve(
        handler: int, kinds: str, result: bool, fn: Any, slot: int, aux: bytes | None, error: str) -> None:
    lk = wasmtime.Linker(engine())
    ty = functype(kinds if set(kinds) <= {"i", "I"} else "i", result)  # a type that is the kinds (when they are)
    with pytest.raises(ValueError, match=error):
        native._host.define_import(native.address(lk), b"m", b"f", native.address(ty), handler, kinds, result, fn,
                                   ON_ERROR, b"fault", slot, -1, aux)


def test_define_import_refuses_a_function_type_unlike_its_kinds() -> None:
    lk = wasmtime.Linker(engine())
    ty = functype("ii", True)  # kept alive: define_import reads it
    with pytest.raises(ValueError, match="function type is not"):
        native._host.define_import(native.address(lk), b"env", b"probe", native.address(ty),
                                   native.H_PYTHON, "i", True, print, ON_ERROR, b"fault", 0, -1, None)
    with pytest.raises(ValueError, match="no WASI preview 1 function"):
        native.define_import(lk, "wasi_snapshot_preview1", "path_open2", "i", True, native.H_WASI, None, ON_ERROR, "f")
    with pytest.raises(ValueError, match="not the ones the handler reads"):  # fd_read is (fd, iovs, n, nread)
        native.define_import(lk, "wasi_snapshot_preview1", "fd_read", "ii", True, native.H_WASI, None, ON_ERROR, "f")
    with pytest.raises(TypeError, match="aux must be bytes"):
        native.define_import(lk, "m", "f", "iii", False, native.H_KLOG, print, ON_ERROR, "f", aux="x")  # type: ignore[arg-type]


def test_module_functions_misused() -> None:
    with pytest.raises(ValueError, match="letters must be 4 bytes"):
        native.set_log_sink(-1, b"IWE")
    with pytest.raises(ValueError, match="aux must be"):
        native.klog_line(0, b"m", None, 0, b"no terminator")
    with pytest.raises(TypeError):
        native.klog_line(0, "m", None, 0, b"t\0s")  # type: ignore[arg-type]
    assert native.current_owner() is None  # no call runs on this thread


# ----- exports of the wrong signature, past the module check -----------------------------------------------


WRONG_SIGNATURES = ["(param i32) (result i32)", "(result i32 i32 i32)", "(result f64)", "(param i64 i64 i64)"]


@pytest.mark.parametrize("name", [*EXPORTS, *V2_EXPORTS, *LIFECYCLE_EXPORTS])
def test_an_export_of_the_wrong_signature_is_never_called(name: str) -> None:
    """abi.check_module refuses these at load; the native host must not rely on it: it calls an export with a
    one-value buffer, which a function of more parameters or results would overrun."""
    sig = WRONG_SIGNATURES[sorted([*EXPORTS, *V2_EXPORTS, *LIFECYCLE_EXPORTS]).index(name) % len(WRONG_SIGNATURES)]
    if name in LIFECYCLE_EXPORTS:
        sig = "(result i64)"
    results = sig.split("(result ", 1)[1].rstrip(")").split() if "result" in sig else []
    body = " ".join(f"({t}.const 0)" for t in results)
    wat = f'(module (memory (export "memory") 1) (func (export "{name}") {sig} {body}))'
    inst, _, _ = new_instance(wat, wasmtime.Linker(engine()))
    with pytest.raises(TypeError, match=f"export {name} is not \\(\\) -> "):
        inst.instantiate(0)
