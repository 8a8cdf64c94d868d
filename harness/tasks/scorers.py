"""The built-in scorers of answers and of fixture servers' end state, and the public face of scoring: importing
this module registers every built-in scorer (these, harness.tasks.call_checks, harness.tasks.probes and
harness.tasks.judge_scorers).

Each scorer takes one ScoreContext (harness.tasks.scoring) and returns a Score; `check_expected` checks the task's
expected value when the suite loads, so a pattern that cannot compile is one line before any run.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, ClassVar

from harness.tasks import call_checks, judge_scorers, probes  # noqa: F401  (they register their scorers)
from harness.tasks.matching import is_subset
from harness.tasks.scoring import (  # noqa: F401  (the public names of scoring)
    SCORERS,
    EndState,
    ExpectedValueError,
    Probe,
    ProbeOutcome,
    Score,
    ScoreContext,
    ScoreInput,
    Scorer,
    build_scorer,
    check_scorer,
    passed,
    register,
    scorer_spec,
)


def _normalize(text: str, case_sensitive: bool) -> str:
    text = " ".join(str(text).strip().split()).strip(" .\"'`")
    return text if case_sensitive else text.lower()


@register
class Exact(Scorer):
    """The answer equals the expected text (whitespace, surrounding quotes and a final period ignored)."""

    name: ClassVar[str] = "exact"
    case_sensitive: bool = False

    def evaluate(self, ctx: ScoreContext) -> Score:
        answer, expected = ctx.answer, ctx.expected
        ok = _normalize(answer, self.case_sensitive) == _normalize(str(expected), self.case_sensitive)
        return passed(ok, f"answer {answer!r} {'equals' if ok else 'differs from'} expected {expected!r}")


_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def parse_number(text: str) -> float | None:
    """The last number written in the text (commas as thousands separators allowed), or None."""
    matches = _NUMBER.findall(str(text))
    if not matches:
        return None
    return float(matches[-1].replace(",", ""))


@register
class Numeric(Scorer):
    """The last number in the answer is within `tolerance` of the expected number (absolute, or relative)."""

    name: ClassVar[str] = "numeric"
    tolerance: float = 1e-6
    relative: bool = False

    def evaluate(self, ctx: ScoreContext) -> Score:
        answer, expected = ctx.answer, ctx.expected
        got = parse_number(answer)
        want = float(expected)
        if got is None:
            return passed(False, f"no number in answer {answer!r}")
        allowed = self.tolerance * abs(want) if self.relative else self.tolerance
        ok = math.isclose(got, want, rel_tol=0.0, abs_tol=allowed + 1e-12)
        return passed(ok, f"{got:g} vs expected {want:g} (tolerance {allowed:g})")

    def check_expected(self, expected: Any) -> None:
        try:
            float(expected)
        except (TypeError, ValueError):
            raise ValueError(f"{expected!r} is not a number") from None


@register
class Contains(Scorer):
    """The answer contains the expected text, or every item of an expected list."""

    name: ClassVar[str] = "contains"
    case_sensitive: bool = False

    def evaluate(self, ctx: ScoreContext) -> Score:
        answer, expected = ctx.answer, ctx.expected
        wanted = [str(e) for e in expected] if isinstance(expected, list) else [str(expected)]
        hay = answer if self.case_sensitive else answer.lower()
        missing = [w for w in wanted if (w if self.case_sensitive else w.lower()) not in hay]
        return passed(not missing, f"missing {missing!r}" if missing else f"contains all of {wanted!r}")


@register
class Regex(Scorer):
    """The answer matches the expected regular expression (search, not full match)."""

    name: ClassVar[str] = "regex"
    ignore_case: bool = True

    def evaluate(self, ctx: ScoreContext) -> Score:
        answer, expected = ctx.answer, ctx.expected
        flags = re.IGNORECASE if self.ignore_case else 0
        ok = re.search(str(expected), answer, flags) is not None
        return passed(ok, f"pattern {expected!r} {'found' if ok else 'not found'}")

    def check_expected(self, expected: Any) -> None:
        try:
            re.compile(str(expected))
        except re.error as exc:
            raise ValueError(f"{str(expected)!r} is not a regular expression: {exc}") from None


def extract_json(text: str) -> Any:
    """The first JSON value in the text (a bare value, or the first {...}/[...] block), or raise ValueError."""
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text[index:])[0]
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value found")


@register
class JsonSubset(Scorer):
    """The answer holds JSON of which the expected value is a subset (extra keys in the answer are fine)."""

    name: ClassVar[str] = "json"

    def evaluate(self, ctx: ScoreContext) -> Score:
        answer, expected = ctx.answer, ctx.expected
        try:
            actual = extract_json(answer)
        except ValueError:
            return passed(False, f"answer is not JSON: {answer[:80]!r}")
        ok = is_subset(expected, actual)
        return passed(ok, "expected JSON is a subset of the answer" if ok else f"{actual!r} lacks {expected!r}")


@register
class State(Scorer):
    """A server's end state holds the expected records: `collection` filtered by `where` (equality) and
    `contains` (case-insensitive substrings), compared with `count` (default: at least one)."""

    name: ClassVar[str] = "state"
    server: str
    collection: str
    where: dict[str, Any] = {}
    contains: dict[str, str] = {}
    count: int | None = None

    def reads(self, expected: Any) -> frozenset[ScoreInput]:
        return frozenset({"state"})

    def evaluate(self, ctx: ScoreContext) -> Score:
        snapshot = ctx.end_state.get(self.server)
        if snapshot is None:
            return passed(False, f"no end state for server '{self.server}'")
        items = snapshot.get(self.collection)
        if not isinstance(items, list):
            return passed(False, f"server '{self.server}' has no collection '{self.collection}'")
        matching = [
            item for item in items
            if all(is_subset(v, item.get(k)) for k, v in self.where.items())
            and all(str(v).lower() in str(item.get(k, "")).lower() for k, v in self.contains.items())
        ]
        ok = len(matching) == self.count if self.count is not None else bool(matching)
        want = f"{self.count}" if self.count is not None else ">= 1"
        return passed(ok, f"{len(matching)} matching '{self.collection}' record(s), wanted {want}")
