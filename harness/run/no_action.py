"""The no-action check: an agent that makes no tool call and answers with the expected answer, on fresh servers, must
fail every task whose scorer reads the servers' end state or the calls; otherwise guessing scores as doing the work.

A task's scorer is taken apart into the checks `all` joins, each a part of one kind: a state check (it reads the end
state or probes), a call check (it reads the calls), or an answer check. The check reports which part held: the
state checks together already hold on the seed data, or the call checks pass with no calls. A task whose end state
holds from the start by design declares it (`state_holds_at_start: restraint | idempotent`) and must then have a
call check that fails with no calls (that the agent read the record). A task whose scorer reads only the answer is a
lookup: guessing its answer passes it, which is counted, not a defect. `harness validate` runs the check on every
task (a problem in a built-in suite fails validation); `harness run` runs it before any row (a built-in task that
fails it stops the run; a user's or a benchmark's task is one warning line, or with `--strict-no-action` exit 1).
A task scored by a judge model (rubric, claims) is not checked: only a judge could say whether a guess passes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import UserError
from harness.mcp.servers import open_servers
from harness.tasks.scorers import (
    EndState,
    Probe,
    ProbeOutcome,
    Score,
    ScoreContext,
    ScoreInput,
    Scorer,
    build_scorer,
)
from harness.tasks.scoring import AllOf
from harness.tasks.suite import builtin_suites_dir
from harness.tasks.task import ServerRef, StateHoldsAtStart, Suite, Task

STATE_HELD = "the state check already holds on the seed data"
CALLS_HELD = "the call check passes with no calls"
PartKind = Literal["answer", "state", "calls"]


@dataclass(frozen=True)
class NoActionCheck:
    """One task under no action. `passes`: its scorer passes the expected answer with no call on fresh servers;
    `held`: the parts that held (STATE_HELD, CALLS_HELD); `problem`: why the task can be passed without acting
    (or why its declaration does not fit), empty when it cannot."""

    task_id: str
    reads: frozenset[ScoreInput]
    passes: bool
    held: tuple[str, ...]
    declared: StateHoldsAtStart | None
    problem: str

    @property
    def answer_only(self) -> bool:
        """A lookup: the scorer reads only the answer, so an agent that guesses it passes (counted, not a defect)."""
        return self.reads <= {"answer"}

    @property
    def state_held(self) -> bool:
        return STATE_HELD in self.held


def expected_as_answers(expected: Any) -> list[str]:
    """The expected value written as an agent would answer it: the text itself, or the value as Python and as
    JSON (a scorer of Python literals reads the first, a JSON scorer the second)."""
    if isinstance(expected, str):
        return [expected]
    return list(dict.fromkeys([str(expected), json.dumps(expected, default=str)]))


def parts_of(scorer: Scorer) -> list[Scorer]:
    """The checks a scorer's `all` joins (nested ones flattened); any other scorer is one part."""
    if isinstance(scorer, AllOf):
        return [leaf for part in scorer.parts() for leaf in parts_of(part)]
    return [scorer]


def kind_of(part: Scorer, expected: Any) -> PartKind:
    """A part that reads the end state is a state check, else one that reads the calls is a call check."""
    reads = part.reads(expected)
    return "state" if "state" in reads else "calls" if "calls" in reads else "answer"


