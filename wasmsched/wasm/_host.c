/* The native host path (docs/abi.md; docs/architecture.md §3 and §8 "Performance: where the time goes").
 *
 * Set-up stays on wasmtime-py's public API (Engine, Module, Linker, Store). This
 * extension takes over everything a guest call touches: it instantiates the InstancePre in the
 * Store, calls exports, serves the hot imports (§4.1 getters of staged bytes, result setters,
 * klog's severity filter, WASI preview 1 but poll_oneoff) from per-call values held here, runs
 * Filter and Score over a list of nodes in one call, advances the Engine's epoch on a native thread,
 * and turns traps and errors into GuestFault exceptions carrying plain data. Rare imports call the
 * Python handler given for them, with a Caller that reads and writes guest memory.
 *
 * It is compiled against the C API headers of the exact wasmtime release the Python package pins
 * (tools/wasmtime_capi.py fetches them from the crate registry) and resolves the functions from the
 * library wasmtime-py already loaded, so both sides share one wasmtime.
 *
 * The GIL is held while guest code runs (releasing it per short call is fatal when another thread
 * is busy); the epoch callback lets other threads run every SLICE of guest execution.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/random.h>
#include <unistd.h>

#include <wasmtime.h>

/* ===== wasmtime's functions, resolved from the loaded library ================================= */

#define WASMTIME_FUNCS(X)                                                                          \
    X(wasmtime_store_context)                                                                      \
    X(wasmtime_context_set_epoch_deadline)                                                         \
    X(wasmtime_store_epoch_deadline_callback)                                                      \
    X(wasmtime_instance_pre_instantiate)                                                           \
    X(wasmtime_instance_export_get)                                                                \
    X(wasmtime_func_call_unchecked)                                                                \
    X(wasmtime_memory_data)                                                                        \
    X(wasmtime_memory_data_size)                                                                   \
    X(wasmtime_memory_size)                                                                        \
    X(wasmtime_caller_context)                                                                     \
    X(wasmtime_caller_export_get)                                                                  \
    X(wasmtime_linker_define_func_unchecked)                                                       \
    X(wasmtime_trap_new)                                                                           \
    X(wasmtime_trap_code)                                                                          \
    X(wasmtime_error_new)                                                                          \
    X(wasmtime_error_delete)                                                                       \
    X(wasmtime_error_message)                                                                      \
    X(wasmtime_error_exit_status)                                                                  \
    X(wasmtime_error_wasm_trace)                                                                   \
    X(wasm_trap_message)                                                                           \
    X(wasm_trap_trace)                                                                             \
    X(wasm_trap_delete)                                                                            \
    X(wasm_frame_vec_delete)                                                                       \
    X(wasm_byte_vec_delete)                                                                        \
    X(wasmtime_frame_func_name)                                                                    \
    X(wasmtime_frame_module_name)                                                                  \
    X(wasm_frame_func_index)                                                                       \
    X(wasmtime_engine_increment_epoch)                                                             \
    X(wasmtime_engine_clone)                                                                       \
    X(wasmtime_global_get)                                                                         \
    X(wasmtime_global_set)                                                                         \
    X(wasmtime_func_type)                                                                          \
    X(wasm_functype_params)                                                                        \
    X(wasm_functype_results)                                                                       \
    X(wasm_functype_delete)                                                                        \
    X(wasm_valtype_kind)

#define DECLARE(name) static __typeof__(&name) p_##name;
WASMTIME_FUNCS(DECLARE)
#undef DECLARE

static int resolved = 0;

/* The export ids Python configures (abi.EXPORTS then the lifecycle exports), and which of them read
 * result.status_reason. */
#define MAX_EXPORTS 32
static PyObject *export_names[MAX_EXPORTS];
static Py_ssize_t n_exports = 0;
static uint64_t status_reason_mask = 0;

/* docs/abi.md §2: the last 64 KiB of a guest's output are kept for error texts. */
#define OUTPUT_LIMIT (64 << 10)
#define MAX_IOVECS 1024

static PyObject *GuestFault; /* the exception type for a failed guest call */

/* Python 3.11 has no PyErr_GetRaisedException / PyErr_SetRaisedException. */
static PyObject *take_exception(void) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (t == NULL)
        return NULL;
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb != NULL)
        PyException_SetTraceback(v, tb);
    Py_XDECREF(t);
    Py_XDECREF(tb);
    return v;
}

static void restore_exception(PyObject *v) {
    PyObject *tb = PyException_GetTraceback(v);
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(v)), v, tb);
}

/* ===== import handlers ======================================================================== */

enum handler {
    H_PYTHON = 0,
    H_NODE,
    H_KLOG,             /* severity filtered here, formatted by the Python handler */
    H_KLOG_SEVERITY,
    H_GET_CONFIG,
    H_CURRENT_POD,
    H_TARGET_POD,
    H_CURRENT_NODE_NAME,
    H_RESULT,           /* a setter: stored here for the export it belongs to */
    H_CLOCK_TIME_GET,
    H_FD_WRITE,
    H_WASI,             /* every other WASI preview 1 function (env->slot: which) */
};

/* WASI preview 1 (wasi_snapshot_preview1.witx), served here: the sandbox of docs/abi.md §2 (argv is the
 * configured args, no environment, no preopened directories, stdin at EOF, stdout and stderr captured,
 * real clocks and randomness). No WASI context and no runtime threads are involved. */
enum wasi_fn {
    W_ARGS_GET, W_ARGS_SIZES_GET, W_ENVIRON_GET, W_ENVIRON_SIZES_GET, W_CLOCK_RES_GET, W_CLOCK_TIME_GET,
    W_FD_ADVISE, W_FD_ALLOCATE, W_FD_CLOSE, W_FD_DATASYNC, W_FD_FDSTAT_GET, W_FD_FDSTAT_SET_FLAGS,
    W_FD_FDSTAT_SET_RIGHTS, W_FD_FILESTAT_GET, W_FD_FILESTAT_SET_SIZE, W_FD_FILESTAT_SET_TIMES, W_FD_PREAD,
    W_FD_PRESTAT_GET, W_FD_PRESTAT_DIR_NAME, W_FD_PWRITE, W_FD_READ, W_FD_READDIR, W_FD_RENUMBER, W_FD_SEEK,
    W_FD_SYNC, W_FD_TELL, W_FD_WRITE, W_PATH_CREATE_DIRECTORY, W_PATH_FILESTAT_GET, W_PATH_FILESTAT_SET_TIMES,
    W_PATH_LINK, W_PATH_OPEN, W_PATH_READLINK, W_PATH_REMOVE_DIRECTORY, W_PATH_RENAME, W_PATH_SYMLINK,
    W_PATH_UNLINK_FILE, W_POLL_ONEOFF, W_PROC_EXIT, W_PROC_RAISE, W_SCHED_YIELD, W_RANDOM_GET, W_SOCK_ACCEPT,
    W_SOCK_RECV, W_SOCK_SEND, W_SOCK_SHUTDOWN, W_COUNT
};

static const char *const wasi_names[W_COUNT] = {
    "args_get", "args_sizes_get", "environ_get", "environ_sizes_get", "clock_res_get", "clock_time_get",
    "fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags",
    "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size", "fd_filestat_set_times", "fd_pread",
    "fd_prestat_get", "fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber", "fd_seek",
    "fd_sync", "fd_tell", "fd_write", "path_create_directory", "path_filestat_get", "path_filestat_set_times",
    "path_link", "path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
    "path_unlink_file", "poll_oneoff", "proc_exit", "proc_raise", "sched_yield", "random_get", "sock_accept",
    "sock_recv", "sock_send", "sock_shutdown",
};

/* Their parameters ("i" i32, "I" i64), as wasm/abi.py's WASI_FUNCTIONS: define_import refuses others, since
 * the handlers read their arguments by position. Each returns an errno but proc_exit. */
static const char *const wasi_params[W_COUNT] = {
    "ii", "ii", "ii", "ii", "ii", "iIi", "iIIi", "iII", "i", "i", "ii", "ii", "iII", "ii", "iI", "iIIi", "iiiIi",
    "ii", "iii", "iiiIi", "iiii", "iiiIi", "ii", "iIii", "i", "ii", "iiii", "iii", "iiiii", "iiiiIIi", "iiiiiii",
    "iiiiiIIii", "iiiiii", "iii", "iiiiii", "iiiii", "iii", "iiii", "i", "i", "", "ii", "iii", "iiiiii", "iiiii", "ii",
};

#define ERRNO_SUCCESS 0
#define ERRNO_BADF 8
#define ERRNO_FAULT 21
#define ERRNO_INVAL 28
#define ERRNO_NOSYS 52
#define ERRNO_NOTSUP 58
#define ERRNO_SPIPE 70
#define FILETYPE_CHARACTER_DEVICE 2
#define RIGHT_FD_READ (1ull << 1)
#define RIGHT_FD_WRITE (1ull << 6)
#define RIGHT_POLL_FD_READWRITE (1ull << 27)

enum result_slot { R_STATUS_REASON = 0, R_NODE_NAMES, R_NOMINATED, R_NORMALIZED, R_CLUSTER_EVENTS, N_RESULTS };

typedef struct {
    int handler;
    int nparams;
    char kinds[12];     /* "i"/"I" per parameter */
    int has_result;
    int slot;           /* H_RESULT: the result slot */
    int export_id;      /* H_RESULT: the export consuming it (-1: every export with a result) */
    PyObject *fn;       /* the Python handler (H_PYTHON, H_KLOG, H_NODE) */
    PyObject *on_error; /* exception -> trap text */
    PyObject *fault_text; /* the trap text of an out-of-bounds access, as bytes */
    PyObject *aux;        /* H_KLOG: the line's tail (` plugin="<name>"`) and source, as bytes "tail\0source" */
} ImportEnv;

/* ===== the instance =========================================================================== */

typedef struct Inst {
    PyObject_HEAD
    wasmtime_store_t *store;
    wasmtime_context_t *ctx;
    const wasmtime_instance_pre_t *pre;
    PyObject *keep;      /* the Python objects owning store and pre, kept alive */
    wasmtime_instance_t instance;
    int initialized;     /* __init__ ran: store, ctx and pre are set (once: the instance belongs to that store) */
    int instantiated;
    int running;         /* a call or the instantiation runs: a re-entrant one is refused */
    struct EpochRef *epoch_ref; /* the store's epoch callback data */
    wasmtime_memory_t memory;
    int has_memory;
    wasmtime_func_t funcs[MAX_EXPORTS];
    unsigned char has_func[MAX_EXPORTS];
    unsigned char func_result[MAX_EXPORTS]; /* 0 none, 1 i32, 2 i64 */
    PyObject *owner;     /* the Python GuestInstance */
    PyObject *epoch_fn;  /* owner's check at each slice: returns None or raises */
    PyObject *config;    /* bytes */
    int log_severity;
    /* per call */
    int export_id;
    PyObject *pod, *target_pod, *node_name; /* bytes or NULL */
    PyObject *results[N_RESULTS];
    PyObject *host_failure; /* str or NULL: the trap kind set by a native import */
    int64_t deadline_ns;    /* 0: none */
    int timed_out;
    PyObject *epoch_exc;    /* what the epoch check raised */
    PyObject *args;         /* WASI argv: a tuple of bytes */
    int exited;             /* proc_exit was called during the running call */
    int32_t exit_code;
    /* guest output (fd 1 and 2), the last OUTPUT_LIMIT bytes */
    char *out;
    size_t out_len;
} Inst;

