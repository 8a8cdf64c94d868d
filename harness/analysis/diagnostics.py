"""Diagnostics read from a run's answers: patterns that point at the setup rather than the model, said in one
line by the run's summary and the report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from harness.agents.arms import arm_rank, calls_tools_natively
from harness.models.tool_call_text import TEXT_CALL_FIX, looks_like_text_tool_call


def text_tool_call_note(answers: Iterable[tuple[str, str | None]]) -> str | None:
    """One line when answers of arms that take native tool calls are tool calls written as text (a fenced JSON
    object with name/arguments, <tool_call> tags): the model's server returned its calls as text, so the arm took
    each call for the final answer. None when no such answer is found. `answers`: (arm, answer) per run."""
    found = Counter(arm for arm, answer in answers if calls_tools_natively(arm) and looks_like_text_tool_call(answer))
    if not found:
        return None
    counts = ", ".join(f"{arm} {found[arm]}" for arm in sorted(found, key=arm_rank))
    return (f"Tool calls written as text: {sum(found.values())} answer(s) ({counts}) are tool calls the model "
            "server did not parse, so they ended the run as answers; likely cause: the server's chat format does "
            f"not parse this model's tool calls ({TEXT_CALL_FIX}); `harness models --check` tells.")
