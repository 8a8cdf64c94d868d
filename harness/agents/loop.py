"""The loop every arm runs, so that arms differ only in how the model acts (one tool call per turn, or code
that calls the tools), never in how a run is driven, observed, limited or ended:

    turn: the model is asked for ONE action (one LM call) -> the action is performed -> its observation
          (rendered and limited here, the same way for every arm) is what the model sees next turn.
    end:  the action itself says the run is over: the code called final_answer(value), the model called the
          final_answer tool, or it replied without any action (no code block, no tool call): that reply is the
          answer. No separate LM call ever extracts an answer from the trajectory (it would guess from priors).

Every arm shares the observation rendering, turn accounting (a turn is one LM call) and the error kinds:
parse_error (the last reply could not be read as an action), max_turns, repeated_action, lm_error, and
sandbox_crash (the code-mode sandbox died under the last action: a fault of the harness, never an answer).

Everything beyond that is a rule of the run's Scaffold (harness.agents.scaffold), applied only when the
scaffold has it on (all are under `guided`; under `plain` only the observation limit stays, the same for
every arm) and named in the turn's `rules` when it
fires: refusing an answer before any action, once after an action that failed or showed nothing, and always
when it is an error message the model was shown; the note on a repeated action and the stop after
`max_repeats` identical repeats; the observation limit. Why each exists: docs/experiments.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from harness.agents.agent_task import answer_text
from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.conversation import ScriptedUser, UserSimulator
from harness.agents.failures import decision_error
from harness.agents.feedback import check_answer
from harness.agents.observations import join_observations, limit_observations, repeat_note
from harness.trace.errors import RunError
from harness.trace.steps import AnswerStep, ToolStep, ToolUse, TrajectoryStep, UnparsedStep, step_acts
from harness.trace.vocab import StepErrorKind

FINAL_ANSWER_TOOL = "final_answer"
FINAL_ANSWER_DESCRIPTION = "End the task with this answer, given in exactly the form the task asks for."
# The one sentence on ending a run, in every arm's instructions (after the scaffold's lookup sentence, if any).
END_INSTRUCTION = ("When you know the answer, reply with the answer alone, in exactly the form the task asks for "
                   "(or call final_answer(answer)): that ends the task.")


STALE_TOOLS = ("the run's tools changed mid-run (a server offered more at a user turn) and this arm cannot re-read "
               "them; the run ended instead of going on with the old list")

# Every task needs its tools: an answer before any action would come from the model's priors, not the data.
ANSWER_BEFORE_ACTION = "an answer needs the data: use the tools first, then answer from what they return"


def unread_answer(why: str) -> str:
    return (f"Error: {why}, so this answer was not read from a result. Fix the action and look at what it returns; "
            "if you are sure of this answer, reply with it again.")

ECHOED_ERROR = ("Error: that answer is an error message you were shown, not an answer. Fix the action that failed "
                "(the message says how), then answer from its result.")


def echoes_error(answer: str) -> bool:
    """Whether an answer is an error message the model was shown (every error observation starts with "Error:"):
    never an answer, in any arm, whichever way it is given (a reply, the final_answer tool, final_answer() in
    code)."""
    return answer.lstrip().startswith("Error:")

ActionKind = Literal["tool", "code", "answer", "unparsed"]  # "answer": a reply with no action


@dataclass(frozen=True)
class Action:
    """What the model chose on one turn."""

    kind: ActionKind
    key: str  # canonical text: two actions with the same key are the same action
    content: dict[str, Any]  # what the trajectory shows: thought/tool/arguments, code, text, or the parse error
    reply: Any = None  # the raw LM output, for the arm to replay in later prompts
    rules: tuple[str, ...] = ()  # scaffold rules that shaped the choice (the grammar, a constant taken as answer)


@dataclass(frozen=True)
class Outcome:
    """What performing an action produced."""

    observation: str  # full text; the loop limits it before the model sees it
    final: bool = False  # the action ended the run
    answer: Any = None  # the final answer's value (any JSON value)
    error_kind: StepErrorKind | None = None  # this step's error (harness.trace.vocab)
    detail: dict[str, Any] = field(default_factory=dict)  # arm-specific trajectory fields (stdout, duration...)
    shows_nothing: bool = False  # the action ran but showed the model nothing (code that printed nothing)
    rules: tuple[str, ...] = ()  # scaffold rules that fired while the action was performed (result notes, ...)
    # an action that made several tool calls: each call's own observation, in order (`observation` joins them)
    observations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Turn:
    index: int
    action: Action
    outcome: Outcome
    observation: str  # as the model saw it: limited, with any repeat note
    repeat_of: int | None  # the earlier turn this one repeated exactly (action and outcome), if any
    rules: tuple[str, ...] = ()  # the scaffold rules that fired at this turn
    observations: tuple[str, ...] = ()  # several calls: each one's observation as the model saw it (limited)
    acted: bool = False  # the step the arm recorded acts (called one of the run's tools or ran code): set when kept


class ArmPolicy(Protocol):
    """The part of an arm the loop drives."""

    async def decide(self, turns: list[Turn]) -> Action:
        """One LM call: the next action given the turns so far (raises if the LM call fails)."""

    async def perform(self, action: Action) -> Outcome:
        """Run a tool or code action (never raises for what the tools or the code do); the loop itself handles
        answers and unreadable replies."""

    def record(self, turn: Turn) -> TrajectoryStep:
        """A tool or code turn as the trajectory stores it (answers and unreadable replies: `reply_step`)."""


def acted_yet(turns: list[Turn]) -> bool:
    """Whether any action so far acted, as its arm recorded it (TrajectoryStep `acts`): a call of one of the run's
    tools or code run. A turn that only searched for tools (direct-search) showed a list of tools, not data, so the
    rules about answering before an action treat it as no action."""
    return any(turn.acted for turn in turns)


def shows_result(turn: Turn) -> bool:
    """Whether a turn's action ran and showed the model a result (an answer may follow it)."""
    return turn.action.kind in ("tool", "code") and turn.outcome.error_kind is None and not turn.outcome.shows_nothing


