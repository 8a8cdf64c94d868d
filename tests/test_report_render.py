"""The HTML report renders in a real browser (headless Chromium): a screenshot that is not blank."""

import shutil
import subprocess

import pytest

from harness.records import read_results
from harness.report import build_report
from tests.results_factory import write_results

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.chromium, pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium")]


def screenshot(html_path, png_path, profile) -> None:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--window-size=1100,2600", f"--screenshot={png_path}",
                    html_path.as_uri()], check=True, capture_output=True, timeout=120)


def test_report_html_renders_with_its_figures(tmp_path):
    from PIL import Image

    path = write_results(tmp_path / "r", "run", {"direct": [True, False, True], "codemode": [True]}, sizes=True)
    report = build_report(read_results([path]), tmp_path / "report")
    png = tmp_path / "shot.png"
    screenshot(report.html, png, tmp_path / "profile")
    image = Image.open(png).convert("L")
    assert image.size == (1100, 2600)
    colours = image.getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 50  # text, tables and plots, not a blank page
    dark = sum(count for count, value in colours if value < 128)
    assert dark > 2000  # there is text and ink on the page
