"""`harness run --arms cloudflare-codemode` before `harness setup --js-codemodes`: one line naming the command, exit
2, before any row is written."""

from __future__ import annotations

import pytest

from tests.cli.helpers import harness

pytestmark = pytest.mark.cli


def test_the_arm_without_its_packages_stops_before_any_row(tmp_path):
    out = tmp_path / "results"
    done = harness("run", "--suite", "smoke", "--arms", "direct,cloudflare-codemode", "--model", "scripted:reference",
                   "--out", str(out), env={"HARNESS_CACHE_DIR": str(tmp_path / "cold-cache")})
    assert done.returncode == 2, done.stdout + done.stderr
    message = (done.stdout + done.stderr).strip()
    assert "harness setup --js-codemodes" in message and len(message.splitlines()) == 1, message
    assert "Traceback" not in message and not out.exists()
