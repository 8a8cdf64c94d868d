"""`harness gate`: fail a CI build when success rates fall below thresholds or regress against a baseline.

Exit 0 when every check holds, 1 when one fails, 2 on usage errors. Each failure is one line: the arm, the
measured rate with its interval, and the threshold. A baseline comparison pairs runs on (task, arm, epoch).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd

from harness.errors import UserError
from harness.stats import mcnemar_exact, wilson


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    message: str


def parse_threshold(expression: str) -> tuple[str, float]:
    """'codemode=0.7' -> ('codemode', 0.7); anything else is a UserError naming the expression."""
    arm, sep, value = expression.partition("=")
    if not sep or not arm.strip():
        raise UserError(f"bad --min-success '{expression}': expected ARM=RATE, e.g. codemode=0.7")
    try:
        rate = float(value)
    except ValueError:
        raise UserError(f"bad --min-success '{expression}': '{value}' is not a number") from None
    if not 0.0 <= rate <= 1.0:
        raise UserError(f"bad --min-success '{expression}': the rate must be between 0 and 1")
    return arm.strip(), rate


def threshold_checks(frame: pd.DataFrame, thresholds: list[tuple[str, float]]) -> list[Check]:
    arms = sorted(frame["arm"].unique())
    checks = []
    for arm, minimum in thresholds:
        if arm not in arms:
            raise UserError(f"--min-success names arm '{arm}', which is not in the results (arms: {', '.join(arms)})")
        part = frame[frame["arm"] == arm]
        rate = wilson(int(part["success"].sum()), len(part))
        passed = rate.value >= minimum
        checks.append(Check(f"{arm} success >= {minimum:.0%}", passed,
                            f"{arm}: success {rate} {'>=' if passed else 'is below the threshold'} {minimum:.0%}"))
    return checks


def baseline_checks(frame: pd.DataFrame, baseline: pd.DataFrame, max_drop: float) -> list[Check]:
    keys = ["task_id", "arm", "epoch"]
    current = frame.drop_duplicates(keys).set_index(keys)
    before = baseline.drop_duplicates(keys).set_index(keys)
    checks = []
    for arm in sorted(frame["arm"].unique()):
        common = [k for k in current.index.intersection(before.index) if k[1] == arm]
        if not common:
            checks.append(Check(f"{arm} vs baseline", True, f"{arm}: no runs paired with the baseline (skipped)"))
            continue
        now, then = current.loc[common, "success"], before.loc[common, "success"]
        drop = float(then.mean() - now.mean())
        test = mcnemar_exact(list(then), list(now))
        significance = f"McNemar p = {test.p_value:.3f}, {'significant' if test.significant else 'not significant'}"
        passed = drop <= max_drop
        checks.append(Check(
            f"{arm} drop vs baseline <= {max_drop:.0%}", passed,
            f"{arm}: success {now.mean():.1%} vs baseline {then.mean():.1%} on {len(common)} paired runs "
            f"(drop {drop * 100:+.1f} points, allowed {max_drop:.0%}; {significance})"))
    return checks


def write_junit(checks: list[Check], path: Path) -> None:
    suite = ElementTree.Element("testsuite", name="harness.gate", tests=str(len(checks)),
                                failures=str(sum(not c.passed for c in checks)))
    for check in checks:
        case = ElementTree.SubElement(suite, "testcase", classname="harness.gate", name=check.name)
        if not check.passed:
            ElementTree.SubElement(case, "failure", message=check.message).text = check.message
        else:
            ElementTree.SubElement(case, "system-out").text = check.message
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def run_gate(frame: pd.DataFrame, thresholds: list[str], baseline: pd.DataFrame | None, max_drop: float,
             junit: Path | None) -> list[Check]:
    if not thresholds and baseline is None:
        raise UserError("nothing to check: give --min-success ARM=RATE and/or --baseline OLD.parquet")
    if not 0.0 <= max_drop <= 1.0:
        raise UserError("--max-drop must be between 0 and 1")
    checks = threshold_checks(frame, [parse_threshold(t) for t in thresholds])
    if baseline is not None:
        checks += baseline_checks(frame, baseline, max_drop)
    if junit is not None:
        write_junit(checks, junit)
    return checks
