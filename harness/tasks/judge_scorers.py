"""The scorers that ask a judge model (`--judge-model`) about an open answer: `rubric` (criteria in words; a
pass/fail verdict, or a 0-1 score passing at a stated threshold) and `claims` (the task's expected value is a list
of claims the answer must make; each is judged covered or not, and the run passes when the covered share reaches
the threshold, MCP-Atlas's 0.75 by default). Either can show the judge the run's tool calls and their results
(`show_calls: true`, trajectory grading: "did it check before it answered").

A verdict that cannot be read after retries, or a judged task run without a judge, raises JudgeError: the run
fails with error type `judge_error` (harness.run.episode), never passes.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.tasks.judging import (
    CLAIMS_INSTRUCTIONS,
    RUBRIC_INSTRUCTIONS,
    AnswerPosition,
    JudgeInput,
    ask_judge,
    read_claims_reply,
    read_rubric_reply,
)
from harness.tasks.scoring import Score, ScoreContext, ScoreInput, Scorer, register


def _judge_input(ctx: ScoreContext, title: str, criteria: str, show_calls: bool,
                 position: AnswerPosition) -> JudgeInput:
    return JudgeInput(question=ctx.question, answer=ctx.answer, criteria_title=title, criteria=criteria,
                      calls=ctx.tool_calls if show_calls else None, answer_position=position)


class _Judged(Scorer):
    """What every judge scorer takes: whether the judge sees the tool calls, and where the answer stands."""

    show_calls: bool = False
    answer_position: AnswerPosition = "after"

    def needs_judge(self) -> bool:
        return True

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset({"answer", "calls"} if self.show_calls else {"answer"})


@register
class Rubric(_Judged):
    """A judge grades the answer against `criteria` (words). `scale: pass_fail` takes the judge's pass/fail;
    `scale: score` takes its 0-1 score and passes at `threshold` or above. The task's expected value, if any, is
    not shown to the judge (write what a good answer holds into the criteria)."""

    name: ClassVar[str] = "rubric"
    criteria: str = Field(min_length=1)
    scale: Literal["pass_fail", "score"] = "pass_fail"
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    def judge_instructions(self) -> str:
        return RUBRIC_INSTRUCTIONS

    def evaluate(self, ctx: ScoreContext) -> Score:
        shown = _judge_input(ctx, "Rubric", self.criteria, self.show_calls, self.answer_position)
        verdict, cached = ask_judge(ctx.judge, ctx.judge_model, RUBRIC_INSTRUCTIONS, shown.message(),
                                    read_rubric_reply)
        note = " (cached verdict)" if cached else ""
        if self.scale == "pass_fail":
            return Score(1.0 if verdict.passed else 0.0, verdict.passed,
                         f"rubric: judge says {'pass' if verdict.passed else 'fail'}{note}: {verdict.why}")
        ok = verdict.score >= self.threshold
        return Score(verdict.score, ok, f"rubric: judge score {verdict.score:g} (pass at >= {self.threshold:g})"
                                        f"{note}: {verdict.why}")


def numbered(claims: list[str]) -> str:
    return "\n".join(f"{n}. {claim}" for n, claim in enumerate(claims, 1))


@register
class Claims(_Judged):
    """A judge decides, for each claim of the task's expected list, whether the answer makes it; the score is the
    covered share and the run passes at `threshold` or above (0.75 by default, as MCP-Atlas)."""

    name: ClassVar[str] = "claims"
    threshold: float = Field(default=0.75, ge=0.0, le=1.0)

    def judge_instructions(self) -> str:
        return CLAIMS_INSTRUCTIONS

    def check_expected(self, expected: Any) -> None:
        if (not isinstance(expected, list) or not expected
                or not all(isinstance(c, str) and c.strip() for c in expected)):
            raise ValueError("the expected value of a claims task is a non-empty list of claims (text)")

    def covered(self, ctx: ScoreContext) -> tuple[tuple[bool, ...], bool]:
        """(covered or not per claim, in the expected list's order; whether the verdict came from the cache)."""
        claims = [str(c) for c in ctx.expected]
        shown = _judge_input(ctx, "Claims", numbered(claims), self.show_calls, self.answer_position)
        return ask_judge(ctx.judge, ctx.judge_model, CLAIMS_INSTRUCTIONS, shown.message(),
                         lambda reply: read_claims_reply(reply, len(claims)))

    def evaluate(self, ctx: ScoreContext) -> Score:
        covered, cached = self.covered(ctx)
        share = sum(covered) / len(covered)
        missing = [str(c) for c, ok in zip(ctx.expected, covered, strict=True) if not ok]
        note = " (cached verdict)" if cached else ""
        why = (f"; not covered: {missing[0]!r}" + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
               if missing else "")
        return Score(share, share >= self.threshold,
                     f"claims: {sum(covered)}/{len(covered)} covered (pass at >= {self.threshold:g}){note}{why}")