static __thread Inst *current = NULL;

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ===== epoch ticker =========================================================================== */

typedef struct {
    const wasm_engine_t *engine;
    long interval_ns;
} Ticker;

static void *tick(void *arg) {
    Ticker *t = arg;
    struct timespec ts = {t->interval_ns / 1000000000, t->interval_ns % 1000000000};
    for (;;) {
        nanosleep(&ts, NULL);
        p_wasmtime_engine_increment_epoch(t->engine);
    }
    return NULL;
}

static PyObject *start_epoch_ticker(PyObject *self, PyObject *args) {
    unsigned long long engine;
    long interval_ns;
    if (!PyArg_ParseTuple(args, "Kl", &engine, &interval_ns))
        return NULL;
    Ticker *t = malloc(sizeof(Ticker)); /* lives as long as the process, as the Engine does */
    if (t == NULL)
        return PyErr_NoMemory();
    /* Its own reference: the Engine must outlive the Python object, which shutdown may free first. */
    t->engine = p_wasmtime_engine_clone((const wasm_engine_t *)(uintptr_t)engine);
    t->interval_ns = interval_ns;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, tick, t);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(t);
        PyErr_SetString(PyExc_RuntimeError, "cannot start the wasm epoch thread");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ===== memory ================================================================================= */

static int caller_memory(Inst *inst, wasmtime_caller_t *caller, wasmtime_context_t **ctx, wasmtime_memory_t *mem) {
    *ctx = p_wasmtime_caller_context(caller);
    if (inst != NULL && inst->has_memory) {
        *mem = inst->memory;
        return 1;
    }
    /* During instantiation (start section, _initialize, _start) the instance has no handle yet. */
    wasmtime_extern_t item;
    if (!p_wasmtime_caller_export_get(caller, "memory", 6, &item))
        return 0;
    if (item.kind != WASMTIME_EXTERN_MEMORY)
        return 0;
    *mem = item.of.memory;
    return 1;
}

/* A pointer to n bytes at ptr of the caller's memory, or NULL when outside it. */
static uint8_t *guest_span(Inst *inst, wasmtime_caller_t *caller, uint32_t ptr, uint32_t n) {
    wasmtime_context_t *ctx;
    wasmtime_memory_t mem;
    if (!caller_memory(inst, caller, &ctx, &mem))
        return NULL;
    size_t size = p_wasmtime_memory_data_size(ctx, &mem);
    if ((uint64_t)ptr + n > size)
        return NULL;
    return p_wasmtime_memory_data(ctx, &mem) + ptr;
}

static wasm_trap_t *trap_text(const char *msg, size_t len) { return p_wasmtime_trap_new(msg, len); }

static wasm_trap_t *fault(Inst *inst, ImportEnv *env) {
    if (inst != NULL) {
        PyObject *s = PyUnicode_FromStringAndSize(PyBytes_AS_STRING(env->fault_text), PyBytes_GET_SIZE(env->fault_text));
        Py_XSETREF(inst->host_failure, s);
    }
    return trap_text(PyBytes_AS_STRING(env->fault_text), (size_t)PyBytes_GET_SIZE(env->fault_text));
}

/* §5: write value if it fits, return its full length either way. */
static wasm_trap_t *serve(Inst *inst, ImportEnv *env, wasmtime_caller_t *caller, wasmtime_val_raw_t *args,
                          const char *data, size_t n, uint32_t buf, uint32_t limit) {
    if (n && n <= limit) {
        uint8_t *dst = guest_span(inst, caller, buf, (uint32_t)n);
        if (dst == NULL)
            return fault(inst, env);
        memcpy(dst, data, n);
    }
    args[0].i32 = (int32_t)n;
    return NULL;
}

static void capture(Inst *inst, const uint8_t *data, size_t n) {
    if (inst == NULL || n == 0)
        return;
    if (inst->out == NULL) {
        inst->out = malloc(OUTPUT_LIMIT);
        if (inst->out == NULL)
            return;
        inst->out_len = 0;
    }
    if (n >= OUTPUT_LIMIT) {
        memcpy(inst->out, data + (n - OUTPUT_LIMIT), OUTPUT_LIMIT);
        inst->out_len = OUTPUT_LIMIT;
        return;
    }
    if (inst->out_len + n > OUTPUT_LIMIT) {
        size_t drop = inst->out_len + n - OUTPUT_LIMIT;
        memmove(inst->out, inst->out + drop, inst->out_len - drop);
        inst->out_len -= drop;
    }
    memcpy(inst->out + inst->out_len, data, n);
    inst->out_len += n;
}

/* ===== guest klog lines: the pending output ====================================================== */

/* Set from the guest line sink the application registered (wasmsched/wasm/guest_log.py) when it writes to
 * a file descriptor: a line is then formatted here as util/klog.py's KlogFormatter formats the record
 * Host.guest_record makes of it, and written out when the guest call returns. -1: every line goes to the
 * Python handler. The pid and the severity letters (log_letters[severity 0..3]) are Python's. */
static int log_fd = -1;
static long log_pid = 0;
static char log_letters[4] = {'I', 'W', 'E', 'E'};

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
    int heap; /* p was malloc'ed here */
} Buf;

static void buf_put(Buf *b, const char *s, size_t n) {
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2;
        char *q = malloc(cap);
        if (q == NULL) {
            b->oom = 1;
            return;
        }
        if (b->n)
            memcpy(q, b->p, b->n);
        if (b->heap)
            free(b->p);
        b->p = q;
        b->cap = cap;
        b->heap = 1;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* Lines written by this thread's guest calls, written out when the call returns to Python (or calls a
 * Python handler, which may log too), so that a Score over many nodes costs one write. */
#define LOG_FLUSH_BYTES (64 << 10)
static __thread Buf pending_log = {NULL, 0, 0, 0, 0};

static void flush_log(void) {
    size_t off = 0;
    while (off < pending_log.n) {
        ssize_t w = write(log_fd, pending_log.p + off, pending_log.n - off);
        if (w <= 0)
            break; /* as a logging handler would, a failed write loses the lines, never the call */
        off += (size_t)w;
    }
    pending_log.n = 0;
}

/* ===== the Caller handed to Python handlers ==================================================== */

typedef struct {
    PyObject_HEAD
    wasmtime_caller_t *caller; /* NULL once the import returned */
    Inst *inst;
} CallerObject;

static PyTypeObject CallerType;

static PyObject *caller_read(CallerObject *self, PyObject *args) {
    unsigned long long ptr, n;
    if (!PyArg_ParseTuple(args, "KK", &ptr, &n))
        return NULL;
    if (self->caller == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "guest memory used after the import returned");
        return NULL;
    }
    ptr &= 0xFFFFFFFF;
    n &= 0xFFFFFFFF;
    if (n == 0)
        return PyBytes_FromStringAndSize("", 0);
    uint8_t *src = guest_span(self->inst, self->caller, (uint32_t)ptr, (uint32_t)n);
    if (src == NULL)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)src, (Py_ssize_t)n);
}

static PyObject *caller_write(CallerObject *self, PyObject *args) {
    unsigned long long ptr;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "Ky*", &ptr, &data))
        return NULL;
    if (self->caller == NULL) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_RuntimeError, "guest memory used after the import returned");
        return NULL;
    }
    ptr &= 0xFFFFFFFF;
    int ok = 1;
    if (data.len > 0) {
        uint8_t *dst = data.len > 0xFFFFFFFF ? NULL : guest_span(self->inst, self->caller, (uint32_t)ptr, (uint32_t)data.len);
        if (dst == NULL)
            ok = 0;
        else
            memcpy(dst, data.buf, (size_t)data.len);
    }
    PyBuffer_Release(&data);
    return PyBool_FromLong(ok);
}

static PyObject *caller_capture(CallerObject *self, PyObject *args) {
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data))
        return NULL;
    if (self->caller == NULL) { /* the instance may be gone by now: the Caller holds no reference to it */
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_RuntimeError, "guest output captured after the import returned");
        return NULL;
    }
    capture(self->inst, data.buf, (size_t)data.len);
    PyBuffer_Release(&data);
    Py_RETURN_NONE;
}

