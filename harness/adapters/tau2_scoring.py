"""τ²-bench's reward, written from its definition (not from its code): a task's `reward_basis` names the checks
that count, and the run passes when every counted check passes (the reward is their product, 1 or 0).

- DB (and ENV_ASSERTION, whose database part it is): the domain's database at the end of the run equals the state
  the task's expected actions produce when replayed in order on a fresh database (harness.adapters.tau2_checkout:
  compared as a hash of the whole database).
- COMMUNICATE: every string of the task's `communicate_info` appears in some message of the agent's to the user
  (case-insensitive; commas are ignored on both sides, so 1,234.5 matches 1234.5).
- NL_ASSERTION: natural-language assertions about the conversation are judged by the run's judge model
  (`--judge-model`: each assertion met or not, from the whole conversation; all must be met). Without one, a task
  with assertions says they were not scored and passes or fails on its other checks. A task whose assertions are
  empty has nothing to judge.
- ACTION (no retail or airline task counts it): not scored, and said so.

A run that ended with an error (its turn limit, a timeout, a failed LM call) scores 0 whatever its database holds:
τ²-bench rewards only a simulation that the user (or the agent) stopped, any other ending is 0.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from harness.adapters.tau2_checkout import expected_end_state, state_hash
from harness.tasks.scorers import Score, ScoreContext, Scorer, register
from harness.tasks.scoring import EndState, ScoreInput

STATE_BASES = {"DB", "ENV_ASSERTION"}
JUDGE_PROMPT = ("You judge a conversation between a customer-service agent and a user. For each numbered assertion, "
                "decide whether the conversation shows it to be true. Reply with a JSON list holding one object per "
                'assertion, in order: {"met": true or false, "why": "one sentence"}, and nothing else.')


def judged(judge: Callable[[str, str], str], conversation: tuple[tuple[str, str], ...],
           assertions: list[str]) -> tuple[bool, str]:
    """(all met, why) from the judge's verdict on each assertion; a reply that is not one verdict per assertion
    fails the check, and says so."""
    transcript = "\n".join(f"{speaker}: {text}" for speaker, text in conversation)
    listed = "\n".join(f"{n}. {a}" for n, a in enumerate(assertions, 1))
    reply = judge(JUDGE_PROMPT, f"Conversation:\n{transcript}\n\nAssertions:\n{listed}")
    try:
        verdicts = json.loads(reply[reply.index("["):reply.rindex("]") + 1])
        met = [bool(v["met"]) for v in verdicts]
    except (ValueError, TypeError, KeyError):
        return False, f"nl_assertions: the judge's reply is not a verdict list ({reply[:80]!r})"
    if len(met) != len(assertions):
        return False, f"nl_assertions: the judge gave {len(met)} verdicts for {len(assertions)} assertions"
    failed = [a for a, ok in zip(assertions, met) if not ok]
    return not failed, f"nl_assertions: {len(met) - len(failed)}/{len(met)} met" + (
        f" (not: {failed[0]!r})" if failed else "")


def normalised(text: str) -> str:
    return text.lower().replace(",", "")


def communicated(info: str, messages: tuple[str, ...]) -> bool:
    """Whether `info` appears in one of the agent's messages (see the module docstring)."""
    wanted = normalised(info)
    return any(wanted in normalised(m) for m in messages)


def _wrong_write(state: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of a database state with one text field of its first record changed (None: no text field found)."""
    changed = copy.deepcopy(state)
    node: Any = changed
    while isinstance(node, dict) and node:
        for key, value in node.items():
            if isinstance(value, str):
                node[key] = value + " (changed)"
                return changed
        node = next((v for v in node.values() if isinstance(v, dict)), None)
    return None


@register
class Tau2Reward(Scorer):
    """τ²-bench's reward over a task's reward basis (harness.adapters.tau2_scoring). `checkout`, `domain` and
    `task` name where the expected end state comes from; the expected value holds the basis, the information to
    communicate and the assertions."""

    name: ClassVar[str] = "tau2"
    checkout: str
    domain: str
    task: str

    def _basis(self, expected: Any) -> list[str]:
        return list((expected or {}).get("reward_basis") or ["DB", "COMMUNICATE"])

    def evaluate(self, ctx: ScoreContext) -> Score:
        if ctx.error_type:
            return Score(0.0, False, f"the conversation did not end with the user: it ended with {ctx.error_type} "
                                     "(τ²-bench scores such a run 0)")
        expected, basis = ctx.expected or {}, self._basis(ctx.expected)
        checks: list[tuple[bool, str]] = []
        if STATE_BASES & set(basis):
            state = (ctx.end_state.get(self.domain) or {}).get("db")
            replay = expected_end_state(Path(self.checkout), self.domain, self.task)
            if state is None:
                checks.append((False, "db: no end state (the server did not run)"))
            else:
                same = state_hash(state) == replay.state_hash
                checks.append((same, f"db: {'matches' if same else 'differs from'} the expected end state"))
        if "COMMUNICATE" in basis:
            infos = list(expected.get("communicate_info") or [])
            missing = [i for i in infos if not communicated(i, ctx.agent_messages)]
            checks.append((not missing, f"communicate: {len(infos) - len(missing)}/{len(infos)} told"
                           + (f" (missing {missing[0]!r})" if missing else "")))
        notes = []
        assertions = list(expected.get("nl_assertions") or [])
        if "NL_ASSERTION" in basis and assertions and ctx.judge is not None:
            checks.append(judged(ctx.judge, ctx.conversation or tuple(("agent", m) for m in ctx.agent_messages),
                                 assertions))
        elif "NL_ASSERTION" in basis and assertions:
            notes.append(f"nl_assertions: {len(assertions)} not scored (no judge model)")
        if "ACTION" in basis:
            notes.append("action: not scored")
        ok = all(passed for passed, _ in checks)
        return Score(1.0 if ok else 0.0, ok, "; ".join([reason for _, reason in checks] + notes) or "nothing to check")

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        """The database for DB and ENV_ASSERTION; what the agent said for COMMUNICATE and NL_ASSERTION."""
        basis = set(self._basis(expected))
        return frozenset({"state"} if STATE_BASES & basis else set()) | frozenset(
            {"answer"} if basis & {"COMMUNICATE", "NL_ASSERTION"} else set())

    def judges_answer(self, expected: Any) -> bool:
        """Only a task that counts what the agent told the user, and has something to tell, judges the answer."""
        return "COMMUNICATE" in self._basis(expected) and bool((expected or {}).get("communicate_info"))

    def wrong_states(self, ctx: ScoreContext) -> list[tuple[str, EndState]]:
        state = (ctx.end_state.get(self.domain) or {}).get("db")
        if not STATE_BASES & set(self._basis(ctx.expected)) or state is None:
            return []
        wrong = _wrong_write(state)
        return [("a field of the first record changed", {**ctx.end_state, self.domain: {"db": wrong}})] if wrong else []
