"""A report document (report/data.py) or a comparison (report/compare.py) as one self-contained HTML file.

Everything is inlined: the page's script and style, the vendored ECharts and Tabulator (tools/report/vendor.py
puts them into report/vendor at set-up) and the data as JSON, so the file opens from `file://` with no network.
Jinja2 renders the page (autoescaping on); the data and scripts go into <script> elements, which a closing
tag could end early (and `<!--` with `<script` turn into the parser's "double escaped" state): in the data every
`<` is written `\\u003c` (it occurs only inside JSON strings), in the scripts `</` is written `<\\/` (the same
string to JavaScript).
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

# Inlined in this order: the libraries, then the page's own script, which uses them.
SCRIPTS = ("vendor/echarts.min.js", "vendor/tabulator.min.js", "static/report.js")
STYLES = ("vendor/tabulator.min.css", "static/report.css")


class ReportError(Exception):
    """The report cannot be written; the text says why."""


def _read(name: str) -> str:
    try:
        return (importlib.resources.files("wasmsched.report") / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"wasmsched/report/{name} is missing: `make setup` (tools/report/vendor.py) puts the "
                          "report's libraries there") from None


def _script_text(text: str) -> str:
    return text.replace("</", "<\\/")


def render(doc: dict[str, Any]) -> str:
    import jinja2  # only when a report is asked for

    env = jinja2.Environment(loader=jinja2.PackageLoader("wasmsched.report", "templates"),
                             autoescape=True, keep_trailing_newline=True)
    data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return env.get_template("report.html.j2").render(
        title=doc.get("title", "wasmsched report"),
        styles=[_read(s) for s in STYLES],
        scripts=[_script_text(_read(s)) for s in SCRIPTS],
        data=data.replace("<", "\\u003c"),
    )


def write(path: Path, doc: dict[str, Any]) -> int:
    """Writes the page; returns its size in bytes."""
    text = render(doc).encode("utf-8")
    path.write_bytes(text)
    return len(text)
