"""The answer check a run under the scaffold's `answer_feedback` consults: a benchmark published with feedback on
wrong answers (M3ToolEval tells its agent "incorrect" and lets it try again until its turn limit) is scored by the
task's own scorer inside the run, not only after it.

The episode owns the scorer and the run's servers, so it builds the check and opens it around the agent's run
(`checking_answers`); the loop, the one place an answer ends a run in every arm, asks it (`check_answer`) only when
the scaffold's `answer_feedback` is on. The check travels in a context variable, as the step cursor does, so no arm
carries it: an answer given as a reply, by the final_answer tool or by final_answer() in code reaches the same
check.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

# (the answer as the scorers read it, the run's turns so far) -> whether the task's scorer accepts it
AnswerCheck = Callable[[str, int], Awaitable[bool]]

_CHECK: contextvars.ContextVar[AnswerCheck | None] = contextvars.ContextVar("harness_answer_check", default=None)


@contextmanager
def checking_answers(check: AnswerCheck) -> Iterator[None]:
    """Answers given inside this context (and the tasks it starts) are judged by `check`."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


async def check_answer(answer: str, turns: int) -> bool:
    """Whether the run's answer check accepts `answer`; a run under answer_feedback with no check open is a bug of
    the caller (the answer would be neither accepted nor rejected honestly), so it raises."""
    check = _CHECK.get()
    if check is None:
        raise RuntimeError("the scaffold's answer_feedback needs an answer check: run the agent through "
                           "harness.run.episode.episode (or open harness.agents.feedback.checking_answers)")
    return await check(answer, turns)
