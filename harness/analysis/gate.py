"""`harness gate`: fail a CI build when success rates fall below thresholds or regress against a baseline.

Exit 0 when every check holds, 1 when one fails, 2 on usage errors. A threshold `ARM=RATE` applies to every
model and program of that arm in the results (a pooled rate could hide one bad model), to the rate itself or to its
lower confidence bound (`lower-bound`: a Wilson bound over the runs' effective number, runs / design effect, since
the epochs of one task are not independent). A baseline comparison pairs runs on (task, arm, epoch), and on the
model too when the baseline has every model of the results. Under the default rule (`significant-drop`) it fails
when the drop is larger than the allowance AND significant at alpha under the paired sign-flip test clustered by
task (one-sided: only a drop fails a gate; harness.analysis.noise), so an unchanged agent fails it at most alpha of
the time; `measured-drop` keeps the older rule (the measured drop alone). Each comparison states the smallest drop
its tasks and epochs can detect at the stated power, says when that is larger than the allowance (the gate cannot
see a drop it allows), and fails then only under `require_detectable`. Tasks whose definition changed since the baseline
(a different task_hash) are left out of the pairing and named. Runs paired across different scaffolds (a
different scaffold_hash: other rules shaped the agent) are refused unless the caller allows it, and then named in
a skipped check. Each check is one JUnit test case.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Literal
from xml.etree import ElementTree

import pandas as pd

from harness.agents.arms import DEFAULT_ARMS, arm_rank
from harness.analysis.stats import (
    Rate,
    changed_tasks,
    group_labels,
    pair_runs,
    wilson,
)
from harness.analysis.noise import POWER, clustered_success_test, clustering, tasks_needed, wilson_bounds
from harness.errors import UserError

EXAMPLE_THRESHOLD = f"{DEFAULT_ARMS[-1]}=0.7"
RegressionRule = Literal["significant-drop", "measured-drop"]
SuccessBound = Literal["estimate", "lower-bound"]
REGRESSION_RULES: tuple[RegressionRule, ...] = ("significant-drop", "measured-drop")
SUCCESS_BOUNDS: tuple[SuccessBound, ...] = ("estimate", "lower-bound")


@dataclass(frozen=True)
class GateRule:
    """How the gate decides: the allowed drop, the test's alpha and the power its detectable drop is stated at, the
    regression rule, whether an allowance the suite cannot detect fails, and what --min-success holds against."""

    max_drop: float = 0.05
    alpha: float = 0.05
    power: float = POWER
    rule: RegressionRule = "significant-drop"
    require_detectable: bool = False
    success_bound: SuccessBound = "estimate"


@dataclass(frozen=True)
class Threshold:
    arm: str
    minimum: float


@dataclass(frozen=True)
class Check:
    """One gate condition: `measured` and `limit` are short cells for the printed table; `message` is the line."""

    name: str
    measured: str
    limit: str
    passed: bool
    message: str
    skipped: bool = False
    note: str = ""  # a caveat shown beside the result (e.g. "underpowered")
    properties: tuple[tuple[str, str], ...] = ()  # JUnit <property> name/value pairs


def parse_threshold(expression: str) -> Threshold:
    """'ARM=0.7' -> Threshold('ARM', 0.7); anything else is a UserError naming the expression."""
    arm, sep, value = expression.partition("=")
    if not sep or not arm.strip():
        raise UserError(f"bad --min-success '{expression}': expected ARM=RATE, e.g. {EXAMPLE_THRESHOLD}")
    try:
        rate = float(value)
    except ValueError:
        raise UserError(f"bad --min-success '{expression}': '{value}' is not a number (use a rate such as 0.7)") from None
    if not 0.0 <= rate <= 1.0:
        raise UserError(f"bad --min-success '{expression}': the rate must be between 0 and 1")
    return Threshold(arm.strip(), rate)


def _rate(part: pd.DataFrame) -> Rate:
    return wilson(int(part["success"].sum()), len(part))


def _interval(rate: Rate) -> str:
    return f"{rate.value:.1%} [{rate.low:.1%}, {rate.high:.1%}]"


def _task_counts(part: pd.DataFrame) -> list[tuple[int, int]]:
    grouped = part.groupby(["suite", "task_id"])["success"].agg(["size", "sum"])
    return [(int(n), int(c)) for n, c in zip(grouped["size"], grouped["sum"])]


def _lower_bound(part: pd.DataFrame, alpha: float) -> tuple[float, float]:
    """The one-sided lower confidence bound (level 1 - alpha) of the success rate, over the runs' effective number
    (runs / design effect), and that design effect."""
    effect = clustering(_task_counts(part)).design_effect
    z = NormalDist().inv_cdf(1 - alpha)
    return wilson_bounds(float(part["success"].mean()), len(part) / effect, z)[0], effect


def threshold_checks(frame: pd.DataFrame, thresholds: list[Threshold], rule: GateRule = GateRule()) -> list[Check]:
    """One check per threshold and group of its arm (arm, or arm x model x program when several); under
    `lower-bound` the rate's lower confidence bound must meet the threshold."""
    arms = sorted(frame["arm"].unique(), key=lambda a: (arm_rank(a), a))
    labels = group_labels(frame)
    checks = []
    for threshold in thresholds:
        if threshold.arm not in arms:
            raise UserError(f"--min-success names arm '{threshold.arm}', which is not in the results "
                            f"(arms: {', '.join(arms)})")
        part = frame[frame["arm"] == threshold.arm]
        for label in sorted(labels[part.index].unique()):
            runs = part[labels[part.index] == label]
            rate = _rate(runs)
            held, bound = rate.value, ""
            if rule.success_bound == "lower-bound":
                held, effect = _lower_bound(runs, rule.alpha)
                bound = (f" (its lower {1 - rule.alpha:.0%} confidence bound {held:.1%}, over {rate.n} runs / design "
                         f"effect {effect:.2f})")
            passed = held >= threshold.minimum - 1e-12
            verdict = "meets" if passed else "is below"
            checks.append(Check(
                f"{label} success >= {threshold.minimum:.0%}", _interval(rate), f">= {threshold.minimum:.0%}", passed,
                f"{label}: success {_interval(rate)} over {rate.n} runs{bound} {verdict} the threshold "
                f"{threshold.minimum:.0%}"))
    return checks