def judge_no_action(task: Task, end_state: EndState, probes: dict[str, ProbeOutcome]) -> NoActionCheck:
    """The task under no action, given its servers' untouched end state and probes (see the module docstring)."""
    scorer = build_scorer(task.scorer)
    reads, declared = scorer.reads(task.expected), task.state_holds_at_start
    if scorer.needs_judge():  # its verdict is a judge model's (rubric, claims): not asked here, so not checked
        return NoActionCheck(task.id, reads, False, (), declared, "")
    contexts = [ScoreContext(answer, task.expected, end_state, probes=probes)
                for answer in expected_as_answers(task.expected)]
    kinds = [(kind_of(part, task.expected), part) for part in parts_of(scorer)]
    scores: dict[tuple[int, int], Score] = {}  # each part judged once per context (a τ²-bench check hashes a database)

    def score(part: Scorer, ctx: ScoreContext) -> Score:
        key = (id(part), id(ctx))
        if key not in scores:
            scores[key] = part.evaluate(ctx)
        return scores[key]

    answer_parts = [part for kind, part in kinds if kind == "answer"]
    ctx = next((c for c in contexts if score(scorer, c).passed), None) or next(
        (c for c in contexts if all(score(p, c).passed for p in answer_parts)), contexts[0])
    whole = score(scorer, ctx)

    def all_hold(kind: PartKind) -> bool:
        parts = [part for k, part in kinds if k == kind]
        return bool(parts) and all(score(part, ctx).passed for part in parts)

    has_state, has_calls = any(k == "state" for k, _ in kinds), any(k == "calls" for k, _ in kinds)
    held = tuple(text for text, hold in ((STATE_HELD, all_hold("state")), (CALLS_HELD, all_hold("calls"))) if hold)
    problem = ""
    if declared:
        field = f"declares state_holds_at_start: {declared}, but"
        if not has_state:
            problem = f"{field} its scorer reads no end state (remove the field)"
        elif STATE_HELD not in held:
            problem = f"{field} its state check fails on the seed data (remove the field)"
        elif not has_calls or CALLS_HELD in held:
            problem = (f"{field} no call check fails with no calls: add one that the agent read the record "
                       "(tool_called: {tool: THE_TOOL_THAT_READS_IT, args: {...}})")
        elif whole.passed:
            problem = f"{field} it passes with no action ({whole.reason})"
    elif STATE_HELD in held:  # a benchmark's task (its servers name their source) is reported, not declared
        hint = "" if any(s.source for s in task.servers) else (
            " (by design? declare state_holds_at_start: restraint | idempotent and check that the agent read the "
            "record)")
        problem = "; ".join(held) + hint
    elif whole.passed and (has_state or has_calls):
        problem = "; ".join(held) or f"its scorer passes with no action ({whole.reason})"
    return NoActionCheck(task.id, reads, whole.passed, held, declared, problem)


def _reads_state(task: Task) -> bool:
    return "state" in build_scorer(task.scorer).reads(task.expected)


async def check_no_action(tasks: Iterable[Task], start_timeout_s: float | None = None) -> list[NoActionCheck]:
    """Every task under no action, in order. Servers open once per set of servers the tasks name (no call is
    made, probes only read) and only for tasks whose scorer reads the end state."""
    tasks = list(tasks)
    fresh: dict[tuple[ServerRef, ...], tuple[EndState, dict[str, ProbeOutcome]]] = {}
    for refs in dict.fromkeys(t.servers for t in tasks if _reads_state(t)):
        wanted: dict[str, Probe] = {p.key: p for t in tasks if t.servers == refs
                                    for p in build_scorer(t.scorer).probes()}
        options = {"start_timeout_s": start_timeout_s} if start_timeout_s else {}
        async with open_servers(refs, **options) as servers:
            fresh[refs] = (servers.end_state(), await servers.run_probes(tuple(wanted.values())))
    return [judge_no_action(t, *fresh.get(t.servers, ({}, {}))) for t in tasks]


def is_builtin(suite: Suite) -> bool:
    """A suite that ships with the harness (its file is one of the built-in suites): its tasks must pass the check."""
    try:
        return suite.path.resolve().parent == builtin_suites_dir().resolve() and suite.path.suffix in (".yaml", ".yml")
    except OSError:
        return False


def warning_line(check: NoActionCheck) -> str:
    return f"warning: task '{check.task_id}' can be passed without acting: {check.problem}"


def answer_only_line(checks: list[NoActionCheck]) -> str:
    """How many tasks an agent passes from the answer alone (their scorers read only the answer), once per suite."""
    lookups = sum(c.answer_only for c in checks)
    return (f"{lookups} of {len(checks)} task(s) can be passed from the answer alone, with no action (their scorers "
            "read only the answer: lookups)")


async def check_before_run(suite: Suite, tasks: Iterable[Task], start_timeout_s: float | None = None) -> list[str]:
    """The no-action check before a run's first row: a built-in task that fails it stops the run (a UserError
    naming it; the suite is the harness's to fix), any other suite's are returned as warning lines."""
    problems = [c for c in await check_no_action(tasks, start_timeout_s) if c.problem]
    if problems and is_builtin(suite):
        first = problems[0]
        more = f" (and {len(problems) - 1} more task(s))" if len(problems) > 1 else ""
        raise UserError(f"built-in suite '{suite.name}': task '{first.task_id}' can be passed without acting: "
                        f"{first.problem}{more}; `harness validate --suite {suite.name}` lists them")
    return [warning_line(c) for c in problems]
