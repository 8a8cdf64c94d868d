"""BFCL's own multi-turn checker as a scorer: the calls the run executed, turn by turn, handed to
`multi_turn_checker` from the user's BFCL package (harness.adapters.bfcl_package), never a rewrite of it.

Each of the agent's calls on the run's `bfcl` server is written as BFCL's checker reads a call (`name(key=repr(value),
...)`, the arguments as executed), grouped by the user turn whose steps made it (ScoreContext.user_turn_steps) and,
within a turn, by step (a step is one model reply, or one code execution). A run that ended before its last turn
has its remaining turns empty, as BFCL's own force-quit leaves them. The checker caches the instances it builds in
its module's globals, keyed by model name and entry id, so every run gets a name of its own and its instances are
dropped after. Its verdict (`valid`) passes or fails the run; the reason is its error type and message. A checker
that raises on the calls (it could not read them) fails the run with its message, marked as such.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from harness.adapters.bfcl_package import call_string, category_of, load_bfcl
from harness.errors import describe_exception
from harness.tasks.scorers import Score, ScoreContext, Scorer, register
from harness.tasks.scoring import ScoreInput
from harness.trace.calls import ToolCallRecord

SERVER = "bfcl"
UNREADABLE = "BFCL's checker could not read the run's calls"


def turn_of(step: int | None, turn_steps: tuple[int, ...]) -> int:
    """The user turn a step belongs to: how many turns had ended before it (a call outside any step: the last)."""
    if step is None:
        return len(turn_steps)
    return sum(1 for ended in turn_steps if ended < step)


def calls_by_turn(calls: tuple[ToolCallRecord, ...], turn_steps: tuple[int, ...], turns: int) -> list[list[list[str]]]:
    """The run's calls on the BFCL server as the checker takes them: per turn, per step, call strings in order."""
    by_turn: list[dict[int, list[str]]] = [{} for _ in range(turns)]
    for call in calls:
        if call.server and call.server != SERVER:
            continue
        turn = min(turn_of(call.step, turn_steps), turns - 1)
        by_turn[turn].setdefault(call.step if call.step is not None else -1, []).append(
            call_string(call.tool, call.arguments))
    return [list(steps.values()) for steps in by_turn]


def _forget(utils: Any, model_name: str) -> None:
    """Drop the instances the checker cached for this run's name (it never does: they would pile up)."""
    cached = getattr(utils, "__dict__", {})
    for key in [k for k in cached if k.startswith(model_name)]:
        del cached[key]


@register
class BfclChecker(Scorer):
    """BFCL's `multi_turn_checker` on the run's calls per turn (harness.adapters.bfcl_scoring). `package` is where
    BFCL is (`installed` or a checkout's path), `entry` the entry's id."""

    name: ClassVar[str] = "bfcl"
    package: str
    entry: str

    def evaluate(self, ctx: ScoreContext) -> Score:
        bfcl = load_bfcl(self.package)
        entry, ground_truth = bfcl.entry(self.entry), bfcl.ground_truth(self.entry)
        decoded = calls_by_turn(ctx.tool_calls, ctx.user_turn_steps, len(ground_truth))
        model_name = f"harness_{uuid.uuid4().hex}"
        try:
            verdict = bfcl.checker.multi_turn_checker(decoded, ground_truth, entry, category_of(self.entry),
                                                      model_name)
        except Exception as exc:  # the checker's own failure on these calls: the run fails, saying why
            return Score(0.0, False, f"{UNREADABLE}: {describe_exception(exc)}")
        finally:
            _forget(bfcl.utils, model_name)
        if verdict.get("valid"):
            return Score(1.0, True, "bfcl: valid")
        return Score(0.0, False, f"bfcl: {verdict.get('error_type', 'invalid')}: {verdict.get('error_message', '')}"[:500])

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        """BFCL checks the state the calls leave and their results: the calls."""
        return frozenset({"calls"})

    def judges_answer(self, expected: Any) -> bool:
        return False
