"""A run scored by a judge: the judge's calls are `model` events of role judge with their own columns, the row
names the hash of the judge's instructions, an unreadable judge fails the run as judge_error, and a judged suite
without a judge model stops before any row."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from harness.errors import UserError
from harness.models.scripted import ScriptedReply, policy_provider
from harness.models.scripted_judge import scripted_judge_provider
from harness.run.prepare import prepare
from harness.run.rebuild import rebuild
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.judging import CLAIMS_INSTRUCTIONS, judge_prompt_hash
from harness.tasks.suite import load_suite

TASK = "churned-no-orders"
GOOD = ("C-0003 is Rosa Abara of Globex. Rosa Abara was on the pro tier and the status is churned. "
        "Rosa Abara has no orders at all.")


def answers(text: str):
    return lambda task, arm: (lambda request: ScriptedReply(text))


def looks_up_then_answers(task, arm):
    def policy(request):
        if request.call_index == 0:
            return ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0003"}),))
        return ScriptedReply(GOOD)
    return policy


def run(tmp_path, judge_model: str, judge=None, answer: str = GOOD, agent=None):
    config = RunConfig(suite=load_suite("open"), model="scripted:agent", arms=("direct",), task_ids=(TASK,),
                       out_dir=tmp_path, run_id="r1", judge_model=judge_model)
    runner = Runner(config, provider=policy_provider("scripted:agent", agent or answers(answer)),
                    judge_provider=judge)
    summary = asyncio.run(runner.run())
    return read_results([tmp_path]).iloc[0], summary.path


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))


def test_a_judged_run_records_the_judges_call_columns_and_prompt_hash(tmp_path):
    row, path = run(tmp_path / "out", "scripted:judge", scripted_judge_provider("scripted:judge"))
    assert bool(row.success) and row.score == 1.0 and row.score_reason.startswith("claims: 4/4 covered")
    assert (row.judge_model, row.judge_calls) == ("scripted:judge", 1) and row.judge_prompt_tokens > 0
    assert row.judge_cost_usd == 0.0  # a scripted judge is priced as free
    assert row.judge_prompt_hash == judge_prompt_hash(CLAIMS_INSTRUCTIONS)
    calls = read_trajectory(path, row.sample_id).lm_calls
    judge_calls = [c for c in calls if c.role == "judge"]
    assert len(judge_calls) == 1 and judge_calls[0].messages[0]["content"] == CLAIMS_INSTRUCTIONS
    assert row.llm_calls == 1  # the agent's call only: the judge's is in its own columns



def test_a_judged_run_is_rebuilt_to_the_same_row_judge_cost_included(tmp_path):
    row, path = run(tmp_path / "out", "scripted:judge", scripted_judge_provider("scripted:judge"))
    assert rebuild(path) == (1, 0)  # the judge's pricing is in the run's start line, as the agent's is
    again = read_results([path]).iloc[0]
    assert again.judge_cost_usd == row.judge_cost_usd == 0.0 and again.equals(row)

def test_the_same_run_again_takes_the_cached_verdict(tmp_path):
    run(tmp_path / "a", "scripted:judge", scripted_judge_provider("scripted:judge"))
    row, _ = run(tmp_path / "b", "scripted:judge", scripted_judge_provider("scripted:judge"))
    assert bool(row.success) and "cached verdict" in row.score_reason and row.judge_calls == 0


def test_a_wrong_answer_fails_the_claims(tmp_path):
    row, _ = run(tmp_path / "out", "scripted:judge", scripted_judge_provider("scripted:judge"),
                 answer="C-0003 is an active enterprise customer with many orders.")
    assert not bool(row.success) and row.error_type == ""


def test_an_unreadable_judge_fails_the_run_as_judge_error(tmp_path):
    garbage = policy_provider("scripted:garbage", lambda task, arm: (lambda request: "Looks great to me!"))
    row, path = run(tmp_path / "out", "scripted:garbage", garbage)
    assert not bool(row.success) and row.error_type == "judge_error" and row.judge_calls == 3
    assert "could not be read after 3 attempts" in row.error_message


def test_a_judged_suite_without_a_judge_stops_before_any_row(tmp_path):
    config = RunConfig(suite=load_suite("open"), model="scripted:reference", arms=("direct",), out_dir=tmp_path,
                       run_id="r1")
    with pytest.raises(UserError, match="its scorer asks a judge model; name one with --judge-model"):
        prepare(config)
    prepare(replace(config, judge_model="scripted:judge"))  # with one named, the checks pass


def test_the_no_action_check_leaves_judged_tasks_to_their_judge():
    from harness.run.no_action import judge_no_action

    suite = load_suite("open")
    checks = [judge_no_action(task, {}, {}) for task in suite.tasks]  # no judge is asked, none is needed
    assert all(c.problem == "" and not c.passes for c in checks)
    history = next(c for c in checks if c.task_id == "history-checked")
    assert history.reads == {"answer", "calls"}  # a trajectory rubric reads the calls


def test_a_label_file_reads_a_runs_answer_and_tool_calls_by_sample_id(tmp_path):
    import yaml

    from harness.analysis.labels import load_labels

    row, _ = run(tmp_path / "out", "scripted:judge", scripted_judge_provider("scripted:judge"),
                 agent=looks_up_then_answers)
    labels = tmp_path / "labels.yaml"
    results = next((tmp_path / "out").rglob("*.parquet"))
    labels.write_text(yaml.safe_dump({"suite": "open", "results": str(results.relative_to(tmp_path)),
                                      "items": [{"task": TASK, "sample": row.sample_id, "source": "scripted:agent",
                                                 "labels": {"ab": "pass"}}]}))
    (item,) = load_labels(labels).items
    assert item.answer == GOOD and [c.tool for c in item.tool_calls] == ["get_customer"]
    assert "Rosa Abara" in item.tool_calls[0].result_preview  # what a trajectory-grading judge is shown
    labels.write_text(labels.read_text().replace(row.sample_id, "no-such-sample"))
    with pytest.raises(UserError, match="field 'sample': no sample 'no-such-sample'"):
        load_labels(labels)
