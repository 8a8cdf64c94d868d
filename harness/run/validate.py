"""`harness validate`: prove a suite is sound before measuring anything with it.

For every task: its reference solution runs through the real sandbox against fresh servers and its scorer must
pass on what the reference did (its answer, end state, tool calls and probes); then the scorer is fed wrong
answers (with the untouched end state and probes of fresh servers, and no tool calls) and must fail; and, when it
judges the tool calls, the reference's calls made wrong (a required call removed, a forbidden call added) must
fail it too. A scorer that cannot fail is a defect.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from harness.mcp.servers import open_servers
from harness.run.reference import run_reference
from harness.sandbox import SandboxPool
from harness.tasks.scorers import ScoreContext, build_scorer
from harness.tasks.task import Suite, Task

WRONG_TEXT = "__harness_wrong_answer__"


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

    @property
    def ok(self) -> bool:
        return (self.reference_error is None and self.passes_on_reference and self.fails_on_wrong
                and self.fails_on_wrong_trajectory)


def wrong_answers(expected: Any) -> list[str]:
    """Answers that must not pass: no answer at all, and for numbers a value well outside any tolerance."""
    answers = [WRONG_TEXT]
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        answers.append(str(expected * 3 + 1000))
    return answers


async def check_task(task: Task, pool: SandboxPool) -> TaskCheck:
    started = time.perf_counter()
    trace = await run_reference(task, pool)
    scorer = build_scorer(task.scorer)
    reference = trace.context or ScoreContext(trace.answer, task.expected, trace.end_state)
    on_reference = scorer.evaluate(reference)
    async with open_servers(task.servers) as fresh:
        untouched = fresh.end_state()
        untouched_probes = await fresh.run_probes(scorer.probes())
    wrong = [scorer.evaluate(ScoreContext(answer, task.expected, untouched, probes=untouched_probes))
             for answer in wrong_answers(task.expected)]
    leaked = next((w for w in wrong if w.passed), None)
    wrong_calls = scorer.wrong_calls(reference.tool_calls)
    passing_wrong = next(((label, result) for label, calls in wrong_calls
                          if (result := scorer.evaluate(replace(reference, tool_calls=calls))).passed), None)
    return TaskCheck(
        task_id=task.id, category=task.category, reference_answer=trace.answer, reference_error=trace.error,
        passes_on_reference=on_reference.passed, reference_reason=on_reference.reason,
        fails_on_wrong=leaked is None, wrong_reason=(leaked or wrong[0]).reason,
        tool_calls=len(trace.tool_calls), seconds=time.perf_counter() - started,
        wrong_trajectories=len(wrong_calls), fails_on_wrong_trajectory=passing_wrong is None,
        wrong_trajectory_reason=f"{passing_wrong[0]}: {passing_wrong[1].reason}" if passing_wrong else "",
    )


async def validate_suite(suite: Suite, pool: SandboxPool | None = None, on_check=None) -> list[TaskCheck]:
    own_pool = pool is None
    pool = pool or SandboxPool(size=1)
    try:
        checks = []
        for task in suite.tasks:
            check = await check_task(task, pool)
            checks.append(check)
            if on_check:
                on_check(check)
        return checks
    finally:
        if own_pool:
            await pool.close()
