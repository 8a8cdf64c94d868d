"""What every scorer is given and gives back, the scorer registry, and the scorers that combine others (`all`,
`any`). The built-in scorers live in harness.tasks.scorers (answers and end state), harness.tasks.call_checks
(the tool calls) and harness.tasks.probes (end state read through a server's own tools).

A scorer is a small pydantic model whose fields are its YAML arguments (`extra="forbid"`, so a typo in a suite
file is an error) with one method, `evaluate(ctx: ScoreContext) -> Score`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import first_error
from harness.tasks.task import ScorerEntry, ScorerSpec, scorer_spec  # noqa: F401  (scorer_spec: re-exported)
from harness.trace.calls import ToolCallRecord

EndState = dict[str, dict[str, Any]]  # server name -> that server's end-state snapshot (fixture servers)
# What of a run a scorer judges: the answer (or the agent's messages), the servers' end state (snapshot or probes),
# the tool calls. `harness validate`'s no-action check reads it (harness.run.no_action).
ScoreInput = Literal["answer", "state", "calls"]


@dataclass(frozen=True)
class Probe:
    """A read-only tool call a scorer asks for on the run's own server, after the agent ended."""

    server: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return json.dumps([self.server, self.tool, self.arguments], sort_keys=True, default=str)


@dataclass(frozen=True)
class ProbeOutcome:
    """What a probe returned: the parsed value (as code would get it), the text, and whether the tool failed."""

    value: Any
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class ScoreContext:
    """Everything a scorer may judge, for every scorer: the answer and the expected value, the fixture servers'
    end state, the agent's tool calls in order (server, tool, arguments, result or error, the step that made
    each, inside code or not), the probes' results (by Probe.key), the turns and tokens, and the error kind that
    ended the run ("" when it ended with an answer). `conversation`: a conversation task's messages in order, each
    ("agent" or "user", text); empty when the run had no simulated user (the answer was the agent's one message)."""

    answer: str
    expected: Any = None
    end_state: EndState = field(default_factory=dict)
    tool_calls: tuple[ToolCallRecord, ...] = ()
    probes: dict[str, ProbeOutcome] = field(default_factory=dict)
    turns: int = 0
    tokens: int = 0
    error_type: str = ""
    conversation: tuple[tuple[str, str], ...] = ()
    # a scripted user's turns (UserScenario.turns): per turn ended, the step whose message ended it, so a call of
    # step s belongs to the turn that counts the ends before s; empty without a scripted user
    user_turn_steps: tuple[int, ...] = ()
    # the run's judge model (`--judge-model`): (system, user) -> its reply; None when no judge was named
    judge: Callable[[str, str], str] | None = field(default=None, compare=False, repr=False)
    judge_model: str = ""  # the judge's model string: with the judge's messages, the key of its cached verdicts
    question: str = ""  # the task's prompt, as a judge is shown it

    @property
    def agent_messages(self) -> tuple[str, ...]:
        """What the agent said to the user: its messages in a conversation, else its answer."""
        if not self.conversation:
            return (self.answer,) if self.answer else ()
        return tuple(text for speaker, text in self.conversation if speaker == "agent")


@dataclass(frozen=True)
class Score:
    value: float
    passed: bool
    reason: str


class Scorer(BaseModel):
    """Override `evaluate(ctx)`; `probes()` if the scorer reads state through tools; `wrong_calls(calls)` if it
    judges the tool calls (what `harness validate` feeds it to prove it can fail)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: ClassVar[str]

    def evaluate(self, ctx: ScoreContext) -> Score:
        """The verdict on one run: every scorer judges the same context."""
        raise NotImplementedError(f"scorer '{self.name}' does not define evaluate(ctx)")

    def probes(self) -> tuple[Probe, ...]:
        """The tool calls to make on the run's servers before they close (none for most scorers)."""
        return ()

    def wrong_calls(self, calls: tuple[ToolCallRecord, ...]) -> list[tuple[str, tuple[ToolCallRecord, ...]]]:
        """Wrong versions of a correct run's tool calls that this scorer must fail, each with what is wrong with
        it (a required call removed, a forbidden call added); none for scorers that do not judge the calls."""
        return []

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        """What of a run this scorer judges for a task expecting `expected`: the answer unless it says otherwise. A
        scorer that reads the end state or the calls says so, so that validation can prove an agent that does
        nothing but guess the answer fails it (a scorer of the answer alone makes a lookup, counted apart)."""
        return frozenset({"answer"})

    def judges_answer(self, expected: Any) -> bool:
        """Whether the answer can decide this task's verdict: `harness validate` feeds wrong answers only to a
        scorer that judges them (one that reads only an end state passes any answer on a state left right)."""
        return True

    def wrong_states(self, ctx: ScoreContext) -> list[tuple[str, EndState]]:
        """Wrong versions of a correct run's end state that this scorer must fail, each with what is wrong (a
        write the run should not have made); none for scorers that do not compare end states this way."""
        return []

    def check_expected(self, expected: Any) -> None:
        """Raise ValueError when this scorer could never read `expected` (a regex that does not compile, ...)."""

    def needs_judge(self) -> bool:
        """Whether this scorer asks a judge model (a run of its task without `--judge-model` cannot be scored)."""
        return False

    def judge_instructions(self) -> str:
        """The judge's instructions this scorer sends (hashed into the row); empty for a scorer with no judge."""
        return ""


