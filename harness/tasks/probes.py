"""End state read through a server's own tools (a probe): after the agent ends and before the servers close, the
run calls a read-only tool on its own server session (`probe: {server: memory, tool: read_graph}`) and the
scorer checks the result. It works on any server, external ones included, which have no end-state snapshot.

The check: `path` picks a part of the result (harness.tasks.matching.resolve_path: `entities[*].name`), `where`
keeps the items of a list holding a subset, then `equals` (the value holds it, as a subset), `count` (a list's
length) and `contains` (a list has a matching item, or a text holds the text) must all hold. Probe calls are not
the agent's: they are not counted as its tool calls and are recorded apart in the trajectory.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from harness.tasks.matching import MISSING, is_subset, resolve_path
from harness.tasks.scoring import Probe, Score, ScoreContext, ScoreInput, Scorer, passed, register

CHECKS = ("equals", "count", "contains")


def contains(value: Any, wanted: Any) -> bool:
    """A list holds an item matching `wanted` (as a subset, or a text containing it); a text holds the text; a
    mapping holds the subset."""
    if isinstance(value, list):
        return any(contains(item, wanted) if isinstance(item, str) else is_subset(wanted, item) for item in value)
    if isinstance(value, str):
        return str(wanted).lower() in value.lower()
    return is_subset(wanted, value)


@register
class ProbeCheck(Scorer):
    """A read-only tool's result after the run passes the check (see the module docstring)."""

    name: ClassVar[str] = "probe"
    server: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    args: dict[str, Any] = {}
    path: str = ""
    where: dict[str, Any] = {}
    equals: Any = None
    count: int | None = Field(default=None, ge=0)
    contains: Any = None

    @model_validator(mode="after")
    def _a_check(self) -> ProbeCheck:
        if not set(CHECKS) & self.model_fields_set:
            raise ValueError("a probe needs a check: equals, count or contains")
        return self

    @property
    def probe(self) -> Probe:
        return Probe(self.server, self.tool, dict(self.args))

    def probes(self) -> tuple[Probe, ...]:
        return (self.probe,)

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset({"state"})

    def evaluate(self, ctx: ScoreContext) -> Score:
        where = f"{self.server}.{self.tool}{f' at {self.path}' if self.path else ''}"
        outcome = ctx.probes.get(self.probe.key)
        if outcome is None:
            return passed(False, f"probe {self.server}.{self.tool} was not run (the servers were not open)")
        if outcome.is_error:
            return passed(False, f"probe {self.server}.{self.tool} failed: {outcome.text[:200]}")
        value = resolve_path(outcome.value, self.path) if self.path else outcome.value
        if value is MISSING:
            return passed(False, f"probe {where}: no such path in the result")
        if self.where:
            if not isinstance(value, list):
                return passed(False, f"probe {where}: `where` needs a list, got {type(value).__name__}")
            value = [item for item in value if is_subset(self.where, item)]
        failures = []
        given = self.model_fields_set
        if "equals" in given and not is_subset(self.equals, value):
            failures.append(f"{_short(value)} is not {self.equals!r}")
        if "count" in given and (not hasattr(value, "__len__") or len(value) != self.count):
            failures.append(f"{len(value) if hasattr(value, '__len__') else 'no'} item(s), wanted {self.count}")
        if "contains" in given and not contains(value, self.contains):
            failures.append(f"{_short(value)} does not contain {self.contains!r}")
        return passed(not failures, f"probe {where}: " + ("; ".join(failures) if failures else "as expected"))


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
