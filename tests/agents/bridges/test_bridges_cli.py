"""The frameworks' arms through `harness run --model scripted:reference` on smoke, as a user runs them: the
reference replays through each framework's own protocol (smolagents' code blocks and final_answer tool, a reply
without a tool call for Pydantic AI and the Agents SDK), beside the built-in `direct`, with rows, transcripts and the
servers' end state scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.records import read_results, read_trajectory
from tests.cli.helpers import harness

pytestmark = [pytest.mark.cli, pytest.mark.sandbox]  # the harness command in a subprocess; references traced
BRIDGES = ("smolagents-code", "smolagents-tools", "pydantic-ai", "openai-agents")
TASKS = "vip-note,customer-country"  # one that writes (the note is on the crm server's end state), one that reads


@pytest.fixture(scope="module")
def frame(tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("bridges")
    done = harness("run", "--suite", "smoke", "--tasks", TASKS, "--model", "scripted:reference", "--arms",
                   ",".join(("direct", *BRIDGES)), "--out", str(out), "--run-id", "r", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    path = out / "smoke" / "r.parquet"
    return path, read_results([path])


@pytest.mark.parametrize("arm", BRIDGES)
def test_the_reference_replays_through_a_framework_as_through_direct(frame, arm):
    path, results = frame
    mine, direct = results[results.arm == arm], results[results.arm == "direct"]
    assert len(mine) == 2 and mine.success.all(), mine.error_message.tolist()
    assert (mine.arm_kind == "python").all() and not mine.scaffold_applied.any() and (mine.scaffold == "own").all()
    assert mine.arm_source.iloc[0].split("==")[0] in ("smolagents", "pydantic-ai-slim", "openai-agents")
    note, direct_note = (rows[rows.task_id == "vip-note"].iloc[0] for rows in (mine, direct))
    assert note.score_reason == direct_note.score_reason  # the same end state on the crm server
    trajectory = read_trajectory(path, note.sample_id)
    assert [c.tool for c in trajectory.tool_calls] == [c.tool for c in read_trajectory(path, direct_note.sample_id).tool_calls]
    assert len(trajectory.lm_calls) == note.llm_calls >= 2 and all(c.step is not None for c in trajectory.tool_calls)
