"""The inspect export of the smoke suite replayed by `scripted:reference` through the direct and codemode arms,
read back with inspect_ai's reader: for every arm, as many samples, scores and tokens as the Parquet file has, and
code mode's code blocks as sandbox events with their output."""

import pytest
from inspect_ai.event import SandboxEvent

from harness.exports.inspect_log import write_inspect_logs
from harness.run.records import read_results
from tests.exports.scripted import parquet_totals, read_log, usage_totals

pytestmark = pytest.mark.sandbox  # scripted:reference traces the references in the sandbox


def test_every_arm_has_a_log_with_the_parquet_files_samples_scores_and_tokens(smoke_results):
    results, out = smoke_results
    rows = read_results([results])
    written = write_inspect_logs([results], out / "logs")
    assert sorted(w.arm for w in written) == ["codemode", "direct"]
    for entry in written:
        log = read_log(entry.path)
        mine = rows[rows.arm == entry.arm]
        assert (log.eval.task, log.eval.model) == (f"smoke/{entry.arm}", "scripted:reference")
        assert sorted(s.id for s in log.samples) == sorted(mine.task_id)
        assert sum(s.scores["success"].value == "C" for s in log.samples) == mine.success.sum() == len(mine)
        assert usage_totals(log) == parquet_totals(mine)
        code = [e for s in log.samples for e in s.events if isinstance(e, SandboxEvent)]
        assert bool(code) == (entry.arm == "codemode")
        assert all(e.input and e.result == 0 for e in code)