def scaffold_changes(now: pd.DataFrame, then: pd.DataFrame) -> list[str]:
    """'guided 1a2b.. vs plain 3c4d..' for each pair of different scaffolds among paired runs (rows written before
    scaffolds were recorded have no hash and are trusted)."""
    known = (now["scaffold_hash"].to_numpy() != "") & (then["scaffold_hash"].to_numpy() != "")
    differ = known & (now["scaffold_hash"].to_numpy() != then["scaffold_hash"].to_numpy())
    pairs = {(f"{a} {ha}", f"{b} {hb}") for a, ha, b, hb in zip(now["scaffold"][differ], now["scaffold_hash"][differ],
                                                                then["scaffold"][differ], then["scaffold_hash"][differ])}
    return [f"{current} vs baseline {before}" for current, before in sorted(pairs)]


def baseline_checks(frame: pd.DataFrame, baseline: pd.DataFrame, max_drop: float,
                    allow_scaffold_change: bool = False, rule: GateRule | None = None) -> list[Check]:
    """Per arm (and model when paired on it): success now vs the baseline on the paired runs, which must have run
    under the same scaffold unless `allow_scaffold_change`, judged by `rule` (its max_drop is `max_drop`)."""
    rule = GateRule(max_drop=max_drop) if rule is None else rule
    keys = ["task_id", "arm", "epoch"]
    if set(frame["model"]) <= set(baseline["model"]):
        keys.append("model")
    checks = []
    changed = changed_tasks(frame, baseline)
    if changed:
        frame, baseline = frame[~frame["task_id"].isin(changed)], baseline[~baseline["task_id"].isin(changed)]
        checks.append(Check("tasks changed since the baseline", f"{len(changed)} task(s)", "left out", True,
                            f"{len(changed)} task(s) changed since the baseline (different task_hash), left out of "
                            f"the comparison: {', '.join(changed)}", skipped=True))
    now, then = pair_runs(frame, baseline, keys)
    if now.empty:
        edited = f" once the {len(changed)} changed task(s) are left out" if changed else ""
        raise UserError(f"the baseline shares no runs with the results{edited} (paired on {', '.join(keys)}): "
                        f"is it a run of the same suite and arms?")
    changes = scaffold_changes(now, then)
    if changes and not allow_scaffold_change:
        raise UserError(f"the results and the baseline ran under different scaffolds ({'; '.join(changes)}): "
                        "compare runs of one scaffold, or pass --allow-scaffold-change")
    if changes:
        checks.append(Check("scaffold changed since the baseline", f"{len(changes)} change(s)", "allowed", True,
                            f"scaffold changed since the baseline (allowed): {'; '.join(changes)}", skipped=True))
    per_model = "model" in keys and now["model"].nunique() > 1
    for arm in sorted(frame["arm"].unique(), key=lambda a: (arm_rank(a), a)):
        if arm not in set(now["arm"]):
            checks.append(Check(f"{arm} vs baseline", "no paired runs", f"drop <= {max_drop:.0%}", True,
                                f"{arm}: no runs paired with the baseline (skipped)", skipped=True))
            continue
        for model in sorted(now.loc[now["arm"] == arm, "model"].unique()) if per_model else [None]:
            mask = (now["arm"] == arm) & ((now["model"] == model) if model is not None else True)
            label = f"{arm} · {model}" if model is not None else arm
            checks.append(_drop_check(label, now[mask], then[mask], rule))
    return checks


