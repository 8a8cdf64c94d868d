"""`harness validate`: prove a suite is sound before measuring anything with it.

For every task: its reference solution runs through the real sandbox against fresh servers and its
scorer must pass on the reference's answer and end state; then the scorer is fed wrong answers (and the
untouched end state of fresh servers) and must fail. A scorer that cannot fail is a defect.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harness.agents.scaffold import GUIDED, Scaffold
from harness.mcp.servers import open_servers
from harness.run.reference import run_reference
from harness.sandbox import SandboxPool
from harness.tasks.scorers import build_scorer
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

    @property
    def ok(self) -> bool:
        return self.reference_error is None and self.passes_on_reference and self.fails_on_wrong


def wrong_answers(expected: Any) -> list[str]:
    """Answers that must not pass: no answer at all, and for numbers a value well outside any tolerance."""
    answers = [WRONG_TEXT]
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        answers.append(str(expected * 3 + 1000))
    return answers


async def check_task(task: Task, pool: SandboxPool, scaffold: Scaffold = GUIDED) -> TaskCheck:
    """The reference under the scaffold's id guard must pass the scorer; wrong answers must fail it."""
    started = time.perf_counter()
    trace = await run_reference(task, pool, scaffold)
    scorer = build_scorer(task.scorer)
    on_reference = scorer.score(trace.answer, task.expected, trace.end_state)
    async with open_servers(task.servers) as fresh:
        untouched = fresh.end_state()
    wrong = [scorer.score(answer, task.expected, untouched) for answer in wrong_answers(task.expected)]
    leaked = next((w for w in wrong if w.passed), None)
    return TaskCheck(
        task_id=task.id, category=task.category, reference_answer=trace.answer, reference_error=trace.error,
        passes_on_reference=on_reference.passed, reference_reason=on_reference.reason,
        fails_on_wrong=leaked is None, wrong_reason=(leaked or wrong[0]).reason,
        tool_calls=len(trace.tool_calls), seconds=time.perf_counter() - started,
    )


async def validate_suite(suite: Suite, pool: SandboxPool | None = None, on_check=None,
                         scaffold: Scaffold = GUIDED) -> list[TaskCheck]:
    own_pool = pool is None
    pool = pool or SandboxPool(size=1)
    try:
        checks = []
        for task in suite.tasks:
            check = await check_task(task, pool, scaffold)
            checks.append(check)
            if on_check:
                on_check(check)
        return checks
    finally:
        if own_pool:
            await pool.close()
