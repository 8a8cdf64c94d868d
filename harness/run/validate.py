"""`harness validate`: prove a suite is sound before measuring anything with it.

For every task: its reference solution runs through the real sandbox against fresh servers and its scorer must
pass on what the reference did (its answer, end state, tool calls and probes); then the scorer is fed wrong
answers (with the untouched end state and probes of fresh servers, and no tool calls; only to a scorer that judges
the answer) and must fail; so must the reference's end state with a wrong write (for a scorer that says how to
make one: `Scorer.wrong_states`); and, when it judges the tool calls, the reference's calls made wrong (a required
call removed, a forbidden call added) must fail it too. A scorer that cannot fail is a defect. So is a task that an
agent passes by answering the expected answer without acting (harness.run.no_action), unless its scorer reads only
the answer (a lookup, counted). Validate also says which tasks pass doing nothing (no answer, the servers
untouched): not a defect (a task whose right outcome is to refuse has one), but the floor a model that does nothing
scores, which a reader of the results needs. A task without a reference (a benchmark imported from elsewhere) is
checked by its scorer alone: its expected value, written as an answer, must pass, and the wrong answers must fail.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from harness.agents.scaffold import GUIDED, Scaffold
from harness.mcp.servers import open_servers
from harness.run.no_action import NoActionCheck, expected_as_answers, judge_no_action
from harness.run.reference import ReferenceRunner, run_reference
from harness.run.sessions import SessionReferences, check_shared_servers
from harness.sandbox import SandboxPool
from harness.tasks.judging import JudgeFn
from harness.tasks.scorers import Score, ScoreContext, Scorer, build_scorer
from harness.tasks.task import Suite, Task

WRONG_TEXT = "__harness_wrong_answer__"
NO_REFERENCE = "no reference"


@dataclass(frozen=True)
class TaskCheck:
    task_id: str
    category: str
    reference_answer: str
    reference_error: str | None
    passes_on_reference: bool
    reference_reason: str
    fails_on_wrong: bool
    wrong_reason: str
    tool_calls: int
    seconds: float
    wrong_trajectories: int = 0  # wrong versions of the reference's calls tried (0: the scorer ignores calls)
    fails_on_wrong_trajectory: bool = True
    wrong_trajectory_reason: str = ""
    has_reference: bool = True
    passes_doing_nothing: bool = False  # no answer and the untouched end state pass: the suite's do-nothing floor
    no_action: NoActionCheck | None = None  # the expected answer with no call on fresh servers (harness.run.no_action)

    @property
    def ok(self) -> bool:
        return (self.reference_error is None and self.passes_on_reference and self.fails_on_wrong
                and self.fails_on_wrong_trajectory)


def wrong_answers(expected: Any, other: Any = None) -> list[str]:
    """Answers that must not pass: no answer at all, a made-up text, another task's expected answer (`other`,
    when it differs), and for numbers one off and a value well outside any tolerance."""
    answers = ["", WRONG_TEXT]
    if other is not None and str(other) != str(expected):
        answers.append(str(other))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        answers += [str(expected + 1), str(expected * 3 + 1000)]
    return answers


def _best(scorer: Scorer, contexts: list[ScoreContext]) -> tuple[ScoreContext, Score]:
    """The first context whose answer passes, else the first, with its score."""
    scores = [(ctx, scorer.evaluate(ctx)) for ctx in contexts]
    return next(((c, s) for c, s in scores if s.passed), scores[0])


class _JudgedScorer:
    """A scorer whose every context carries the validation's judge (a scorer that asks none ignores it)."""

    def __init__(self, task: Task, judge: JudgeFn | None, judge_model: str):
        self.scorer, self.task, self.judge, self.judge_model = build_scorer(task.scorer), task, judge, judge_model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.scorer, name)

    def evaluate(self, ctx: ScoreContext) -> Score:
        return self.scorer.evaluate(replace(ctx, judge=self.judge, judge_model=self.judge_model,
                                            question=ctx.question or self.task.prompt))


