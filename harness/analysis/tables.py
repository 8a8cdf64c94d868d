"""The report's tables: runs grouped by arm x model x program, the pairs of groups to compare, and one table per
question (success, errors, tokens, time, categories, tasks, pass@k)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.agents.arms import arm_rank
from harness.analysis.stats import (
    Comparison,
    Rate,
    cache_served,
    compare_runs,
    group_labels,
    pass_k_over_tasks,
    tool_latency,
    wilson,
)
from harness.analysis.summary import GroupSummary, summarize
from harness.trace.vocab import ERROR_TYPES

TOKEN_PARTS = (("context_tool_definition_tokens", "tool definitions"), ("context_tool_result_tokens", "tool results"),
               ("context_task_tokens", "task + instructions"), ("tiktoken_completion_tokens", "LM output"))
TIME_PARTS = (("lm_time_s", "LM"), ("tool_time_s", "tools"), ("sandbox_time_s", "sandbox"),
              ("overhead_s", "harness overhead"))


@dataclass(frozen=True)
class Pairing:
    """Two groups to compare, and what the comparison found (None: they share no task and epoch)."""

    baseline: str
    candidate: str
    comparison: Comparison | None


# ---- grouping ----

def label_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """The results with a `group` column (arm, plus model and program when several are present)."""
    frame = frame.copy()
    frame["group"] = group_labels(frame)
    frame["_order"] = np.arange(len(frame))
    return frame


def group_order(frame: pd.DataFrame) -> list[str]:
    """Groups by arm (direct first), then by tool latency (smallest first), then in the order they first appear in
    the input files."""
    first = frame.groupby("group")["_order"].min()
    arms = frame.groupby("group")["arm"].first()
    latency = tool_latency(frame).groupby(frame["group"]).first()
    return sorted(first.index, key=lambda g: (arm_rank(arms[g]), arms[g], latency[g], first[g]))


def _varying(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("model", "program_hash") if frame[c].nunique() > 1] + \
        (["scaffold"] if frame["scaffold_hash"].nunique() > 1 else []) + \
        (["tool_latency_s"] if tool_latency(frame).nunique() > 1 else [])


def _group_columns(frame: pd.DataFrame, group: str) -> dict[str, str | float]:
    """Table columns naming a group: the arm, and the model, program, scaffold and tool latency when they vary."""
    part = frame[frame["group"] == group]
    row = part.iloc[0]
    columns: dict[str, str | float] = {"arm": row["arm"]}
    for column in _varying(frame):
        if column == "program_hash":
            columns["program"] = row[column][:8] or "built-in"
        elif column == "tool_latency_s":
            columns["tool latency (s)"] = float(tool_latency(part).iloc[0])
        else:
            columns[column] = row[column]
    return columns


def planned_pairings(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Which groups to compare: arms within each model, program and scaffold (each against the first arm of the
    registry), then programs within each arm, model and scaffold (against the built-in prompt), then models
    within each arm, program and scaffold (against the first model in the inputs), then scaffolds within each
    arm, model and program (against the first scaffold in the inputs), then tool latencies within each arm, model,
    program and scaffold (against the smallest). Every comparison holds the tool latency fixed unless it is the
    one compared: an arm's advantage is only visible at one latency."""
    meta = frame.assign(latency=tool_latency(frame)).groupby("group").agg(
        arm=("arm", "first"), model=("model", "first"), program_hash=("program_hash", "first"),
        scaffold_hash=("scaffold_hash", "first"), latency=("latency", "first"), order=("_order", "min"))
    meta = meta.sort_values("order").reset_index()
    pairs: list[tuple[str, str]] = []

    def against_first(fixed: list[str], key) -> None:
        for _, part in meta.groupby(fixed, sort=False):
            ordered = sorted(part.itertuples(), key=key)
            pairs.extend((ordered[0].group, other.group) for other in ordered[1:])

    against_first(["model", "program_hash", "scaffold_hash", "latency"], lambda r: (arm_rank(r.arm), r.arm, r.order))
    if meta["program_hash"].nunique() > 1:
        against_first(["arm", "model", "scaffold_hash", "latency"], lambda r: (r.program_hash != "", r.order))
    if meta["model"].nunique() > 1:
        against_first(["arm", "program_hash", "scaffold_hash", "latency"], lambda r: r.order)
    if meta["scaffold_hash"].nunique() > 1:
        against_first(["arm", "model", "program_hash", "latency"], lambda r: r.order)
    if meta["latency"].nunique() > 1:
        against_first(["arm", "model", "program_hash", "scaffold_hash"], lambda r: (r.latency, r.order))
    return pairs


def pairings(frame: pd.DataFrame, seed: int = 0) -> list[Pairing]:
    """Every planned comparison, paired on task and epoch."""
    result = []
    for baseline, candidate in planned_pairings(frame):
        comparison = compare_runs(frame[frame["group"] == baseline], frame[frame["group"] == candidate],
                                  baseline, candidate, seed=seed)
        result.append(Pairing(baseline, candidate, comparison))
    return result


# ---- tables ----

