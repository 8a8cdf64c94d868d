"""`harness rebuild` and `harness rescore` as a user runs them."""

import asyncio

import pytest

from harness.models.scripted import policy_provider
from harness.run.records import read_results
from harness.run.runner import Runner
from tests.cli.helpers import harness
from tests.run.test_transcript_runs import chaining, config

pytestmark = pytest.mark.cli


def test_rebuild_then_rescore_from_the_command_line(tmp_path):
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run())
    results = tmp_path / "smoke" / "r.parquet"
    before = read_results([results])
    done = harness("rebuild", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "1 row(s) recomputed from transcripts" in done.stdout
    assert read_results([results]).equals(before)
    done = harness("rescore", str(results), "--scorer", "exact", "--out", str(tmp_path / "exact"))
    assert done.returncode == 0, done.stderr and "1 run(s) judged again" in done.stdout
    assert read_results([tmp_path / "exact" / "smoke" / "r.parquet"]).score_reason.iloc[0] != before.score_reason[0]
    bad = harness("rescore", str(results), "--scorer", "nope", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "unknown scorer 'nope'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
