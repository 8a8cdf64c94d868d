"""The judge scorers (rubric, claims) with scripted judges: verdicts read from replies, retries, named errors, the
verdict cache, the trajectory shown, the answer's position, and the hash of the judge's instructions."""

from __future__ import annotations

import json

import pytest

from harness.tasks.judging import (
    CLAIMS_INSTRUCTIONS,
    RUBRIC_INSTRUCTIONS,
    JudgeError,
    judge_prompt_hash,
    read_claims_reply,
    read_rubric_reply,
)
from harness.tasks.scorers import ScoreContext, build_scorer, check_scorer, scorer_spec
from harness.trace.calls import ToolCallRecord


class Judge:
    """A scripted judge: replies in order (the last repeated), remembering every message it was sent."""

    def __init__(self, *replies: str):
        self.replies, self.seen = list(replies), []

    def __call__(self, system: str, user: str) -> str:
        self.seen.append((system, user))
        return self.replies[min(len(self.seen) - 1, len(self.replies) - 1)]


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))


def ctx(judge, answer="Acme has 2 open tickets.", expected=None, model="", **kw) -> ScoreContext:
    return ScoreContext(answer=answer, expected=expected, judge=judge, judge_model=model,
                        question="Summarise Acme's open tickets.", **kw)


def rubric(**args):
    return build_scorer(scorer_spec({"rubric": {"criteria": "Names the number of open tickets.", **args}}))


CLAIMS = ["Acme has 2 open tickets", "one ticket is about billing", "the oldest is from March"]


def test_rubric_pass_fail_takes_the_judges_verdict():
    assert rubric().evaluate(ctx(Judge('{"score": 0.9, "pass": true, "why": "ok"}'))).passed
    assert not rubric().evaluate(ctx(Judge('{"pass": false, "why": "no count"}'))).passed


def test_rubric_score_passes_at_the_stated_threshold():
    judge = Judge('{"score": 0.6, "pass": false, "why": "partly"}')
    assert rubric(scale="score", threshold=0.5).evaluate(ctx(judge)).passed
    score = rubric(scale="score", threshold=0.7).evaluate(ctx(judge))
    assert not score.passed and score.value == 0.6 and "pass at >= 0.7" in score.reason


def test_claims_share_and_threshold():
    reply = json.dumps([{"covered": True}, {"covered": True}, {"covered": False}])
    score = build_scorer(scorer_spec("claims")).evaluate(ctx(Judge(reply), expected=CLAIMS))
    assert score.value == pytest.approx(2 / 3) and not score.passed  # below MCP-Atlas's 0.75
    assert "the oldest is from March" in score.reason
    lower = build_scorer(scorer_spec({"claims": {"threshold": 0.6}})).evaluate(ctx(Judge(reply), expected=CLAIMS))
    assert lower.passed


def test_a_malformed_reply_is_retried_with_the_problem_stated():
    judge = Judge("I think it is fine.", '{"pass": true, "why": "ok"}')
    assert rubric().evaluate(ctx(judge)).passed
    assert len(judge.seen) == 2 and "could not be read" in judge.seen[1][1]


@pytest.mark.parametrize("reply", ["", "   ", "looks good to me", '{"why": "no verdict"}', '{"score": 7}'])
def test_an_unreadable_reply_is_a_named_error_never_a_pass(reply):
    judge = Judge(reply)
    with pytest.raises(JudgeError, match="judge_error"):
        rubric().evaluate(ctx(judge))
    assert len(judge.seen) == 3


def test_claims_with_the_wrong_number_of_verdicts_is_an_error():
    with pytest.raises(JudgeError, match="2 verdicts for 3 claims"):
        build_scorer(scorer_spec("claims")).evaluate(ctx(Judge("[true, true]"), expected=CLAIMS))


def test_no_judge_is_a_named_error():
    with pytest.raises(JudgeError, match="--judge-model"):
        rubric().evaluate(ctx(None))


def test_same_inputs_same_verdict_from_the_cache():
    first = Judge('{"pass": true, "why": "ok"}')
    assert rubric().evaluate(ctx(first, model="m")).passed
    second = Judge('{"pass": false, "why": "changed its mind"}')
    again = rubric().evaluate(ctx(second, model="m"))
    assert again.passed and "cached" in again.reason and second.seen == []
    other_answer = rubric().evaluate(ctx(second, model="m", answer="No idea."))
    assert not other_answer.passed and len(second.seen) == 1


def test_an_unreadable_reply_is_not_cached():
    with pytest.raises(JudgeError):
        rubric().evaluate(ctx(Judge("garbage"), model="m"))
    assert rubric().evaluate(ctx(Judge('{"pass": true}'), model="m")).passed


def test_the_cache_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("HARNESS_JUDGE_CACHE", "off")
    rubric().evaluate(ctx(Judge('{"pass": true}'), model="m"))
    judge = Judge('{"pass": false}')
    assert not rubric().evaluate(ctx(judge, model="m")).passed and len(judge.seen) == 1


def test_show_calls_gives_the_judge_the_trajectory():
    call = ToolCallRecord(tool="list_tickets", arguments={"customer": "acme"}, result_preview='[{"id": 7}]',
                          server="crm")
    shown, hidden = Judge('{"pass": true}'), Judge('{"pass": true}')
    rubric(show_calls=True).evaluate(ctx(shown, tool_calls=(call,)))
    rubric().evaluate(ctx(hidden, tool_calls=(call,)))
    assert 'crm.list_tickets({"customer": "acme"}) -> result: [{"id": 7}]' in shown.seen[0][1]
    assert "list_tickets" not in hidden.seen[0][1]


def test_answer_position_puts_the_answer_before_or_after_the_criteria():
    after, before = Judge('{"pass": true}'), Judge('{"pass": true}')
    rubric().evaluate(ctx(after))
    rubric(answer_position="before").evaluate(ctx(before))
    assert after.seen[0][1].index("Rubric:") < after.seen[0][1].index("Answer:")
    assert before.seen[0][1].index("Answer:") < before.seen[0][1].index("Rubric:")


def test_claims_need_a_list_of_claims():
    with pytest.raises(ValueError, match="non-empty list of claims"):
        check_scorer(scorer_spec("claims"), "Acme has 2 open tickets")


def test_judge_instructions_are_hashed_and_combined_scorers_need_a_judge():
    combined = build_scorer(scorer_spec({"all": {"scorers": ["exact", {"rubric": {"criteria": "x"}}]}}))
    assert combined.needs_judge() and not build_scorer(scorer_spec("exact")).needs_judge()
    assert combined.judge_instructions() == RUBRIC_INSTRUCTIONS
    assert judge_prompt_hash(RUBRIC_INSTRUCTIONS) != judge_prompt_hash(CLAIMS_INSTRUCTIONS)
    assert len(judge_prompt_hash(RUBRIC_INSTRUCTIONS)) == 16


def test_readers_accept_fenced_json_and_bare_booleans():
    assert read_rubric_reply('```json\n{"score": 1, "why": "all"}\n```').passed
    assert read_claims_reply("[true, false]", 2) == (True, False)
