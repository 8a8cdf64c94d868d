"""Scorers registered by name: each compares an agent's answer (and the servers' end state) with the task.

A scorer is a small pydantic model whose fields are its YAML arguments (`extra="forbid"`, so a typo in a
suite file is an error) with one method, `score(answer, expected, end_state) -> Score`, and a check of the
task's expected value run when the suite loads (`check_expected`), so a pattern that cannot compile is one
line before any run, not a crash after the first.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import first_error
from harness.tasks.task import ScorerSpec

EndState = dict[str, dict[str, Any]]  # server name -> that server's end-state snapshot


@dataclass(frozen=True)
class Score:
    value: float
    passed: bool
    reason: str


class Scorer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: ClassVar[str]

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        raise NotImplementedError

    def check_expected(self, expected: Any) -> None:
        """Raise ValueError when `score` could never read `expected` (a regex that does not compile, ...)."""


SCORERS: dict[str, type[Scorer]] = {}


def register(cls: type[Scorer]) -> type[Scorer]:
    SCORERS[cls.name] = cls
    return cls


def build_scorer(spec: ScorerSpec) -> Scorer:
    """The scorer a spec names; ValueError (with 'scorer' in its text) when the name or arguments are wrong."""
    if spec.name not in SCORERS:
        raise ValueError(f"unknown scorer '{spec.name}' (known: {', '.join(sorted(SCORERS))})")
    try:
        return SCORERS[spec.name](**spec.kwargs)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise ValueError(f"scorer '{spec.name}' argument '{loc}': {msg}") from None


class ExpectedValueError(ValueError):
    """A task's expected value that its scorer cannot read."""


def check_scorer(spec: ScorerSpec, expected: Any) -> None:
    """The spec builds (ValueError naming the 'scorer') and its scorer can read `expected` (ValueError
    naming 'expected' otherwise): everything a scorer compiles or parses, checked before any run."""
    scorer = build_scorer(spec)
    try:
        scorer.check_expected(expected)
    except ValueError as exc:
        raise ExpectedValueError(f"scorer '{spec.name}': {exc}") from None


def _passed(ok: bool, reason: str) -> Score:
    return Score(1.0 if ok else 0.0, ok, reason)


def _normalize(text: str, case_sensitive: bool) -> str:
    text = " ".join(str(text).strip().split()).strip(" .\"'`")
    return text if case_sensitive else text.lower()


@register
class Exact(Scorer):
    """The answer equals the expected text (whitespace, surrounding quotes and a final period ignored)."""

    name: ClassVar[str] = "exact"
    case_sensitive: bool = False

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        ok = _normalize(answer, self.case_sensitive) == _normalize(str(expected), self.case_sensitive)
        return _passed(ok, f"answer {answer!r} {'equals' if ok else 'differs from'} expected {expected!r}")


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

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        got = parse_number(answer)
        want = float(expected)
        if got is None:
            return _passed(False, f"no number in answer {answer!r}")
        allowed = self.tolerance * abs(want) if self.relative else self.tolerance
        ok = math.isclose(got, want, rel_tol=0.0, abs_tol=allowed + 1e-12)
        return _passed(ok, f"{got:g} vs expected {want:g} (tolerance {allowed:g})")

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

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        wanted = [str(e) for e in expected] if isinstance(expected, list) else [str(expected)]
        hay = answer if self.case_sensitive else answer.lower()
        missing = [w for w in wanted if (w if self.case_sensitive else w.lower()) not in hay]
        return _passed(not missing, f"missing {missing!r}" if missing else f"contains all of {wanted!r}")


@register
class Regex(Scorer):
    """The answer matches the expected regular expression (search, not full match)."""

    name: ClassVar[str] = "regex"
    ignore_case: bool = True

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        flags = re.IGNORECASE if self.ignore_case else 0
        ok = re.search(str(expected), answer, flags) is not None
        return _passed(ok, f"pattern {expected!r} {'found' if ok else 'not found'}")

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


def is_subset(expected: Any, actual: Any) -> bool:
    """Expected dict keys must match recursively; lists match element-wise in order; numbers by value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            is_subset(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().lower() == actual.strip().lower()
    return expected == actual


@register
class JsonSubset(Scorer):
    """The answer holds JSON of which the expected value is a subset (extra keys in the answer are fine)."""

    name: ClassVar[str] = "json"

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        try:
            actual = extract_json(answer)
        except ValueError:
            return _passed(False, f"answer is not JSON: {answer[:80]!r}")
        ok = is_subset(expected, actual)
        return _passed(ok, "expected JSON is a subset of the answer" if ok else f"{actual!r} lacks {expected!r}")


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

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        snapshot = end_state.get(self.server)
        if snapshot is None:
            return _passed(False, f"no end state for server '{self.server}'")
        items = snapshot.get(self.collection)
        if not isinstance(items, list):
            return _passed(False, f"server '{self.server}' has no collection '{self.collection}'")
        matching = [
            item for item in items
            if all(is_subset(v, item.get(k)) for k, v in self.where.items())
            and all(str(v).lower() in str(item.get(k, "")).lower() for k, v in self.contains.items())
        ]
        ok = len(matching) == self.count if self.count is not None else bool(matching)
        want = f"{self.count}" if self.count is not None else ">= 1"
        return _passed(ok, f"{len(matching)} matching '{self.collection}' record(s), wanted {want}")


@register
class AllOf(Scorer):
    """Every listed scorer passes (e.g. a numeric answer and a state check); score is the mean."""

    name: ClassVar[str] = "all"
    scorers: list[str | dict[str, dict[str, Any]]]

    def _parts(self) -> list[Scorer]:
        parts = []
        for entry in self.scorers:
            if isinstance(entry, str):
                parts.append(build_scorer(ScorerSpec(entry)))
            else:
                (name, args), = entry.items()
                parts.append(build_scorer(ScorerSpec(name, tuple(sorted((args or {}).items())))))
        return parts

    def model_post_init(self, __context: Any) -> None:
        self._parts()  # validate nested scorers at load time

    def score(self, answer: str, expected: Any, end_state: EndState) -> Score:
        results = [part.score(answer, expected, end_state) for part in self._parts()]
        return Score(sum(r.value for r in results) / len(results), all(r.passed for r in results),
                     "; ".join(r.reason for r in results))

    def check_expected(self, expected: Any) -> None:
        for part in self._parts():
            part.check_expected(expected)
