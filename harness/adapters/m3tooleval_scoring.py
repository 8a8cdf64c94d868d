"""M3ToolEval's answer check, written from its definition: an answer passes when it equals the expected output
directly, or after int/float/str coercion, or once read as a Python literal (`ast.literal_eval`), compared as is,
after coercion, element-wise for lists, or by its str().

Two deliberate differences from the published `Task.check_answer` (docs/benchmarks.md): numbers are never
truncated by the coercion (the published code turns an expected 3.7 into 3 with `int()`, so an answer of "3"
passes there), and the literal branch runs as its definition says (a missing `or` in the published code turns it
into an exception, so only the final str() comparison applies after `literal_eval` there).
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar

from harness.tasks.scorers import Score, ScoreContext, Scorer, register


def coerce(value: Any) -> Any:
    """Text as an int, else a float, else itself; any other value unchanged."""
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                continue
    return value


def same(a: Any, b: Any) -> bool:
    return a == b or coerce(a) == coerce(b)


def lists_match(a: Any, b: Any) -> bool:
    """Element-wise, each pair equal directly or after coercion."""
    return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b)))


def answer_matches(answer: str, expected: Any) -> bool:
    """Whether an agent's final answer is M3ToolEval-correct for `expected` (see the module docstring)."""
    answer = answer.strip()
    if same(answer, expected):
        return True
    try:
        parsed = ast.literal_eval(answer)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return answer == str(expected)
    return same(parsed, expected) or lists_match(parsed, expected) or str(parsed) == str(expected)


@register
class M3ToolEvalAnswer(Scorer):
    """M3ToolEval's exact-match rule with type coercion (harness.adapters.m3tooleval_scoring)."""

    name: ClassVar[str] = "m3tooleval"

    def evaluate(self, ctx: ScoreContext) -> Score:
        ok = answer_matches(ctx.answer, ctx.expected)
        return Score(1.0 if ok else 0.0, ok, f"answer {ctx.answer.strip()[:200]!r} "
                     f"{'matches' if ok else 'does not match'} expected {ctx.expected!r}")
