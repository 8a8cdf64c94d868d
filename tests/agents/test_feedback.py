"""The scaffold's answer_feedback in the loop: a rejected answer is an observation and the run goes on; the first
accepted answer ends it; off in plain and guided."""

from dataclasses import replace

import pytest

from harness.agents.loop import Action, Outcome, run_loop
from harness.agents.scaffold import GUIDED, PLAIN
from tests.agents.test_loop import FakePolicy, loop, loop_context, tool

FEEDBACK = "Error: that answer is incorrect."
UNDER_FEEDBACK = replace(PLAIN, name="feedback", answer_feedback=FEEDBACK)


def reply(text: str) -> Action:
    return Action("answer", text, {"text": text}, text)


def accepting(*right: str):
    """A check accepting the answers in `right`, recording every (answer, turns) it judged."""
    judged: list[tuple[str, int]] = []

    async def check(answer: str, turns: int) -> bool:
        judged.append((answer, turns))
        return answer in right

    return check, judged


async def test_a_rejected_answer_is_an_observation_and_the_run_goes_on_to_the_accepted_one():
    policy = FakePolicy([tool("look"), reply("7"), reply("8"), reply("9")], {"look": Outcome("8")})
    check, judged = accepting("8")
    ctx = loop_context(max_turns=10, scaffold=UNDER_FEEDBACK, check_answer=check)
    result = await run_loop(policy, ctx)
    assert (result.answer, result.error, result.finished) == ("8", None, True)
    assert judged == [("7", 2), ("8", 3)]  # stopped at the first accepted answer: "9" was never asked for
    assert len(result.turns) == 3 and ctx.transcript.answers == ("7", "8")  # each answer taken is an event
    assert policy.seen[2] == ["8", FEEDBACK]  # the model read the feedback
    assert result.turns[1].outcome.error_kind == "wrong_answer" and "answer_feedback" in result.turns[1].rules


async def test_a_run_whose_answers_are_all_rejected_ends_at_the_turn_limit_with_its_last_answer():
    policy = FakePolicy([reply("1"), reply("2"), reply("3")], {})
    check, _ = accepting("42")
    ctx = loop_context(max_turns=3, scaffold=UNDER_FEEDBACK, check_answer=check)
    result = await run_loop(policy, ctx)
    assert (result.answer, result.error, ctx.transcript.answers) == ("3", None, ("1", "2", "3"))
    assert not result.finished and len(result.turns) == 3


async def test_an_answer_from_the_final_answer_tool_or_code_is_checked_and_keeps_its_output():
    policy = FakePolicy([Action("code", "c1", {"code": "c1"}), tool("final")],
                        {"c1": Outcome("printed 5", final=True, answer=5),
                         "final": Outcome("", final=True, answer=6)})
    check, judged = accepting("6")
    result = await loop(policy, max_turns=5, scaffold=UNDER_FEEDBACK, check_answer=check)
    assert judged == [("5", 1), ("6", 2)] and result.answer == "6"
    assert result.turns[0].observation == f"printed 5\n{FEEDBACK}"


async def test_in_a_turn_of_several_calls_the_feedback_is_the_final_answer_calls_own_observation():
    calls = {"calls": [{"tool": "look"}, {"tool": "final_answer"}]}
    action = Action("tool", "both", calls, calls)
    policy = FakePolicy([action, reply("right")],
                        {"both": Outcome("r\n\n", final=True, answer="wrong", observations=("r", ""))})
    check, _ = accepting("right")
    result = await loop(policy, max_turns=5, scaffold=UNDER_FEEDBACK, check_answer=check)
    assert result.turns[0].observations == ("r", FEEDBACK) and result.answer == "right"


async def test_the_scaffolds_turn_limit_replaces_the_tasks():
    policy = FakePolicy([tool("a")] * 5, {"a": Outcome("1")})
    result = await loop(policy, max_turns=5, scaffold=replace(PLAIN, turn_limit=2))
    assert len(result.turns) == 2 and result.error.type == "max_turns"


@pytest.mark.parametrize("scaffold", [PLAIN, GUIDED], ids=["plain", "guided"])
async def test_feedback_is_off_in_plain_and_guided_the_first_answer_ends_the_run(scaffold):
    assert scaffold.answer_feedback == "" and scaffold.turn_limit == 0
    policy = FakePolicy([tool("look"), reply("7"), reply("8")], {"look": Outcome("8")})
    ctx = loop_context(max_turns=10, scaffold=scaffold)
    result = await run_loop(policy, ctx)  # no check is open: none is asked
    assert (result.answer, ctx.transcript.answers, len(result.turns)) == ("7", ("7",), 2)


async def test_feedback_without_an_answer_check_is_a_bug_not_a_verdict():
    with pytest.raises(RuntimeError, match="answer check"):
        await loop(FakePolicy([reply("7")], {}), max_turns=3, scaffold=UNDER_FEEDBACK)