def _rate(rate: Rate, digits: int = 1) -> str:
    return f"{rate.value:.{digits}%} [{rate.low:.{digits}%}, {rate.high:.{digits}%}]"


def _mean(values: pd.Series, digits: int) -> float:
    return round(float(values.mean()), digits) if len(values) else float("nan")


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per group, from the summary `harness run` prints too (harness.analysis.summary)."""
    rows = []
    for group in group_order(frame):
        part = frame[frame["group"] == group]
        s = summarize(part)
        rows.append({
            **_group_columns(frame, group), "runs": s.runs, "tasks": part["task_id"].nunique(),
            "success [95% CI]": _rate(wilson(s.successes, s.runs)),
            "mean tokens": f"{s.mean_tokens:,.0f}", "median tokens": f"{s.median_tokens:,.0f}",
            **_latency_columns(s),
            "mean turns": round(s.mean_turns, 2), "mean tool calls": round(s.mean_tool_calls, 2),
            "errors": s.errors, "policy violations": s.policy_violations, "cache-served runs": s.cache_served_runs,
            **cost_columns(part),
        })
    return pd.DataFrame(rows)


def _latency_columns(s: GroupSummary) -> dict[str, float | str]:
    """Mean and median latency over the group's timed runs; "cached" when the response cache answered every run."""
    if not s.timed_runs and s.cache_served_runs:
        return {"mean latency (s)": "cached", "median latency (s)": "cached"}
    return {"mean latency (s)": round(s.mean_latency_s, 2), "median latency (s)": round(s.median_latency_s, 2)}


def cost_columns(part: pd.DataFrame) -> dict[str, str]:
    """Cost of a group's runs and cost per successful run (USD); unknown if any run's price is unknown."""
    costs = part["cost_usd"]
    if costs.isna().any():
        return {"cost (USD)": "unknown", "cost per success (USD)": "unknown"}
    total, passed = float(costs.sum()), int(part["success"].sum())
    return {"cost (USD)": f"{total:.4f}", "cost per success (USD)": f"{total / passed:.4f}" if passed else "no success"}


def task_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per task (and suite), each group's runs passed out of runs: where to look in the viewer."""
    groups = group_order(frame)
    rows = []
    for (suite, task), part in frame.groupby(["suite", "task_id"], sort=True):
        row = {"suite": suite, "task": task}
        for group in groups:
            runs = part[part["group"] == group]
            row[group] = f"{int(runs['success'].sum())}/{len(runs)}" if len(runs) else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def error_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Why runs ended without an answer: per error type that occurred, its runs in each group and what it means
    (written from the error vocabulary, harness.trace.vocab); None when every run ended with an answer. A type
    this harness does not know (a file from another version) is listed as such."""
    errors = frame[frame["error_type"].fillna("") != ""]
    if errors.empty:
        return None
    present = set(errors["error_type"])
    ordered = [t for t in ERROR_TYPES if t in present] + sorted(present - set(ERROR_TYPES))
    rows = []
    for error_type in ordered:
        part = errors[errors["error_type"] == error_type]
        counts = {group: int((part["group"] == group).sum()) for group in group_order(frame)}
        rows.append({"error_type": error_type, **counts,
                     "what it means": ERROR_TYPES.get(error_type, "not in this harness's error vocabulary")})
    return pd.DataFrame(rows)


def category_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per category and group: n, success with its Wilson interval, mean tokens, mean latency."""
    rows = []
    for category in sorted(frame["category"].unique()):
        for group in group_order(frame):
            part = frame[(frame["category"] == category) & (frame["group"] == group)]
            if part.empty:
                continue
            rows.append({"category": category, **_group_columns(frame, group), "n": len(part),
                         "success [95% CI]": _rate(wilson(int(part["success"].sum()), len(part)), digits=0),
                         "mean tokens": f"{part['total_tokens'].mean():,.0f}",
                         "mean latency (s)": round(summarize(part).mean_latency_s, 2)})
    return pd.DataFrame(rows)


