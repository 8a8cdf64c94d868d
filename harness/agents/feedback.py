"""The answer check a run under the scaffold's `answer_feedback` consults: a benchmark published with feedback on
wrong answers (M3ToolEval tells its agent "incorrect" and lets it try again until its turn limit) is scored by the
task's own scorer inside the run, not only after it.

The episode owns the scorer and the run's servers, so it builds the check and hands it to the run in its context
(SampleContext.check_answer); the loop, the one place an answer ends a run in every arm, asks it (`check_answer`)
only when the scaffold's `answer_feedback` is on, so an answer given as a reply, by the final_answer tool or by
final_answer() in code reaches the same check.
"""

from __future__ import annotations

from harness.agents.context import AnswerCheck, SampleContext

__all__ = ["AnswerCheck", "check_answer"]


async def check_answer(ctx: SampleContext, answer: str, turns: int) -> bool:
    """Whether the run's answer check accepts `answer`; a run under answer_feedback with no check is a bug of the
    caller (the answer would be neither accepted nor rejected honestly), so it raises."""
    if ctx.check_answer is None:
        raise RuntimeError("the scaffold's answer_feedback needs an answer check: run the agent through "
                           "harness.run.episode.episode (or give its SampleContext a check_answer)")
    return await ctx.check_answer(answer, turns)
