"""How a judge model is asked, read and remembered: the judge's instructions (a rubric's, a claim list's), the
message that shows it the task, the answer and optionally the run's tool calls, the reading of its JSON reply
(retried with a correction, then a named error: an empty or unreadable reply is never a pass), and the verdict
cache (the same judge model given the same messages gives the verdict it gave before, without a call).

The instructions are fixed text, hashed into each row (`judge_prompt_hash`), so two runs judged under different
instructions are told apart the way two scaffolds are.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from harness.env import cache_dir
from harness.files import atomic_write_text
from harness.hashing import content_hash
from harness.trace.calls import ToolCallRecord

JudgeFn = Callable[[str, str], str]  # (system, user) -> the judge's reply text
AnswerPosition = Literal["after", "before"]  # where the answer stands relative to the criteria in the message

ATTEMPTS = 3  # one call, then two retries that say what was wrong with the reply
RESULT_CHARS = 400  # of each tool result shown to a judge grading the trajectory

RUBRIC_INSTRUCTIONS = (
    "You grade an agent's answer to a task against a rubric, written in words. Judge only what the answer says "
    "(and, when shown, what the agent's tool calls returned); length, tone and confidence earn nothing. Reply with "
    'one JSON object and nothing else: {"score": a number from 0 to 1 (how fully the answer meets the rubric), '
    '"pass": true or false (whether it meets the rubric), "why": "one sentence"}.')
CLAIMS_INSTRUCTIONS = (
    "You check which claims an agent's answer to a task makes. A claim is covered when the answer states it, or "
    "states something that plainly implies it; a claim the answer contradicts, leaves out or only hints at is not "
    "covered. Judge only what the answer says (and, when shown, what the agent's tool calls returned). Reply with "
    'one JSON list and nothing else, one object per numbered claim, in order: {"covered": true or false, '
    '"why": "one sentence"}.')
RETRY_NOTE = "\n\nYour previous reply could not be read ({problem}). Reply with the JSON only, in the form asked for."


class JudgeError(RuntimeError):
    """The judge gave no verdict that could be read (after its retries), or no judge was named: the run's score
    is a failure with error type `judge_error`, never a pass."""


def judge_prompt_hash(instructions: str) -> str:
    """16 hex digits naming the judge's instructions (a row's `judge_prompt_hash`)."""
    return content_hash({"judge_instructions": instructions})


@dataclass(frozen=True)
class JudgeInput:
    """What a judge is shown: the task's prompt, the answer, the criteria text, and optionally the tool calls."""

    question: str
    answer: str
    criteria_title: str
    criteria: str
    calls: tuple[ToolCallRecord, ...] | None = None  # None: the trajectory is not shown
    answer_position: AnswerPosition = "after"

    def message(self) -> str:
        answer = f"Answer:\n{self.answer.strip() or '(empty)'}"
        criteria = f"{self.criteria_title}:\n{self.criteria.strip()}"
        parts = [f"Task given to the agent:\n{self.question.strip() or '(not given)'}"]
        if self.calls is not None:
            parts.append(f"Tool calls the agent made, in order:\n{describe_calls(self.calls)}")
        parts += [criteria, answer] if self.answer_position == "after" else [answer, criteria]
        return "\n\n".join(parts)


def describe_calls(calls: tuple[ToolCallRecord, ...]) -> str:
    """The tool calls as a judge reads them: one numbered line each, with its arguments and the start of its result."""
    if not calls:
        return "(none)"
    lines = []
    for n, call in enumerate(calls, 1):
        where = f"{call.server}." if call.server else ""
        outcome = "error" if call.is_error else "result"
        result = " ".join(call.result_preview.split())[:RESULT_CHARS]
        lines.append(f"{n}. {where}{call.tool}({json.dumps(call.arguments, sort_keys=True, default=str)}) "
                     f"-> {outcome}: {result}")
    return "\n".join(lines)


