"""A judge checked against people (`harness judge-check`): its verdict on every labelled answer, compared with the
labellers' (agreement, Cohen's kappa, Krippendorff's alpha, the confusion matrix, agreement per category and per
claim, each with a bootstrap interval), the labellers' agreement among themselves, and the bias probes
(harness.analysis.judge_probes). A reply the judge never made readable is counted, and left out of the numbers."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import combinations

from harness.analysis.agreement import (
    Confusion,
    Estimate,
    agreement_estimate,
    alpha_estimate,
    confusion,
    kappa_estimate,
)
from harness.analysis.labels import LabelFile, LabelledAnswer
from harness.tasks.judge_scorers import Claims
from harness.tasks.judging import JudgeError, JudgeFn
from harness.tasks.scorers import ScoreContext, Scorer

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one labelled answer (None: no readable verdict), and per claim where it has claims."""

    passed: bool | None
    claims: tuple[bool, ...] = ()
    error: str = ""


def context(item: LabelledAnswer, judge: JudgeFn, judge_model: str, answer: str | None = None,
            expected: object = None) -> ScoreContext:
    return ScoreContext(answer=item.answer if answer is None else answer,
                        expected=item.task.expected if expected is None else expected, tool_calls=item.tool_calls,
                        judge=judge, judge_model=judge_model, question=item.task.prompt)


def judge_verdict(scorer: Scorer, ctx: ScoreContext) -> Verdict:
    """The scorer's verdict through the judge; per claim too for a claims scorer (one judge call either way)."""
    try:
        if isinstance(scorer, Claims):
            covered, _ = scorer.covered(ctx)
            return Verdict(sum(covered) / len(covered) >= scorer.threshold, covered)
        return Verdict(scorer.evaluate(ctx).passed)
    except JudgeError as exc:
        return Verdict(None, error=str(exc))


@dataclass(frozen=True)
class Agreement:
    """Two sets of verdicts compared: agreement, kappa, the confusion matrix (first = the judge's)."""

    n: int
    agreement: Estimate
    kappa: Estimate
    matrix: Confusion

    @staticmethod
    def of(judge: list[bool], human: list[bool]) -> Agreement:
        return Agreement(len(judge), agreement_estimate(judge, human), kappa_estimate(judge, human),
                         confusion(judge, human))


@dataclass(frozen=True)
class JudgeCheck:
    judge_model: str
    labels: str
    items: int
    unreadable: int
    ties: int
    overall: Agreement | None
    by_category: dict[str, Agreement]
    by_labeller: dict[str, Agreement]
    claims: Agreement | None  # per claim, over the items labelled per claim
    humans: dict[str, Agreement]  # "a~b" -> the two labellers' agreement, over the items both labelled
    alpha_humans: Estimate | None  # Krippendorff's alpha among the labellers (several of them)
    alpha_with_judge: Estimate | None  # ... and with the judge as one more labeller
    verdicts: dict[str, Verdict] = field(default_factory=dict, repr=False)


def judge_all(labels: LabelFile, judge: JudgeFn, judge_model: str,
              progress: Progress | None = None) -> dict[str, Verdict]:
    verdicts = {}
    for n, item in enumerate(labels.items, 1):
        verdicts[item.id] = judge_verdict(item.scorer, context(item, judge, judge_model))
        if progress:
            progress(f"judged {n}/{len(labels.items)}")
    return verdicts


def _paired(pairs: list[tuple[bool | None, bool | None]]) -> Agreement | None:
    kept = [(a, b) for a, b in pairs if a is not None and b is not None]
    return Agreement.of([a for a, _ in kept], [b for _, b in kept]) if kept else None


