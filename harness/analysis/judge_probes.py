"""Bias probes: how often a judge's verdict changes when nothing that matters does, each a flip rate over the
labelled answers with a bootstrap interval (harness.analysis.agreement).

- `filler`: the answer followed by a paragraph of polite filler that adds no fact (length and tone alone).
- `reorder`: a claims task's claims given in reverse order (the verdict per claim is mapped back; the pass is compared).
- `position`: the answer placed before the criteria instead of after them.
- `self`: self-preference, where the judge is the model that wrote some of the answers (an item's `source` equals
  the judge's model string): its false-pass rate (passing what people failed) on its own model's answers minus
  that on everyone else's; positive means it favours its own.

A probe compares two readable verdicts on the same item; an item whose probe reply was never readable is counted
apart (`unreadable`), not as a flip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

from harness.analysis.agreement import Estimate, bootstrap, rate_estimate
from harness.analysis.judge_check import Verdict, context, judge_verdict
from harness.analysis.labels import LabelledAnswer
from harness.tasks.judge_scorers import Claims
from harness.tasks.judging import JudgeFn

ProbeName = Literal["filler", "reorder", "position", "self"]
PROBES: tuple[ProbeName, ...] = get_args(ProbeName)
FILLER = ("\n\nTo give a complete picture, I reviewed the available records carefully, considered each relevant "
          "detail in turn, and double-checked everything before writing this answer. I hope this overview is clear "
          "and useful, and I am happy to go into more detail on any part of it.")
DESCRIPTIONS: dict[ProbeName, str] = {
    "filler": "answer padded with a paragraph of filler",
    "reorder": "claims given in reverse order",
    "position": "answer placed before the criteria",
    "self": "judge's false-pass rate on its own model's answers minus on others'",
}


@dataclass(frozen=True)
class ProbeResult:
    name: ProbeName
    n: int  # items compared (both verdicts readable)
    rate: Estimate  # the flip rate (for `self`: the difference of false-pass rates)
    to_pass: int = 0  # flips from fail to pass
    to_fail: int = 0
    unreadable: int = 0
    note: str = ""


def _flips(name: ProbeName, pairs: list[tuple[Verdict, Verdict]]) -> ProbeResult:
    kept = [(a.passed, b.passed) for a, b in pairs if a.passed is not None and b.passed is not None]
    flags = [a != b for a, b in kept]
    return ProbeResult(name, len(kept), rate_estimate(flags), to_pass=sum(not a and b for a, b in kept),
                       to_fail=sum(a and not b for a, b in kept), unreadable=len(pairs) - len(kept))


def probe(name: ProbeName, items: tuple[LabelledAnswer, ...], base: dict[str, Verdict], judge: JudgeFn,
          judge_model: str) -> ProbeResult:
    """One probe over the items, against the judge's verdicts as given (`base`, from judge_all)."""
    if name == "self":
        return self_preference(items, base, judge_model)
    pairs: list[tuple[Verdict, Verdict]] = []
    for item in items:
        scorer = item.scorer
        if name == "filler":
            changed = judge_verdict(scorer, context(item, judge, judge_model, answer=item.answer + FILLER))
        elif name == "position":
            moved = scorer.model_copy(update={"answer_position": "before" if scorer.answer_position == "after"
                                              else "after"})
            changed = judge_verdict(moved, context(item, judge, judge_model))
        else:  # reorder: claims tasks with two claims or more
            if not isinstance(scorer, Claims) or len(item.task.expected) < 2:
                continue
            changed = judge_verdict(scorer, context(item, judge, judge_model,
                                                    expected=list(reversed(item.task.expected))))
        pairs.append((base[item.id], changed))
    result = _flips(name, pairs)
    return result if pairs else ProbeResult(name, 0, result.rate, note="no item to probe")


def _false_pass_rate(pairs: list[tuple[bool, bool]]) -> float:
    """Of the answers people failed, the share the judge passed (nan when people failed none)."""
    failed = [judged for judged, human in pairs if not human]
    return sum(failed) / len(failed) if failed else math.nan


def self_preference(items: tuple[LabelledAnswer, ...], base: dict[str, Verdict], judge_model: str) -> ProbeResult:
    rows = [(item.source == judge_model, base[item.id].passed, item.human()) for item in items]
    rows = [(own, judged, human) for own, judged, human in rows if judged is not None and human is not None]
    own = sum(o for o, _, _ in rows)
    if not own or own == len(rows):
        return ProbeResult("self", len(rows), Estimate(math.nan, math.nan, math.nan, len(rows), 0),
                           note=f"needs answers written by {judge_model} and by others (items' `source`)")

    def difference(idx: list[int]) -> float:
        picked = [rows[i] for i in idx]
        return (_false_pass_rate([(j, h) for o, j, h in picked if o])
                - _false_pass_rate([(j, h) for o, j, h in picked if not o]))

    return ProbeResult("self", len(rows), bootstrap(difference, len(rows)),
                       note=f"{own} answers by {judge_model}, {len(rows) - own} by others")
