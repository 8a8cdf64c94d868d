"""Reports from results files: the comparison in words, tables and figures (report.md, a self-contained
report.html, PNGs). Arms are compared on the same tasks (paired), with intervals, so a reader can tell a
measured difference from noise."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.stats import mcnemar_exact, paired_delta, pass_at_k, pass_hat_k, wilson  # noqa: E402

ARM_ORDER = ("direct", "codemode", "codemode-discover")
TOKEN_PARTS = (("context_tool_definition_tokens", "tool definitions"), ("context_tool_result_tokens", "tool results"),
               ("context_task_tokens", "task + instructions"), ("tiktoken_completion_tokens", "LM output"))


@dataclass(frozen=True)
class ReportPaths:
    markdown: Path
    html: Path
    figures: tuple[Path, ...]


def label_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """A `group` column: the arm, plus the model and program when the results mix several."""
    frame = frame.copy()
    label = frame["arm"].astype(str)
    if frame["model"].nunique() > 1:
        label = label + " · " + frame["model"].astype(str)
    if frame["program_hash"].nunique() > 1:
        label = label + " · " + frame["program_hash"].map(lambda h: f"program {h[:8]}" if h else "built-in prompt")
    frame["group"] = label
    return frame


def _group_order(frame: pd.DataFrame) -> list[str]:
    def key(group: str) -> tuple[int, str]:
        arm = group.split(" · ")[0]
        return (ARM_ORDER.index(arm) if arm in ARM_ORDER else len(ARM_ORDER), group)

    return sorted(frame["group"].unique(), key=key)


def cache_served(frame: pd.DataFrame) -> pd.Series:
    """Runs whose every LM call came from the response cache: their latency is not the model's."""
    return (frame["llm_calls"] > 0) & (frame["cached_llm_calls"] == frame["llm_calls"])


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for group in _group_order(frame):
        part = frame[frame["group"] == group]
        timed = part[~cache_served(part)]
        rate = wilson(int(part["success"].sum()), len(part))
        rows.append({
            "arm": group, "runs": len(part), "success": str(rate),
            "mean tokens": round(part["total_tokens"].mean()), "median tokens": round(part["total_tokens"].median()),
            "median latency (s)": round(timed["latency_s"].median(), 2) if len(timed) else float("nan"),
            "mean turns": round(part["turns"].mean(), 2), "mean tool calls": round(part["tool_calls"].mean(), 2),
            "errors": int((part["error_type"] != "").sum()),
            "cache-served runs": int(cache_served(part).sum()),
        })
    return pd.DataFrame(rows)


