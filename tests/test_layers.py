"""The package's layers import downward only (issue 24, "Layers point one way").

Read from the source with `ast`, not by importing: every import statement counts, also those under
`if TYPE_CHECKING:` and inside functions, since a lazy or type-only import is still a dependency the
layer above would drag along. Layers, from the bottom (a package may import its own layer and those
below it):

- util: Go-isms and klog's conventions, needed by everything
- api: Kubernetes types and helpers
- framework, config, metrics: the plugin interfaces, Status, CycleState, NodeInfo, the runtime; the
  scheduler configuration they are configured by; the metrics they record
- plugins
- scheduler: queue, cache, schedule_one
- wasm: the wasm host
- cluster, simulator, kube, devcluster, testing: the backends and what drives them in tests
- report: a finished simulation as a report document and HTML page, and two compared
- cli: the command line
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "wasmsched"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"util"}),
    frozenset({"api"}),
    frozenset({"framework", "config", "metrics"}),
    frozenset({"plugins"}),
    frozenset({"scheduler"}),
    frozenset({"wasm"}),
    frozenset({"embedded", "simulator", "kube", "devcluster", "testing"}),
    frozenset({"report"}),
    frozenset({"cli"}),
)
LAYER_OF = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
# wasmsched/__init__.py and __main__.py (the `python -m wasmsched` entry point) sit above everything.
TOP = len(LAYERS)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    """Every module of the package but the generated protobuf code (api/gen imports only itself)."""
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py")) if "gen" not in p.relative_to(PKG).parts[:2]}


def _resolve(name: str) -> str | None:
    """The package module `name` is, or the one it is an attribute of (`from m import f`); None: not ours."""
    modules = _modules()
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, imported package module) of every import statement in `module`."""
    path = _modules()[module]
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")
                parent = parent[:len(parent) - node.level + (1 if is_pkg else 0)]
                base = ".".join([*parent, base] if base else parent)
            # `from pkg import sub` names the module pkg.sub when there is one, else an attribute of pkg.
            names = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                yield node.lineno, target


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return TOP
    return LAYER_OF[parts[1]]


def test_every_subpackage_has_a_layer() -> None:
    subpackages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    assert subpackages == set(LAYER_OF)


def test_no_layer_imports_a_higher_one() -> None:
    upward = sorted({f"{_modules()[m].relative_to(PKG.parent)}:{line}: imports {target}"
                     for m in _modules() for line, target in _imports(m) if _layer(target) > _layer(m)})
    assert upward == []


def test_plugins_are_reached_through_their_registry() -> None:
    """Outside plugins/, a plugin is named in a configuration and built by the registry; what plugins
    share with other layers (storage, affinity, resource helpers) lives in api/ or framework/."""
    allowed = {"wasmsched.plugins", "wasmsched.plugins.registry"}
    inside = sorted({f"{_modules()[m].relative_to(PKG.parent)}:{line}: imports {target}"
                     for m in _modules() if not m.startswith("wasmsched.plugins.")
                     for line, target in _imports(m)
                     if target.startswith("wasmsched.plugins") and target not in allowed})
    assert inside == []


def test_the_only_programs_in_the_package_are_the_clis() -> None:
    """Drivers of tests and tools (the differential fuzzer) live in tests/ or tools/, not in the wheel."""
    programs = {m for m, p in _modules().items() for node in ast.walk(ast.parse(p.read_text()))
                if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'"}
    programs |= {m for m in _modules() if m.endswith(".__main__")}
    assert programs == {"wasmsched.__main__", "wasmsched.cli.main"}


def _cycles(package: str) -> list[list[str]]:
    """The import cycles among the modules of `package` (strongly connected components of more than one
    module, Tarjan's algorithm)."""
    members = sorted(m for m in _modules() if m.startswith(package + "."))
    graph = {m: sorted({t for _, t in _imports(m) if t in members}) for m in members}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in members:
        if m not in index:
            visit(m)
    return found


def test_the_wasm_host_modules_import_one_way() -> None:
    """The instance, the host's imports and WASI share the per-call values (wasm/call_context.py) and
    reach the running instance through a narrow interface, not each other."""
    assert _cycles("wasmsched.wasm") == []


def test_the_checks_see_imports() -> None:
    """The reader works: it finds imports that are known to exist, lazy and type-only ones included."""
    imports = {t for _, t in _imports("wasmsched.cli.main")}
    assert "wasmsched.cli.logs" in imports
    assert "wasmsched.util.version" in imports  # imported inside a function
    assert any(t.startswith("wasmsched.metrics") for _, t in _imports("wasmsched.framework.interface"))  # TYPE_CHECKING
