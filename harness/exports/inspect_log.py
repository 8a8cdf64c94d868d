"""Runs as inspect_ai eval logs, written by inspect_ai's own writer (`write_eval_log`) from its own types.

One log per suite, arm and model: its task is `SUITE/ARM` and its model the model string, so `inspect view`'s
list puts the arms of a suite side by side. One sample per run: its input (the task's prompt), target (the expected
answer), conversation, events (harness.exports.inspect_events), scores, model usage and every column of its row as
metadata. inspect counts epochs from 1, the harness from 0: a sample's epoch is the harness's plus one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalRevision,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ModelOutput, ModelUsage

from harness.exports.inspect_events import (
    RunFacts,
    as_json,
    eval_error,
    inspect_events,
    limit_of,
    model_usage,
    sample_messages,
    sample_scores,
)
from harness.exports.runs import FinishedRun, read_runs
from harness.version import __version__

NO_TRAJECTORY = "(no trajectory line for this run next to its results file: only its row is exported)"


@dataclass(frozen=True)
class WrittenLog:
    """One log written: where, for which suite, arm and model, and how many samples it holds."""

    path: Path
    suite: str
    arm: str
    model: str
    samples: int


def _target(expected: str | None) -> str:
    """The row's expected answer (JSON text) as inspect's target: a string as itself, anything else as JSON."""
    try:
        value = json.loads(expected) if expected else ""
    except json.JSONDecodeError:
        return expected or ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _digest(*parts: str) -> str:
    """A stable id from its parts: exporting the same runs again gives the same log and sample ids."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:22]


def _utc(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(0, UTC)


def role_usage(row: dict[str, Any]) -> dict[str, tuple[str, ModelUsage]]:
    """Each LM role's model and tokens, from the row: the agent's (the row's own token columns), a simulated
    user's and a judge's (their own columns, where the run had one)."""
    found = {"agent": (row["model"], model_usage(row["prompt_tokens"], row["completion_tokens"],
                                            row["reused_prompt_tokens"], row["cost_usd"]))}
    for role in ("user", "judge"):
        found[role] = (row[f"{role}_model"] or row["model"],
                       model_usage(row[f"{role}_prompt_tokens"], row[f"{role}_completion_tokens"]))
    return {role: (model, usage) for role, (model, usage) in found.items() if usage is not None}


def _by_model(usages: Sequence[tuple[str, ModelUsage]]) -> dict[str, ModelUsage]:
    total: dict[str, ModelUsage] = {}
    for model, usage in usages:
        total[model] = total[model] + usage if model in total else usage
    return total


def _facts(row: dict[str, Any]) -> RunFacts:
    models = {"agent": row["model"], "user": row["user_model"] or row["model"],
              "judge": row["judge_model"] or row["model"]}
    limits = {column: row.get(column) for column in ("timeout_s", "max_tokens_per_run", "max_cost_per_run",
                                                     "max_turns")}
    return RunFacts(_utc(row["started_at"]), models, _target(row["expected"]), row["answer"] or "", limits)


def to_sample(run: FinishedRun, sample_id: str) -> EvalSample:
    """One run as an inspect sample."""
    row, trajectory = run.row, run.trajectory
    facts = _facts(row)
    events = inspect_events(trajectory.events, facts) if trajectory else []
    prompt = trajectory.prompt if trajectory else NO_TRAJECTORY
    usage = role_usage(row)
    wall = (row["latency_s"] or 0.0) + (row["cold_start_s"] or 0.0)
    limit = limit_of(row["error_type"], facts.limits)
    return EvalSample(
        id=sample_id, epoch=row["epoch"] + 1, input=prompt, target=facts.target,
        messages=sample_messages(trajectory.events, prompt, facts) if trajectory else [],
        output=ModelOutput.from_content(row["model"], row["answer"] or ""),
        scores=sample_scores(bool(row["success"]), row["score"], row["score_reason"] or "", row["answer"] or ""),
        metadata=as_json({name: value.isoformat() if isinstance(value, datetime) else value
                          for name, value in row.items()}),
        events=events, model_usage=_by_model(list(usage.values())),
        role_usage={role: u for role, (_, u) in usage.items()},
        started_at=facts.started_at, completed_at=facts.started_at + timedelta(seconds=wall), total_time=wall,
        working_time=row["latency_s"], uuid=_digest(row["run_id"], row["sample_id"]),
        error=eval_error(row["error_type"], row["error_message"] or "") if row["error_type"] and not limit else None,
        limit=EvalSampleLimit(type=limit[0], limit=limit[1], reason=row["error_message"]) if limit else None,
        turn_count=row["turns"])


def _sample_ids(runs: Sequence[FinishedRun]) -> list[str]:
    """Each run's sample id in its log: the task id, or RUN_ID:TASK_ID when runs of several results files put one
    task and epoch in the log twice (within one run a task and epoch are one sample)."""
    keys = [(r.row["task_id"], r.row["epoch"]) for r in runs]
    if len(set(keys)) == len(keys):
        return [r.row["task_id"] for r in runs]
    return [f"{r.row['run_id']}:{r.row['task_id']}" for r in runs]


def _results(samples: Sequence[EvalSample]) -> EvalResults:
    """The log's metrics: success as inspect's accuracy, the scorer's value as a mean."""
    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    success = mean([1.0 if s.scores and s.scores["success"].value == "C" else 0.0 for s in samples])
    score = mean([float(s.scores["score"].value) for s in samples if s.scores])  # type: ignore[arg-type]
    return EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=[
        EvalScore(name="success", scorer="success", scored_samples=len(samples),
                  metrics={"accuracy": EvalMetric(name="accuracy", value=success)}),
        EvalScore(name="score", scorer="score", scored_samples=len(samples),
                  metrics={"mean": EvalMetric(name="mean", value=score)})])


