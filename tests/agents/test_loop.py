"""The loop contract every arm runs, with a fake arm policy: how runs end, repeats, limits and errors."""

from dataclasses import replace

from harness.agents.context import SampleContext
from harness.agents.loop import (
    Action,
    Outcome,
    answer_text,
    must_act,
    run_loop,
    tool_step,
)
from harness.agents.observations import limit_observation
from harness.agents.scaffold import GUIDED, PLAIN, Scaffold
from harness.limits import Limits
from harness.mcp.servers import ServerSession
from harness.mcp.toolbox import Toolbox
from harness.tasks.task import Task
from harness.trace.steps import CodeStep
from harness.trace.transcript import Transcript

MAX_REPEATS, OBSERVATION_LIMIT_CHARS = GUIDED.max_repeats, GUIDED.observation_limit_chars


class FakePolicy:
    """Chooses the scripted actions in turn; performs them from a table of outcomes."""

    def __init__(self, actions: list[Action], outcomes: dict[str, Outcome]):
        self.actions, self.outcomes, self.seen = list(actions), outcomes, []

    async def decide(self, turns):
        self.seen.append([t.observation for t in turns])
        return self.actions.pop(0)

    async def perform(self, action):
        return self.outcomes[action.key]

    def record(self, turn):
        if turn.action.kind == "code":
            return CodeStep(code=turn.action.content["code"], observation=turn.observation, rules=turn.rules)
        return tool_step(turn)


class CountingSession(ServerSession):
    """A session with no servers whose count of calls the id guard refused follows `refused` (one value a read)."""

    def __init__(self, refused=None):
        super().__init__(clients={}, fixtures={}, toolbox=Toolbox(()))
        self._refused = refused

    @property
    def ids_refused(self) -> int:
        return self._refused() if self._refused is not None else 0

    @ids_refused.setter
    def ids_refused(self, value: int) -> None:
        pass


def loop_context(max_turns: int = 10, scaffold: Scaffold = GUIDED, ids_refused=None, **options) -> SampleContext:
    """A run's context for the loop alone: a task allowing `max_turns`, a session without servers."""
    task = Task(id="t", category="", prompt="p", expected=None, scorer="exact", reference=None, servers=(),
                max_turns=max_turns)
    return SampleContext(task=task, session=CountingSession(ids_refused), scaffold=scaffold, limits=Limits(),
                         transcript=Transcript(), **options)


async def loop(policy, max_turns: int = 10, scaffold: Scaffold = GUIDED, ids_refused=None, **options):
    """run_loop with the context `loop_context` builds."""
    return await run_loop(policy, loop_context(max_turns, scaffold, ids_refused, **options))


def tool(key: str) -> Action:
    return Action("tool", key, {"tool": key}, {"tool": key})


async def test_the_run_ends_with_the_answer_of_the_action_that_ends_it():
    policy = FakePolicy([tool("look"), tool("done")],
                        {"look": Outcome("IN"), "done": Outcome("", final=True, answer={"country": "IN"})})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.finished and result.error is None
    assert result.answer == '{"country": "IN"}' and len(result.turns) == 2
    assert policy.seen[1] == ["IN"]  # the second decision saw the first outcome


async def test_answers_are_strings_as_they_are_and_json_otherwise():
    assert answer_text(" IN ") == "IN"
    assert answer_text(27.0) == "27.0" and answer_text(2) == "2" and answer_text([1, "a"]) == '[1, "a"]'


async def test_a_run_without_a_final_action_ends_at_max_turns():
    policy = FakePolicy([tool("a"), tool("b")], {"a": Outcome("1"), "b": Outcome("2")})
    result = await loop(policy, max_turns=2, scaffold=GUIDED)
    assert result.error.type == "max_turns" and result.answer == "" and not result.finished


