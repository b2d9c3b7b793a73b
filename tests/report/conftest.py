"""Fixtures of the report tests: the NodeNumber example guest, and headless Chromium (Debian's, which
`make browser` installs) driven by Playwright."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.go_guests import build_example, builds_go

ROOT = Path(__file__).resolve().parents[2]
DATA = re.compile(r'<script id="report-data" type="application/json">(.*?)</script>', re.S)


def page_data(path: Path) -> dict[str, Any]:
    """The JSON document inlined in a report page."""
    m = DATA.search(path.read_text(encoding="utf-8"))
    assert m is not None, f"{path}: no report data"
    doc: dict[str, Any] = json.loads(m.group(1))
    return doc


@pytest.fixture(scope="session")
@builds_go
def nodenumber_wasm() -> Path:
    return build_example("nodenumber")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright's Browser) of Debian's package."""
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium")
    assert exe is not None, "chromium is not installed: `make browser` installs it"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