def step_history(turns: list[Turn]) -> list[dict[str, Any]]:
    """The turns as the step predictor's `history` input, in every arm: each action (as the arm replays it) and its
    observation; a turn of several tool calls also gives each one's observation (`observations`, in the calls'
    order), and a message from a conversation's user says so (`from_user`)."""
    return [{"action": t.action.reply, "observation": t.observation,
             **({"observations": list(t.observations)} if t.observations else {}),
             **({"from_user": True} if t.outcome.detail.get("to_user") else {})} for t in turns]


def must_act(turns: list[Turn], ctx: SampleContext) -> bool:
    """The answer-or-act rule, in one place (scaffold rule `answer_or_act_grammar`): whether the next reply must act
    rather than answer: before any action has acted (`acted_yet`), or after one that failed or showed nothing, so the
    model cannot answer with the text of an error, a refusal or a list of tools it was just shown (it may still
    insist on a refused answer by calling final_answer, or by giving it again after its next action). In a
    conversation a reply without an action is a message to the user, so the rule applies there only under
    `refuse_messages_to_user`. An arm declares the reply it asks for from this (the embedded engine's grammar
    enforces it) and records the rule as fired when it is true, so what is recorded is what constrained the reply."""
    scaffold = ctx.scaffold
    return (scaffold.answer_or_act_grammar and (not ctx.conversing or scaffold.refuse_messages_to_user)
            and not (turns and shows_result(turns[-1]) and acted_yet(turns)))


def act_rules(acting: bool) -> tuple[str, ...]:
    """The rules to record on an action decided under `must_act`."""
    return ("answer_or_act_grammar",) if acting else ()