def _drop_check(label: str, current: pd.DataFrame, before: pd.DataFrame, rule: GateRule) -> Check:
    rate_now, rate_then = _rate(current), _rate(before)
    drop = rate_then.value - rate_now.value
    test = clustered_success_test(list(current["task_id"]), list(before["success"]), list(current["success"]))
    detectable = test.mdd(rule.alpha, rule.power, "drop")
    significant = test.p_drop < rule.alpha
    beyond = drop > rule.max_drop + 1e-12  # a drop equal to the allowance holds despite float rounding
    underpowered = not detectable <= rule.max_drop + 1e-12
    failed = beyond and (significant or rule.rule == "measured-drop")
    failed = failed or (underpowered and rule.require_detectable)
    p_text = "p < 0.001" if test.p_drop < 0.001 else f"p = {test.p_drop:.3f}"
    epochs = test.runs / test.tasks
    verdict = ("fails" if failed else "holds") + f" under {rule.rule}"
    needed = tasks_needed(rule.alpha, "drop")
    sees = (f"over {test.tasks} tasks no drop can be significant at alpha {rule.alpha:g} ({needed} tasks needed), so "
            f"it cannot detect the allowed {rule.max_drop * 100:.1f}" + (" (--require-detectable)" if
                                                                        rule.require_detectable else "")
            ) if test.tasks < needed else (f"this suite detects a drop of {detectable * 100:.1f} points ({rule.power:.0%} power, alpha "
            f"{rule.alpha:g}), so it cannot detect the allowed {rule.max_drop * 100:.1f}"
            + (" (--require-detectable)" if rule.require_detectable else "")) if underpowered else (
        f"this suite detects a drop of {detectable * 100:.1f} points ({rule.power:.0%} power, alpha {rule.alpha:g})")
    return Check(
        f"{label} drop vs baseline <= {rule.max_drop:.0%}", f"{_interval(rate_now)} vs {rate_then.value:.1%}",
        f"drop <= {rule.max_drop:.0%}", not failed,
        f"{label}: success {_interval(rate_now)} vs baseline {_interval(rate_then)} on {len(current)} paired "
        f"runs ({test.tasks} tasks x {epochs:g} epoch(s)): drop {drop * 100:+.1f} points, allowed "
        f"{rule.max_drop * 100:.1f}; paired sign-flip test over tasks (one-sided) {p_text}, "
        f"{'significant' if significant else 'not significant'} at alpha {rule.alpha:g}: {verdict}; {sees}",
        note="underpowered" if underpowered else "",
        properties=(("drop", f"{drop:.4f}"), ("p_drop", f"{test.p_drop:.4g}"), ("alpha", f"{rule.alpha:g}"),
                    ("minimum_detectable_drop", f"{detectable:.4f}"), ("power", f"{rule.power:g}"),
                    ("underpowered", str(underpowered).lower()), ("rule", rule.rule)))