static PyMethodDef caller_methods[] = {
    {"read", (PyCFunction)caller_read, METH_VARARGS, "read(ptr, n) -> bytes, or None outside memory"},
    {"write", (PyCFunction)caller_write, METH_VARARGS, "write(ptr, data) -> False outside memory"},
    {"capture", (PyCFunction)caller_capture, METH_VARARGS, "capture(data): appends to the instance's output"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "wasmsched.wasm._host.Caller",
    .tp_basicsize = sizeof(CallerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = caller_methods,
};

/* An exception in a Python handler: the trap with on_error's text; nothing escapes into wasmtime. */
static wasm_trap_t *python_failure(ImportEnv *env) {
    PyObject *exc = take_exception();
    PyObject *text = PyObject_CallOneArg(env->on_error, exc);
    Py_DECREF(exc);
    if (text == NULL) {
        PyErr_Clear();
        return trap_text("host function failed", 20);
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    wasm_trap_t *trap = s ? trap_text(s, (size_t)n) : trap_text("host function failed", 20);
    PyErr_Clear();
    Py_DECREF(text);
    return trap;
}

static wasm_trap_t *call_python(ImportEnv *env, Inst *inst, wasmtime_caller_t *caller, wasmtime_val_raw_t *args) {
    PyObject *argv[9];
    if (pending_log.n)
        flush_log(); /* the handler may log too: lines stay in order */
    CallerObject *c = PyObject_New(CallerObject, &CallerType);
    if (c == NULL)
        return python_failure(env);
    c->caller = caller;
    c->inst = inst;
    argv[0] = NULL;
    argv[1] = (PyObject *)c;
    int n = 0;
    for (; n < env->nparams; n++) {
        argv[2 + n] = env->kinds[n] == 'I' ? PyLong_FromLongLong(args[n].i64) : PyLong_FromLong(args[n].i32);
        if (argv[2 + n] == NULL)
            break;
    }
    PyObject *r = NULL;
    if (n == env->nparams)
        r = PyObject_Vectorcall(env->fn, argv + 1, (size_t)(1 + n) | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    for (int i = 0; i < n; i++)
        Py_DECREF(argv[2 + i]);
    c->caller = NULL;
    c->inst = NULL;
    Py_DECREF(c);
    if (r == NULL)
        return python_failure(env);
    if (env->has_result) {
        long v = r == Py_None ? 0 : PyLong_AsLong(r);
        Py_DECREF(r);
        if (v == -1 && PyErr_Occurred())
            return python_failure(env);
        args[0].i32 = (int32_t)v;
    } else {
        Py_DECREF(r);
    }
    return NULL;
}

static wasm_trap_t *serve_bytes(Inst *inst, ImportEnv *env, wasmtime_caller_t *caller, wasmtime_val_raw_t *args,
                                PyObject *value, uint32_t buf, uint32_t limit) {
    if (value == NULL) {
        args[0].i32 = 0;
        return NULL;
    }
    return serve(inst, env, caller, args, PyBytes_AS_STRING(value), (size_t)PyBytes_GET_SIZE(value), buf, limit);
}

static int clock_now(uint32_t id, uint64_t *out) {
    struct timespec ts;
    clockid_t c;
    switch (id) {
    case 0: c = CLOCK_REALTIME; break;
    case 1: c = CLOCK_MONOTONIC; break;
    case 2: c = CLOCK_PROCESS_CPUTIME_ID; break;
    case 3: c = CLOCK_THREAD_CPUTIME_ID; break;
    default: return 0;
    }
    clock_gettime(c, &ts);
    *out = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 1;
}

/* ===== guest klog lines, written natively ===================================================== */


/* Whether s[0:n] is valid UTF-8 (what Python's strict decoder accepts). */
static int utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else return 0;
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

/* json.dumps(s, ensure_ascii=False) of valid UTF-8. */
static void buf_json(Buf *b, const uint8_t *s, size_t n) {
    buf_put(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        const char *esc = NULL;
        char tmp[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                esc = tmp;
            }
        }
        if (esc != NULL) {
            buf_put(b, (const char *)s + start, i - start);
            buf_put(b, esc, strlen(esc));
            start = i + 1;
        }
    }
    buf_put(b, (const char *)s + start, n - start);
    buf_put(b, "\"", 1);
}

/* One guest klog line into b, formatted as util/klog.py's KlogFormatter formats the record Host.guest_record
 * makes of klog.log (kvs NULL) or klog.logs, at time ts; aux is b"<tail>\0<source>" (define_import). The
 * parts that are not given by Python (the time layout, the quoting of json.dumps) are compared with the
 * Python formatter's line byte for byte (tests/wasm/test_klog_native.py, through klog_line below).
 * 0: msg or kvs is not valid UTF-8, whose replacement characters only Python's decoder makes. */
static int format_klog(Buf *b, int32_t severity, const uint8_t *msg, uint32_t msg_len, const uint8_t *kvs,
                       uint32_t kvs_len, const struct timespec *ts, const char *aux) {
    if (!utf8_valid(msg, msg_len) || (kvs != NULL && !utf8_valid(kvs, kvs_len)))
        return 0;
    if (kvs_len == 0 && msg_len && msg[msg_len - 1] == '\n')
        msg_len--; /* one trailing newline is dropped, as by `log` */
    struct tm tm;
    time_t secs = ts->tv_sec;
    localtime_r(&secs, &tm);
    const char *source = aux + strlen(aux) + 1;
    char head[128];
    char level = log_letters[severity <= 0 ? 0 : severity >= 3 ? 3 : severity];
    int hn = snprintf(head, sizeof head, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s] ", level, tm.tm_mon + 1, tm.tm_mday,
                      tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000, log_pid, source);
    buf_put(b, head, (size_t)hn);
    buf_json(b, msg, msg_len);
    if (kvs != NULL) {
        /* entries each followed by NUL; bytes after the last NUL are ignored; an odd count pairs the
         * last key with "(MISSING)" */
        size_t i = 0, npart = 0;
        while (i < kvs_len) {
            const uint8_t *nul = memchr(kvs + i, 0, kvs_len - i);
            if (nul == NULL)
                break;
            size_t len = (size_t)(nul - (kvs + i));
            if (npart % 2 == 0) {
                buf_put(b, " ", 1);
                buf_put(b, (const char *)kvs + i, len);
                buf_put(b, "=", 1);
            } else {
                buf_json(b, kvs + i, len);
            }
            npart++;
            i += len + 1;
        }
        if (npart % 2)
            buf_put(b, "\"(MISSING)\"", 11);
    }
    buf_put(b, aux, strlen(aux));
    buf_put(b, "\n", 1);
    return 1;
}

/* klog.log (nparams 3) or klog.logs (5), formatted natively into this thread's pending output. 1: written
 * (or dropped as the Python handler would drop it); 0: the Python handler must do it. */
static int emit_klog(Inst *inst, ImportEnv *env, wasmtime_caller_t *caller, wasmtime_val_raw_t *args) {
    int32_t severity = args[0].i32;
    uint32_t msg_len = (uint32_t)args[2].i32;
    const uint8_t *msg = msg_len ? guest_span(inst, caller, (uint32_t)args[1].i32, msg_len) : (const uint8_t *)"";
    if (msg == NULL)
        return 1; /* §4.2: an unreadable klog message is dropped, never a trap */
    const uint8_t *kvs = NULL;
    uint32_t kvs_len = 0;
    if (env->nparams == 5) {
        kvs_len = (uint32_t)args[4].i32;
        if (kvs_len) {
            kvs = guest_span(inst, caller, (uint32_t)args[3].i32, kvs_len);
            if (kvs == NULL)
                return 1;
        }
    }
    char stack[512];
    Buf b = {stack, 0, sizeof stack, 0, 0};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (!format_klog(&b, severity, msg, msg_len, kvs, kvs_len, &ts, PyBytes_AS_STRING(env->aux)))
        return 0;
    if (!b.oom) {
        if (pending_log.n + b.n > LOG_FLUSH_BYTES)
            flush_log();
        buf_put(&pending_log, b.p, b.n);
        if (pending_log.oom) {
            pending_log.oom = 0; /* lost, as a failed write loses a line */
        }
    }
    if (b.heap)
        free(b.p);
    return 1;
}

/* set_log_sink(fd, pid, letters): guest klog lines go natively to fd (-1: to the Python handler), naming
 * pid, with letters[min(max(severity, 0), 3)] as their severity letter. */
static PyObject *set_log_sink(PyObject *self, PyObject *args) {
    int fd;
    long pid;
    const char *letters;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "ily#", &fd, &pid, &letters, &n))
        return NULL;
    if (n != 4) {
        PyErr_SetString(PyExc_ValueError, "set_log_sink: letters must be 4 bytes, for severities 0..3");
        return NULL;
    }
    log_fd = fd;
    log_pid = pid;
    memcpy(log_letters, letters, 4);
    Py_RETURN_NONE;
}

/* klog_line(severity, msg, kvs, time_ns, aux): the line format_klog makes (None: not valid UTF-8), for the
 * tests that compare it with Python's formatter. */
static PyObject *klog_line(PyObject *self, PyObject *args) {
    int severity;
    const char *msg, *kvs, *aux;
    Py_ssize_t msg_len, kvs_len, aux_len;
    long long time_ns;
    if (!PyArg_ParseTuple(args, "iy#z#Ly#", &severity, &msg, &msg_len, &kvs, &kvs_len, &time_ns, &aux, &aux_len))
        return NULL;
    if (memchr(aux, 0, (size_t)aux_len) == NULL) { /* a bytes object's buffer is NUL-terminated after aux_len */
        PyErr_SetString(PyExc_ValueError, "klog_line: aux must be b\"<tail>\\0<source>\"");
        return NULL;
    }
    if (kvs == NULL)
        kvs_len = 0;
    char stack[512];
    Buf b = {stack, 0, sizeof stack, 0, 0};
    struct timespec ts = {(time_t)(time_ns / 1000000000), (long)(time_ns % 1000000000)};
    PyObject *result;
    if (!format_klog(&b, severity, (const uint8_t *)msg, (uint32_t)msg_len, kvs_len ? (const uint8_t *)kvs : NULL,
                     (uint32_t)kvs_len, &ts, aux))
        result = Py_NewRef(Py_None);
    else if (b.oom)
        result = PyErr_NoMemory();
    else
        result = PyBytes_FromStringAndSize(b.p, (Py_ssize_t)b.n);
    if (b.heap)
        free(b.p);
    return result;
}

/* ===== WASI preview 1 ========================================================================== */

static int put_u32(Inst *inst, wasmtime_caller_t *caller, uint32_t ptr, uint32_t v) {
    uint8_t *p = guest_span(inst, caller, ptr, 4);
    if (p == NULL)
        return 0;
    memcpy(p, &v, 4);
    return 1;
}

static int put_u64(Inst *inst, wasmtime_caller_t *caller, uint32_t ptr, uint64_t v) {
    uint8_t *p = guest_span(inst, caller, ptr, 8);
    if (p == NULL)
        return 0;
    memcpy(p, &v, 8);
    return 1;
}

static int32_t wasi_args(Inst *inst, wasmtime_caller_t *caller, uint32_t a0, uint32_t a1, int sizes_only) {
    PyObject *argv = inst ? inst->args : NULL;
    Py_ssize_t argc = argv ? PyTuple_GET_SIZE(argv) : 0;
    if (sizes_only) {
        uint64_t total = 0;
        for (Py_ssize_t i = 0; i < argc; i++)
            total += (uint64_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(argv, i)) + 1;
        return put_u32(inst, caller, a0, (uint32_t)argc) && put_u32(inst, caller, a1, (uint32_t)total) ? ERRNO_SUCCESS
                                                                                                     : ERRNO_FAULT;
    }
    uint32_t at = a1;
    for (Py_ssize_t i = 0; i < argc; i++) {
        PyObject *arg = PyTuple_GET_ITEM(argv, i);
        uint32_t n = (uint32_t)PyBytes_GET_SIZE(arg);
        uint8_t *dst = guest_span(inst, caller, at, n + 1);
        if (dst == NULL || !put_u32(inst, caller, a0 + 4 * (uint32_t)i, at))
            return ERRNO_FAULT;
        dst = guest_span(inst, caller, at, n + 1); /* put_u32 cannot move memory; re-read for clarity */
        memcpy(dst, PyBytes_AS_STRING(arg), n);
        dst[n] = 0;
        at += n + 1;
    }
    return ERRNO_SUCCESS;
}

static int32_t wasi_random(Inst *inst, wasmtime_caller_t *caller, uint32_t buf, uint32_t n) {
    uint8_t *p = n ? guest_span(inst, caller, buf, n) : (uint8_t *)"";
    if (p == NULL)
        return ERRNO_FAULT;
    size_t done = 0;
    while (done < n) {
        ssize_t r = getrandom(p + done, n - done, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return ERRNO_NOSYS;
        }
        done += (size_t)r;
    }
    return ERRNO_SUCCESS;
}