def unread_reason(turns: list[Turn], answer: str) -> str | None:
    """Why an answer now would not come from a result: the last action failed or showed nothing (None if it
    showed a result, or if the model insists: this same answer was refused before)."""
    last = turns[-1] if turns else None
    if last is None or last.action.kind not in ("tool", "code"):
        return None
    if any(t.outcome.error_kind == "unread_answer" and t.action.content.get("text") == answer for t in turns):
        return None
    if last.outcome.error_kind is not None:
        return "your last action failed"
    if last.outcome.shows_nothing:
        return "your last action showed nothing"
    return None


@dataclass(frozen=True)
class LoopResult:
    """How the loop ended: the run's answer (or its error), the turns it took, as the loop saw them (each also
    recorded, as it ended, in the run's transcript, with each answer taken: its `answer` events), and whether an
    accepted answer ended it."""

    answer: str
    turns: tuple[Turn, ...]
    error: RunError | None
    finished: bool

    @property
    def repeated_actions(self) -> int:
        return sum(1 for t in self.turns if t.repeat_of is not None)

    @property
    def result(self) -> AgentResult:
        return AgentResult(self.answer, self.error)


def _refusal(action: Action, turns: list[Turn], ctx: SampleContext) -> tuple[Action, Outcome | None, str | None]:
    """An answer the scaffold refuses, as the action and outcome the turn records, and the rule that fired
    (None: the action goes on as chosen). In a conversation a reply is a message to the user, refused only under
    `refuse_messages_to_user`."""
    scaffold = ctx.scaffold
    if action.kind != "answer" or (ctx.conversing and not scaffold.refuse_messages_to_user):
        return action, None, None
    if (scaffold.refuse_answer_before_action and not acted_yet(turns)
            and not any("refuse_answer_before_action" in turn.rules for turn in turns)):  # refused once
        refused = replace(action, kind="unparsed", content={**action.content, "error": ANSWER_BEFORE_ACTION})
        return refused, None, "refuse_answer_before_action"
    if scaffold.refuse_unread_answer and (why := unread_reason(turns, action.content["text"])):
        return action, Outcome(unread_answer(why), error_kind="unread_answer"), "refuse_unread_answer"
    return action, None, None


def rejected_answer(action: Action, outcome: Outcome, feedback: str) -> Outcome:
    """An outcome whose answer the scorer rejected (rule `answer_feedback`): not final, the feedback after what the
    action showed; in a turn of several calls, the feedback is the final_answer call's own observation."""
    observations, tools = outcome.observations, [c.get("tool") for c in action.content.get("calls", [])]
    at = tools.index(FINAL_ANSWER_TOOL) if FINAL_ANSWER_TOOL in tools else len(observations) - 1
    observations = tuple(feedback if i == at else text for i, text in enumerate(observations))
    observation = join_observations(observations) if observations else "\n".join(filter(None, [outcome.observation,
                                                                                               feedback]))
    return replace(outcome, observation=observation, final=False, answer=None, error_kind="wrong_answer",
                   observations=observations)