def junit_xml(checks: list[Check]) -> ElementTree.ElementTree:
    """JUnit XML: one <testcase> per check; failed checks carry a <failure>, skipped ones <skipped>."""
    counts = {"tests": str(len(checks)), "failures": str(sum(not c.passed for c in checks)), "errors": "0",
              "skipped": str(sum(c.skipped for c in checks))}
    suites = ElementTree.Element("testsuites", name="harness gate", **counts)
    suite = ElementTree.SubElement(suites, "testsuite", name="harness.analysis.gate", **counts)
    for check in checks:
        case = ElementTree.SubElement(suite, "testcase", classname="harness.analysis.gate", name=check.name)
        if check.properties:
            properties = ElementTree.SubElement(case, "properties")
            for name, value in check.properties:
                ElementTree.SubElement(properties, "property", name=name, value=value)
        if check.skipped:
            ElementTree.SubElement(case, "skipped", message=check.message)
        elif not check.passed:
            ElementTree.SubElement(case, "failure", message=check.message, type="threshold").text = check.message
        else:
            ElementTree.SubElement(case, "system-out").text = check.message
    return ElementTree.ElementTree(suites)


def write_junit(checks: list[Check], path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        junit_xml(checks).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise UserError(f"cannot write --junit {path}: {exc.strerror}") from None


def run_gate(frame: pd.DataFrame, thresholds: list[str], baseline: pd.DataFrame | None, max_drop: float,
             junit: Path | None, allow_scaffold_change: bool = False, *, alpha: float = 0.05, power: float = POWER,
             rule: RegressionRule = "significant-drop", require_detectable: bool = False,
             success_bound: SuccessBound = "estimate") -> list[Check]:
    """Every check, in order (thresholds, then the baseline); writes JUnit XML when asked."""
    if not thresholds and baseline is None:
        raise UserError("nothing to check: give --min-success ARM=RATE and/or --baseline OLD.parquet")
    if not 0.0 <= max_drop <= 1.0:
        raise UserError(f"--max-drop {max_drop} must be between 0 and 1 (0.05 allows a 5-point drop)")
    if not 0.0 < alpha < 0.5:
        raise UserError(f"--alpha {alpha} must be between 0 and 0.5 (0.05: an unchanged agent fails 5% of gates)")
    if not 0.5 <= power < 1.0:
        raise UserError(f"--power {power} must be at least 0.5 and below 1 (0.8 is usual)")
    if rule not in REGRESSION_RULES:
        raise UserError(f"--rule {rule}: expected one of {', '.join(REGRESSION_RULES)}")
    if success_bound not in SUCCESS_BOUNDS:
        raise UserError(f"--min-success-bound {success_bound}: expected one of {', '.join(SUCCESS_BOUNDS)}")
    gate_rule = GateRule(max_drop, alpha, power, rule, require_detectable, success_bound)
    parsed = [parse_threshold(t) for t in thresholds]
    if frame.empty:
        raise UserError("the results hold no runs: nothing to gate")
    checks = threshold_checks(frame, parsed, gate_rule)
    if baseline is not None:
        checks += baseline_checks(frame, baseline, max_drop, allow_scaffold_change, gate_rule)
    if junit is not None:
        write_junit(checks, junit)
    return checks