/* fd_fdstat_get / fd_filestat_get of stdio: a zeroed record of size bytes at ptr, the character-device
 * file type at type_at and, when given, the rights at 8. */
static int32_t stdio_record(Inst *inst, wasmtime_caller_t *caller, uint32_t fd, uint32_t ptr, uint32_t size,
                            uint32_t type_at, uint64_t rights) {
    if (fd > 2)
        return ERRNO_BADF;
    uint8_t *p = guest_span(inst, caller, ptr, size);
    if (p == NULL)
        return ERRNO_FAULT;
    memset(p, 0, size);
    p[type_at] = FILETYPE_CHARACTER_DEVICE;
    if (rights)
        memcpy(p + 8, &rights, 8);
    return ERRNO_SUCCESS;
}

/* Every WASI function but fd_write, clock_time_get (their own handlers) and poll_oneoff (Python). */
static wasm_trap_t *wasi(Inst *inst, ImportEnv *env, wasmtime_caller_t *caller, wasmtime_val_raw_t *args) {
    uint32_t a0 = (uint32_t)args[0].i32, a1 = env->nparams > 1 && env->kinds[1] == 'i' ? (uint32_t)args[1].i32 : 0;
    int32_t r;
    int stdio = a0 <= 2;
    switch (env->slot) {
    case W_ARGS_GET: r = wasi_args(inst, caller, a0, a1, 0); break;
    case W_ARGS_SIZES_GET: r = wasi_args(inst, caller, a0, a1, 1); break;
    case W_ENVIRON_GET: r = ERRNO_SUCCESS; break;
    case W_ENVIRON_SIZES_GET:
        r = put_u32(inst, caller, a0, 0) && put_u32(inst, caller, a1, 0) ? ERRNO_SUCCESS : ERRNO_FAULT;
        break;
    case W_CLOCK_RES_GET:
        if (a0 > 3)
            r = ERRNO_INVAL;
        else
            r = put_u64(inst, caller, a1, 1) ? ERRNO_SUCCESS : ERRNO_FAULT;
        break;
    case W_FD_READ: /* stdin is at EOF; nothing else is readable */
        if (a0 != 0) {
            r = ERRNO_BADF;
            break;
        }
        r = put_u32(inst, caller, (uint32_t)args[3].i32, 0) ? ERRNO_SUCCESS : ERRNO_FAULT;
        break;
    case W_FD_CLOSE:
    case W_FD_FDSTAT_SET_FLAGS:
        r = stdio ? ERRNO_SUCCESS : ERRNO_BADF;
        break;
    case W_FD_FDSTAT_GET: /* fdstat: fs_filetype u8, fs_flags u16, fs_rights_base u64 at 8, inheriting at 16 */
        r = stdio_record(inst, caller, a0, a1, 24, 0,
                         (a0 == 0 ? RIGHT_FD_READ : RIGHT_FD_WRITE) | RIGHT_POLL_FD_READWRITE);
        break;
    case W_FD_FILESTAT_GET: /* filestat: dev, ino u64, filetype u8 at 16, nlink, size, 3 times u64 */
        r = stdio_record(inst, caller, a0, a1, 64, 16, 0);
        break;
    case W_FD_SEEK:
    case W_FD_TELL:
    case W_FD_PREAD:
    case W_FD_PWRITE:
        r = stdio ? ERRNO_SPIPE : ERRNO_BADF;
        break;
    case W_FD_PRESTAT_GET:
    case W_FD_PRESTAT_DIR_NAME:
        r = ERRNO_BADF; /* no preopened directories */
        break;
    case W_PROC_EXIT:
        if (inst != NULL) {
            inst->exited = 1;
            inst->exit_code = args[0].i32;
        }
        return trap_text("proc_exit", 9);
    case W_PROC_RAISE:
        r = ERRNO_NOSYS;
        break;
    case W_SCHED_YIELD:
        r = ERRNO_SUCCESS;
        break;
    case W_RANDOM_GET:
        r = wasi_random(inst, caller, a0, a1);
        break;
    default:
        /* the remaining fd_* on stdio are not supported; path_* and sock_* name descriptors that do not
         * exist (there are no directories and no sockets) */
        r = stdio && env->slot < W_PATH_CREATE_DIRECTORY ? ERRNO_NOTSUP : ERRNO_BADF;
    }
    args[0].i32 = r;
    return NULL;
}

static wasm_trap_t *dispatch(void *envp, wasmtime_caller_t *caller, wasmtime_val_raw_t *args, size_t nargs) {
    ImportEnv *env = envp;
    Inst *inst = current;
    /* A guest of another store called from inside this thread's call (an import's Python handler running
     * wasm through wasmtime-py) is served without an instance: this one's memory is not its memory. */
    if (inst != NULL && p_wasmtime_caller_context(caller) != inst->ctx)
        inst = NULL;
    switch (env->handler) {
    case H_KLOG_SEVERITY:
        args[0].i32 = inst ? inst->log_severity : 0;
        return NULL;
    case H_KLOG:
        if (inst != NULL && args[0].i32 < inst->log_severity)
            return NULL; /* filtered before anything is read or formatted */
        if (log_fd >= 0 && env->aux != NULL && emit_klog(inst, env, caller, args))
            return NULL;
        return call_python(env, inst, caller, args);
    case H_GET_CONFIG:
        return serve_bytes(inst, env, caller, args, inst ? inst->config : NULL, (uint32_t)args[0].i32, (uint32_t)args[1].i32);
    case H_CURRENT_POD:
        return serve_bytes(inst, env, caller, args, inst ? inst->pod : NULL, (uint32_t)args[0].i32, (uint32_t)args[1].i32);
    case H_TARGET_POD:
        return serve_bytes(inst, env, caller, args, inst ? inst->target_pod : NULL, (uint32_t)args[0].i32,
                           (uint32_t)args[1].i32);
    case H_CURRENT_NODE_NAME: {
        PyObject *nn = inst ? inst->node_name : NULL;
        if (nn != NULL && PyUnicode_Check(nn)) {
            Py_ssize_t len;
            const char *u = PyUnicode_AsUTF8AndSize(nn, &len); /* cached: no copy per call */
            if (u == NULL)
                return python_failure(env);
            return serve(inst, env, caller, args, u, (size_t)len, (uint32_t)args[0].i32, (uint32_t)args[1].i32);
        }
        return serve_bytes(inst, env, caller, args, nn, (uint32_t)args[0].i32, (uint32_t)args[1].i32);
    }
    case H_NODE: {
        uint32_t nlen = (uint32_t)args[1].i32;
        const char *name = "";
        if (nlen) {
            uint8_t *p = guest_span(inst, caller, (uint32_t)args[0].i32, nlen);
            if (p == NULL)
                return fault(inst, env);
            name = (const char *)p;
        }
        PyObject *key = PyBytes_FromStringAndSize(name, nlen);
        if (key == NULL)
            return python_failure(env);
        PyObject *value = PyObject_CallOneArg(env->fn, key);
        Py_DECREF(key);
        if (value == NULL)
            return python_failure(env);
        if (!PyBytes_Check(value)) {
            Py_DECREF(value);
            PyErr_SetString(PyExc_TypeError, "node bytes must be bytes");
            return python_failure(env);
        }
        wasm_trap_t *t = serve_bytes(inst, env, caller, args, value, (uint32_t)args[2].i32, (uint32_t)args[3].i32);
        Py_DECREF(value);
        return t;
    }
    case H_RESULT: {
        if (inst == NULL || inst->export_id < 0)
            return NULL;
        if (env->export_id >= 0 ? inst->export_id != env->export_id : !(status_reason_mask >> inst->export_id & 1))
            return NULL; /* not this export's setter: ignored without reading guest memory */
        uint32_t n = (uint32_t)args[1].i32;
        PyObject *v;
        if (n == 0) {
            v = PyBytes_FromStringAndSize("", 0);
        } else {
            uint8_t *p = guest_span(inst, caller, (uint32_t)args[0].i32, n);
            if (p == NULL) {
                if (env->slot == R_STATUS_REASON) {
                    v = PyBytes_FromString("BUG: out of memory reading message");
                } else {
                    return fault(inst, env);
                }
            } else {
                v = PyBytes_FromStringAndSize((const char *)p, n);
            }
        }
        if (v == NULL)
            return python_failure(env);
        Py_XSETREF(inst->results[env->slot], v); /* §4.1: the last setter call in a call wins */
        return NULL;
    }
    case H_CLOCK_TIME_GET: {
        uint64_t now;
        if (!clock_now((uint32_t)args[0].i32, &now)) {
            args[0].i32 = 28; /* EINVAL */
            return NULL;
        }
        uint8_t *p = guest_span(inst, caller, (uint32_t)args[2].i32, 8);
        if (p == NULL) {
            args[0].i32 = 21; /* EFAULT */
            return NULL;
        }
        memcpy(p, &now, 8);
        args[0].i32 = 0;
        return NULL;
    }
    case H_FD_WRITE: {
        uint32_t fd = (uint32_t)args[0].i32, iovs = (uint32_t)args[1].i32, n = (uint32_t)args[2].i32;
        uint32_t nwritten = (uint32_t)args[3].i32;
        if (fd != 1 && fd != 2) {
            args[0].i32 = 8; /* EBADF */
            return NULL;
        }
        if (n > MAX_IOVECS) {
            args[0].i32 = 28; /* EINVAL */
            return NULL;
        }
        uint8_t *table = n ? guest_span(inst, caller, iovs, n * 8) : (uint8_t *)"";
        if (table == NULL)
            return fault(inst, env);
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t len;
            memcpy(&len, table + i * 8 + 4, 4);
            total += len;
        }
        if (total > 0xFFFFFFFFu) {
            args[0].i32 = 28;
            return NULL;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t ptr, len;
            memcpy(&ptr, table + i * 8, 4);
            memcpy(&len, table + i * 8 + 4, 4);
            if (len == 0)
                continue;
            uint8_t *p = guest_span(inst, caller, ptr, len);
            if (p == NULL)
                return fault(inst, env);
            capture(inst, p, len);
            /* the span may move only on memory growth, which a host call cannot cause */
            table = guest_span(inst, caller, iovs, n * 8);
        }
        uint8_t *out = guest_span(inst, caller, nwritten, 4);
        if (out == NULL)
            return fault(inst, env);
        uint32_t t32 = (uint32_t)total;
        memcpy(out, &t32, 4);
        args[0].i32 = 0;
        return NULL;
    }
    case H_WASI:
        return wasi(inst, env, caller, args);
    default:
        return call_python(env, inst, caller, args);
    }
    (void)nargs;
}

static void env_finalize(void *p) {
    ImportEnv *env = p;
    if (!Py_IsInitialized() || _Py_IsFinalizing())
        return; /* the process is ending: nothing to give back */
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(env->fn);
    Py_XDECREF(env->on_error);
    Py_XDECREF(env->fault_text);
    Py_XDECREF(env->aux);
    PyGILState_Release(g);
    free(env);
}