async def run_loop(policy: ArmPolicy, ctx: SampleContext,
                   reread_tools: Callable[[], Awaitable[None]] | None = None) -> LoopResult:
    """Drive an arm until its own action ends the run, it repeats itself `scaffold.max_repeats` times, or the run's
    turn limit (SampleContext.max_turns). Each turn is recorded in the run's transcript as it ends (its step, as the
    arm records it), each answer taken as it is given, so a run that times out keeps every finished turn. Under
    `answer_feedback` an answer ends the run only if the run's answer check accepts it; a run that ends otherwise
    keeps its last answer given. When the session's tool list changed since the last turn (harness.mcp.held_tools),
    `reread_tools` (the arm's) re-reads it before the next LM call; an arm without one ends the run as
    `stale_tools`."""
    scaffold, transcript, session, user = ctx.scaffold, ctx.transcript, ctx.session, ctx.user
    tools_read = session.tools_version
    turns: list[Turn] = []
    max_turns = ctx.max_turns
    given: list[str] = []  # answers taken so far (under answer_feedback: each one the check judged)

    def ended(answer: str, error: RunError | None, finished: bool) -> LoopResult:
        transcript.begin_step(None)
        if not finished and given:  # only rejected answers: the run's answer is the last one given
            answer = given[-1]
        return LoopResult(answer, tuple(turns), error, finished)

    def keep(turn: Turn) -> None:
        step = policy.record(turn) if turn.action.kind in ("tool", "code") else reply_step(turn)
        turns.append(replace(turn, acted=bool(step_acts(step))))
        transcript.step_ended(step, turn.index)

    seen: dict[tuple[str, str], int] = {}  # (action key, outcome) -> first turn index
    streak = 0
    for index in range(max_turns):
        transcript.begin_step(index)  # the LM calls and tool calls made from here on are this step's
        if session.tools_version != tools_read:
            if reread_tools is None:
                return ended("", RunError("stale_tools", STALE_TOOLS), False)
            await reread_tools()
            tools_read = session.tools_version
        try:
            action = await policy.decide(turns)
        except Exception as exc:
            if (error := decision_error(exc)) is None:
                raise  # a bug in the harness is not the model's failure: the episode records it as internal
            return ended("", error, False)
        action, outcome, refused_by = _refusal(action, turns, ctx)
        rules = [*action.rules, *filter(None, [refused_by])]
        if action.kind == "unparsed":
            outcome = Outcome(f"Error: your reply could not be read as an action: {action.content.get('error')}",
                              error_kind="parse")
        elif outcome is None and action.kind == "answer":  # a reply with no action: the answer, in every arm
            outcome = Outcome("", final=True, answer=action.content["text"])
        elif outcome is None:
            refused_before = session.ids_refused
            outcome = await policy.perform(action)
            rules += [*outcome.rules, *(["id_guard"] if session.ids_refused > refused_before else [])]
        crash = unrecovered_crash(turns)
        if outcome.final and crash is not None and _no_answer(answer_text(outcome.answer)):
            # nothing, or the crash's message, given back after the sandbox died: the crash ended the run
            keep(Turn(index, action, outcome, "", None, tuple(dict.fromkeys(rules))))
            return ended("", _crash_error(crash), False)
        messaged_user = outcome.final and user is not None
        if messaged_user:
            try:
                outcome = await _to_user(user, outcome)
            except Exception as exc:
                if (error := decision_error(exc)) is None:
                    raise
                keep(Turn(index, action, outcome, "", None, tuple(dict.fromkeys(rules))))
                return ended("", replace(error, message=f"user model: {error.message}"), False)
        elif outcome.final and scaffold.refuse_error_answer and echoes_error(answer_text(outcome.answer)):
            outcome = replace(outcome, observation=ECHOED_ERROR, final=False, answer=None, error_kind="echoed_error")
            rules.append("refuse_error_answer")
        if outcome.final:
            given.append(answer_text(outcome.answer))
            transcript.answer(given[-1])
            if scaffold.answer_feedback and not await check_answer(ctx, given[-1], index + 1):
                outcome = rejected_answer(action, outcome, scaffold.answer_feedback)
                rules.append("answer_feedback")
        observation, observations = limit_observations(outcome.observation, outcome.observations,
                                                       scaffold.observation_limit_chars)
        if observation != outcome.observation:
            rules.append("observation_limit_chars")
        signature = (action.key, outcome.observation)
        # an answer ends the run (or is judged); a message to the user answered the same way again is a loop
        repeat_of = seen.get(signature) if action.kind != "answer" or messaged_user else None
        if repeat_of is None:
            seen[signature] = index
            streak = 0
        else:
            streak += 1
            if scaffold.repeat_note:
                observation += repeat_note(repeat_of + 1)
                if observations:  # the note goes with the last call's result
                    observations = (*observations[:-1], observations[-1] + repeat_note(repeat_of + 1))
                rules.append("repeat_note")
        stop = not outcome.final and scaffold.max_repeats > 0 and streak >= scaffold.max_repeats
        rules += ["max_repeats"] if stop else []
        keep(Turn(index, action, outcome, observation, repeat_of, tuple(dict.fromkeys(rules)), observations))
        if outcome.final:
            return ended(answer_text(outcome.answer), None, True)
        if stop:
            return ended("", _stopped(turns, "repeated_action",
                                      f"the same action gave the same result {streak + 1} times"), False)
    if given:  # answer_feedback: every answer was rejected, and the last one is the run's (a wrong answer)
        return ended(given[-1], None, False)
    return ended("", _stopped(turns, "max_turns", f"stopped after {max_turns} turns without a final answer"), False)


