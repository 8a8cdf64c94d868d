"""`harness setup` on a machine that has never run the harness: an empty cache folder, the real registry."""

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