/* Whether the wasm function type ty is kinds -> (i32 if has_result). */
static int functype_is(const wasm_functype_t *ty, const char *kinds, int has_result) {
    const wasm_valtype_vec_t *params = p_wasm_functype_params(ty), *results = p_wasm_functype_results(ty);
    if (params->size != strlen(kinds) || results->size != (has_result ? 1u : 0u))
        return 0;
    for (size_t i = 0; i < params->size; i++)
        if (p_wasm_valtype_kind(params->data[i]) != (kinds[i] == 'I' ? WASM_I64 : WASM_I32))
            return 0;
    return !has_result || p_wasm_valtype_kind(results->data[0]) == WASM_I32;
}

/* What a native handler reads and writes is fixed by position: a definition that does not give it those
 * arguments (or a Python handler where it calls one) is refused here, never served. NULL: fine. */
static const char *import_def_error(int handler, const char *kinds, int has_result, PyObject *fn, int slot,
                                    int export_id, PyObject *aux) {
    const char *want = NULL; /* the parameters the handler reads; NULL: any */
    int result = 1;
    for (const char *k = kinds; *k; k++)
        if (*k != 'i' && *k != 'I')
            return "parameter kinds must be \"i\" (i32) or \"I\" (i64)";
    switch (handler) {
    case H_PYTHON: result = has_result; break;
    case H_NODE: want = "iiii"; break;
    case H_KLOG:
        if (strcmp(kinds, "iii") != 0 && strcmp(kinds, "iiiii") != 0)
            return "H_KLOG serves (severity, msg, msg_len[, kvs, kvs_len]) -> ()";
        want = kinds;
        result = 0;
        if (aux != Py_None && memchr(PyBytes_AS_STRING(aux), 0, (size_t)PyBytes_GET_SIZE(aux)) == NULL)
            return "H_KLOG's aux must be b\"<tail>\\0<source>\"";
        break;
    case H_KLOG_SEVERITY: want = ""; break;
    case H_GET_CONFIG: case H_CURRENT_POD: case H_TARGET_POD: case H_CURRENT_NODE_NAME: want = "ii"; break;
    case H_RESULT:
        want = "ii";
        result = 0;
        if (slot < 0 || slot >= N_RESULTS)
            return "unknown result slot";
        if (export_id < -1 || export_id >= n_exports)
            return "unknown export id";
        break;
    case H_CLOCK_TIME_GET: want = "iIi"; break;
    case H_FD_WRITE: want = "iiii"; break;
    case H_WASI:
        want = wasi_params[slot];
        result = slot != W_PROC_EXIT;
        break;
    default: return "unknown handler";
    }
    if (want != NULL && strcmp(kinds, want) != 0)
        return "the parameters are not the ones the handler reads";
    if (result != has_result)
        return has_result ? "the handler returns no result" : "the handler returns a result";
    if ((handler == H_PYTHON || handler == H_NODE || handler == H_KLOG) && !PyCallable_Check(fn))
        return "the handler needs a Python function";
    return NULL;
}

/* define_import(linker_ptr, module, name, functype_ptr, handler, kinds, has_result, fn, on_error,
 *               fault_text, slot, export_id, aux) */
