"""Where a judge's measured agreement is kept, and how a report finds it: `harness judge-check --save` writes each
judge's check (agreement, kappa, probes) beside its label file (`NAME.yaml` -> `NAME.agreement.json`), keyed by the
judge's model string and the hash of the judge's instructions; a suite's label file is `labels/SUITE.yaml` in the
suite file's folder (a folder of its own, so no label file is taken for a suite), so the report of a judged run can
name that judge's agreement with people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.files import atomic_write_text
from harness.hashing import content_hash
from harness.tasks.judging import CLAIMS_INSTRUCTIONS, RUBRIC_INSTRUCTIONS, judge_prompt_hash

INSTRUCTIONS_HASH = content_hash([judge_prompt_hash(RUBRIC_INSTRUCTIONS), judge_prompt_hash(CLAIMS_INSTRUCTIONS)])


def record_path(labels: Path) -> Path:
    return labels.with_name(f"{labels.stem}.agreement.json")


def suite_labels(suite_file: Path) -> Path:
    """The label file a suite is known by: labels/SUITE.yaml in the suite file's folder."""
    return suite_file.parent / "labels" / f"{suite_file.stem}.yaml"


def save_check(labels: Path, judge_model: str, entry: dict[str, Any]) -> Path:
    """Add (or replace) this judge's check in the label file's record."""
    path = record_path(labels)
    checks = read_checks(path)
    key = f"{judge_model}|{INSTRUCTIONS_HASH}"
    checks[key] = {"judge_model": judge_model, "instructions_hash": INSTRUCTIONS_HASH, **entry}
    atomic_write_text(path, json.dumps({"checks": checks}, indent=1, sort_keys=True) + "\n")
    return path


def read_checks(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")).get("checks", {}))
    except (ValueError, AttributeError):
        return {}


def measured_agreement(suite_file: Path, judge_model: str) -> dict[str, Any] | None:
    """The saved check of `judge_model` (under today's instructions) for the suite, or None."""
    return read_checks(record_path(suite_labels(suite_file))).get(f"{judge_model}|{INSTRUCTIONS_HASH}")


def agreement_sentence(check: dict[str, Any] | None, judge_model: str) -> str:
    """One sentence on a judge's measured agreement with people, for a report of a judged run."""
    if check is None:
        return (f"Judge {judge_model}: no measured agreement with people for this suite (run `harness judge-check "
                f"LABELS --judge-model {judge_model} --save` on its label file).")
    overall = check.get("overall") or {}
    agree, kappa = overall.get("agreement") or {}, overall.get("kappa") or {}

    def interval(e: dict, pct: bool) -> str:
        if e.get("value") is None:
            return "undefined"
        f = (lambda v: f"{v:.0%}") if pct else (lambda v: f"{v:.2f}")
        return f"{f(e['value'])} [{f(e['low'])}, {f(e['high'])}]" if e.get("low") is not None else f(e["value"])

    probes = "; ".join(f"{name} {interval(p.get('rate') or {}, True)}" for name, p in check.get("probes", {}).items()
                       if (p.get("rate") or {}).get("value") is not None)
    return (f"Judge {judge_model} agrees with people on {interval(agree, True)} of {overall.get('n', 0)} labelled "
            f"answers (Cohen's kappa {interval(kappa, False)}; {check.get('labels', '')})"
            + (f"; verdicts flipped by: {probes}" if probes else "") + ".")


def judge_paragraph(results: Any) -> str:
    """The report's words on each judge that scored its runs (rows with a `judge_prompt_hash`): its measured
    agreement with people on the suite's label file, or that none was measured. Empty for runs no judge scored."""
    from harness.tasks.suite import suite_files

    if "judge_prompt_hash" not in results:
        return ""
    judged = results[(results["judge_prompt_hash"].fillna("") != "") & (results["judge_model"].fillna("") != "")]
    files = suite_files()
    sentences = []
    for (suite, judge_model), _ in judged.groupby(["suite", "judge_model"]):
        path = files.get(suite)
        sentences.append(agreement_sentence(measured_agreement(path, judge_model) if path else None, judge_model))
    return " ".join(sentences)
