"""The guest ABI's tables (docs/abi.md): the exports a guest may have (§3), every host import in one
table (§4.1), and the checks of a module's shape against them before any guest code runs (§2).

Nothing else in wasmsched spells an export's or an import's name or signature: wasm/host.py
defines each import from `IMPORTS`, wasm/encoding.py holds the encodings of the values.
Sections follow docs/abi.md's numbering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import wasmtime

from wasmsched.wasm.errors import WasmLoadError

I32, I64 = "i32", "i64"

# ===== docs/abi.md §2 Module shape and loading ===================================================


def check_module(module: wasmtime.Module) -> set[str]:
    """Validates exports and imports before any guest code runs; returns the plugin exports present.

    Raises WasmLoadError with the texts of docs/abi.md §10 (the framework prefixes the plugin's name).
    """
    exports = {e.name: e.type for e in module.exports}
    if not isinstance(exports.get("memory"), wasmtime.MemoryType):
        raise WasmLoadError("wasm: guest doesn't export memory[memory]")
    present = [name for name in (*EXPORTS, *V2_POINT_EXPORTS) if name in exports]
    if not present:
        raise WasmLoadError("wasm: guest does not export any plugin functions")
    present += [n for n in V2_EXPORTS if n in exports and n not in V2_POINT_EXPORTS]
    for name in (*present, *(n for n in LIFECYCLE_EXPORTS if n in exports)):
        want = EXPORTS.get(name, V2_EXPORTS.get(name))
        if not _func_sig_ok(exports[name], want):
            raise WasmLoadError(
                f"wasm: guest exports the wrong signature for func[{name}]. should be () -> ({want or ''})")
    if "scorenodes" in present and "score" not in present:
        # §17: a batch form of Score, not an extension point of its own.
        raise WasmLoadError("wasm: guest exports func[scorenodes] without func[score]")
    for imp in module.imports:
        check_import(imp)
    return set(present)


def _func_sig_ok(ty: Any, result: str | None) -> bool:
    if not isinstance(ty, wasmtime.FuncType):
        return False
    return not ty.params and [str(t) for t in ty.results] == ([result] if result else [])


def check_import(imp: wasmtime.ImportType) -> None:
    """An import must be a function of §4.1 with its signature, or a WASI preview1 function."""
    module, name, ty = imp.module, imp.name or "", imp.type
    if not isinstance(ty, wasmtime.FuncType):
        kind = {wasmtime.MemoryType: "memory", wasmtime.TableType: "table", wasmtime.GlobalType: "global"}.get(
            type(ty), "extern")
        raise WasmLoadError(f"wasm: guest imports unsupported {kind} {module}.{name}")
    if module == WASI_MODULE:
        if name not in WASI_FUNCTIONS:
            raise WasmLoadError(f"wasm: guest imports unknown function {module}.{name}")
        return  # the linker checks WASI signatures; a mismatch fails linking with wasmtime's text
    want = IMPORT_INDEX.get((module, name))
    if want is None:
        raise WasmLoadError(f"wasm: guest imports unknown function {module}.{name}")
    if [str(t) for t in ty.params] != [I32] * len(want.params) or [str(t) for t in ty.results] != list(want.results):
        raise WasmLoadError(f"wasm: guest imports {module}.{name} with the wrong signature")


# ===== docs/abi.md §3 Guest exports ==============================================================

# Export name -> result type (None: no result), all without parameters. The order is the one in
# which signature errors are reported (§2).
EXPORTS: dict[str, str | None] = {
    "enqueue": None,
    "prefilter": I32,
    "filter": I32,
    "postfilter": I64,
    "prescore": I32,
    "score": I64,
    "normalizescore": I32,
    "reserve": I32,
    "unreserve": None,
    "permit": I64,
    "prebind": I32,
    "bind": I32,
    "postbind": None,
    "addpod": I32,
    "removepod": I32,
}
# §14, §15, §17 [+]: v2 exports. queueinghint (§14.3), cyclestate_clone (§14.4) and scorenodes (§17, Score's
# batch form, used only beside `score`) register no extension point; preenqueue (§15.1) and queuesort (§15.2) do,
# as the v1 exports.
V2_EXPORTS: dict[str, str | None] = {
    "queueinghint": I32,
    "cyclestate_clone": I32,
    "preenqueue": I32,
    "queuesort": I32,
    "scorenodes": I64,
}
V2_POINT_EXPORTS = ("preenqueue", "queuesort")
LIFECYCLE_EXPORTS = ("_initialize", "_start")  # () -> (), instantiation only
BINDING_EXPORTS = ("unreserve", "prebind", "bind", "postbind")

# ===== docs/abi.md §4 Host imports ===============================================================

API, SCHED, KLOG = "k8s.io/api", "k8s.io/scheduler", "k8s.io/klog"
WASI_MODULE = "wasi_snapshot_preview1"


@dataclass(frozen=True, slots=True)
class Import:
    """One host import of §4.1."""

    module: str
    name: str
    params: tuple[str, ...]  # the parameters' names as §4.1 gives them; every one is an i32
    results: tuple[str, ...]  # () or (I32,)
    host_method: str  # the wasm/host.py `Host` method serving it: (caller, *params) -> int | None


# §4.1 getter and setter parameters (§5 for the getter's protocol).
GETTER = ("buf", "buf_limit")
SETTER = ("buf", "buf_len")
RETURNS_I32 = (I32,)
NO_RESULT: tuple[str, ...] = ()

# §4.1, in its order: each import once.
IMPORTS: tuple[Import, ...] = (
    Import(API, "node", ("name", "name_len", *GETTER), RETURNS_I32, "node"),
    Import(API, "nodeList", GETTER, RETURNS_I32, "node_list"),
    Import(KLOG, "log", ("severity", "msg", "msg_len"), NO_RESULT, "klog_log"),
    Import(KLOG, "logs", ("severity", "msg", "msg_len", "kvs", "kvs_len"), NO_RESULT, "klog_logs"),
    Import(KLOG, "severity", (), RETURNS_I32, "klog_severity"),
    Import(SCHED, "get_config", GETTER, RETURNS_I32, "get_config"),
    Import(SCHED, "currentPod", GETTER, RETURNS_I32, "current_pod"),
    Import(SCHED, "targetPod", GETTER, RETURNS_I32, "target_pod"),
    Import(SCHED, "currentNodeName", GETTER, RETURNS_I32, "current_node_name"),
    Import(SCHED, "filteredNodeList", GETTER, RETURNS_I32, "filtered_node_list"),
    Import(SCHED, "nodeToStatusMap", GETTER, RETURNS_I32, "node_to_status_map"),
    Import(SCHED, "nodeScoreList", GETTER, RETURNS_I32, "node_score_list"),
    Import(SCHED, "nodeImageStates", ("name", "name_len", *GETTER), RETURNS_I32, "node_image_states"),
    Import(SCHED, "result.cluster_events", SETTER, NO_RESULT, "result_cluster_events"),
    Import(SCHED, "result.node_names", SETTER, NO_RESULT, "result_node_names"),
    Import(SCHED, "result.nominated_node_name", SETTER, NO_RESULT, "result_nominated_node_name"),
    Import(SCHED, "result.status_reason", SETTER, NO_RESULT, "result_status_reason"),
    Import(SCHED, "result.normalized_score_list", SETTER, NO_RESULT, "result_normalized_score_list"),
    Import(SCHED, "handle.eventrecorder.eventf", SETTER, NO_RESULT, "eventf"),
    Import(SCHED, "handle.reject_waiting_pod", ("uid", "uid_len", "out", "out_limit"), NO_RESULT,
           "reject_waiting_pod"),
    Import(SCHED, "handle.get_waiting_pod", ("uid", "uid_len", "out", "out_limit"), NO_RESULT, "get_waiting_pod"),
    # §14 [+] ABI v2
    Import(SCHED, "handle.snapshot.changes", GETTER, RETURNS_I32, "snapshot_changes"),
    Import(SCHED, "handle.node_info.overlay", GETTER, RETURNS_I32, "node_info_overlay"),
    Import(SCHED, "handle.objects.list", ("query", "query_len", *GETTER), RETURNS_I32, "objects_list"),
    Import(SCHED, "handle.objects.get", ("query", "query_len", *GETTER), RETURNS_I32, "objects_get"),
    Import(SCHED, "result.cluster_events_with_hints", SETTER, NO_RESULT, "result_cluster_events_with_hints"),
    Import(SCHED, "queueing_hint.event", GETTER, RETURNS_I32, "queueing_hint_event"),
    Import(SCHED, "queueing_hint.old_object", GETTER, RETURNS_I32, "queueing_hint_old_object"),
    Import(SCHED, "queueing_hint.new_object", GETTER, RETURNS_I32, "queueing_hint_new_object"),
    Import(SCHED, "cycle_state.id", GETTER, RETURNS_I32, "cycle_state_id"),
    Import(SCHED, "cycle_state.released", GETTER, RETURNS_I32, "cycle_state_released"),
    Import(SCHED, "handle.nominated_pods_for_node", ("name", "name_len", *GETTER), RETURNS_I32,
           "nominated_pods_for_node"),
    Import(SCHED, "handle.run_filter_plugins_with_nominated_pods", ("name", "name_len", *GETTER), RETURNS_I32,
           "run_filter_plugins_with_nominated_pods"),
    # §15 [+] the queue and gangs
    Import(SCHED, "queued_pod_info", GETTER, RETURNS_I32, "queued_pod_info"),
    Import(SCHED, "result.sort_key", SETTER, NO_RESULT, "result_sort_key"),
    Import(SCHED, "handle.waiting_pods", GETTER, RETURNS_I32, "waiting_pods"),
    Import(SCHED, "handle.waiting_pod.allow", ("query", "query_len"), RETURNS_I32, "waiting_pod_allow"),
    Import(SCHED, "handle.waiting_pod.reject", ("query", "query_len"), RETURNS_I32, "waiting_pod_reject"),
    Import(SCHED, "handle.pods.list", ("query", "query_len", *GETTER), RETURNS_I32, "pods_list"),
    Import(SCHED, "handle.activate", SETTER, NO_RESULT, "activate"),
    Import(SCHED, "handle.clock", GETTER, RETURNS_I32, "clock"),
)
IMPORT_INDEX: dict[tuple[str, str], Import] = {(i.module, i.name): i for i in IMPORTS}

# §2: every WASI preview1 function is linkable, served by the host (wasm/wasi.py): name -> its
# parameters ("i" i32, "I" i64; wasi_snapshot_preview1.witx). Each returns an errno (i32) but proc_exit.
WASI_FUNCTIONS: dict[str, str] = {
    "args_get": "ii", "args_sizes_get": "ii", "environ_get": "ii", "environ_sizes_get": "ii",
    "clock_res_get": "ii", "clock_time_get": "iIi", "fd_advise": "iIIi", "fd_allocate": "iII", "fd_close": "i",
    "fd_datasync": "i", "fd_fdstat_get": "ii", "fd_fdstat_set_flags": "ii", "fd_fdstat_set_rights": "iII",
    "fd_filestat_get": "ii", "fd_filestat_set_size": "iI", "fd_filestat_set_times": "iIIi", "fd_pread": "iiiIi",
    "fd_prestat_get": "ii", "fd_prestat_dir_name": "iii", "fd_pwrite": "iiiIi", "fd_read": "iiii",
    "fd_readdir": "iiiIi", "fd_renumber": "ii", "fd_seek": "iIii", "fd_sync": "i", "fd_tell": "ii",
    "fd_write": "iiii", "path_create_directory": "iii", "path_filestat_get": "iiiii",
    "path_filestat_set_times": "iiiiIIi", "path_link": "iiiiiii", "path_open": "iiiiiIIii",
    "path_readlink": "iiiiii", "path_remove_directory": "iii", "path_rename": "iiiiii", "path_symlink": "iiiii",
    "path_unlink_file": "iii", "poll_oneoff": "iiii", "proc_exit": "i", "proc_raise": "i", "sched_yield": "",
    "random_get": "ii", "sock_accept": "iii", "sock_recv": "iiiiii", "sock_send": "iiiii", "sock_shutdown": "ii",
}
WASI_NO_RESULT = frozenset(("proc_exit",))

# §4.2: every export with a result reads result.status_reason (wasm/host.py serves the other setters
# to their one export each).
STATUS_REASON_EXPORTS = frozenset(n for n, r in (*EXPORTS.items(), *V2_EXPORTS.items()) if r is not None)
