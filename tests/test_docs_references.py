"""References into the repository's docs resolve: code, tests and docs cite `docs/abi.md §N` and
conformance items by number, and a clone has only docs/ (no ../shared), so each citation must
name a section or checklist item that exists there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ABI = ROOT / "docs" / "abi.md"
SOURCES = ("wasmsched", "tests", "sdk", "examples", "docs", "bench", "tools")
SUFFIXES = {".py", ".go", ".md", ".wat", ".yaml", ".sh"}
SKIP = {"gen", "__pycache__", ".venv", "node_modules"}

CITATION = re.compile(r"abi\.md ((?:§[0-9]+(?:\.[0-9]+)?(?:, | and |[-\u2013])?)+)")
SECTION = re.compile(r"§([0-9]+(?:\.[0-9]+)?)")
OUTSIDE = re.compile(r"\.\./shared/|(?<![\w/.])(?:ABI|DESIGN)\.md")
TEST_ITEM = re.compile(r"^def test_(?:item)?0*([0-9]+)_", re.M)


def _files() -> list[Path]:
    out = [ROOT / "README.md"]
    for top in SOURCES:
        out.extend(p for p in (ROOT / top).rglob("*")
                   if p.suffix in SUFFIXES and p.is_file() and not SKIP & set(p.relative_to(ROOT).parts))
    return out


def _abi_sections() -> set[str]:
    return set(re.findall(r"^#{2,3} ([0-9]+(?:\.[0-9]+)?) ", ABI.read_text(), re.M))


def _checklist_items() -> set[int]:
    text = ABI.read_text()
    checklist = text[text.index("## 13 "):]
    return {int(n) for n in re.findall(r"^([0-9]+)\. ", checklist, re.M)}


def test_nothing_points_outside_the_repository() -> None:
    bad = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
           for p in _files() for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
           if OUTSIDE.search(line)]
    assert bad == []


def test_every_cited_abi_section_exists() -> None:
    sections = _abi_sections()
    assert {"1", "4.1", "13"} <= sections  # the reader works
    cited: dict[str, list[str]] = {}
    for p in _files():
        for m in CITATION.finditer(p.read_text(errors="replace")):
            for sec in SECTION.findall(m.group(1)):
                cited.setdefault(sec, []).append(str(p.relative_to(ROOT)))
    assert cited, "no citations found: the pattern no longer matches how the code cites the ABI"
    missing = {sec: where for sec, where in cited.items() if sec not in sections}
    assert missing == {}


def test_every_checklist_item_has_tests_named_after_it() -> None:
    items = _checklist_items()
    assert items == set(range(1, max(items) + 1))  # numbered without gaps
    named: set[int] = set()
    for p in (ROOT / "tests" / "wasm").glob("test_conformance_*.py"):
        named |= {int(n) for n in TEST_ITEM.findall(p.read_text())}
    assert named == items


# A path in backticks that names one of the repository's own source files or directories, at the top
# (`tests/differential/fuzz.py`) or inside the package (`wasm/host.py`, as the package map names them).
PATH_TOKEN = re.compile(r"`([A-Za-z_][\w.-]*/[\w./-]*(?:\.py|\.pyi|\.c|\.sh|/))`")
# Made by set-up or benchmarks, not in a clone.
GENERATED = {"api/gen/", "bench/results/"}


def test_every_source_path_named_in_the_docs_exists() -> None:
    """Moving or renaming a module updates the docs that name it (docs/architecture.md maps them all)."""
    tops = {p.name for p in ROOT.iterdir() if p.is_dir()}
    package = {p.name for p in (ROOT / "wasmsched").iterdir() if (p / "__init__.py").is_file()}
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, line in enumerate(doc.read_text().splitlines(), 1):
            for path in PATH_TOKEN.findall(line):
                first = path.split("/")[0]
                base = ROOT if first in tops else ROOT / "wasmsched" if first in package else None
                if base is not None and path not in GENERATED and not (base / path).exists():
                    missing.append(f"{doc.relative_to(ROOT)}:{i}: {path}")
    assert missing == []
