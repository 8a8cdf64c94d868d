"""`harness validate`: prove a suite is sound before measuring anything with it.

For every task: its reference solution runs through the real sandbox against fresh servers and its
scorer must pass on the reference's answer and end state; then the scorer is fed wrong answers (and the
untouched end state of fresh servers) and must fail. A scorer that cannot fail is a defect. A task without a
reference (a benchmark imported from elsewhere) is checked by its scorer alone: its expected value, written as an
answer, must pass, and the wrong answers must fail.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from harness.mcp.servers import open_servers
from harness.run.reference import run_reference
from harness.sandbox import SandboxPool
from harness.tasks.scorers import Score, Scorer, build_scorer
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
    has_reference: bool = True

    @property
    def ok(self) -> bool:
        return self.reference_error is None and self.passes_on_reference and self.fails_on_wrong


def wrong_answers(expected: Any, other: Any = None) -> list[str]:
    """Answers that must not pass: no answer at all, a made-up text, another task's expected answer (`other`,
    when it differs), and for numbers one off and a value well outside any tolerance."""
    answers = ["", WRONG_TEXT]
    if other is not None and str(other) != str(expected):
        answers.append(str(other))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        answers += [str(expected + 1), str(expected * 3 + 1000)]
    return answers


def expected_as_answers(expected: Any) -> list[str]:
    """The expected value written as an agent would answer it: the text itself, or the value as Python and as
    JSON (a scorer of Python literals reads the first, a JSON scorer the second)."""
    if isinstance(expected, str):
        return [expected]
    return list(dict.fromkeys([str(expected), json.dumps(expected, default=str)]))


def _best(scorer: Scorer, answers: list[str], expected: Any, end_state: dict[str, Any]) -> tuple[str, Score]:
    """The first answer that passes, else the first answer, with its score."""
    scores = [(answer, scorer.score(answer, expected, end_state)) for answer in answers]
    return next(((a, s) for a, s in scores if s.passed), scores[0])


async def check_task(task: Task, pool: SandboxPool, other_expected: Any = None) -> TaskCheck:
    """Check one task; `other_expected` is another task's expected answer, one of the wrong answers."""
    started = time.perf_counter()
    scorer = build_scorer(task.scorer)
    async with open_servers(task.servers) as fresh:
        untouched = fresh.end_state()
    if task.reference is None:
        answer, on_reference = _best(scorer, expected_as_answers(task.expected), task.expected, untouched)
        error, tool_calls = None, 0
    else:
        trace = await run_reference(task, pool)
        answer, error, tool_calls = trace.answer, trace.error, len(trace.tool_calls)
        on_reference = scorer.score(trace.answer, task.expected, trace.end_state)
    wrong = [scorer.score(a, task.expected, untouched) for a in wrong_answers(task.expected, other_expected)]
    leaked = next((w for w in wrong if w.passed), None)
    return TaskCheck(
        task_id=task.id, category=task.category, reference_answer=answer, reference_error=error,
        passes_on_reference=on_reference.passed, reference_reason=on_reference.reason,
        fails_on_wrong=leaked is None, wrong_reason=(leaked or wrong[0]).reason,
        tool_calls=tool_calls, seconds=time.perf_counter() - started, has_reference=task.reference is not None,
    )


def _other_expected(tasks: tuple[Task, ...], index: int) -> Any:
    """The expected answer of the next task (in suite order, wrapping) whose answer differs from this one's."""
    mine = str(tasks[index].expected)
    others = tasks[index + 1:] + tasks[:index]
    return next((t.expected for t in others if str(t.expected) != mine), None)


async def validate_suite(suite: Suite, pool: SandboxPool | None = None, on_check=None) -> list[TaskCheck]:
    own_pool = pool is None
    pool = pool or SandboxPool(size=1)
    try:
        checks = []
        for index, task in enumerate(suite.tasks):
            check = await check_task(task, pool, _other_expected(suite.tasks, index))
            checks.append(check)
            if on_check:
                on_check(check)
        return checks
    finally:
        if own_pool:
            await pool.close()
