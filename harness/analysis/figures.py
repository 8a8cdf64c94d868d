"""PNG figures for `harness report` (matplotlib, Agg): success with intervals, paired tokens per task, latency
distributions, the token breakdown, tokens against data size, and the catalogue sweep (tokens, latency and success
against the number of tools). Each takes the labelled results frame."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from harness.agents.arms import ARMS
from harness.analysis.stats import cache_served, wilson

OTHER_COLOUR = "#8172b3"  # an arm the registry does not know (older results)
PART_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")


def colours(frame: pd.DataFrame, groups: list[str]) -> list[tuple[float, float, float]]:
    """Each arm keeps its colour; its further groups (other models or programs) are lighter shades of it."""
    arms = frame.groupby("group")["arm"].first()
    seen: dict[str, int] = {}
    result = []
    for group in groups:
        arm = arms[group]
        shade = seen.get(arm, 0)
        seen[arm] = shade + 1
        base = np.array(matplotlib.colors.to_rgb(ARMS[arm].colour if arm in ARMS else OTHER_COLOUR))
        mix = min(0.6, 0.3 * shade)
        result.append(tuple(base + (1 - base) * mix))
    return result


def _ticks(ax, groups: list[str], positions) -> None:
    ax.set_xticks(list(positions), [g.replace(" · ", "\n") for g in groups])
    if len(groups) > 3:
        ax.tick_params(axis="x", labelsize=8)


def _save(fig, out_dir: Path, name: str) -> Path:
    path = out_dir / name
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def figure_success(frame: pd.DataFrame, groups: list[str], out_dir: Path) -> Path:
    rates = [wilson(int(frame[frame.group == g].success.sum()), int((frame.group == g).sum())) for g in groups]
    values = np.array([r.value for r in rates])
    errors = np.clip([[r.value - r.low for r in rates], [r.high - r.value for r in rates]], 0, None)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    x = np.arange(len(groups))
    ax.bar(x, values, yerr=errors, capsize=6, color=colours(frame, groups), width=0.6)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("success rate (95% Wilson CI)")
    ax.set_title("Success by arm")
    for i, rate in enumerate(rates):
        ax.text(i, rate.high + 0.02, f"{rate.value:.0%}  (n={rate.n})", ha="center", fontsize=9)
    _ticks(ax, groups, x)
    return _save(fig, out_dir, "success_by_arm.png")


def figure_tokens_paired(frame: pd.DataFrame, groups: list[str], out_dir: Path) -> Path:
    per_task = frame.groupby(["task_id", "group"])["total_tokens"].mean().unstack("group").reindex(columns=groups)
    per_task = per_task.where(per_task > 0)  # a zero cannot sit on a log axis
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(groups))
    for _, row in per_task.iterrows():
        ax.plot(x, row.values, color="#777777", alpha=0.35, linewidth=1)
    for i, (group, colour) in enumerate(zip(groups, colours(frame, groups))):
        values = per_task[group].dropna()
        ax.scatter(np.full(len(values), i), values, color=colour, s=18, zorder=3)
        if len(values):
            ax.hlines(values.median(), i - 0.18, i + 0.18, color="black", linewidth=2.5, zorder=4)
    if per_task.notna().any().any():
        ax.set_yscale("log")
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.set_ylabel("tokens per run (log scale)")
    ax.set_title(f"Tokens per task, paired across arms ({len(per_task)} tasks)")
    _ticks(ax, groups, x)
    return _save(fig, out_dir, "tokens_paired.png")


def figure_latency(frame: pd.DataFrame, groups: list[str], out_dir: Path) -> Path:
    timed = frame[~cache_served(frame)]
    data = [timed[timed.group == g]["latency_s"].to_numpy() for g in groups]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    x = np.arange(1, len(groups) + 1)
    if any(len(d) for d in data):
        ax.boxplot([d if len(d) else [np.nan] for d in data], positions=x, showfliers=False, widths=0.5)
        rng = np.random.default_rng(0)
        for i, (values, colour) in enumerate(zip(data, colours(frame, groups)), start=1):
            ax.scatter(i + rng.uniform(-0.15, 0.15, len(values)), values, s=10, alpha=0.6, color=colour, zorder=3)
    else:
        ax.text(0.5, 0.5, "every run was cache-served: no latency to show", transform=ax.transAxes, ha="center")
    values = np.concatenate([d for d in data if len(d)]) if any(len(d) for d in data) else np.array([])
    positive = values[values > 0]
    if len(positive) and positive.max() / max(np.median(positive), 1e-9) > 20:
        ax.set_yscale("log")  # a few very slow runs would flatten every box
        ax.set_ylabel("latency per run (s, log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel("latency per run (s)")
    ax.set_title("Latency (cache-served runs excluded)")
    _ticks(ax, groups, x)
    return _save(fig, out_dir, "latency_by_arm.png")


def figure_token_breakdown(frame: pd.DataFrame, groups: list[str], out_dir: Path,
                           parts: tuple[tuple[str, str], ...]) -> Path:
    fig, ax = plt.subplots(figsize=(6, 3.8))
    x = np.arange(len(groups))
    bottom = np.zeros(len(groups))
    for (column, name), colour in zip(parts, PART_COLOURS):
        values = np.array([frame[frame.group == g][column].mean() for g in groups])
        ax.bar(x, values, bottom=bottom, label=name, color=colour, width=0.6)
        bottom += values
    ax.set_ylabel("mean tokens per run (cl100k)")
    ax.set_title("Where the tokens go")
    ax.legend(fontsize=8)
    _ticks(ax, groups, x)
    return _save(fig, out_dir, "token_breakdown.png")


def figure_tokens_by_size(frame: pd.DataFrame, groups: list[str], out_dir: Path) -> Path | None:
    """Only for results with at least two data sizes (the scale suite)."""
    sized = frame.dropna(subset=["data_size"])
    sized = sized[sized["total_tokens"] > 0]
    if sized["data_size"].nunique() < 2:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for group, colour in zip(groups, colours(frame, groups)):
        part = sized[sized.group == group]
        if part.empty:
            continue
        means = part.groupby("data_size")["total_tokens"].mean()
        ax.scatter(part["data_size"], part["total_tokens"], color=colour, s=10, alpha=0.5)
        ax.plot(means.index, means.values, marker="o", color=colour, label=group)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("data size (rows)")
    ax.set_ylabel("tokens per run")
    ax.set_title("Tokens against data size")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "tokens_by_data_size.png")


def figure_catalogue(frame: pd.DataFrame, groups: list[str], out_dir: Path,
                     token_parts: tuple[tuple[str, str], ...]) -> Path | None:
    """Only for results with at least two catalogue sizes: per group, each token part per run, latency and success
    against the number of tools, on log axes (success on a linear one), each arm's growth in its legend; a dashed line
    in a group's colour marks the smallest size at which its runs ended as context_overflow (a prompt that did not
    fit the model's window: from there on the arm does not fit). Tokens and latency are over the runs that fit (an
    overflowed run sent nothing), success over every run."""
    from harness.analysis.tables import fitting, overflows, tokens_per_added_tool

    sized = frame.dropna(subset=["catalogue_size"])
    if sized["catalogue_size"].nunique() < 2:
        return None
    sizes = sorted(int(n) for n in sized["catalogue_size"].unique())
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.2))
    panels = [*token_parts, ("latency_s", "latency per run (s)"), ("success", "success rate")]
    for ax, (column, name) in zip(axes.flat, panels):
        for group, colour in zip(groups, colours(frame, groups)):
            runs = sized[sized.group == group]
            measured = runs if column == "success" else fitting(runs)
            means = measured.groupby("catalogue_size")[column].mean()
            if means.empty:
                continue
            label = group
            if column == token_parts[0][0] and len(means) >= 2:
                totals = fitting(runs).groupby("catalogue_size")["total_tokens"].mean()
                slope = tokens_per_added_tool(totals.index.to_series(), totals)
                digits = 1 if abs(slope) < 10 else 0
                label = f"{group}: {round(slope, digits) + 0.0:,.{digits}f} tokens/tool"  # + 0.0: never "-0.0"
            ax.plot(means.index, means.values, marker="o", color=colour, label=label)
            over = [int(n) for n, count in overflows(runs).items() if count]
            if over:
                ax.axvline(min(over), color=colour, linestyle="--", linewidth=1.2,
                           label=f"{group} overflows from {min(over):,} tools" if column == token_parts[0][0] else None)
        ax.set_xscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        if column == "success":
            ax.set_ylim(-0.05, 1.05)
        elif (sized[column] > 0).any():
            ax.set_yscale("log")
        ax.set_title(name if column in ("latency_s", "success") else f"{name} (tokens per run)", fontsize=10)
        ax.set_xlabel("tools in the catalogue")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("Against the number of tools")
    return _save(fig, out_dir, "catalogue_sweep.png")


def draw_figures(frame: pd.DataFrame, groups: list[str], out_dir: Path,
                 token_parts: tuple[tuple[str, str], ...]) -> list[Path]:
    """All figures that apply to these results, in the order the report shows them."""
    figures = [figure_success(frame, groups, out_dir), figure_tokens_paired(frame, groups, out_dir),
               figure_token_breakdown(frame, groups, out_dir, token_parts), figure_latency(frame, groups, out_dir)]
    optional = (figure_tokens_by_size(frame, groups, out_dir), figure_catalogue(frame, groups, out_dir, token_parts))
    return figures + [f for f in optional if f is not None]