async def check_task(task: Task, pool: SandboxPool, other_expected: Any = None,
                     scaffold: Scaffold = GUIDED, trace_of: ReferenceRunner | None = None,
                     judge: JudgeFn | None = None, judge_model: str = "") -> TaskCheck:
    """Check one task: the reference runs under the scaffold's id guard; `other_expected` is another task's
    expected answer, one of the wrong answers. `trace_of` traces the reference (default: alone, on fresh
    servers; a suite's sessions trace theirs in order: harness.run.sessions.SessionReferences). `judge` judges
    for a scorer that asks one (rubric, claims)."""
    started = time.perf_counter()
    scorer: Any = _JudgedScorer(task, judge, judge_model)
    async with open_servers(task.servers) as fresh:
        untouched = fresh.end_state()
        untouched_probes = await fresh.run_probes(scorer.probes())
    if task.reference is None:
        reference, on_reference = _best(scorer, [ScoreContext(a, task.expected, untouched, probes=untouched_probes)
                                                 for a in expected_as_answers(task.expected)])
        answer, error, tool_calls = reference.answer, None, 0
    else:
        trace = await (trace_of or (lambda t: run_reference(t, pool, scaffold)))(task)
        reference = trace.context or ScoreContext(trace.answer, task.expected, trace.end_state)
        on_reference = scorer.evaluate(reference)
        answer, error, tool_calls = trace.answer, trace.error, len(trace.tool_calls)

    def on_untouched(text: str) -> Score:
        return scorer.evaluate(ScoreContext(text, task.expected, untouched, probes=untouched_probes))

    nothing = on_untouched("")  # no answer, nothing changed: the do-nothing floor (and the first wrong answer)
    wrong = [nothing if text == "" else on_untouched(text) for text in wrong_answers(
        task.expected, other_expected)] if scorer.judges_answer(task.expected) else []
    # a wrong write on top of what the reference left must fail too (scorers that compare end states say how)
    wrong += [scorer.evaluate(replace(reference, end_state=state)) for _, state in scorer.wrong_states(reference)]
    leaked = next((w for w in wrong if w.passed), None)
    wrong_calls = scorer.wrong_calls(reference.tool_calls) if task.reference is not None else []
    passing_wrong = next(((label, result) for label, calls in wrong_calls
                          if (result := scorer.evaluate(replace(reference, tool_calls=calls))).passed), None)
    return TaskCheck(
        task_id=task.id, category=task.category, reference_answer=answer, reference_error=error,
        passes_on_reference=on_reference.passed, reference_reason=on_reference.reason,
        fails_on_wrong=leaked is None, wrong_reason=(leaked or wrong[0]).reason if wrong else "",
        tool_calls=tool_calls, seconds=time.perf_counter() - started,
        wrong_trajectories=len(wrong_calls), fails_on_wrong_trajectory=passing_wrong is None,
        wrong_trajectory_reason=f"{passing_wrong[0]}: {passing_wrong[1].reason}" if passing_wrong else "",
        has_reference=task.reference is not None, passes_doing_nothing=nothing.passed,
        no_action=judge_no_action(task, untouched, untouched_probes),
    )


def _other_expected(tasks: tuple[Task, ...], index: int) -> Any:
    """The expected answer of the next task (in suite order, wrapping) whose answer differs from this one's."""
    mine = str(tasks[index].expected)
    others = tasks[index + 1:] + tasks[:index]
    return next((t.expected for t in others if str(t.expected) != mine), None)


async def validate_suite(suite: Suite, pool: SandboxPool | None = None, on_check=None,
                         scaffold: Scaffold = GUIDED, judge: JudgeFn | None = None,
                         judge_model: str = "") -> list[TaskCheck]:
    check_shared_servers(suite)
    own_pool = pool is None
    pool = pool or SandboxPool(size=1)
    try:
        checks = []
        traced = SessionReferences(suite, scaffold, lambda t, slot: run_reference(t, pool, scaffold, slot=slot))
        for index, task in enumerate(suite.tasks):
            check = await check_task(task, pool, _other_expected(suite.tasks, index), scaffold, traced,
                                     judge, judge_model)
            checks.append(check)
            if on_check:
                on_check(check)
        return checks
    finally:
        if own_pool:
            await pool.close()