def check_judge(labels: LabelFile, verdicts: dict[str, Verdict], judge_model: str) -> JudgeCheck:
    """Every comparison the labels allow, from the judge's verdicts (judge_all)."""
    items = labels.items
    overall = _paired([(verdicts[i.id].passed, i.human()) for i in items])
    categories = dict.fromkeys(i.task.category for i in items)
    by_category = {c: a for c in categories
                   if (a := _paired([(verdicts[i.id].passed, i.human()) for i in items if i.task.category == c]))}
    by_labeller = {name: a for name in labels.labellers
                   if (a := _paired([(verdicts[i.id].passed, i.labels.get(name)) for i in items]))}
    claim_pairs = [(j, h) for i in items if verdicts[i.id].claims
                   for name in i.claims for j, h in zip(verdicts[i.id].claims, i.claims[name], strict=True)]
    humans = {f"{a}~{b}": pair for a, b in combinations(labels.labellers, 2)
              if (pair := _paired([(i.labels.get(a), i.labels.get(b)) for i in items]))}
    several = len(labels.labellers) > 1
    units = [[i.labels.get(name) for name in labels.labellers] for i in items]
    return JudgeCheck(
        judge_model=judge_model, labels=str(labels.path), items=len(items),
        unreadable=sum(v.passed is None for v in verdicts.values()), ties=sum(i.human() is None for i in items),
        overall=overall, by_category=by_category, by_labeller=by_labeller if several else {},
        claims=_paired(claim_pairs) if claim_pairs else None, humans=humans,
        alpha_humans=alpha_estimate(units) if several else None,
        alpha_with_judge=alpha_estimate([u + [verdicts[i.id].passed] for u, i in zip(units, items, strict=True)])
        if several else None,
        verdicts=verdicts)


def subset(labels: LabelFile, limit: int | None) -> LabelFile:
    """At most `limit` items, taken in turn from each task, and within a task in turn from each source (hand:good,
    hand:partial, hand:wrong, a model's answers, in file order within a source), each task starting one source
    further than the task before: a small measurement still spans the tasks and the kinds of answer. (In file order
    alone, a file that lists each task's good answers first gave a subset of good answers, on which a judge's
    agreement says little and kappa nothing.)"""
    if not limit or limit >= len(labels.items):
        return labels
    queues: dict[str, list[LabelledAnswer]] = {}
    for item in labels.items:
        queues.setdefault(item.task.id, []).append(item)
    queues = {task: _by_source_in_turn(items, n) for n, (task, items) in enumerate(queues.items())}
    taken: list[LabelledAnswer] = []
    while len(taken) < limit:
        for queue in queues.values():
            if queue and len(taken) < limit:
                taken.append(queue.pop(0))
    return replace(labels, items=tuple(taken))


def _by_source_in_turn(items: list[LabelledAnswer], start: int) -> list[LabelledAnswer]:
    by_source: dict[str, list[LabelledAnswer]] = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item)
    queues = list(by_source.values())
    queues = queues[start % len(queues):] + queues[:start % len(queues)]
    ordered: list[LabelledAnswer] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def estimate_json(e: Estimate | None) -> dict | None:
    """An estimate as plain values (undefined ones as null)."""
    return None if e is None else {"value": _num(e.value), "low": _num(e.low), "high": _num(e.high), "n": e.n}


def as_json(check: JudgeCheck) -> dict:
    """The check as plain values (what `judge-check --save` writes and a report reads)."""
    estimate = estimate_json

    def agreement(a: Agreement | None):
        if a is None:
            return None
        m = a.matrix
        return {"n": a.n, "agreement": estimate(a.agreement), "kappa": estimate(a.kappa),
                "confusion": {"both_pass": m.both_pass, "false_pass": m.false_pass, "false_fail": m.false_fail,
                              "both_fail": m.both_fail}}

    return {"judge_model": check.judge_model, "labels": check.labels, "items": check.items,
            "unreadable": check.unreadable, "ties": check.ties, "overall": agreement(check.overall),
            "by_category": {k: agreement(v) for k, v in check.by_category.items()},
            "by_labeller": {k: agreement(v) for k, v in check.by_labeller.items()},
            "claims": agreement(check.claims), "humans": {k: agreement(v) for k, v in check.humans.items()},
            "alpha_humans": estimate(check.alpha_humans), "alpha_with_judge": estimate(check.alpha_with_judge)}


def _num(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)
