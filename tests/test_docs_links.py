"""Every relative link in the README and the docs pages leads somewhere: the file exists and, when the link names
a heading (`page.md#heading`), the page has that heading (GitHub's anchor rules)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT

PAGES = [ROOT / "README.md", ROOT / "reports" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(m) for m in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_anchor_follows_githubs_rules():
    assert anchor("`harness serve`: code mode for any MCP client") == "harness-serve-code-mode-for-any-mcp-client"
    assert anchor("Three code-mode designs, side by side (2026-11-23)") == "three-code-mode-designs-side-by-side-2026-11-23"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / t.split("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    assert {p.resolve() for p in PAGES[1:]} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        path, _, heading = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif heading and file.suffix == ".md" and heading not in anchors(file):
            broken.append(f"{target}: no heading '#{heading}' in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)
