"""A run's record is its transcript, written as it happens: a run that times out, is interrupted or crashes keeps
every step, LM call, tool call and token it made up to that moment, counted the same way in every arm."""

import asyncio
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from harness.agents.arms import ARM_NAMES
from harness.errors import UserError
from harness.mcp.servers import CUT_SHORT
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.events import EndEvent, ModelEvent, ScoreEvent, SetupEvent, ToolEvent

TASK = "shipped-total"  # smoke: two lookups in a chain, then the answer (27.0)
CHAIN = (("search_customers", {"query": "Chen Tanaka"}),
         ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100}))


def chaining(task, arm):
    """The chain's calls one per reply, then the answer: what a model that knows the way does in the direct arm."""
    replies = [ScriptedReply(tool_calls=(call,)) for call in CHAIN]
    replies.append(ScriptedReply(tool_calls=(("final_answer", {"answer": 27.0}),)))
    return lambda request: replies.pop(0)


def config(tmp_path: Path, **options) -> RunConfig:
    return RunConfig(suite=load_suite("smoke"), model=options.pop("model", "scripted:chain"),
                     arms=options.pop("arms", ("direct",)), task_ids=(TASK,), out_dir=tmp_path,
                     run_id=options.pop("run_id", "r"), **options)


def only_row(tmp_path: Path) -> pd.Series:
    frame = read_results([tmp_path / "smoke" / "r.parquet"])
    assert len(frame) == 1
    return frame.iloc[0]


def test_a_run_that_times_out_keeps_its_steps_lm_calls_tool_calls_and_tokens(tmp_path):
    # each call waits 1 s: the first step ends at about 1 s, the second call is still out when 1.6 s pass
    run = config(tmp_path, tool_latency_s=1.0, tool_timeout_s=5.0, timeout_s=1.6)
    asyncio.run(Runner(run, provider=policy_provider("scripted:chain", chaining)).run())
    row = only_row(tmp_path)
    assert row.error_type == "timeout" and not row.success
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    assert (row.turns, row.llm_calls, row.tool_calls) == (len(trajectory.steps), len(trajectory.lm_calls),
                                                           len(trajectory.tool_calls))
    assert row.llm_calls >= 1 and row.tool_calls >= 1 and row.total_tokens > 0 and row.tool_time_s > 1.0
    assert trajectory.tool_calls[-1].result_preview == CUT_SHORT  # the call out when time ran out is kept too
    assert [c.step for c in trajectory.tool_calls] == list(range(row.tool_calls))  # one call a step
    kinds = [type(event) for event in trajectory.events]
    assert kinds.index(EndEvent) < kinds.index(ScoreEvent) == len(kinds) - 1
    assert [e.t for e in trajectory.events] == sorted(e.t for e in trajectory.events)  # in the order they happened


def test_an_interrupted_run_keeps_what_it_did_and_a_resumed_run_runs_it_again(tmp_path):
    provider = policy_provider("scripted:chain", chaining)

    async def interrupt_during_the_first_call():
        running = asyncio.ensure_future(Runner(config(tmp_path, tool_latency_s=2.0), provider=provider).run())
        await asyncio.sleep(0.8)  # the first tool call is out (2 s)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(interrupt_during_the_first_call())
    row = only_row(tmp_path)
    assert row.error_type == "interrupted" and (row.llm_calls, row.tool_calls, row.turns) == (1, 1, 0)
    assert row.total_tokens > 0
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    assert trajectory.error.type == "interrupted" and trajectory.tool_calls[0].result_preview == CUT_SHORT

    counts = []
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run(
        on_start=lambda todo, done: counts.append((todo, done))))
    assert counts == [(1, 0)]  # the interrupted run is to go, not done
    again = only_row(tmp_path)
    assert again.error_type == "" and again.success and again.turns == 3


class AuthenticationError(Exception):
    """A provider's refusal of the credentials (harness.models.retry knows the name as permanent)."""


def test_a_stop_for_good_writes_no_row_for_the_runs_it_cuts_short(tmp_path):
    suite = load_suite("smoke")
    first = suite.tasks[0].id

    def failing(task, arm):
        def policy(request):
            if task.id != first:
                time.sleep(1.0)  # still running when the first run's failure stops the suite
            raise AuthenticationError("401: invalid api key")
        return policy

    run = RunConfig(suite=suite, model="scripted:bad", arms=("direct",), out_dir=tmp_path, run_id="r",
                    max_concurrency=2)
    with pytest.raises(UserError, match="every LM call fails"):
        asyncio.run(Runner(run, provider=policy_provider("scripted:bad", failing)).run())
    results = tmp_path / "smoke" / "r.parquet"
    assert not results.exists() or read_results([results]).empty  # not even the cut-short run's row