def _json_value(reply: str, opener: str, closer: str) -> Any:
    """The outermost JSON value between the first `opener` and the last `closer` (ValueError otherwise)."""
    start, end = reply.find(opener), reply.rfind(closer)
    if start < 0 or end < start:
        raise ValueError(f"no JSON {'object' if opener == '{' else 'list'} in it")
    try:
        return json.loads(reply[start:end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"its JSON does not parse: {exc.msg}") from None


@dataclass(frozen=True)
class RubricVerdict:
    score: float
    passed: bool
    why: str


def read_rubric_reply(reply: str) -> RubricVerdict:
    """A rubric verdict from the judge's reply: a JSON object with `score` (0-1) and/or `pass`; ValueError naming
    what is missing otherwise (an empty reply is an error, not a failing or passing verdict)."""
    if not reply.strip():
        raise ValueError("the reply is empty")
    value = _json_value(reply, "{", "}")
    if not isinstance(value, dict):
        raise ValueError("it is not a JSON object")
    score, verdict = value.get("score"), value.get("pass")
    if isinstance(score, bool) or (score is not None and not isinstance(score, (int, float))):
        raise ValueError(f"'score' is {score!r}, not a number")
    if score is not None and not 0 <= score <= 1:
        raise ValueError(f"'score' is {score}, outside 0-1")
    if verdict is not None and not isinstance(verdict, bool):
        raise ValueError(f"'pass' is {verdict!r}, not true or false")
    if score is None and verdict is None:
        raise ValueError("it has neither 'score' nor 'pass'")
    score = float(score) if score is not None else float(bool(verdict))
    return RubricVerdict(score, bool(verdict) if verdict is not None else score >= 0.5, str(value.get("why", "")))


def read_claims_reply(reply: str, count: int) -> tuple[bool, ...]:
    """One covered-or-not per claim, in order, from the judge's reply (a JSON list of objects with `covered`, or
    of booleans); ValueError when it is empty, unreadable, or has another number of verdicts."""
    if not reply.strip():
        raise ValueError("the reply is empty")
    value = _json_value(reply, "[", "]")
    if not isinstance(value, list):
        raise ValueError("it is not a JSON list")
    covered = []
    for item in value:
        flag = item.get("covered", item.get("met")) if isinstance(item, dict) else item
        if not isinstance(flag, bool):
            raise ValueError(f"a verdict {item!r} has no 'covered': true or false")
        covered.append(flag)
    if len(covered) != count:
        raise ValueError(f"it has {len(covered)} verdicts for {count} claims")
    return tuple(covered)


def verdict_cache_dir() -> Path | None:
    """Where verdicts are kept ($HARNESS_JUDGE_CACHE=off: nowhere, every verdict is asked for)."""
    if os.environ.get("HARNESS_JUDGE_CACHE", "").lower() in ("off", "0", "no"):
        return None
    return cache_dir() / "judge-verdicts"


def _cache_path(judge_model: str, system: str, user: str) -> Path | None:
    folder = verdict_cache_dir()
    if folder is None or not judge_model:
        return None
    key = hashlib.sha256(json.dumps([judge_model, system, user]).encode()).hexdigest()
    return folder / key[:2] / f"{key}.json"


T = TypeVar("T")


def ask_judge(judge: JudgeFn | None, judge_model: str, system: str, user: str,
                 read: Callable[[str], T]) -> tuple[T, bool]:
    """(the judge's verdict read by `read`, whether it came from the cache). A reply `read` rejects is asked for
    again with the problem stated, up to ATTEMPTS calls; then JudgeError. Only a reply that was read is cached,
    keyed by the judge model and the exact messages (a model string alone names no judge for scripted tests)."""
    path = _cache_path(judge_model, system, user)
    if path is not None and path.is_file():
        try:
            return read(json.loads(path.read_text())["reply"]), True
        except (ValueError, KeyError, TypeError):
            pass  # a damaged entry is asked for again
    if judge is None:
        raise JudgeError("judge_error: this scorer needs a judge model (--judge-model MODEL)")
    message, problem, reply = user, "", ""
    for _ in range(ATTEMPTS):
        reply = judge(system, message)
        try:
            verdict = read(reply)
        except ValueError as exc:
            problem = str(exc)
            message = user + RETRY_NOTE.format(problem=problem)
            continue
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps({"judge_model": judge_model, "reply": reply}))
        return verdict, False
    raise JudgeError(f"judge_error: the judge's reply could not be read after {ATTEMPTS} attempts ({problem}); "
                     f"last reply {reply[:80]!r}")
