"""The viewer's files, served by a small local server or written out as a static copy. Both give the browser
the same paths: `index.html`, `app.js`, `app.css`, `data/runs.js` (the table) and `data/run/N.js` (run N's
trajectory, loaded when its page opens)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from harness.viewer.data import RunIndex, index_payload, run_payload, script

STATIC = Path(__file__).with_name("static")
ASSETS = ("index.html", "app.js", "app.css")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".png": "image/png"}


def runs_script(index: RunIndex, report_href: str | None) -> bytes:
    return script("runs", index_payload(index, report_href))


def run_script(index: RunIndex, run: int) -> bytes:
    return script(f"run/{run}", run_payload(index, run))


def site_files(index: RunIndex, report_href: str | None) -> Iterator[tuple[str, bytes]]:
    """Every file of a static copy, as (relative path, content)."""
    for name in ASSETS:
        yield name, (STATIC / name).read_bytes()
    yield "data/runs.js", runs_script(index, report_href)
    for run in range(len(index.rows)):
        yield f"data/run/{run}.js", run_script(index, run)


def export_site(index: RunIndex, out_dir: Path, report_href: str | None = None) -> Path:
    """Write a static copy (open out_dir/index.html in a browser, or attach the folder to a CI job); a copy
    already there is replaced."""
    if (out_dir / "data").is_dir():
        shutil.rmtree(out_dir / "data")
    for relative, content in site_files(index, report_href):
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return out_dir / "index.html"