async def _to_user(user: UserSimulator | ScriptedUser, outcome: Outcome) -> Outcome:
    """A final reply in a conversation: the message goes to the user, whose answer is the observation; the run
    goes on unless the user ended the conversation (then the agent's last message is the run's answer)."""
    reply = await user.reply(answer_text(outcome.answer))
    return replace(outcome, observation=reply.text, final=reply.ended, answer=outcome.answer if reply.ended else None,
                   detail={**outcome.detail, "to_user": True, "user_ended": reply.ended})


def _crash_error(turn: Turn) -> RunError:
    """The run's error when the sandbox died under `turn`'s action: its message, without the `Error: ` the
    model was shown."""
    first = (turn.outcome.observation.strip().splitlines() or ["the sandbox process died"])[-1]
    return RunError("sandbox_crash", first.removeprefix("Error: ")[:300])


def unrecovered_crash(turns: list[Turn]) -> Turn | None:
    """The last turn whose action the sandbox died under, if no action after it showed a result (the run has not
    recovered from it); None otherwise."""
    for turn in reversed(turns):
        if turn.outcome.error_kind == "crash":
            return turn
        if shows_result(turn):
            return None
    return None


def _no_answer(answer: str) -> bool:
    """An empty reply or an error message given back: what a model says when it has nothing to answer."""
    return not answer or echoes_error(answer)


def _stopped(turns: list[Turn], kind: Literal["max_turns", "repeated_action"], why: str) -> RunError:
    """Why a run ended without an answer: an unreadable last reply is a parse error, and a sandbox crash that no
    later action recovered from is a sandbox crash, whatever else happened after it."""
    last = turns[-1] if turns else None
    crash = unrecovered_crash(turns)
    if crash is not None:
        return _crash_error(crash)
    if last is not None and last.action.kind == "unparsed":
        return RunError("parse_error", f"{str(last.action.content.get('error'))[:200]} ({why})")
    return RunError(kind, why)


def reply_step(turn: Turn) -> AnswerStep | UnparsedStep:
    """A turn whose reply was an answer (accepted or refused) or could not be read, as the trajectory stores it."""
    content = dict(turn.action.content)
    common = {"observation": turn.observation, "repeat_of": turn.repeat_of, "rules": turn.rules}
    if turn.action.kind == "answer":
        return AnswerStep(text=content.pop("text"), **common, detail={**content, **turn.outcome.detail})
    return UnparsedStep(error=str(content.pop("error", "")), text=content.pop("text", ""), **common, detail=content)


def tool_step(turn: Turn, code_tool: str | None = None) -> ToolStep:
    """A tool turn as the trajectory stores it: its call (the action's `tool` and `arguments`) or calls (its
    `calls`, each with the observation the model saw of it), its thought, the arm's other fields, and what the calls
    did (`acts`: a call of any tool but final_answer called a tool, a call of the arm's `code_tool` ran code)."""
    fields = {**turn.action.content, **turn.outcome.detail}
    calls = fields.pop("calls", None) or [{"tool": fields.pop("tool"), "arguments": fields.pop("arguments", {})}]
    observations = turn.observations or (turn.observation,)
    uses = tuple(ToolUse(call["tool"], call.get("arguments") or {}, observation)
                 for call, observation in zip(calls, observations, strict=True))
    names = {use.tool for use in uses}
    acts = (("tool",) if names - {FINAL_ANSWER_TOOL, code_tool} else ()) + (("code",) if code_tool in names else ())
    return ToolStep(calls=uses, thought=fields.pop("thought", ""), observation=turn.observation,
                    repeat_of=turn.repeat_of, rules=turn.rules, acts=acts, detail=fields)
