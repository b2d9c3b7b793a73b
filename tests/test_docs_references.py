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
