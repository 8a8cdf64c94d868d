"""A judge model outside a run (`harness validate`, `harness judge-check`): the model string's provider, asked the
way a run's scorer asks it (harness.run.episode.judge_of), with the provider's response cache off (the judge's own
verdict cache, harness.tasks.judging, keeps its verdicts)."""

from __future__ import annotations

import asyncio

from harness.models import resolve_model
from harness.run.episode import judge_of
from harness.tasks.judging import JudgeFn
from harness.tasks.task import Task

_NO_TASK = Task(id="judge", prompt="(judging)", expected=None)  # a judge's LM is the same for every task


async def open_judge(model: str, api_base: str | None = None) -> JudgeFn:
    """A judge callable (system, user) -> reply for `model` (any model string; UserError if unknown)."""
    provider = resolve_model(model, api_base=api_base, cache=False)
    return judge_of(await provider.lm_for(_NO_TASK, "judge"))


def judge_for(model: str, api_base: str | None = None) -> JudgeFn:
    """open_judge, from code that runs no event loop (the command line)."""
    return asyncio.run(open_judge(model, api_base))
