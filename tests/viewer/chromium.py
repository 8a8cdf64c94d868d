"""Headless Chromium for the viewer's tests: a page's DOM after its scripts (and lazily loaded data) ran."""

import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = [pytest.mark.chromium, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")]


def dump_dom(url: str, profile: Path) -> str:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", f"--user-data-dir={profile}",
         "--virtual-time-budget=10000", "--dump-dom", url], check=True, capture_output=True, text=True,
        timeout=120).stdout
