"""Finished runs judged again by another (or a corrected) scorer, without running any agent: the scorer gets what the
run recorded (its answer, its tool calls in order, its probes' results, its turns, tokens and error), and the rows'
verdict columns (success, score, score_reason) are replaced. A scorer that needs what was not recorded (a server's
end state, a probe this run did not make, or whose result was cut in the record) says so instead of guessing."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.errors import UserError
from harness.run.records import read_table, read_trajectory, results_files, write_rows
from harness.tasks.scorers import State  # importing it registers the built-in scorers
from harness.tasks.scoring import ProbeOutcome, ScoreContext, Scorer, build_scorer
from harness.tasks.task import scorer_spec
from harness.trace.calls import ProbeCall
from harness.trace.trajectory import Trajectory


@dataclass(frozen=True)
class Rescored:
    """One results file judged again: where the new one is, and how many runs' verdicts changed."""

    path: Path
    runs: int
    changed: int


def parse_scorer(text: str) -> Scorer:
    """`--scorer` as a suite file writes it: `exact`, or `{numeric: {tolerance: 0.01}}` (YAML or JSON)."""
    try:
        return build_scorer(scorer_spec(yaml.safe_load(text)))
    except (ValueError, yaml.YAMLError) as exc:
        raise UserError(f"--scorer {text!r}: {str(exc).splitlines()[0]}") from None


def _parts(scorer: Scorer) -> list[Scorer]:
    parts = getattr(scorer, "parts", None)
    return [leaf for part in parts() for leaf in _parts(part)] if callable(parts) else [scorer]


def _recorded(probe: ProbeCall) -> ProbeOutcome | None:
    """A probe's outcome as its record holds it (None when the record cut its result short)."""
    if probe.result_chars > len(probe.result_preview):
        return None
    try:
        value: Any = json.loads(probe.result_preview)
    except json.JSONDecodeError:
        value = probe.result_preview
    return ProbeOutcome(value, probe.result_preview, probe.is_error)


def recorded_context(row: dict[str, Any], trajectory: Trajectory, scorer: Scorer) -> ScoreContext:
    """What the scorer may judge of a finished run, from its record; a UserError when it needs more."""
    if any(getattr(part, "name", "") == State.name for part in _parts(scorer)):
        raise UserError(f"scorer '{scorer.name}' reads a server's end state, which a run does not record: it needs "
                        "live server state, so only a new run can be judged by it")
    probes: dict[str, ProbeOutcome] = {}
    for call in trajectory.probes:
        outcome = _recorded(call)
        if outcome is not None:
            probes[json.dumps([call.server, call.tool, call.arguments], sort_keys=True, default=str)] = outcome
    missing = [probe for probe in scorer.probes() if probe.key not in probes]
    if missing:
        raise UserError(f"{row['sample_id']}: scorer '{scorer.name}' reads {missing[0].server}.{missing[0].tool} "
                        "after the run, which this run did not record (or cut short): it needs live server state")
    return ScoreContext(answer=row["answer"], expected=trajectory.expected, tool_calls=trajectory.tool_calls,
                        probes=probes, turns=row["turns"], tokens=row["total_tokens"], error_type=row["error_type"])


def rescore(results: Path, scorer: Scorer, out_dir: Path) -> Rescored:
    """Judge every run of `results` again with `scorer`; the new results file (and its trajectories, copied) is
    written under `out_dir` at the same place (suite/run_id), the original left as it is."""
    rows = read_table(results).to_pylist()
    target = out_dir / results.parent.name / results.name
    if target.resolve() == results.resolve():
        raise UserError(f"--out {out_dir}: that is where {results} is; rescore into another folder")
    changed = 0
    for row in rows:
        context = recorded_context(row, read_trajectory(results, row["sample_id"]), scorer)
        score = scorer.evaluate(context)
        changed += score.passed != row["success"] or score.value != row["score"]
        row.update(success=score.passed, score=score.value, score_reason=score.reason)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_rows(target, rows)
    trajectories = results.with_name(results.name.replace(".parquet", ".trajectories.jsonl"))
    shutil.copyfile(trajectories, target.with_name(trajectories.name))
    return Rescored(target, len(rows), changed)


def rescore_all(paths: list[Path], scorer_text: str, out_dir: Path) -> list[Rescored]:
    """`harness rescore`: every results file named (or under the folders named), judged again."""
    scorer = parse_scorer(scorer_text)
    return [rescore(path, scorer, out_dir) for path in results_files(paths)]