def category_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for category, part in frame.groupby("category"):
        row = {"category": category, "tasks": part["task_id"].nunique()}
        for group in _group_order(frame):
            sub = part[part["group"] == group]
            if len(sub):
                row[f"{group} success"] = f"{sub['success'].mean():.0%}"
                row[f"{group} tokens"] = round(sub["total_tokens"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def pass_k_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    epochs = frame["epoch"].nunique()
    if epochs < 2:
        return None
    rows = []
    for group in _group_order(frame):
        part = frame[frame["group"] == group]
        per_task = part.groupby("task_id")["success"].agg(["count", "sum"])
        k = int(per_task["count"].min())
        row = {"arm": group, "k": k}
        for kk in sorted({1, k}):
            row[f"pass@{kk}"] = f"{np.mean([pass_at_k(int(n), int(c), kk) for n, c in per_task.values]):.1%}"
            row[f"pass^{kk}"] = f"{np.mean([pass_hat_k(int(n), int(c), kk) for n, c in per_task.values]):.1%}"
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Comparison:
    baseline: str
    candidate: str
    pairs: int
    success_a: float
    success_b: float
    mcnemar_p: float
    tokens: object
    latency: object
    turns: object


def compare(frame: pd.DataFrame, baseline: str, candidate: str) -> Comparison | None:
    """Pair runs of two groups on (task, epoch) and compare them."""
    keys = ["task_id", "epoch"]
    a = frame[frame["group"] == baseline].drop_duplicates(keys).set_index(keys)
    b = frame[frame["group"] == candidate].drop_duplicates(keys).set_index(keys)
    common = a.index.intersection(b.index)
    if len(common) == 0:
        return None
    a, b = a.loc[common], b.loc[common]
    timed = ~(cache_served(a.reset_index()).values | cache_served(b.reset_index()).values)
    return Comparison(
        baseline=baseline, candidate=candidate, pairs=len(common),
        success_a=float(a["success"].mean()), success_b=float(b["success"].mean()),
        mcnemar_p=mcnemar_exact(list(a["success"]), list(b["success"])).p_value,
        tokens=paired_delta(a["total_tokens"].values, b["total_tokens"].values),
        latency=paired_delta(a["latency_s"].values[timed], b["latency_s"].values[timed]),
        turns=paired_delta(a["turns"].values, b["turns"].values),
    )


def _significance(flag: bool) -> str:
    return "significant at 95%" if flag else "not significant at 95%"


def answer_paragraph(frame: pd.DataFrame) -> str:
    """The comparison in plain words: what differed, by how much, and whether it is more than noise."""
    groups = _group_order(frame)
    if len(groups) < 2:
        only = groups[0] if groups else "nothing"
        return f"Only one arm ({only}) is in these results, so there is no comparison to state."
    sentences = []
    for candidate in groups[1:]:
        c = compare(frame, groups[0], candidate)
        if c is None:
            sentences.append(f"{candidate} and {groups[0]} share no tasks, so they cannot be compared pairwise.")
            continue
        sig = c.mcnemar_p < 0.05
        sentences.append(
            f"Over {c.pairs} paired runs, **{c.candidate}** succeeded on {c.success_b:.0%} vs {c.success_a:.0%} "
            f"for **{c.baseline}** ({(c.success_b - c.success_a) * 100:+.1f} points; exact McNemar p = "
            f"{c.mcnemar_p:.3f}, {_significance(sig)}).")
        t = c.tokens
        if t.n and not np.isnan(t.relative):
            direction = "fewer" if t.relative < 0 else "more"
            sentences.append(
                f"It used {abs(t.relative):.1%} {direction} tokens per run (95% bootstrap CI of the change "
                f"{t.relative_low:+.1%} to {t.relative_high:+.1%}; mean {t.mean:+,.0f} tokens, "
                f"{_significance(t.significant)}).")
        lat = c.latency
        if lat.n:
            sentences.append(f"Latency changed by {lat.mean:+.2f} s per run (CI {lat.low:+.2f} to {lat.high:+.2f} s, "
                             f"{_significance(lat.significant)}); turns by {c.turns.mean:+.2f} "
                             f"(CI {c.turns.low:+.2f} to {c.turns.high:+.2f}).")
    return " ".join(sentences)


# ---- figures ----

def _save(fig, out_dir: Path, name: str) -> Path:
    path = out_dir / name
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def figure_success(frame: pd.DataFrame, out_dir: Path) -> Path:
    groups = _group_order(frame)
    rates = [wilson(int(frame[frame.group == g].success.sum()), int((frame.group == g).sum())) for g in groups]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    values = [r.value for r in rates]
    errors = [[r.value - r.low for r in rates], [r.high - r.value for r in rates]]
    ax.bar(groups, values, yerr=errors, capsize=6, color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"][:len(groups)])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95% Wilson CI)")
    ax.set_title("Success by arm")
    for i, rate in enumerate(rates):
        ax.text(i, min(rate.high, 1.0) + 0.02, f"{rate.value:.0%}", ha="center")
    return _save(fig, out_dir, "success_by_arm.png")


def figure_tokens_paired(frame: pd.DataFrame, out_dir: Path) -> Path:
    groups = _group_order(frame)
    per_task = frame.groupby(["task_id", "group"])["total_tokens"].mean().unstack("group").reindex(columns=groups)
    fig, ax = plt.subplots(figsize=(6, 4))
    for _, row in per_task.iterrows():
        ax.plot(range(len(groups)), row.values, marker="o", alpha=0.5, color="#555555")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_yscale("log")
    ax.set_ylabel("tokens per run (log scale)")
    ax.set_title("Tokens per task, paired across arms")
    return _save(fig, out_dir, "tokens_paired.png")


def figure_latency(frame: pd.DataFrame, out_dir: Path) -> Path:
    groups = _group_order(frame)
    timed = frame[~cache_served(frame)]
    data = [timed[timed.group == g]["latency_s"].values for g in groups]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    if any(len(d) for d in data):
        ax.boxplot([d if len(d) else [np.nan] for d in data], showfliers=False)
        rng = np.random.default_rng(0)
        for i, values in enumerate(data, start=1):
            ax.scatter(i + rng.uniform(-0.12, 0.12, len(values)), values, s=10, alpha=0.6)
        ax.set_xticks(range(1, len(groups) + 1), groups)
    ax.set_ylabel("latency per run (s)")
    ax.set_title("Latency (cache-served runs excluded)")
    return _save(fig, out_dir, "latency_by_arm.png")


def figure_tokens_by_size(frame: pd.DataFrame, out_dir: Path) -> Path | None:
    sized = frame.dropna(subset=["data_size"])
    if sized.empty or sized["data_size"].nunique() < 2:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for group in _group_order(sized):
        means = sized[sized.group == group].groupby("data_size")["total_tokens"].mean()
        ax.plot(means.index, means.values, marker="o", label=group)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("data size (rows)")
    ax.set_ylabel("tokens per run")
    ax.set_title("Tokens against data size")
    ax.legend()
    return _save(fig, out_dir, "tokens_by_data_size.png")


def figure_token_breakdown(frame: pd.DataFrame, out_dir: Path) -> Path:
    groups = _group_order(frame)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    bottom = np.zeros(len(groups))
    for column, name in TOKEN_PARTS:
        values = np.array([frame[frame.group == g][column].mean() for g in groups])
        ax.bar(groups, values, bottom=bottom, label=name)
        bottom += values
    ax.set_ylabel("mean tokens per run (cl100k)")
    ax.set_title("Where the tokens go")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "token_breakdown.png")


# ---- documents ----

def _md_table(table: pd.DataFrame) -> str:
    header = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def _source_line(frame: pd.DataFrame) -> str:
    sources = ", ".join(sorted(frame["token_source"].unique()))
    return (f"Suites: {', '.join(sorted(frame['suite'].unique()))}. Models: {', '.join(sorted(frame['model'].unique()))}. "
            f"Runs: {len(frame)} ({frame['task_id'].nunique()} tasks × {frame['epoch'].nunique()} epoch(s)). "
            f"Token counts: {sources}; the breakdown uses cl100k_base counts. Latency is wall time per run.")


def build_report(results: pd.DataFrame, out_dir: Path, title: str = "Direct tool calls vs code mode") -> ReportPaths:
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = label_groups(results)
    figures = [figure_success(frame, out_dir), figure_tokens_paired(frame, out_dir), figure_latency(frame, out_dir),
               figure_token_breakdown(frame, out_dir)]
    by_size = figure_tokens_by_size(frame, out_dir)
    if by_size is not None:
        figures.append(by_size)
    sections = [("Summary by arm", summary_table(frame)), ("By category", category_table(frame))]
    pass_k = pass_k_table(frame)
    if pass_k is not None:
        sections.append(("pass@k and pass^k over epochs", pass_k))
    answer = answer_paragraph(frame)

    markdown = [f"# {title}", "", "## The answer", "", answer, "", _source_line(frame), ""]
    for heading, table in sections:
        markdown += [f"## {heading}", "", _md_table(table), ""]
    markdown += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures]
    md_path = out_dir / "report.md"
    md_path.write_text("\n".join(markdown) + "\n")

    html_parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
                  "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
                  "table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #ccc;"
                  "padding:4px 8px}th{background:#f3f3f3}img{max-width:100%;margin:1em 0}"
                  ".answer{background:#f6f8fa;padding:1em;border-left:4px solid #4c72b0}</style></head><body>",
                  f"<h1>{html.escape(title)}</h1><h2>The answer</h2>",
                  f"<p class='answer'>{_md_to_html(answer)}</p><p>{html.escape(_source_line(frame))}</p>"]
    for heading, table in sections:
        html_parts.append(f"<h2>{html.escape(heading)}</h2>{table.to_html(index=False, escape=True)}")
    html_parts.append("<h2>Figures</h2>")
    for path in figures:
        encoded = base64.b64encode(path.read_bytes()).decode()
        html_parts.append(f"<img alt='{path.stem}' src='data:image/png;base64,{encoded}'>")
    html_parts.append("</body></html>")
    html_path = out_dir / "report.html"
    html_path.write_text("".join(html_parts))
    return ReportPaths(md_path, html_path, tuple(figures))


def _md_to_html(text: str) -> str:
    escaped = html.escape(text)
    parts = escaped.split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))

