"""`harness gate`: fail a CI build when success rates fall below thresholds or regress against a baseline.

Exit 0 when every check holds, 1 when one fails, 2 on usage errors. A threshold `ARM=RATE` applies to every
model and program of that arm in the results (a pooled rate could hide one bad model). A baseline comparison
pairs runs on (task, arm, epoch), and on the model too when the baseline has every model of the results,
and says whether a drop is significant (exact McNemar). Tasks whose definition changed since the baseline
(a different task_hash) are left out of the pairing and named. Runs paired across different scaffolds (a
different scaffold_hash: other rules shaped the agent) are refused unless the caller allows it, and then named in
a skipped check. Each check is one JUnit test case.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd

from harness.agents.arms import DEFAULT_ARMS, arm_rank
from harness.analysis.stats import (
    Rate,
    changed_tasks,
    group_labels,
    mcnemar_exact,
    pair_runs,
    wilson,
)
from harness.errors import UserError

EXAMPLE_THRESHOLD = f"{DEFAULT_ARMS[-1]}=0.7"


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


def threshold_checks(frame: pd.DataFrame, thresholds: list[Threshold]) -> list[Check]:
    """One check per threshold and group of its arm (arm, or arm x model x program when several)."""
    arms = sorted(frame["arm"].unique(), key=lambda a: (arm_rank(a), a))
    labels = group_labels(frame)
    checks = []
    for threshold in thresholds:
        if threshold.arm not in arms:
            raise UserError(f"--min-success names arm '{threshold.arm}', which is not in the results "
                            f"(arms: {', '.join(arms)})")
        part = frame[frame["arm"] == threshold.arm]
        for label in sorted(labels[part.index].unique()):
            rate = _rate(part[labels[part.index] == label])
            passed = rate.value >= threshold.minimum
            verdict = "meets" if passed else "is below"
            checks.append(Check(
                f"{label} success >= {threshold.minimum:.0%}", _interval(rate), f">= {threshold.minimum:.0%}", passed,
                f"{label}: success {_interval(rate)} over {rate.n} runs {verdict} the threshold "
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
                    allow_scaffold_change: bool = False) -> list[Check]:
    """Per arm (and model when paired on it): success now vs the baseline on the paired runs, which must have run
    under the same scaffold unless `allow_scaffold_change`."""
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
            checks.append(_drop_check(label, now[mask], then[mask], max_drop))
    return checks


def _drop_check(label: str, current: pd.DataFrame, before: pd.DataFrame, max_drop: float) -> Check:
    rate_now, rate_then = _rate(current), _rate(before)
    drop = rate_then.value - rate_now.value
    test = mcnemar_exact(list(before["success"]), list(current["success"]))
    passed = drop <= max_drop + 1e-12  # a drop equal to the allowance holds despite float rounding
    significance = f"exact McNemar {test.p_text}, {'significant' if test.significant else 'not significant'}"
    return Check(
        f"{label} drop vs baseline <= {max_drop:.0%}", f"{_interval(rate_now)} vs {rate_then.value:.1%}",
        f"drop <= {max_drop:.0%}", passed,
        f"{label}: success {_interval(rate_now)} vs baseline {_interval(rate_then)} on {len(current)} paired "
        f"runs: drop {drop * 100:+.1f} points, allowed {max_drop * 100:.1f} ({significance})")


def junit_xml(checks: list[Check]) -> ElementTree.ElementTree:
    """JUnit XML: one <testcase> per check; failed checks carry a <failure>, skipped ones <skipped>."""
    counts = {"tests": str(len(checks)), "failures": str(sum(not c.passed for c in checks)), "errors": "0",
              "skipped": str(sum(c.skipped for c in checks))}
    suites = ElementTree.Element("testsuites", name="harness gate", **counts)
    suite = ElementTree.SubElement(suites, "testsuite", name="harness.analysis.gate", **counts)
    for check in checks:
        case = ElementTree.SubElement(suite, "testcase", classname="harness.analysis.gate", name=check.name)
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
             junit: Path | None, allow_scaffold_change: bool = False) -> list[Check]:
    """Every check, in order (thresholds, then the baseline); writes JUnit XML when asked."""
    if not thresholds and baseline is None:
        raise UserError("nothing to check: give --min-success ARM=RATE and/or --baseline OLD.parquet")
    if not 0.0 <= max_drop <= 1.0:
        raise UserError(f"--max-drop {max_drop} must be between 0 and 1 (0.05 allows a 5-point drop)")
    parsed = [parse_threshold(t) for t in thresholds]
    if frame.empty:
        raise UserError("the results hold no runs: nothing to gate")
    checks = threshold_checks(frame, parsed)
    if baseline is not None:
        checks += baseline_checks(frame, baseline, max_drop, allow_scaffold_change)
    if junit is not None:
        write_junit(checks, junit)
    return checks
