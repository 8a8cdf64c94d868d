"""Diagnostics read from a run's answers: patterns that point at the setup rather than the model, said in one
line by the run's summary and the report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from harness.agents.arms import arm_rank, calls_tools_natively
from harness.models.families import EMBEDDED, family_of
from harness.models.tool_call_text import TEXT_CALL_FIX, looks_like_text_tool_call


def text_tool_call_note(answers: Iterable[tuple[str, str | None]], models: Iterable[str] = (),
                        served: Iterable[bool] = ()) -> str | None:
    """One line when answers of arms that take native tool calls are tool calls written as text (a fenced JSON
    object with name/arguments, <tool_call> tags), so the arm took each call for the final answer. None when no
    such answer is found. `answers`: (arm, answer) per run; `models`: the runs' models; `served`: per run, whether
    the response cache answered every LM call of it. A served model's calls come back as text when its server's chat
    format does not parse them; the embedded engine parses its model's calls itself, so there the model wrote the
    call inside its answer, and no server setting would change that. When such runs were answered by the cache, the
    server was not asked: advice followed (a server restarted with a chat format that parses calls) is not seen by
    them, and the line says so."""
    answers = list(answers)
    served = list(served) or [False] * len(answers)
    texts = [(arm, cached) for (arm, answer), cached in zip(answers, served, strict=True)
             if calls_tools_natively(arm) and looks_like_text_tool_call(answer)]
    if not texts:
        return None
    found = Counter(arm for arm, _ in texts)
    counts = ", ".join(f"{arm} {found[arm]}" for arm in sorted(found, key=arm_rank))
    head = f"Tool calls written as text: {len(texts)} answer(s) ({counts})"
    if (models := set(models)) and all(family_of(model) is EMBEDDED for model in models):
        return (f"{head} hold a tool call the model wrote inside its answer, so they ended the run as answers (the "
                "embedded engine parses the model's own tool-call blocks; these were not one).")
    unasked = sum(cached for _, cached in texts)
    not_asked = (f" {unasked} of these run(s) were answered by the response cache alone, so the server was not asked "
                 "again: a server restarted with other options is measured only by runs that ask it (a new run id "
                 "without --cache replay, or --no-cache)." if unasked else "")
    return (f"{head} are tool calls the model server did not parse, so they ended the run as answers; likely "
            f"cause: the server's chat format does not parse this model's tool calls ({TEXT_CALL_FIX}); "
            f"`harness models --check` tells.{not_asked}")