SCORERS: dict[str, type[Scorer]] = {}


def register(cls: type[Scorer]) -> type[Scorer]:
    """Make a scorer available to suite files under `cls.name`. It overrides `evaluate(ctx: ScoreContext)`; its
    pydantic fields are its YAML arguments."""
    if cls.evaluate is Scorer.evaluate:
        raise TypeError(f"scorer {cls.__name__} does not override evaluate(ctx)")
    SCORERS[cls.name] = cls
    return cls


def build_scorer(spec: ScorerSpec) -> Scorer:
    """The scorer a spec names; ValueError (with 'scorer' in its text) when the name or arguments are wrong."""
    if spec.name not in SCORERS:
        raise ValueError(f"unknown scorer '{spec.name}' (known: {', '.join(sorted(SCORERS))})")
    try:
        return SCORERS[spec.name](**spec.kwargs)
    except ValidationError as exc:
        loc, msg = first_error(exc, spec.kwargs)
        raise ValueError(f"scorer '{spec.name}' argument '{loc}': {msg}") from None


class ExpectedValueError(ValueError):
    """A task's expected value that its scorer cannot read."""


def check_scorer(spec: ScorerSpec, expected: Any) -> None:
    """The spec builds (ValueError naming the 'scorer') and its scorer can read `expected` (ExpectedValueError,
    naming 'expected', otherwise): everything a scorer compiles or parses, checked before any run."""
    scorer = build_scorer(spec)
    try:
        scorer.check_expected(expected)
    except ValueError as exc:
        raise ExpectedValueError(f"scorer '{spec.name}': {exc}") from None


def passed(ok: bool, reason: str) -> Score:
    return Score(1.0 if ok else 0.0, ok, reason)


class _Combined(Scorer):
    scorers: list[ScorerEntry]

    def parts(self) -> list[Scorer]:
        return [build_scorer(scorer_spec(entry)) for entry in self.scorers]

    def model_post_init(self, __context: Any) -> None:
        self.parts()  # validate nested scorers at load time

    def probes(self) -> tuple[Probe, ...]:
        return tuple(probe for part in self.parts() for probe in part.probes())

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset().union(*(part.reads(expected) for part in self.parts()))

    def check_expected(self, expected: Any) -> None:
        for part in self.parts():
            part.check_expected(expected)

    def needs_judge(self) -> bool:
        return any(part.needs_judge() for part in self.parts())

    def judge_instructions(self) -> str:
        return "\n\n".join(dict.fromkeys(t for part in self.parts() if (t := part.judge_instructions())))


@register
class AllOf(_Combined):
    """Every listed scorer passes (e.g. an answer, a state check and a check of the calls); score is the mean."""

    name: ClassVar[str] = "all"

    def evaluate(self, ctx: ScoreContext) -> Score:
        results = [part.evaluate(ctx) for part in self.parts()]
        return Score(sum(r.value for r in results) / len(results), all(r.passed for r in results),
                     "; ".join(r.reason for r in results))

    def wrong_calls(self, calls: tuple[ToolCallRecord, ...]) -> list[tuple[str, tuple[ToolCallRecord, ...]]]:
        return [wrong for part in self.parts() for wrong in part.wrong_calls(calls)]


@register
class AnyOf(_Combined):
    """At least one listed scorer passes (e.g. either of two acceptable ways to do a task); score is the best."""

    name: ClassVar[str] = "any"

    def evaluate(self, ctx: ScoreContext) -> Score:
        results = [part.evaluate(ctx) for part in self.parts()]
        best = max(results, key=lambda r: (r.passed, r.value))
        return Score(best.value, best.passed, " | ".join(r.reason for r in results))

    def wrong_calls(self, calls: tuple[ToolCallRecord, ...]) -> list[tuple[str, tuple[ToolCallRecord, ...]]]:
        """One wrong version, when every part judges the calls: each part's first wrong version applied in turn
        (remove one required call, then the other's...), so no part can pass on it."""
        labels, current = [], calls
        for part in self.parts():
            wrong = part.wrong_calls(current)
            if not wrong:
                return []
            label, current = wrong[0]
            labels.append(label)
        return [("; ".join(labels), current)] if labels else []