def to_log(suite: str, arm: str, model: str, runs: Sequence[FinishedRun]) -> EvalLog:
    """The runs of one suite, arm and model as one eval log."""
    samples = [to_sample(run, sid) for run, sid in zip(runs, _sample_ids(runs), strict=True)]
    rows = [r.row for r in runs]
    run_ids = sorted({row["run_id"] for row in rows})
    scaffolds = sorted({f"{row['scaffold']} {row['scaffold_hash']}" for row in rows})
    git_sha = next((row["git_sha"] for row in rows if row["git_sha"]), "")
    started = min(s.started_at for s in samples)  # type: ignore[type-var]
    completed = max(s.completed_at for s in samples)  # type: ignore[type-var]
    spec = EvalSpec(
        eval_id=_digest(suite, arm, model, *run_ids), run_id=",".join(run_ids), created=started,
        task=f"{suite}/{arm}", task_id=_digest(suite, arm), solver=arm,
        dataset=EvalDataset(name=suite, samples=len(samples), sample_ids=[s.id for s in samples]),  # type: ignore[misc]
        model=model, config=EvalConfig(epochs=max(row["epoch"] for row in rows) + 1),
        revision=EvalRevision(type="git", origin="", commit=git_sha) if git_sha else None,
        packages={"harness": rows[0]["harness_version"] or __version__},
        metadata={"suite": suite, "arm": arm, "scaffolds": scaffolds, "results": sorted({r.source.name for r in runs}),
                  "exported_by": f"harness {__version__}"})
    plan = EvalPlan(steps=[EvalPlanStep(solver=arm, params={"scaffold": sorted({row["scaffold"] for row in rows})})])
    stats = EvalStats(started_at=started, completed_at=completed,
                      model_usage=_by_model([(m, u) for s in samples for m, u in s.model_usage.items()]))
    status = "cancelled" if any(row["error_type"] == "interrupted" for row in rows) else "success"
    return EvalLog(status=status, eval=spec, plan=plan, results=_results(samples), stats=stats, samples=samples)


def _file_name(suite: str, arm: str, model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{suite}_{arm}_{model}").strip("-") + ".eval"


def write_inspect_logs(paths: list[Path], out_dir: Path) -> list[WrittenLog]:
    """Every run of the results files (or folders) as inspect_ai eval logs in `out_dir`, one per suite, arm and
    model; returns what was written."""
    groups: dict[tuple[str, str, str], list[FinishedRun]] = {}
    for run in read_runs(paths):
        groups.setdefault((run.row["suite"], run.row["arm"], run.row["model"]), []).append(run)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for (suite, arm, model), runs in sorted(groups.items()):
        path = out_dir / _file_name(suite, arm, model)
        write_eval_log(to_log(suite, arm, model, runs), path, format="eval")
        written.append(WrittenLog(path, suite, arm, model, len(runs)))
    return written