@pytest.mark.sandbox
@pytest.mark.parametrize("arm", ARM_NAMES)
def test_every_arm_keeps_a_timed_out_runs_calls_and_tokens(tmp_path, arm):
    run = config(tmp_path, model="scripted:reference", arms=(arm,), tool_latency_s=1.0, tool_timeout_s=5.0,
                 timeout_s=1.5)
    asyncio.run(Runner(run).run())
    row = only_row(tmp_path)
    assert row.error_type == "timeout"
    assert row.llm_calls >= 1 and row.tool_calls >= 1 and row.total_tokens > 0 and row.tool_time_s >= 1.0
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    # tracing the reference (and booting its sandbox) was start-up: not the run's time, nor under its time limit
    assert trajectory.cold_start_s > 0.5 and row.cold_start_s == pytest.approx(trajectory.cold_start_s)
    assert row.latency_s < 1.5 + 1.0
    assert any(isinstance(e, ModelEvent) for e in trajectory.events)
    assert sum(isinstance(e, ToolEvent) for e in trajectory.events) == row.tool_calls


FOLDER_SUITE = """
suite: folder
servers: [folder]
tasks:
  - id: note
    category: write
    prompt: "Write the word kept to a file named note.txt in the allowed directory, then read it back."
    expected: kept
    scorer: exact
    reference: |
      base = allowed_directory()
      write_note(path=base + "/note.txt", text="kept")
      print(read_note(path=base + "/note.txt"))
"""


@pytest.mark.integration
@pytest.mark.sandbox
def test_the_reference_replays_in_every_arm_on_a_server_started_per_run_whose_paths_are_the_runs(tmp_path,
                                                                                               monkeypatch):
    """The reference is traced in a run folder of its own; a replay in an arm that makes the calls itself (as tool
    calls, fields or meta-tool code) makes them under its own run's folder, so it passes as the code arms do."""
    server = Path(__file__).resolve().parents[1] / "mcp" / "folder_server.py"
    config_file = tmp_path / "mcp_servers.json"
    config_file.write_text('{"mcpServers": {"folder": {"command": "%s", "args": ["%s", "${RUN_DIR}"]}}}'
                           % (sys.executable, server))
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config_file))
    suite_file = tmp_path / "folder.yaml"
    suite_file.write_text(FOLDER_SUITE)
    arms = tuple(arm for arm in ARM_NAMES if arm != "codemode-fastmcp" or has_monty())
    run = RunConfig(suite=load_suite(str(suite_file)), model="scripted:reference", arms=arms, out_dir=tmp_path,
                    run_id="r")
    asyncio.run(Runner(run).run())
    frame = read_results([tmp_path / "folder" / "r.parquet"])
    assert sorted(frame.arm) == sorted(arms)
    assert frame.set_index("arm").score_reason.to_dict() == {arm: frame.score_reason.iloc[0] for arm in arms}
    assert frame.success.all() and (frame.tool_calls == 3).all() and (frame.tool_errors == 0).all()


def has_monty() -> bool:
    import importlib.util

    return importlib.util.find_spec("pydantic_monty") is not None


@pytest.mark.sandbox
def test_a_sandbox_booting_is_the_first_runs_cold_start_not_its_latency(tmp_path):
    """A run of a new pool waits for its sandbox to boot (seconds of Pyodide start): that wait is the row's
    cold_start_s, and its latency is the run's own; the next run, on the warm sandbox, waits for nothing."""
    def coding(task, arm):
        replies = ["```python\nprint(get_customer(customer_id='C-0007')['country'])\n```",
                   "```python\nfinal_answer('IN')\n```"]
        return lambda request: replies.pop(0)

    config = RunConfig(suite=load_suite("smoke"), model="scripted:code", arms=("codemode",), task_ids=(
        "customer-country",), out_dir=tmp_path, run_id="r", epochs=2)
    asyncio.run(Runner(config, provider=policy_provider("scripted:code", coding)).run())
    first, second = read_results([tmp_path / "smoke" / "r.parquet"]).sort_values("epoch").itertuples()
    assert first.success and second.success
    assert first.cold_start_s > 1.0 and first.latency_s < first.cold_start_s  # booting Pyodide took seconds
    assert second.cold_start_s == 0
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", first.sample_id)
    assert [e.what for e in trajectory.of(SetupEvent)] == ["sandbox boot"]
