"""Answer feedback through a whole episode (the task's scorer judges each answer inside the run) in the arms: an
answer by the final_answer tool, by final_answer() in code and by a ReAct finish, each rejected once and then
accepted, under the m3tooleval preset."""

import asyncio

import pytest

from harness.agents.arms import build_agent
from harness.agents.scaffold import PLAIN, load_scaffold
from harness.limits import Limits
from harness.models.engine import make_lm
from harness.models.scripted import ScriptedEngine, ScriptedReply
from harness.run.episode import episode
from harness.tasks.suite import load_suite
from harness.trace.steps import AnswerStep

TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")  # expected 27.0
PRESET = load_scaffold("m3tooleval")
LIMITS = Limits(timeout_s=60, tool_timeout_s=10)


def run(arm: str, replies: list, scaffold=PRESET, pool=None):
    pending, seen = list(replies), []

    def policy(request):
        seen.append(request.prompt)
        return pending.pop(0)

    async def lm(ctx):
        return make_lm("scripted", ScriptedEngine(policy))

    done = asyncio.run(episode(TASK, lambda: build_agent(arm, pool, scaffold), scaffold=scaffold, limits=LIMITS,
                               lm_factory=lm))
    return done, seen


def final(answer) -> ScriptedReply:
    return ScriptedReply(tool_calls=(("final_answer", {"answer": answer}),))


def test_a_rejected_final_answer_call_is_told_and_the_accepted_one_ends_the_run():
    done, seen = run("direct", [final("12"), final("27")])
    assert done.score.passed and done.answer == "27" and done.error is None
    assert len(done.transcript.steps) == 2 and len(done.transcript.answers) == 2
    assert PRESET.answer_feedback in seen[1]  # the model read the feedback
    assert "answer_feedback" in done.transcript.steps[0].rules


def test_under_plain_the_first_answer_ends_the_run_and_is_scored_after():
    done, _ = run("direct", [final("12"), final("27")], scaffold=PLAIN)
    assert not done.score.passed and done.answer == "12" and len(done.transcript.answers) == 1


def test_a_run_without_an_accepted_answer_ends_at_the_presets_turn_limit_with_its_last_answer():
    done, _ = run("direct", [ScriptedReply(text=str(n)) for n in range(PRESET.turn_limit)])
    assert not done.score.passed and done.error is None and done.answer == str(PRESET.turn_limit - 1)
    assert len(done.transcript.steps) == PRESET.turn_limit == len(done.transcript.answers)
    assert all(isinstance(step, AnswerStep) for step in done.transcript.steps)


def test_a_react_finish_is_checked_like_any_answer():
    def finish(answer):
        return {"next_thought": "done", "next_tool_name": "final_answer", "next_tool_args": {"answer": answer}}

    done, _ = run("react", [finish("3"), finish("27.0")])
    assert done.score.passed and len(done.transcript.answers) == 2 and len(done.transcript.steps) == 2


@pytest.mark.sandbox
async def test_final_answer_in_code_is_checked_and_the_sandbox_state_goes_on(sandbox_pool):
    pending = ["```python\nx = 27\nfinal_answer(x + 1)\n```", "```python\nfinal_answer(x)\n```"]

    async def lm(ctx):
        return make_lm("scripted", ScriptedEngine(lambda request: pending.pop(0)))

    done = await episode(TASK, lambda: build_agent("codemode", sandbox_pool, PRESET), scaffold=PRESET,
                         limits=LIMITS, lm_factory=lm)
    assert done.score.passed and done.answer == "27" and len(done.transcript.answers) == 2
    assert done.transcript.steps[0].observation.endswith(PRESET.answer_feedback)


@pytest.mark.sandbox
@pytest.mark.parametrize("arm", ["hybrid", "codemode-discover"])
async def test_the_sandbox_arms_answers_are_checked_too(sandbox_pool, arm):
    replies = {"hybrid": [final("12"), final("27")],
               "codemode-discover": ["```python\nfinal_answer(12)\n```", "```python\nfinal_answer(27)\n```"]}[arm]

    async def lm(ctx):
        return make_lm("scripted", ScriptedEngine(lambda request: replies.pop(0)))

    done = await episode(TASK, lambda: build_agent(arm, sandbox_pool, PRESET), scaffold=PRESET, limits=LIMITS,
                         lm_factory=lm)
    assert done.score.passed and len(done.transcript.answers) == 2
    assert "answer_feedback" in done.transcript.steps[0].rules
