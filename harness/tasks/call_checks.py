"""Scorers of what the agent did: which tools it called, with which arguments, how often and in what order.

They read the run's tool calls in order (ScoreContext.tool_calls), which hold every call wherever it came from:
a tool the model called itself, or a function that code in the sandbox called. So a check gives the same verdict
in the direct arm and in code mode. A tool is named exactly or by a glob (`delete_*`); `args` is a subset the
call's arguments must hold, `args_match` a regular expression per argument (searched in its value as text).
Combine them with answer and state checks under `all` / `any`.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from harness.tasks.matching import is_subset
from harness.tasks.scoring import Score, ScoreContext, ScoreInput, Scorer, passed, register
from harness.trace.calls import ToolCallRecord

Calls = tuple[ToolCallRecord, ...]


def describe_calls(calls: Calls, limit: int = 8) -> str:
    """'get_ticket, close_ticket (error)': the calls made, for a scorer's reason."""
    if not calls:
        return "no tool calls"
    names = [f"{c.tool}{' (error)' if c.is_error else ''}" for c in calls[:limit]]
    return ", ".join(names) + (f" and {len(calls) - limit} more" if len(calls) > limit else "")



def call_matches(call: ToolCallRecord, tool: str, arguments: dict[str, Any] | None = None,
                 server: str | None = None) -> bool:
    """Whether `call` is of `tool` (a name or a glob such as `delete_*`), on `server` if given, with arguments
    holding `arguments` (a subset: extra arguments are fine)."""
    return (fnmatch.fnmatchcase(call.tool, tool) and (server is None or call.server == server)
            and (not arguments or is_subset(arguments, call.arguments)))

class _CallCheck(Scorer):
    """The calls a check is about: of `tool` (a name or glob), on `server` if given, holding `args`, each argument
    in `args_match` matching its pattern; failed calls count when `count_failed`."""

    tool: str = Field(min_length=1)
    server: str | None = None
    args: dict[str, Any] = {}
    args_match: dict[str, str] = {}
    count_failed: bool = True

    @field_validator("args_match")
    @classmethod
    def _patterns_compile(cls, patterns: dict[str, str]) -> dict[str, str]:
        for argument, pattern in patterns.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"args_match.{argument}: {pattern!r} is not a regular expression ({exc})") from None
        return patterns

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset({"calls"})

    def selects(self, call: ToolCallRecord, *, failed_too: bool | None = None) -> bool:
        counted = self.count_failed if failed_too is None else failed_too
        return (call_matches(call, self.tool, self.args, self.server) and (counted or not call.is_error)
                and all(name in call.arguments and re.search(pattern, _text(call.arguments[name]))
                        for name, pattern in self.args_match.items()))

    def matching(self, calls: Calls) -> Calls:
        return tuple(c for c in calls if self.selects(c))

    def without(self, calls: Calls) -> Calls:
        """The calls less every call of this check's tool (failed or not): a required call removed."""
        return tuple(c for c in calls if not self.selects(c, failed_too=True))

    def with_extra(self, calls: Calls, times: int = 1) -> Calls:
        """The calls plus `times` successful calls of this check's tool and arguments: a forbidden call added."""
        extra = ToolCallRecord(tool=self.tool, arguments=dict(self.args), server=self.server or "")
        return calls + (extra,) * times

    @property
    def label(self) -> str:
        shown = {**self.args, **{k: f"/{v}/" for k, v in self.args_match.items()}}
        return f"{self.tool}({', '.join(f'{k}={v!r}' for k, v in shown.items())})" if shown else self.tool


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


@register
class ToolCalled(_CallCheck):
    """The agent called the tool at least once (a call that failed does not count, unless `count_failed`)."""

    name: ClassVar[str] = "tool_called"
    count_failed: bool = False

    def evaluate(self, ctx: ScoreContext) -> Score:
        found = self.matching(ctx.tool_calls)
        return passed(bool(found), f"{self.label} called {len(found)} time(s)" if found else
                      f"{self.label} never called ({describe_calls(ctx.tool_calls)})")

    def wrong_calls(self, calls: Calls) -> list[tuple[str, Calls]]:
        return [(f"{self.label} removed", self.without(calls))]


@register
class ToolNotCalled(_CallCheck):
    """The agent never called the tool (an attempt that failed counts too, unless `count_failed: false`)."""

    name: ClassVar[str] = "tool_not_called"

    @field_validator("args_match")
    @classmethod
    def _no_patterns(cls, patterns: dict[str, str]) -> dict[str, str]:
        if patterns:
            raise ValueError("tool_not_called takes `args` (values), not `args_match`")
        return patterns

    def evaluate(self, ctx: ScoreContext) -> Score:
        found = self.matching(ctx.tool_calls)
        return passed(not found, f"{self.label} never called" if not found else
                      f"{self.label} called {len(found)} time(s), and must not be")

    def wrong_calls(self, calls: Calls) -> list[tuple[str, Calls]]:
        return [(f"{self.label} added", self.with_extra(calls))]


@register
class ToolCallCount(_CallCheck):
    """The number of calls of the tool (`tool: "*"`, the default, counts every call) is at least `at_least` and
    at most `at_most`."""

    name: ClassVar[str] = "tool_call_count"
    tool: str = "*"
    at_least: int | None = Field(default=None, ge=0)
    at_most: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _a_bound(self) -> ToolCallCount:
        if self.at_least is None and self.at_most is None:
            raise ValueError("give at_least, at_most or both")
        return self

    def evaluate(self, ctx: ScoreContext) -> Score:
        count = len(self.matching(ctx.tool_calls))
        ok = (self.at_least is None or count >= self.at_least) and (self.at_most is None or count <= self.at_most)
        bounds = " and ".join(part for part in (f">= {self.at_least}" if self.at_least is not None else "",
                                                f"<= {self.at_most}" if self.at_most is not None else "") if part)
        return passed(ok, f"{count} call(s) of {'any tool' if self.tool == '*' else self.label}, wanted {bounds}")

    def wrong_calls(self, calls: Calls) -> list[tuple[str, Calls]]:
        wrong = []
        if self.at_least:
            wrong.append((f"{self.label} removed", self.without(calls)))
        if self.at_most is not None:
            wrong.append((f"{self.at_most + 1} calls of {self.label} added", self.with_extra(calls, self.at_most + 1)))
        return wrong


@register
class ToolOrder(Scorer):
    """The tools were called in this order (other calls may come between and around them); a failed call does
    not count, unless `count_failed`."""

    name: ClassVar[str] = "tool_order"
    tools: list[str] = Field(min_length=2)
    count_failed: bool = False

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset({"calls"})

    def _checks(self) -> list[ToolCalled]:
        return [ToolCalled(tool=tool, count_failed=self.count_failed) for tool in self.tools]

    def evaluate(self, ctx: ScoreContext) -> Score:
        checks, position = self._checks(), 0
        for call in ctx.tool_calls:
            if position < len(checks) and checks[position].selects(call):
                position += 1
        ok = position == len(checks)
        order = " -> ".join(self.tools)
        return passed(ok, f"called in order {order}" if ok else
                      f"not called in order {order} (missing from {self.tools[position]}; "
                      f"calls: {describe_calls(ctx.tool_calls)})")

    def wrong_calls(self, calls: Calls) -> list[tuple[str, Calls]]:
        first = self._checks()[0]
        return [(f"{first.label} removed", first.without(calls))]