static PyObject *define_import(PyObject *self, PyObject *args) {
    unsigned long long linker, ty;
    const char *module, *name, *kinds;
    Py_ssize_t mlen, nlen;
    int handler, has_result, slot, export_id;
    PyObject *fn, *on_error, *fault_text, *aux;
    if (!PyArg_ParseTuple(args, "Ks#s#KispOOSiiO", &linker, &module, &mlen, &name, &nlen, &ty, &handler, &kinds,
                          &has_result, &fn, &on_error, &fault_text, &slot, &export_id, &aux))
        return NULL;
    if (aux != Py_None && !PyBytes_Check(aux)) {
        PyErr_SetString(PyExc_TypeError, "aux must be bytes or None");
        return NULL;
    }
    if (strlen(kinds) >= sizeof(((ImportEnv *)0)->kinds)) {
        PyErr_SetString(PyExc_ValueError, "too many parameters");
        return NULL;
    }
    if (handler == H_WASI) {
        slot = -1;
        for (int i = 0; i < W_COUNT; i++)
            if (strlen(wasi_names[i]) == (size_t)nlen && memcmp(wasi_names[i], name, (size_t)nlen) == 0)
                slot = i;
        if (slot < 0) {
            PyErr_Format(PyExc_ValueError, "no WASI preview 1 function %s", name);
            return NULL;
        }
    }
    if (!resolved) {
        PyErr_SetString(PyExc_RuntimeError, "wasmsched.wasm._host.init() was not called");
        return NULL;
    }
    const char *bad = import_def_error(handler, kinds, has_result, fn, slot, export_id, aux);
    if (bad == NULL && (ty == 0 || !functype_is((const wasm_functype_t *)(uintptr_t)ty, kinds, has_result)))
        bad = "the function type is not the parameter kinds and result given";
    if (bad != NULL) {
        PyErr_Format(PyExc_ValueError, "define_import %s.%s: %s", module, name, bad);
        return NULL;
    }
    ImportEnv *env = calloc(1, sizeof(ImportEnv));
    if (env == NULL)
        return PyErr_NoMemory();
    env->handler = handler;
    env->nparams = (int)strlen(kinds);
    strcpy(env->kinds, kinds);
    env->has_result = has_result;
    env->slot = slot;
    env->export_id = export_id;
    env->fn = fn == Py_None ? NULL : Py_NewRef(fn);
    env->on_error = Py_NewRef(on_error);
    env->fault_text = Py_NewRef(fault_text);
    env->aux = aux == Py_None ? NULL : Py_NewRef(aux);
    wasmtime_error_t *err = p_wasmtime_linker_define_func_unchecked(
        (wasmtime_linker_t *)(uintptr_t)linker, module, (size_t)mlen, name, (size_t)nlen,
        (const wasm_functype_t *)(uintptr_t)ty, dispatch, env, env_finalize);
    if (err != NULL) {
        wasm_name_t msg;
        p_wasmtime_error_message(err, &msg);
        PyObject *text = PyUnicode_DecodeUTF8(msg.data, (Py_ssize_t)msg.size, "replace");
        if (text != NULL) /* PyErr_Format has no %.*s in 3.11: it printed that literally */
            PyErr_Format(PyExc_RuntimeError, "defining %s.%s: %U", module, name, text);
        Py_XDECREF(text);
        p_wasm_byte_vec_delete(&msg);
        p_wasmtime_error_delete(err);
        env_finalize(env);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ===== faults ================================================================================= */

static PyObject *frames_list(wasm_frame_vec_t *frames) {
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < frames->size; i++) {
        const wasm_frame_t *f = frames->data[i];
        const wasm_name_t *mod = p_wasmtime_frame_module_name(f);
        const wasm_name_t *fn = p_wasmtime_frame_func_name(f);
        PyObject *t = Py_BuildValue("(NNI)",
                                    mod ? PyUnicode_DecodeUTF8(mod->data, (Py_ssize_t)mod->size, "replace") : Py_NewRef(Py_None),
                                    fn ? PyUnicode_DecodeUTF8(fn->data, (Py_ssize_t)fn->size, "replace") : Py_NewRef(Py_None),
                                    p_wasm_frame_func_index(f));
        if (t == NULL || PyList_Append(out, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(t);
    }
    return out;
}

/* Raises GuestFault(kind, code, message, frames): kind "trap" (code: wasmtime's trap code or None),
 * "exit" (code: the exit status), "timeout" (the call's deadline passed), "error" (anything else). */
static PyObject *raise_fault(Inst *inst, wasmtime_error_t *err, wasm_trap_t *trap) {
    PyObject *kind, *code = Py_NewRef(Py_None), *message, *frames;
    wasm_frame_vec_t fv = {0, NULL};
    wasm_byte_vec_t msg = {0, NULL};
    if (trap != NULL && inst != NULL && inst->exited) {
        kind = PyUnicode_FromString("exit");
        Py_SETREF(code, PyLong_FromLong(inst->exit_code));
        p_wasm_trap_message(trap, &msg);
        p_wasm_trap_trace(trap, &fv);
    } else if (trap != NULL) {
        wasmtime_trap_code_t tc;
        if (p_wasmtime_trap_code(trap, &tc))
            Py_SETREF(code, PyLong_FromLong(tc));
        kind = PyUnicode_FromString("trap");
        p_wasm_trap_message(trap, &msg);
        p_wasm_trap_trace(trap, &fv);
    } else {
        int status;
        if (inst != NULL && inst->exited) {
            kind = PyUnicode_FromString("exit");
            Py_SETREF(code, PyLong_FromLong(inst->exit_code));
        } else if (p_wasmtime_error_exit_status(err, &status)) {
            kind = PyUnicode_FromString("exit");
            Py_SETREF(code, PyLong_FromLong(status));
        } else {
            kind = PyUnicode_FromString(inst != NULL && inst->timed_out ? "timeout" : "error");
        }
        p_wasmtime_error_message(err, &msg);
        p_wasmtime_error_wasm_trace(err, &fv);
    }
    size_t mlen = msg.size;
    if (mlen && msg.data[mlen - 1] == '\0')
        mlen--; /* wasm_message_t may count a trailing NUL */
    message = PyUnicode_DecodeUTF8(msg.data ? msg.data : "", (Py_ssize_t)mlen, "replace");
    frames = frames_list(&fv);
    p_wasm_frame_vec_delete(&fv);
    p_wasm_byte_vec_delete(&msg);
    if (trap != NULL)
        p_wasm_trap_delete(trap);
    else
        p_wasmtime_error_delete(err);
    PyObject *exc = NULL;
    if (kind && message && frames && code)
        exc = PyObject_CallFunction(GuestFault, "OOOO", kind, code, message, frames);
    Py_XDECREF(kind);
    Py_XDECREF(code);
    Py_XDECREF(message);
    Py_XDECREF(frames);
    if (exc != NULL) {
        PyErr_SetObject(GuestFault, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* ===== epoch deadline callback ================================================================ */

/* The epoch callback's data: the Instance, or NULL once it was freed. Either side may go first (a closed
 * wasmtime.Store drops its callback data before the Instance object is collected, or the Instance goes
 * while another holder keeps the store), so each holds a reference and the last one frees it. */
typedef struct EpochRef {
    struct Inst *inst;
    int refs;
} EpochRef;

static void epoch_ref_release(void *p) {
    EpochRef *ref = p;
    if (__atomic_sub_fetch(&ref->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(ref);
}

#define TICK_NS_DEFAULT 5000000
static long tick_ns = TICK_NS_DEFAULT;
static uint64_t slice_ticks = 2;

static uint64_t ticks_for(int64_t ns) { return (uint64_t)((ns + tick_ns - 1) / tick_ns) + 1; }

/* Reached every slice of guest execution: other threads get the GIL, the owner looks for a pending
 * interrupt, and a call past its deadline stops. */
static wasmtime_error_t *on_epoch(const wasmtime_context_t *ctx, void *data, uint64_t *delta,
                                  wasmtime_update_deadline_kind_t *kind) {
    Inst *inst = ((EpochRef *)data)->inst;
    if (inst == NULL) /* its Instance is gone; the store ran guest code through some other holder */
        return p_wasmtime_error_new("guest stopped: its instance was closed");
    if (pending_log.n)
        flush_log();
    Py_BEGIN_ALLOW_THREADS
    Py_END_ALLOW_THREADS
    if (inst->epoch_fn != NULL) {
        PyObject *r = PyObject_CallNoArgs(inst->epoch_fn);
        if (r == NULL) {
            Py_XSETREF(inst->epoch_exc, take_exception());
            return p_wasmtime_error_new("guest stopped: interrupted");
        }
        Py_DECREF(r);
    }
    uint64_t next = slice_ticks;
    if (inst->deadline_ns) {
        int64_t left = inst->deadline_ns - monotonic_ns();
        if (left <= 0) {
            inst->timed_out = 1;
            return p_wasmtime_error_new("guest stopped at its deadline");
        }
        uint64_t t = ticks_for(left);
        if (t < next)
            next = t;
    }
    *delta = next;
    *kind = WASMTIME_UPDATE_DEADLINE_CONTINUE;
    (void)ctx;
    return NULL;
}

/* ===== Instance ================================================================================ */

static PyTypeObject InstType;

/* Drops the staged values (not the results or the failure, which Python reads after the call). */
static void release_call(Inst *self) {
    Py_CLEAR(self->pod);
    Py_CLEAR(self->target_pod);
    Py_CLEAR(self->node_name);
}

static void clear_call(Inst *self) {
    Py_CLEAR(self->pod);
    Py_CLEAR(self->target_pod);
    Py_CLEAR(self->node_name);
    for (int i = 0; i < N_RESULTS; i++)
        Py_CLEAR(self->results[i]);
    Py_CLEAR(self->host_failure);
    self->timed_out = 0;
}

/* Instance(store_ptr, pre_ptr, keep, owner, epoch_fn, config, log_severity, argv) */
static int inst_init(Inst *self, PyObject *args, PyObject *kw) {
    unsigned long long store, pre;
    PyObject *keep, *owner, *epoch_fn, *config, *argv;
    int sev;
    if (!PyArg_ParseTuple(args, "KKOOOSiO!", &store, &pre, &keep, &owner, &epoch_fn, &config, &sev, &PyTuple_Type,
                          &argv))
        return -1;
    if (self->initialized) { /* its instance, memory and functions belong to the first store */
        PyErr_SetString(PyExc_RuntimeError, "Instance is already initialized");
        return -1;
    }
    if (!resolved) {
        PyErr_SetString(PyExc_RuntimeError, "wasmsched.wasm._host.init() was not called");
        return -1;
    }
    if (store == 0 || pre == 0) {
        PyErr_SetString(PyExc_ValueError, "Instance needs a store and an InstancePre");
        return -1;
    }
    if (epoch_fn != Py_None && !PyCallable_Check(epoch_fn)) {
        PyErr_SetString(PyExc_TypeError, "epoch_fn must be callable or None");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(argv); i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(argv, i))) {
            PyErr_SetString(PyExc_TypeError, "argv must be a tuple of bytes");
            return -1;
        }
    }
    Py_XSETREF(self->args, Py_NewRef(argv));
    self->store = (wasmtime_store_t *)(uintptr_t)store;
    self->ctx = p_wasmtime_store_context(self->store);
    self->pre = (const wasmtime_instance_pre_t *)(uintptr_t)pre;
    Py_XSETREF(self->keep, Py_NewRef(keep));
    Py_XSETREF(self->owner, Py_NewRef(owner));
    Py_XSETREF(self->epoch_fn, epoch_fn == Py_None ? NULL : Py_NewRef(epoch_fn));
    Py_XSETREF(self->config, Py_NewRef(config));
    self->log_severity = sev;
    self->export_id = -1;
    EpochRef *ref = malloc(sizeof(EpochRef));
    if (ref == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    ref->inst = self;
    ref->refs = 2; /* the store's (its finalizer) and this object's (dealloc) */
    self->epoch_ref = ref;
    p_wasmtime_store_epoch_deadline_callback(self->store, on_epoch, ref, epoch_ref_release);
    self->initialized = 1;
    (void)kw;
    return 0;
}

static int inst_traverse(Inst *self, visitproc visit, void *arg) {
    Py_VISIT(self->keep);
    Py_VISIT(self->owner);
    Py_VISIT(self->epoch_fn);
    Py_VISIT(self->epoch_exc);
    return 0;
}

static int inst_clear(Inst *self) {
    Py_CLEAR(self->keep);
    Py_CLEAR(self->owner);
    Py_CLEAR(self->epoch_fn);
    Py_CLEAR(self->epoch_exc);
    Py_CLEAR(self->config);
    Py_CLEAR(self->args);
    clear_call(self);
    return 0;
}

static void inst_dealloc(Inst *self) {
    PyObject_GC_UnTrack(self);
    if (self->epoch_ref != NULL) { /* the store may live on (and run guest code) without this object */
        self->epoch_ref->inst = NULL;
        epoch_ref_release(self->epoch_ref);
    }
    inst_clear(self);
    free(self->out);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Runs func with the per-call deadline; 0 on success (the raw result in *out), -1 with GuestFault set. */
static int run_call(Inst *self, wasmtime_func_t *func, wasmtime_val_raw_t *out, int exit0_ok) {
    if (self->deadline_ns) {
        int64_t left = self->deadline_ns - monotonic_ns();
        uint64_t t = left > 0 ? ticks_for(left) : 1;
        p_wasmtime_context_set_epoch_deadline(self->ctx, t < slice_ticks ? t : slice_ticks);
    } else {
        p_wasmtime_context_set_epoch_deadline(self->ctx, slice_ticks);
    }
    wasm_trap_t *trap = NULL;
    Inst *prev = current;
    current = self;
    self->exited = 0;
    self->running = 1;
    wasmtime_error_t *err = p_wasmtime_func_call_unchecked(self->ctx, func, out, 1, &trap);
    self->running = 0;
    current = prev;
    if (pending_log.n)
        flush_log();
    if ((trap != NULL || err != NULL) && exit0_ok && self->exited && self->exit_code == 0) {
        /* a host function's trap may come back as a trap or as an error */
        if (trap != NULL)
            p_wasm_trap_delete(trap);
        if (err != NULL)
            p_wasmtime_error_delete(err);
        self->exited = 0;
        return 0;
    }
    if (err != NULL || trap != NULL) {
        raise_fault(self, err, trap);
        return -1;
    }
    return 0;
}

static int run(Inst *self, wasmtime_func_t *func, wasmtime_val_raw_t *out) { return run_call(self, func, out, 0); }

static int set_deadline(Inst *self, long long timeout_ns) {
    self->deadline_ns = timeout_ns > 0 ? monotonic_ns() + timeout_ns : 0;
    return 0;
}

/* Whether func is () -> () (kind 0), () -> i32 (1) or () -> i64 (2). */
static int func_is(Inst *self, const wasmtime_func_t *func, int kind) {
    wasm_functype_t *ty = p_wasmtime_func_type(self->ctx, func);
    if (ty == NULL)
        return 0;
    const wasm_valtype_vec_t *params = p_wasm_functype_params(ty), *results = p_wasm_functype_results(ty);
    int ok = params->size == 0 && (kind == 0 ? results->size == 0
                                   : results->size == 1 && p_wasm_valtype_kind(results->data[0]) ==
                                                               (kind == 1 ? WASM_I32 : WASM_I64));
    p_wasm_functype_delete(ty);
    return ok;
}

/* instantiate(timeout_ns, export_names_present) -> None: instantiates the InstancePre in the store,
 * then runs _initialize or _start (a proc_exit(0) there is a normal end). Raises GuestFault. */
static PyObject *inst_instantiate(Inst *self, PyObject *args) {
    long long timeout_ns;
    if (!PyArg_ParseTuple(args, "L", &timeout_ns))
        return NULL;
    if (!self->initialized) {
        PyErr_SetString(PyExc_RuntimeError, "Instance is not initialized");
        return NULL;
    }
    if (self->instantiated || self->running) {
        PyErr_SetString(PyExc_RuntimeError, "instance already instantiated");
        return NULL;
    }
    clear_call(self);
    self->export_id = -1;
    set_deadline(self, timeout_ns);
    if (self->deadline_ns) {
        int64_t left = self->deadline_ns - monotonic_ns();
        uint64_t t = ticks_for(left);
        p_wasmtime_context_set_epoch_deadline(self->ctx, t < slice_ticks ? t : slice_ticks);
    } else {
        p_wasmtime_context_set_epoch_deadline(self->ctx, slice_ticks);
    }
    wasm_trap_t *trap = NULL;
    Inst *prev = current;
    current = self;
    self->exited = 0;
    self->running = 1;
    wasmtime_error_t *err = p_wasmtime_instance_pre_instantiate(self->pre, self->ctx, &self->instance, &trap);
    self->running = 0;
    current = prev;
    if (pending_log.n)
        flush_log();
    if (err != NULL || trap != NULL)
        return raise_fault(self, err, trap);
    self->instantiated = 1;
    wasmtime_extern_t item;
    if (p_wasmtime_instance_export_get(self->ctx, &self->instance, "memory", 6, &item) &&
        item.kind == WASMTIME_EXTERN_MEMORY) {
        self->memory = item.of.memory;
        self->has_memory = 1;
    }
    for (Py_ssize_t i = 0; i < n_exports; i++) {
        Py_ssize_t len;
        const char *name = PyUnicode_AsUTF8AndSize(export_names[i], &len);
        if (name == NULL)
            return NULL;
        if (p_wasmtime_instance_export_get(self->ctx, &self->instance, name, (size_t)len, &item) &&
            item.kind == WASMTIME_EXTERN_FUNC) {
            /* Called with a one-value buffer: only () -> (its result) fits it (abi.check_module refuses
             * others before this; the buffer must never depend on that alone). */
            static const char *const results[] = {"", "i32", "i64"};
            if (!func_is(self, &item.of.func, self->func_result[i])) {
                PyErr_Format(PyExc_TypeError, "export %U is not () -> (%s)", export_names[i],
                             results[self->func_result[i] <= 2 ? self->func_result[i] : 0]);
                return NULL;
            }
            self->funcs[i] = item.of.func;
            self->has_func[i] = 1;
        }
    }
    /* A WASI reactor (standard Go c-shared) initializes in _initialize; a command runs _start. The
     * memory handle is known by now, so imports called from them read it directly. */
    static const char *lifecycle[] = {"_initialize", "_start"};
    for (int k = 0; k < 2; k++) {
        if (p_wasmtime_instance_export_get(self->ctx, &self->instance, lifecycle[k], strlen(lifecycle[k]), &item) &&
            item.kind == WASMTIME_EXTERN_FUNC) {
            if (!func_is(self, &item.of.func, 0)) {
                PyErr_Format(PyExc_TypeError, "export %s is not () -> ()", lifecycle[k]);
                return NULL;
            }
            wasmtime_val_raw_t out[1];
            /* proc_exit(0) ends a command normally */
            if (run_call(self, &item.of.func, out, 1) < 0)
                return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *bytes_or_null(PyObject *o) {
    if (o == Py_None)
        return NULL;
    if (!PyBytes_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes or None");
        return NULL;
    }
    return Py_NewRef(o);
}

/* Stages the per-call values (§4.2). */
static int stage(Inst *self, int export_id, PyObject *pod, PyObject *node_name, PyObject *target_pod, long long timeout_ns) {
    if (self->running) { /* an import's Python handler calling back into its own instance */
        PyErr_SetString(PyExc_RuntimeError, "instance is already running a call");
        return -1;
    }
    if (!self->instantiated) {
        PyErr_SetString(PyExc_RuntimeError, "instance is not instantiated");
        return -1;
    }
    if (export_id < 0 || export_id >= n_exports) {
        PyErr_SetString(PyExc_ValueError, "unknown export id");
        return -1;
    }
    if (!self->has_func[export_id]) {
        PyErr_Format(PyExc_ValueError, "guest does not export %U", export_names[export_id]);
        return -1;
    }
    clear_call(self);
    self->out_len = 0; /* a call's output is its own: kept until the next call, for the error text */
    self->export_id = export_id;
    if (pod != Py_None && (self->pod = bytes_or_null(pod)) == NULL)
        return -1;
    if (node_name != Py_None) {
        if (!PyUnicode_Check(node_name) && !PyBytes_Check(node_name)) {
            PyErr_SetString(PyExc_TypeError, "node_name must be str, bytes or None");
            return -1;
        }
        self->node_name = Py_NewRef(node_name);
    }
    if (target_pod != Py_None && (self->target_pod = bytes_or_null(target_pod)) == NULL)
        return -1;
    set_deadline(self, timeout_ns);
    return 0;
}

static PyObject *result_value(Inst *self, int export_id, wasmtime_val_raw_t *out) {
    switch (self->func_result[export_id]) {
    case 1: return PyLong_FromLong(out[0].i32);
    case 2: return PyLong_FromLongLong(out[0].i64);
    default: Py_RETURN_NONE;
    }
}

/* call(export_id, pod, node_name, target_pod, timeout_ns) -> (result or None, status reason bytes or
 * None). The other results stay readable with result(slot) until the next call. Raises GuestFault. */
static PyObject *inst_call(Inst *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "call(export_id, pod, node_name, target_pod, timeout_ns)");
        return NULL;
    }
    int export_id = (int)PyLong_AsLong(args[0]);
    long long timeout_ns = PyLong_AsLongLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (stage(self, export_id, args[1], args[2], args[3], timeout_ns) < 0)
        return NULL;
    wasmtime_val_raw_t out[1];
    out[0].i64 = 0;
    int rc = run(self, &self->funcs[export_id], out);
    self->export_id = -1;
    release_call(self);
    if (rc < 0)
        return NULL;
    PyObject *value = result_value(self, export_id, out);
    if (value == NULL)
        return NULL;
    PyObject *reason = self->results[R_STATUS_REASON] ? self->results[R_STATUS_REASON] : Py_None;
    return Py_BuildValue("(NO)", value, reason);
}

/* call_nodes(export_id, pod, node_names, timeout_ns) -> (values, notes, failed, fault): the export
 * (filter or score) once per node name, in one crossing, each call with its own deadline.
 * values: for an i64 export (score) the high halves (the scores) of the calls that ran, else None.
 * notes: (index, status code, status reason bytes or None) of every call whose status code is not 0
 * or that set a reason; the common all-success case costs Python nothing per node.
 * On a failure at node i: failed = i and fault is the GuestFault; nothing runs after it. */
static PyObject *inst_call_nodes(Inst *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "call_nodes(export_id, pod, node_names, timeout_ns)");
        return NULL;
    }
    int export_id = (int)PyLong_AsLong(args[0]);
    long long timeout_ns = PyLong_AsLongLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    /* A tuple of its own: a list could change (and move its items) while guest code lets other threads run. */
    PyObject *names = PySequence_Tuple(args[2]);
    if (names == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(names);
    PyObject **items = PySequence_Fast_ITEMS(names);
    if (stage(self, export_id, args[1], Py_None, Py_None, timeout_ns) < 0) {
        Py_DECREF(names);
        return NULL;
    }
    int i64 = self->func_result[export_id] == 2;
    PyObject *values = i64 ? PyList_New(n) : Py_NewRef(Py_None);
    PyObject *notes = PyList_New(0);
    PyObject *fault_exc = Py_NewRef(Py_None);
    Py_ssize_t failed = -1, done = 0;
    /* The deadline is the same length for every call: its ticks once, the clock read only for the
     * epoch callback's use (coarse is enough: ticks are 5 ms). */
    uint64_t ticks = timeout_ns > 0 ? ticks_for(timeout_ns) : 0;
    if (ticks > slice_ticks || ticks == 0)
        ticks = slice_ticks;
    if (values == NULL || notes == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = items[i];
        if (!PyUnicode_Check(name) && !PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "node names must be str or bytes");
            goto error;
        }
        Py_XSETREF(self->node_name, Py_NewRef(name));
        Py_CLEAR(self->results[R_STATUS_REASON]);
        self->export_id = export_id;
        if (timeout_ns > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
            self->deadline_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + timeout_ns;
        }
        p_wasmtime_context_set_epoch_deadline(self->ctx, ticks);
        wasmtime_val_raw_t out[1];
        out[0].i64 = 0;
        wasm_trap_t *trap = NULL;
        Inst *prev = current;
        current = self;
        self->exited = 0;
        self->running = 1;
        wasmtime_error_t *err = p_wasmtime_func_call_unchecked(self->ctx, &self->funcs[export_id], out, 1, &trap);
        self->running = 0;
        current = prev;
        self->export_id = -1;
        if (err != NULL || trap != NULL) {
            raise_fault(self, err, trap);
            if (!PyErr_ExceptionMatches(GuestFault))
                goto error;
            Py_SETREF(fault_exc, take_exception());
            failed = i;
            break;
        }
        int32_t code;
        if (i64) {
            uint64_t r = (uint64_t)out[0].i64;
            code = (int32_t)(uint32_t)r;
            PyObject *v = PyLong_FromLong((int32_t)(uint32_t)(r >> 32));
            if (v == NULL)
                goto error;
            PyList_SET_ITEM(values, i, v);
        } else {
            code = out[0].i32;
        }
        PyObject *reason = self->results[R_STATUS_REASON];
        if (code != 0 || reason != NULL) {
            PyObject *note = Py_BuildValue("(niO)", i, code, reason ? reason : Py_None);
            if (note == NULL || PyList_Append(notes, note) < 0) {
                Py_XDECREF(note);
                goto error;
            }
            Py_DECREF(note);
        }
        done = i + 1;
    }
    if (pending_log.n)
        flush_log();
    if (i64 && done < n && PyList_SetSlice(values, done, n, NULL) < 0)
        goto error;
    Py_DECREF(names);
    release_call(self);
    return Py_BuildValue("(NNnN)", values, notes, failed, fault_exc);
error:
    if (pending_log.n)
        flush_log();
    /* unfilled list slots are NULL, which list dealloc tolerates */
    Py_DECREF(names);
    Py_XDECREF(values);
    Py_XDECREF(notes);
    Py_XDECREF(fault_exc);
    release_call(self);
    return NULL;
}

static PyObject *inst_result(Inst *self, PyObject *arg) {
    long slot = PyLong_AsLong(arg);
    if (slot < 0 || slot >= N_RESULTS) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "unknown result slot");
        return NULL;
    }
    return Py_NewRef(self->results[slot] ? self->results[slot] : Py_None);
}

static PyObject *inst_output(Inst *self, PyObject *unused) {
    return PyBytes_FromStringAndSize(self->out ? self->out : "", self->out ? (Py_ssize_t)self->out_len : 0);
}

static PyObject *inst_clear_output(Inst *self, PyObject *unused) {
    self->out_len = 0;
    Py_RETURN_NONE;
}

/* take_call_state() -> (host_failure, epoch_exc): what the last call left, cleared. */
static PyObject *inst_take_failure(Inst *self, PyObject *unused) {
    PyObject *hf = self->host_failure ? self->host_failure : Py_None;
    PyObject *ex = self->epoch_exc ? self->epoch_exc : Py_None;
    PyObject *r = Py_BuildValue("(OO)", hf, ex);
    Py_CLEAR(self->host_failure);
    Py_CLEAR(self->epoch_exc);
    return r;
}

static PyObject *inst_set_host_failure(Inst *self, PyObject *arg) {
    Py_XSETREF(self->host_failure, arg == Py_None ? NULL : Py_NewRef(arg));
    Py_RETURN_NONE;
}

static int export_global(Inst *self, PyObject *name, wasmtime_global_t *g) {
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(name, &len);
    if (s == NULL)
        return -1;
    wasmtime_extern_t item;
    if (!self->instantiated || !p_wasmtime_instance_export_get(self->ctx, &self->instance, s, (size_t)len, &item) ||
        item.kind != WASMTIME_EXTERN_GLOBAL) {
        PyErr_Format(PyExc_KeyError, "no exported global %U", name);
        return -1;
    }
    *g = item.of.global;
    return 0;
}

static PyObject *inst_get_global(Inst *self, PyObject *name) {
    wasmtime_global_t g;
    if (export_global(self, name, &g) < 0)
        return NULL;
    wasmtime_val_t v;
    p_wasmtime_global_get(self->ctx, &g, &v);
    switch (v.kind) {
    case WASMTIME_I32: return PyLong_FromLong(v.of.i32);
    case WASMTIME_I64: return PyLong_FromLongLong(v.of.i64);
    case WASMTIME_F32: return PyFloat_FromDouble(v.of.f32);
    case WASMTIME_F64: return PyFloat_FromDouble(v.of.f64);
    default: PyErr_SetString(PyExc_TypeError, "only numeric globals are supported"); return NULL;
    }
}

static PyObject *inst_set_global(Inst *self, PyObject *args) {
    PyObject *name, *value;
    if (!PyArg_ParseTuple(args, "UO", &name, &value))
        return NULL;
    wasmtime_global_t g;
    if (export_global(self, name, &g) < 0)
        return NULL;
    wasmtime_val_t v;
    p_wasmtime_global_get(self->ctx, &g, &v);
    switch (v.kind) {
    case WASMTIME_I32: v.of.i32 = (int32_t)(uint32_t)PyLong_AsUnsignedLongMask(value); break;
    case WASMTIME_I64: v.of.i64 = (int64_t)PyLong_AsUnsignedLongLongMask(value); break;
    case WASMTIME_F32: v.of.f32 = (float)PyFloat_AsDouble(value); break;
    case WASMTIME_F64: v.of.f64 = PyFloat_AsDouble(value); break;
    default: PyErr_SetString(PyExc_TypeError, "only numeric globals are supported"); return NULL;
    }
    if (PyErr_Occurred())
        return NULL;
    wasmtime_error_t *err = p_wasmtime_global_set(self->ctx, &g, &v);
    if (err != NULL) {
        wasm_name_t msg;
        p_wasmtime_error_message(err, &msg);
        PyObject *text = PyUnicode_DecodeUTF8(msg.data, (Py_ssize_t)msg.size, "replace");
        if (text != NULL) /* PyErr_Format has no %.*s in 3.11: it printed that literally */
            PyErr_SetObject(PyExc_ValueError, text);
        Py_XDECREF(text);
        p_wasm_byte_vec_delete(&msg);
        p_wasmtime_error_delete(err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *inst_memory_pages(Inst *self, PyObject *unused) {
    if (!self->has_memory)
        return PyLong_FromLong(0);
    return PyLong_FromUnsignedLongLong(p_wasmtime_memory_size(self->ctx, &self->memory));
}

/* Test hooks: guest memory from outside a call. */
static PyObject *inst_memory_read(Inst *self, PyObject *args) {
    unsigned long long ptr, n;
    if (!PyArg_ParseTuple(args, "KK", &ptr, &n))
        return NULL;
    /* n > size first: ptr + n cannot wrap around then */
    size_t size = self->has_memory ? p_wasmtime_memory_data_size(self->ctx, &self->memory) : 0;
    if (!self->has_memory || n > size || ptr > size - n) {
        PyErr_SetString(PyExc_IndexError, "outside the guest's memory");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)p_wasmtime_memory_data(self->ctx, &self->memory) + ptr, (Py_ssize_t)n);
}

static PyObject *inst_memory_write(Inst *self, PyObject *args) {
    unsigned long long ptr;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "Ky*", &ptr, &data))
        return NULL;
    size_t size = self->has_memory ? p_wasmtime_memory_data_size(self->ctx, &self->memory) : 0;
    if (!self->has_memory || (size_t)data.len > size || ptr > size - (size_t)data.len) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_IndexError, "outside the guest's memory");
        return NULL;
    }
    memcpy(p_wasmtime_memory_data(self->ctx, &self->memory) + ptr, data.buf, (size_t)data.len);
    PyBuffer_Release(&data);
    Py_RETURN_NONE;
}

static PyObject *inst_set_func_result(Inst *self, PyObject *args) {
    int id, kind;
    if (!PyArg_ParseTuple(args, "ii", &id, &kind))
        return NULL;
    if (id < 0 || id >= MAX_EXPORTS) {
        PyErr_SetString(PyExc_ValueError, "export id out of range");
        return NULL;
    }
    if (kind < 0 || kind > 2) {
        PyErr_SetString(PyExc_ValueError, "result kind must be 0 (none), 1 (i32) or 2 (i64)");
        return NULL;
    }
    if (self->instantiated) { /* instantiate checked the exports against the kinds it had */
        PyErr_SetString(PyExc_RuntimeError, "result kinds are set before instantiation");
        return NULL;
    }
    self->func_result[id] = (unsigned char)kind;
    Py_RETURN_NONE;
}

static PyObject *inst_get_deadline(Inst *self, void *closure) {
    return PyLong_FromLongLong(self->deadline_ns);
}

static PyObject *inst_get_export(Inst *self, void *closure) {
    if (!self->initialized || self->export_id < 0) /* export_id is 0, not -1, before __init__ */
        Py_RETURN_NONE;
    return Py_NewRef(export_names[self->export_id]);
}

static PyObject *inst_get_owner(Inst *self, void *closure) { return Py_NewRef(self->owner ? self->owner : Py_None); }

static PyMethodDef inst_methods[] = {
    {"instantiate", (PyCFunction)inst_instantiate, METH_VARARGS, NULL},
    {"call", (PyCFunction)(void (*)(void))inst_call, METH_FASTCALL, NULL},
    {"call_nodes", (PyCFunction)(void (*)(void))inst_call_nodes, METH_FASTCALL, NULL},
    {"result", (PyCFunction)inst_result, METH_O, NULL},
    {"output", (PyCFunction)inst_output, METH_NOARGS, NULL},
    {"clear_output", (PyCFunction)inst_clear_output, METH_NOARGS, NULL},
    {"take_failure", (PyCFunction)inst_take_failure, METH_NOARGS, NULL},
    {"set_host_failure", (PyCFunction)inst_set_host_failure, METH_O, NULL},
    {"get_global", (PyCFunction)inst_get_global, METH_O, NULL},
    {"set_global", (PyCFunction)inst_set_global, METH_VARARGS, NULL},
    {"memory_pages", (PyCFunction)inst_memory_pages, METH_NOARGS, NULL},
    {"memory_read", (PyCFunction)inst_memory_read, METH_VARARGS, NULL},
    {"memory_write", (PyCFunction)inst_memory_write, METH_VARARGS, NULL},
    {"set_func_result", (PyCFunction)inst_set_func_result, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef inst_getset[] = {
    {"deadline_ns", (getter)inst_get_deadline, NULL, "the running call's deadline on CLOCK_MONOTONIC (0: none)", NULL},
    {"export", (getter)inst_get_export, NULL, "the export running now, or None", NULL},
    {"owner", (getter)inst_get_owner, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject InstType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "wasmsched.wasm._host.Instance",
    .tp_basicsize = sizeof(Inst),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)inst_init,
    .tp_dealloc = (destructor)inst_dealloc,
    .tp_traverse = (traverseproc)inst_traverse,
    .tp_clear = (inquiry)inst_clear,
    .tp_methods = inst_methods,
    .tp_getset = inst_getset,
};

/* ===== module ================================================================================= */

/* init(library_path, export_names, status_reason_mask, tick_ns, slice_ticks) */
static PyObject *init(PyObject *self, PyObject *args) {
    const char *path;
    PyObject *names;
    unsigned long long mask;
    long tick;
    unsigned long long slice;
    if (!PyArg_ParseTuple(args, "sO!KlK", &path, &PyList_Type, &names, &mask, &tick, &slice))
        return NULL;
    if (PyList_GET_SIZE(names) > MAX_EXPORTS) {
        PyErr_SetString(PyExc_ValueError, "too many exports");
        return NULL;
    }
    /* The library wasmtime-py loaded: RTLD_NOLOAD makes sure no second copy of wasmtime is made. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        PyErr_Format(PyExc_ImportError, "wasmtime's library %s is not loaded: %s", path, dlerror());
        return NULL;
    }
#define RESOLVE(name)                                                                              \
    p_##name = (__typeof__(&name))dlsym(lib, #name);                                               \
    if (p_##name == NULL) {                                                                        \
        PyErr_Format(PyExc_ImportError, "wasmtime's library %s has no %s", path, #name);           \
        return NULL;                                                                               \
    }
    WASMTIME_FUNCS(RESOLVE)
#undef RESOLVE
    for (Py_ssize_t i = 0; i < n_exports; i++)
        Py_CLEAR(export_names[i]);
    n_exports = PyList_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < n_exports; i++)
        export_names[i] = Py_NewRef(PyList_GET_ITEM(names, i));
    status_reason_mask = mask;
    tick_ns = tick;
    slice_ticks = slice;
    resolved = 1;
    Py_RETURN_NONE;
}

static PyObject *current_owner(PyObject *self, PyObject *unused) {
    return Py_NewRef(current && current->owner ? current->owner : Py_None);
}

static PyMethodDef module_methods[] = {
    {"init", init, METH_VARARGS, NULL},
    {"start_epoch_ticker", start_epoch_ticker, METH_VARARGS, NULL},
    {"define_import", define_import, METH_VARARGS, NULL},
    {"current_owner", current_owner, METH_NOARGS, "the owner of the instance whose call runs on this thread"},
    {"set_log_sink", set_log_sink, METH_VARARGS, NULL},
    {"klog_line", klog_line, METH_VARARGS, "a guest klog line as the native host formats it (for tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "wasmsched.wasm._host", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__host(void) {
    if (PyType_Ready(&InstType) < 0 || PyType_Ready(&CallerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    GuestFault = PyErr_NewException("wasmsched.wasm._host.GuestFault", PyExc_Exception, NULL);
    if (PyModule_AddObjectRef(m, "GuestFault", GuestFault) < 0 ||
        PyModule_AddObjectRef(m, "Instance", (PyObject *)&InstType) < 0 ||
        PyModule_AddObjectRef(m, "Caller", (PyObject *)&CallerType) < 0 ||
        PyModule_AddIntConstant(m, "H_PYTHON", H_PYTHON) < 0 || PyModule_AddIntConstant(m, "H_NODE", H_NODE) < 0 ||
        PyModule_AddIntConstant(m, "H_KLOG", H_KLOG) < 0 ||
        PyModule_AddIntConstant(m, "H_KLOG_SEVERITY", H_KLOG_SEVERITY) < 0 ||
        PyModule_AddIntConstant(m, "H_GET_CONFIG", H_GET_CONFIG) < 0 ||
        PyModule_AddIntConstant(m, "H_CURRENT_POD", H_CURRENT_POD) < 0 ||
        PyModule_AddIntConstant(m, "H_TARGET_POD", H_TARGET_POD) < 0 ||
        PyModule_AddIntConstant(m, "H_CURRENT_NODE_NAME", H_CURRENT_NODE_NAME) < 0 ||
        PyModule_AddIntConstant(m, "H_RESULT", H_RESULT) < 0 ||
        PyModule_AddIntConstant(m, "H_CLOCK_TIME_GET", H_CLOCK_TIME_GET) < 0 ||
        PyModule_AddIntConstant(m, "H_FD_WRITE", H_FD_WRITE) < 0 || PyModule_AddIntConstant(m, "H_WASI", H_WASI) < 0 ||
        PyModule_AddIntConstant(m, "R_STATUS_REASON", R_STATUS_REASON) < 0 ||
        PyModule_AddIntConstant(m, "R_NODE_NAMES", R_NODE_NAMES) < 0 ||
        PyModule_AddIntConstant(m, "R_NOMINATED", R_NOMINATED) < 0 ||
        PyModule_AddIntConstant(m, "R_NORMALIZED", R_NORMALIZED) < 0 ||
        PyModule_AddIntConstant(m, "R_CLUSTER_EVENTS", R_CLUSTER_EVENTS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
