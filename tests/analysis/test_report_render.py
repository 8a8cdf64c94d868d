"""The HTML report renders in a real browser (headless Chromium): a screenshot that is not blank."""

import subprocess
from pathlib import Path

import pytest

from harness.analysis.report import build_report
from harness.run.records import read_results
from tests.results_factory import write_results

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.chromium, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")]


def screenshot(html_path: Path, png_path: Path, profile: Path, size: str = "1200,2400") -> None:
    subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", f"--window-size={size}", f"--screenshot={png_path}",
                    html_path.as_uri()], check=True, capture_output=True, timeout=120)


def test_report_html_renders_with_its_figures(tmp_path):
    from PIL import Image

    path = write_results(tmp_path / "r", "run", {"direct": [True, False, True], "codemode": [True]}, sizes=True)
    report = build_report(read_results([path]), tmp_path / "report")
    png = tmp_path / "shot.png"
    screenshot(report.html, png, tmp_path / "profile")
    image = Image.open(png).convert("RGB")
    assert image.size == (1200, 2400)
    colours = image.getcolors(maxcolors=1 << 18)
    assert colours is not None and len(colours) > 200  # text, tables and antialiased plots, not a blank page
    grey = image.convert("L")
    dark = sum(count for count, value in grey.getcolors(maxcolors=1 << 16) if value < 128)
    assert dark > 20_000  # text and ink
    # the figures arrived: the arm colours of the success bars are on the page (direct blue, codemode orange)
    counts = {rgb: count for count, rgb in colours}
    assert counts.get((0x4C, 0x72, 0xB0), 0) > 5_000 and counts.get((0xDD, 0x84, 0x52), 0) > 5_000