async def test_a_repeated_action_with_the_same_outcome_is_noted_and_counted():
    policy = FakePolicy([tool("a"), tool("a"), tool("done")],
                        {"a": Outcome("same"), "done": Outcome("", final=True, answer="x")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[1].repeat_of == 0 and result.repeated_actions == 1
    assert "same action as turn 1" in result.turns[1].observation
    assert policy.seen[2][1] == result.turns[1].observation  # the model saw the note


async def test_the_same_action_with_a_different_outcome_is_not_a_repeat():
    outcomes = iter([Outcome("1"), Outcome("2")])

    class Changing(FakePolicy):
        async def perform(self, action):
            return next(outcomes)

    result = await loop(Changing([tool("a"), tool("a")], {}), max_turns=2, scaffold=GUIDED)
    assert result.repeated_actions == 0


async def test_a_run_that_keeps_repeating_itself_is_stopped():
    policy = FakePolicy([tool("a")] * 10, {"a": Outcome("same")})
    result = await loop(policy, max_turns=10, scaffold=GUIDED)
    assert result.error.type == "repeated_action"
    assert len(result.turns) == MAX_REPEATS + 1 and result.repeated_actions == MAX_REPEATS


async def test_an_unreadable_reply_is_an_observation_and_a_parse_error_if_it_is_the_last():
    bad = Action("unparsed", "garbage", {"error": "no tool call"}, {})
    policy = FakePolicy([bad, bad], {})
    result = await loop(policy, max_turns=2, scaffold=GUIDED)
    assert result.turns[0].observation.startswith("Error: your reply could not be read as an action: no tool call")
    assert result.error.type == "parse_error"


async def test_an_lm_failure_ends_the_run_as_an_lm_error():
    class Failing(FakePolicy):
        async def decide(self, turns):
            from harness.models.engine import LMCallFailed

            try:
                raise ConnectionError("refused")
            except ConnectionError as cause:  # as the engine stack raises a call that failed after its retries
                raise LMCallFailed("ConnectionError: refused") from cause

    result = await loop(Failing([], {}), max_turns=3, scaffold=GUIDED)
    assert result.error.type == "lm_error" and "refused" in result.error.message


async def test_every_observation_is_limited_the_same_way():
    long = "x" * (OBSERVATION_LIMIT_CHARS + 10)
    policy = FakePolicy([tool("a"), tool("done")], {"a": Outcome(long), "done": Outcome("", final=True, answer=1)})
    result = await loop(policy, max_turns=3, scaffold=GUIDED)
    assert result.turns[0].observation == limit_observation(long, OBSERVATION_LIMIT_CHARS)
    assert result.turns[0].observation.endswith(f"[truncated: {len(long):,} chars, the first "
                                                f"{OBSERVATION_LIMIT_CHARS:,} shown]")


async def test_an_answer_before_any_action_is_refused():
    early = Action("answer", "JP", {"text": "JP"}, {"text": "JP"})
    policy = FakePolicy([early, tool("look"), Action("answer", "IN", {"text": "IN"}, {"text": "IN"})],
                        {"look": Outcome("IN")})  # answers never reach perform: the loop ends the run itself
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[0].action.kind == "unparsed" and "use the tools first" in result.turns[0].observation
    assert result.answer == "IN" and len(result.turns) == 3


def answer(text: str) -> Action:
    return Action("answer", text, {"text": text}, {"text": text})


async def test_an_answer_right_after_a_failed_action_is_refused_once():
    policy = FakePolicy([tool("bad"), answer("C-00112"), answer("C-00112")],
                        {"bad": Outcome("Error: not found", error_kind="tool")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[1].outcome.error_kind == "unread_answer"
    assert "your last action failed" in result.turns[1].observation and "reply with it again" in \
        result.turns[1].observation
    assert result.finished and result.answer == "C-00112" and len(result.turns) == 3  # insisting is an answer


async def test_an_answer_right_after_an_action_that_showed_nothing_is_refused():
    policy = FakePolicy([tool("silent"), answer("US"), tool("look"), answer("IN")],
                        {"silent": Outcome("(no output)", shows_nothing=True), "look": Outcome("IN")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert "your last action showed nothing" in result.turns[1].observation
    assert result.answer == "IN" and len(result.turns) == 4


async def test_the_answer_or_act_rule_lets_an_answer_follow_only_a_result():
    policy = FakePolicy([tool("bad"), answer("x"), tool("silent"), tool("look"), answer("IN")],
                        {"bad": Outcome("Error: no customer", error_kind="tool"),
                         "silent": Outcome("(no output)", shows_nothing=True), "look": Outcome("IN")})
    ctx = loop_context(6, GUIDED)
    turns = list((await run_loop(policy, ctx)).turns)
    assert [must_act(turns[:n], ctx) for n in range(len(turns) + 1)] == [True, True, True, True, False, True]
    assert not must_act([], replace(ctx, scaffold=PLAIN))  # the rule is off in plain


async def test_in_a_conversation_the_answer_or_act_rule_applies_only_when_messages_may_be_refused():
    ctx = loop_context(6, GUIDED, user=object())  # any user: the rule only asks whether there is one
    assert not must_act([], ctx)
    assert must_act([], replace(ctx, scaffold=replace(GUIDED, refuse_messages_to_user=True)))


async def test_an_answer_that_echoes_an_error_message_is_never_accepted():
    policy = FakePolicy([tool("bad"), answer("Error: no customer"), answer("Error: no customer"),
                         tool("done"), tool("look"), answer("IN")],
                        {"bad": Outcome("Error: no customer", error_kind="tool"),
                         "done": Outcome("", final=True, answer="Error: that answer is an error message"),
                         "look": Outcome("IN")})
    result = await loop(policy, max_turns=6, scaffold=GUIDED)
    assert [t.outcome.error_kind for t in result.turns[1:4]] == ["unread_answer", "echoed_error", "echoed_error"]
    assert result.answer == "IN"


async def test_an_answer_refused_before_is_accepted_when_given_again_after_another_action():
    policy = FakePolicy([tool("bad"), answer("27"), tool("worse"), answer("27")],
                        {"bad": Outcome("Error: no customer", error_kind="tool"),
                         "worse": Outcome("Error: no order", error_kind="tool")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[1].outcome.error_kind == "unread_answer"
    assert result.finished and result.answer == "27" and len(result.turns) == 4


# ---- the scaffold's rules: each fires under guided (and is named in the turn's rules), none under plain ----

async def test_under_plain_an_answer_before_any_action_is_the_answer():
    result = await loop(FakePolicy([answer("JP")], {}), max_turns=5, scaffold=PLAIN)
    assert result.finished and result.answer == "JP" and result.turns[0].rules == ()


async def test_a_refused_early_answer_names_its_rule():
    result = await loop(FakePolicy([answer("JP"), tool("look"), answer("IN")], {"look": Outcome("IN")}),
                            max_turns=5, scaffold=GUIDED)
    assert result.turns[0].rules == ("refuse_answer_before_action",)


async def test_an_early_answer_is_refused_once_and_taken_when_the_model_insists():
    result = await loop(FakePolicy([answer("JP"), answer("JP")], {}), max_turns=5, scaffold=GUIDED)
    assert result.finished and result.answer == "JP" and len(result.turns) == 2
    assert [t.rules for t in result.turns] == [("refuse_answer_before_action",), ()]


async def test_under_plain_an_answer_after_a_failed_action_is_the_answer():
    policy = FakePolicy([tool("bad"), answer("C-00112")], {"bad": Outcome("Error: not found", error_kind="tool")})
    result = await loop(policy, max_turns=5, scaffold=PLAIN)
    assert result.finished and result.answer == "C-00112" and len(result.turns) == 2


async def test_a_refused_unread_answer_names_its_rule():
    policy = FakePolicy([tool("bad"), answer("C-00112"), answer("C-00112")],
                        {"bad": Outcome("Error: not found", error_kind="tool")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[1].rules == ("refuse_unread_answer",)


async def test_under_plain_an_answer_echoing_an_error_is_accepted():
    policy = FakePolicy([tool("look"), answer("Error: no customer")], {"look": Outcome("IN")})
    result = await loop(policy, max_turns=5, scaffold=PLAIN)
    assert result.finished and result.answer == "Error: no customer"


async def test_a_refused_error_echo_names_its_rule():
    policy = FakePolicy([tool("look"), answer("Error: no customer"), answer("IN")], {"look": Outcome("IN")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.turns[1].rules == ("refuse_error_answer",) and result.answer == "IN"


async def test_under_plain_a_repeat_gets_no_note_and_the_run_goes_on_to_max_turns():
    result = await loop(FakePolicy([tool("a")] * 6, {"a": Outcome("same")}), max_turns=6, scaffold=PLAIN)
    assert result.error.type == "max_turns" and result.repeated_actions == 5
    assert all(t.observation == "same" and t.rules == () for t in result.turns)


async def test_under_guided_repeats_name_the_note_and_the_stop():
    result = await loop(FakePolicy([tool("a")] * 6, {"a": Outcome("same")}), max_turns=6, scaffold=GUIDED)
    assert [t.rules for t in result.turns] == [(), ("repeat_note",), ("repeat_note", "max_repeats")]


async def test_a_cut_observation_names_the_limit_in_every_scaffold():
    for scaffold in (PLAIN, GUIDED):
        policy = FakePolicy([tool("a"), tool("done")],
                            {"a": Outcome("x" * 5000), "done": Outcome("", final=True, answer=1)})
        result = await loop(policy, max_turns=3, scaffold=scaffold)
        assert result.turns[0].rules == ("observation_limit_chars",) and len(result.turns[0].observation) < 4100


async def test_a_turn_whose_call_the_id_guard_refused_names_it():
    refused = iter([0, 1, 1, 1])
    policy = FakePolicy([tool("guess"), tool("look"), answer("IN")],
                        {"guess": Outcome("Error: a guess", error_kind="tool"), "look": Outcome("IN")})
    result = await loop(policy, max_turns=5, scaffold=GUIDED, ids_refused=lambda: next(refused))
    assert [t.rules for t in result.turns] == [("id_guard",), (), ()]


CRASH = Outcome("Error: CRASH: the sandbox process died (SandboxCrashed: EOF); it was restarted", error_kind="crash")


def code(key: str) -> Action:
    return Action("code", key, {"code": key}, {"code": key})


async def test_an_answer_that_gives_back_a_crash_message_ends_the_run_as_a_sandbox_crash():
    echo = Outcome("", final=True, answer="Error: CRASH: the sandbox process died (SandboxCrashed: EOF)")
    for scaffold in (PLAIN, GUIDED):
        policy = FakePolicy([code("big"), code("echo")], {"big": CRASH, "echo": echo})
        result = await loop(policy, max_turns=5, scaffold=scaffold)
        assert result.answer == "" and not result.finished
        assert result.error.type == "sandbox_crash" and result.error.message.startswith("CRASH: the sandbox process")
        assert len(result.turns) == 2  # the echo was a turn: one LM call


async def test_a_run_that_stops_right_after_a_crash_ends_as_a_sandbox_crash():
    policy = FakePolicy([code("a"), code("big")], {"a": Outcome("1"), "big": CRASH})
    result = await loop(policy, max_turns=2, scaffold=GUIDED)
    assert result.error.type == "sandbox_crash" and result.answer == ""


async def test_a_run_goes_on_after_a_crash_and_may_still_answer():
    policy = FakePolicy([code("big"), code("small"), code("done")],
                        {"big": CRASH, "small": Outcome("3"), "done": Outcome("", final=True, answer=3)})
    result = await loop(policy, max_turns=5, scaffold=GUIDED)
    assert result.error is None and result.answer == "3" and result.turns[0].outcome.error_kind == "crash"


async def test_an_empty_reply_after_a_crash_ends_the_run_as_a_sandbox_crash():
    policy = FakePolicy([code("big"), answer("")], {"big": CRASH})
    result = await loop(policy, max_turns=5, scaffold=PLAIN)
    assert result.error.type == "sandbox_crash" and result.answer == "" and not result.finished


async def test_a_crash_that_a_later_result_recovered_from_is_not_the_runs_error():
    policy = FakePolicy([code("big"), code("small"), code("again")],
                        {"big": CRASH, "small": Outcome("3"), "again": Outcome("Error: x", error_kind="exception")})
    result = await loop(policy, max_turns=3, scaffold=PLAIN)
    assert result.error.type == "max_turns"


def test_a_reply_dspy_could_not_parse_is_a_parse_error():
    import dspy
    from dspy.utils.exceptions import AdapterParseError

    from harness.agents.failures import decision_error

    exc = AdapterParseError(adapter_name="ChatAdapter", signature=dspy.Signature("question -> answer"),
                            lm_response="??", message="no fields")
    assert decision_error(exc).type == "parse_error"


def test_a_failed_lm_call_is_an_lm_error_that_keeps_its_cause_and_permanence():
    from harness.agents.failures import decision_error
    from harness.models.engine import LMCallFailed

    try:
        try:
            raise PermissionError("invalid api key")
        except PermissionError as cause:
            raise LMCallFailed("PermissionError: invalid api key", permanent=True) from cause
    except LMCallFailed as exc:
        error = decision_error(exc)
    assert error.type == "lm_error" and error.permanent and error.message == "PermissionError: invalid api key"


async def test_any_other_exception_from_a_decision_is_a_harness_bug_and_propagates():
    import pytest

    class Broken(FakePolicy):
        async def decide(self, turns):
            raise ValueError("a bug in the harness")

    with pytest.raises(ValueError):
        await loop(Broken([], {}), max_turns=3, scaffold=GUIDED)
