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


async def open_judge(model: str, api_base: str | None = None, temperature: float | None = None) -> JudgeFn:
    """A judge callable (system, user) -> reply for `model` (any model string; UserError if unknown), sampled at
    `temperature` when given (else the model's default, 0)."""
    provider = resolve_model(model, api_base=api_base, cache="off")
    return judge_of(await provider.lm_for(_NO_TASK, "judge"), temperature)


def judge_for(model: str, api_base: str | None = None, temperature: float | None = None) -> JudgeFn:
    """open_judge, from code that runs no event loop (the command line)."""
    return asyncio.run(open_judge(model, api_base, temperature))


def judge_identity(model: str, temperature: float | None) -> str:
    """The name a judge's verdicts are cached and saved under: the model string, with its temperature when one
    was chosen (a verdict sampled at 0.7 is not the verdict at 0, and a report reads only the default's check)."""
    return model if temperature is None else f"{model}@temperature={temperature:g}"