def session_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Per position in a session (1 = the session's first task) and group, over the runs made in sessions: n,
    success, mean tokens, turns and latency, and the runs that reused a skill an earlier task saved (does the
    fourth task cost less than the first, and does success hold?). None when no run was in a session."""
    if "session" not in frame or frame["session"].isna().all():
        return None
    part = frame[frame["session"].notna()]
    rows = []
    for position in sorted(part["session_position"].unique()):
        for group in group_order(part):
            runs = part[(part["session_position"] == position) & (part["group"] == group)]
            if runs.empty:
                continue
            reused = runs["skills_used"].dropna()
            rows.append({"position": int(position) + 1, **_group_columns(frame, group), "n": len(runs),
                         "success": f"{int(runs['success'].sum())}/{len(runs)}",
                         "mean tokens": f"{runs['total_tokens'].mean():,.0f}",
                         "mean turns": round(runs["turns"].mean(), 1),
                         "mean latency (s)": round(runs["latency_s"].mean(), 2),
                         "reused a skill": f"{int((reused != '').sum())}/{len(reused)}" if len(reused) else "-"})
    return pd.DataFrame(rows)


def token_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for group in group_order(frame):
        part = frame[frame["group"] == group]
        row = {**_group_columns(frame, group)}
        for column, name in TOKEN_PARTS:
            row[name] = f"{part[column].mean():,.0f}"
        row["headline tokens"] = f"{part['total_tokens'].mean():,.0f}"
        row["headline source"] = ", ".join(sorted(part["token_source"].unique()))
        rows.append(row)
    return pd.DataFrame(rows)


def time_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for group in group_order(frame):
        part = frame[(frame["group"] == group) & ~cache_served(frame)]
        row = {**_group_columns(frame, group), "timed runs": len(part)}
        for column, name in TIME_PARTS:
            row[f"{name} (s)"] = _mean(part[column], 3)
        row["latency (s)"] = _mean(part["latency_s"], 3)
        rows.append(row)
    return pd.DataFrame(rows)


def pass_k_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    """pass^1 .. pass^k (as τ-bench's leaderboards report them) and pass@k per group; k is the usual number of
    samples per task (the epochs), and tasks with fewer samples (another suite run once, say) are left out.
    Columns are named with the numbers (`pass^2`, `pass@3`): groups of one run share k."""
    if frame["epoch"].nunique() < 2:
        return None
    rows = []
    for group in group_order(frame):
        per_task = frame[frame["group"] == group].groupby("task_id")["success"].agg(["count", "sum"])
        counts = per_task["count"].value_counts()
        k = int(max(counts.index, key=lambda n: (counts[n], n)))
        per_task = per_task[per_task["count"] >= k]
        estimate = pass_k_over_tasks([(int(n), int(c)) for n, c in per_task.values], k)
        rows.append({**_group_columns(frame, group), "tasks": estimate.tasks, "k": k,
                     **{f"pass^{j}": f"{value:.1%}" for j, value in enumerate(estimate.pass_hat, start=1)},
                     f"pass@{k}": f"{estimate.pass_at_k:.1%}"})
    return pd.DataFrame(rows).fillna("")


def catalogue_sizes(frame: pd.DataFrame) -> list[int]:
    """The catalogue sizes (tools) the results ran at, smallest first."""
    return sorted(int(s) for s in frame["catalogue_size"].dropna().unique())


def tokens_per_added_tool(sizes: pd.Series, tokens: pd.Series) -> float:
    """The least-squares slope of tokens per run against catalogue size: what one more tool costs a run."""
    return float(np.polyfit(sizes.astype(float), tokens.astype(float), 1)[0])


def overflows(part: pd.DataFrame) -> pd.Series:
    """Per catalogue size, how many of these runs ended as context_overflow (their prompt did not fit the window)."""
    return (part["error_type"] == "context_overflow").groupby(part["catalogue_size"]).sum()


def fitting(part: pd.DataFrame) -> pd.DataFrame:
    """The runs whose prompts fit the model's context window: an overflowed run ended before its call of that size
    was sent, so its tokens and latency (near nothing) say nothing of the arm's cost there; its failure still counts
    in success, and the size where runs overflow is shown on its own."""
    return part[part["error_type"] != "context_overflow"]


def overflow_text(part: pd.DataFrame) -> str:
    """The smallest catalogue size at which a run overflowed the context window, with that window: "-" if none."""
    counts = overflows(part)
    sizes = [int(n) for n, count in counts.items() if count]
    if not sizes:
        return "-"
    windows = part.loc[part["error_type"] == "context_overflow", "context_window"].dropna().unique()
    return f"{min(sizes):,} tools" + (f" ({', '.join(f'{int(w):,}' for w in sorted(windows))}-token window)"
                                      if len(windows) else "")


def catalogue_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Per group, with two catalogue sizes or more: mean tokens per run at each size, each arm's growth (the fitted
    tokens per added tool, in all and in tool definitions alone: both over the runs that fit the window), its success
    at each size and the smallest size at which a run overflowed the model's context window; None otherwise."""
    sized = frame.dropna(subset=["catalogue_size"])
    sizes = catalogue_sizes(sized)
    if len(sizes) < 2:
        return None
    rows = []
    for group in group_order(sized):
        part = sized[sized["group"] == group]
        means = fitting(part).groupby("catalogue_size")[["total_tokens", "context_tool_definition_tokens"]].mean()
        row: dict[str, str | float] = {**_group_columns(sized, group)}
        row.update({f"tokens @{n}": f"{means.loc[n, 'total_tokens']:,.0f}" if n in means.index else "-"
                    for n in sizes})
        fitted = len(means) >= 2
        row["tokens per added tool"] = round(tokens_per_added_tool(means.index.to_series(), means["total_tokens"]),
                                             1) if fitted else "-"
        row["definition tokens per added tool"] = round(tokens_per_added_tool(
            means.index.to_series(), means["context_tool_definition_tokens"]), 1) if fitted else "-"
        success = part.groupby("catalogue_size")["success"].agg(["sum", "count"])
        row["success by size"] = " ".join(f"{int(success.loc[n, 'sum'])}/{int(success.loc[n, 'count'])}"
                                          if n in success.index else "-" for n in sizes)
        row["overflows from"] = overflow_text(part)
        rows.append(row)
    return pd.DataFrame(rows)
