"""How far a judge's verdicts agree with people's, and people's with each other: raw agreement, Cohen's kappa (two
labellers), Krippendorff's alpha (any number, missing labels allowed; nominal), the confusion matrix, and seeded
percentile-bootstrap intervals that resample items. Verdicts are pass/fail (True/False).

Kappa and alpha correct raw agreement for what chance alone would give: a judge that passes everything agrees with
people on every answer they passed, and its kappa is 0. Where a resample has a single class (chance agreement 1),
kappa is undefined and that resample is left out of the interval; the count kept is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
SEED = 0


def percent_agreement(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Share of items where the two verdicts are the same (nan for no items)."""
    if not a:
        return math.nan
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two labellers over the same items: (po - pe) / (1 - pe), pe from each one's pass rate;
    nan where pe is 1 (both gave one and the same class throughout: agreement by chance alone)."""
    n = len(a)
    if n == 0:
        return math.nan
    po = percent_agreement(a, b)
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if pe >= 1 else (po - pe) / (1 - pe)


def krippendorff_alpha(units: Sequence[Sequence[bool | None]]) -> float:
    """Krippendorff's alpha (nominal) over units (items), each a list of labellers' verdicts, None where a labeller
    gave none; units with fewer than two verdicts carry no pairs and are skipped. alpha = 1 - Do/De from the
    coincidence matrix; nan when all pairable values are one class."""
    coincidence: dict[tuple[bool, bool], float] = {}
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[(c, k)] = coincidence.get((c, k), 0.0) + 1 / (m - 1)
    n = sum(coincidence.values())
    totals = {c: sum(v for (x, _), v in coincidence.items() if x == c) for c in (True, False)}
    disagree = coincidence.get((True, False), 0.0) + coincidence.get((False, True), 0.0)
    expected = 2 * totals[True] * totals[False]
    if n == 0 or expected == 0:
        return math.nan
    return 1 - (n - 1) * disagree / expected


@dataclass(frozen=True)
class Confusion:
    """Judge verdicts against human ones: judge pass & human pass, judge pass & human fail (a false pass), ..."""

    both_pass: int
    false_pass: int
    false_fail: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.false_pass + self.false_fail + self.both_fail


def confusion(judge: Sequence[bool], human: Sequence[bool]) -> Confusion:
    pairs = list(zip(judge, human, strict=True))
    return Confusion(pairs.count((True, True)), pairs.count((True, False)), pairs.count((False, True)),
                     pairs.count((False, False)))


@dataclass(frozen=True)
class Estimate:
    """A statistic with its 95% percentile-bootstrap interval (over `kept` of the resamples: the rest undefined)."""

    value: float
    low: float
    high: float
    n: int
    kept: int = BOOTSTRAP_RESAMPLES

    def text(self, percent: bool = False) -> str:
        if math.isnan(self.value):
            return "undefined"
        fmt = (lambda v: f"{v:.0%}") if percent else (lambda v: f"{v:.2f}")
        interval = f" [{fmt(self.low)}, {fmt(self.high)}]" if not math.isnan(self.low) else ""
        return f"{fmt(self.value)}{interval}"


def bootstrap(statistic: Callable[[list[int]], float], n: int, resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = SEED) -> Estimate:
    """`statistic` over all n items (given their indexes), and its 2.5-97.5 percentile interval over resamples
    of the items with replacement (seeded: the same data gives the same interval); undefined resamples are left
    out."""
    value = statistic(list(range(n))) if n else math.nan
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    rng = np.random.default_rng(seed)
    draws = [statistic(list(rng.integers(0, n, n))) for _ in range(resamples)]
    kept = [d for d in draws if not math.isnan(d)]
    if not kept:
        return Estimate(value, math.nan, math.nan, n, 0)
    low, high = np.percentile(kept, [2.5, 97.5])
    return Estimate(value, float(low), float(high), n, len(kept))


def agreement_estimate(a: Sequence[bool], b: Sequence[bool], **kw) -> Estimate:
    return bootstrap(lambda idx: percent_agreement([a[i] for i in idx], [b[i] for i in idx]), len(a), **kw)


def kappa_estimate(a: Sequence[bool], b: Sequence[bool], **kw) -> Estimate:
    return bootstrap(lambda idx: cohen_kappa([a[i] for i in idx], [b[i] for i in idx]), len(a), **kw)


def alpha_estimate(units: Sequence[Sequence[bool | None]], **kw) -> Estimate:
    return bootstrap(lambda idx: krippendorff_alpha([units[i] for i in idx]), len(units), **kw)


def rate_estimate(flags: Sequence[bool], **kw) -> Estimate:
    """A share of items (a flip rate) with its bootstrap interval."""
    return bootstrap(lambda idx: sum(flags[i] for i in idx) / len(idx), len(flags), **kw)
