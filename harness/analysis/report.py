"""Reports from results files: the comparison in words, tables and figures (report.md, a self-contained
report.html, PNGs). Arms are compared on the same tasks (paired), with intervals, so a reader can tell a
measured difference from noise. Runs are grouped by arm x model x program; figure code is in
`harness.analysis.figures`."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from harness.analysis.stats import (
    Comparison,
    Delta,
    Rate,
    arm_rank,
    cache_served,
    changed_tasks,
    compare_runs,
    group_labels,
    pass_k_over_tasks,
    wilson,
)
from harness.errors import UserError

TOKEN_PARTS = (("context_tool_definition_tokens", "tool definitions"), ("context_tool_result_tokens", "tool results"),
               ("context_task_tokens", "task + instructions"), ("tiktoken_completion_tokens", "LM output"))
TIME_PARTS = (("lm_time_s", "LM"), ("tool_time_s", "tools"), ("sandbox_time_s", "sandbox"),
              ("overhead_s", "harness overhead"))


@dataclass(frozen=True)
class ReportPaths:
    markdown: Path
    html: Path
    figures: tuple[Path, ...]
    answer: str  # the answer paragraphs (markdown), for printing


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
    """Groups by arm (direct first), then in the order they first appear in the input files."""
    first = frame.groupby("group")["_order"].min()
    arms = frame.groupby("group")["arm"].first()
    return sorted(first.index, key=lambda g: (arm_rank(arms[g]), arms[g], first[g]))


def _varying(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("model", "program_hash") if frame[c].nunique() > 1]


def _group_columns(frame: pd.DataFrame, group: str) -> dict[str, str]:
    """Table columns naming a group: the arm, and the model and program when they vary."""
    row = frame[frame["group"] == group].iloc[0]
    columns = {"arm": row["arm"]}
    for column in _varying(frame):
        columns["program" if column == "program_hash" else column] = (
            (row[column][:8] or "built-in") if column == "program_hash" else row[column])
    return columns


def planned_pairings(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Which groups to compare: arms within each model and program (each against direct), then programs
    within each arm and model (against the built-in prompt), then models within each arm and program
    (against the first model in the inputs)."""
    meta = frame.groupby("group").agg(arm=("arm", "first"), model=("model", "first"),
                                      program_hash=("program_hash", "first"), order=("_order", "min"))
    meta = meta.sort_values("order").reset_index()
    pairs: list[tuple[str, str]] = []

    def against_first(fixed: list[str], key) -> None:
        for _, part in meta.groupby(fixed, sort=False):
            ordered = sorted(part.itertuples(), key=key)
            pairs.extend((ordered[0].group, other.group) for other in ordered[1:])

    against_first(["model", "program_hash"], lambda r: (arm_rank(r.arm), r.arm, r.order))
    if meta["program_hash"].nunique() > 1:
        against_first(["arm", "model"], lambda r: (r.program_hash != "", r.order))
    if meta["model"].nunique() > 1:
        against_first(["arm", "program_hash"], lambda r: r.order)
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
    rows = []
    for group in group_order(frame):
        part = frame[frame["group"] == group]
        timed = part[~cache_served(part)]
        rows.append({
            **_group_columns(frame, group), "runs": len(part), "tasks": part["task_id"].nunique(),
            "success [95% CI]": _rate(wilson(int(part["success"].sum()), len(part))),
            "mean tokens": f"{part['total_tokens'].mean():,.0f}", "median tokens": f"{part['total_tokens'].median():,.0f}",
            "mean latency (s)": _mean(timed["latency_s"], 2),
            "median latency (s)": round(float(timed["latency_s"].median()), 2) if len(timed) else float("nan"),
            "mean turns": _mean(part["turns"], 2), "mean tool calls": _mean(part["tool_calls"], 2),
            "errors": int((part["error_type"] != "").sum()), "policy violations": int(part["policy_violations"].sum()),
            "cache-served runs": int(cache_served(part).sum()),
            **cost_columns(part),
        })
    return pd.DataFrame(rows)


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


def category_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per category and group: n, success with its Wilson interval, mean tokens, mean latency."""
    rows = []
    for category in sorted(frame["category"].unique()):
        for group in group_order(frame):
            part = frame[(frame["category"] == category) & (frame["group"] == group)]
            if part.empty:
                continue
            timed = part[~cache_served(part)]
            rows.append({"category": category, **_group_columns(frame, group), "n": len(part),
                         "success [95% CI]": _rate(wilson(int(part["success"].sum()), len(part)), digits=0),
                         "mean tokens": f"{part['total_tokens'].mean():,.0f}",
                         "mean latency (s)": _mean(timed["latency_s"], 2)})
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
    """pass@1, pass@k and pass^k per group; k is the usual number of samples per task (the epochs), and
    tasks with fewer samples (another suite run once, say) are left out."""
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
                     "pass@1": f"{estimate.pass_at_1:.1%}", "pass@k": f"{estimate.pass_at_k:.1%}",
                     "pass^k": f"{estimate.pass_hat_k:.1%}"})
    return pd.DataFrame(rows)


# ---- the answer in words ----

def _significance(flag: bool) -> str:
    return "significant at 95%" if flag else "not significant (the 95% interval includes no change)"


def _span(low: float, high: float, fmt, less: str, more: str) -> str:
    """An interval of a change in words: '2 to 5 fewer', '1 fewer to 3 more'."""
    if high < 0:
        return f"{fmt(-high)} to {fmt(-low)} {less}"
    if low > 0:
        return f"{fmt(low)} to {fmt(high)} {more}"
    if low == high == 0:
        return "no change"
    return f"{fmt(-low)} {less} to {fmt(high)} {more}"


def _percent(value: float) -> str:
    return f"{value:.1%}"


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def _plain(value: float) -> str:
    return f"{value:.2f}"


def _change(subject: str, delta: Delta, fmt, less: str, more: str, noun: str, same: str, *, relative: bool = False,
            extra: str = "") -> str:
    """'It used 90.0% fewer tokens (95% CI 85.0% to 93.0% fewer; ...), significant at 95%.', or `same` when no
    paired task moved at all."""
    if delta.mean == 0 and delta.low == delta.high == 0:
        return f"{same}{f' ({extra})' if extra else ''}."
    mean, low, high = (delta.relative, delta.relative_low, delta.relative_high) if relative else \
        (delta.mean, delta.low, delta.high)
    amount = f"{fmt(abs(mean))} {less if mean < 0 else more}"
    return (f"{subject} {amount} {noun} (95% CI {_span(low, high, fmt, less, more)}{f'; {extra}' if extra else ''}), "
            f"{_significance(delta.significant)}.")


def short_names(baseline: str, candidate: str) -> tuple[str, str, str]:
    """('qwen', 'direct', 'codemode') for 'direct · qwen' vs 'codemode · qwen': what they share, then what differs."""
    a, b = baseline.split(" · "), candidate.split(" · ")
    shared = [x for x, y in zip(a, b) if x == y]
    differ_a = [x for x, y in zip(a, b) if x != y]
    differ_b = [y for x, y in zip(a, b) if x != y]
    return " · ".join(shared), " · ".join(differ_a), " · ".join(differ_b)


def describe(c: Comparison) -> str:
    """One paragraph: the verdict first, then success, tokens, latency and turns of the candidate against the
    baseline, each with its interval and whether it is significant."""
    context, base, cand = short_names(c.baseline, c.candidate)
    s, test = c.success, c.mcnemar
    sentences = [
        f"**{_verdict(c, context, base, cand)}**",
        (f"Over {c.tasks} task(s) and {c.pairs} paired run(s), {cand} succeeded on {c.success_candidate.value:.1%} "
         f"and {base} on {c.success_baseline.value:.1%}: {s.mean * 100:+.1f} points (95% CI {s.low * 100:+.1f} to "
         f"{s.high * 100:+.1f}); exact McNemar {test.p_text} ({test.only_b} pair(s) only {cand} solved, "
         f"{test.only_a} only {base}), {'significant at 95%' if test.significant else 'not significant'}.")]
    t = c.tokens
    if np.isfinite(t.relative):
        typical = c.tokens_median_task_change
        extra = "" if t.mean == 0 else f"{abs(t.mean):,.0f} {'fewer' if t.mean < 0 else 'more'} per run" + (
            f"; the median task {abs(typical):.1%} {'fewer' if typical < 0 else 'more'}"
            if np.isfinite(typical) and typical != 0 else "")
        sentences.append(_change("It used", t, _percent, "fewer", "more", "tokens",
                                 "It used the same number of tokens on every paired task", relative=True, extra=extra))
    lat = c.latency
    if lat.n:
        excluded = f"{c.cache_excluded} pair(s) with a cache-served run left out" if c.cache_excluded else ""
        share = f" ({abs(lat.relative):.0%})" if np.isfinite(lat.relative) and lat.mean else ""
        sentences.append(_change("It was", lat, _seconds, "faster", "slower", "per run",
                                 "Latency was the same on every paired task", extra=excluded)
                         .replace(" s faster per run", f" s{share} faster per run", 1)
                         .replace(" s slower per run", f" s{share} slower per run", 1))
    else:
        sentences.append("Latency cannot be compared: every pair had a cache-served run.")
    sentences.append(_change("It took", c.turns, _plain, "fewer", "more", "turns per run",
                             "It took the same number of turns on every paired task"))
    return " ".join(sentences)


def _verdict(c: Comparison, context: str, base: str, cand: str) -> str:
    """The comparison in one sentence: which differences are beyond noise, which within it, which are nil."""
    found, noise, same = [], [], []
    if c.mcnemar.significant:
        found.append("succeeded more often" if c.success.mean > 0 else "succeeded less often")
    else:
        (same if c.mcnemar.only_a == c.mcnemar.only_b == 0 else noise).append("success")
    for name, delta, less, more in (("tokens", c.tokens, "used fewer tokens", "used more tokens"),
                                    ("latency", c.latency, "was faster", "was slower"),
                                    ("turns", c.turns, "took fewer turns", "took more turns")):
        if delta.n == 0:
            continue
        if delta.significant:
            found.append(less if delta.mean < 0 else more)
        elif delta.mean == 0 and delta.low == delta.high == 0:
            same.append(name)
        else:
            noise.append(name)
    parts = [f"{cand} {_join(found)}"] if found else []
    if noise:
        parts.append(f"{_join(noise)} {'differ' if len(noise) > 1 else 'differs'} only within noise")
    if same:
        parts.append(f"{_join(same)} identical on every paired task")
    words = f"{context + ', ' if context else ''}{cand} vs {base}: {'; '.join(parts)}"
    if c.tasks < 10:
        words += f" (only {c.tasks} task(s): wide intervals)"
    return words + "."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def answer_paragraphs(frame: pd.DataFrame) -> list[str]:
    """The comparison in plain words: what differed, by how much, and whether it is more than noise."""
    groups = group_order(frame)
    if len(groups) < 2:
        only = groups[0] if groups else "nothing"
        return [(f"Only one arm ({only}) is in these results, so there is no comparison to state; the tables "
                 "and figures describe it alone.")]
    paragraphs = []
    for pairing in pairings(frame):
        if pairing.comparison is None:
            paragraphs.append(f"**{pairing.candidate}** and **{pairing.baseline}** share no task and epoch, so "
                              f"they cannot be compared pairwise.")
        else:
            paragraphs.append(describe(pairing.comparison))
    changed = changed_tasks(frame)
    if changed:
        paragraphs.append(f"**Warning:** {len(changed)} task(s) appear with different definitions (task_hash) in "
                          f"these results: {', '.join(changed)}. They were edited between runs, so comparisons "
                          f"across those runs pair different versions of them.")
    cost = cost_sentence(frame, groups)
    if cost:
        paragraphs.append(cost)
    served = int(cache_served(frame).sum())
    if served:
        paragraphs.append(f"{served} run(s) were served entirely from the LM response cache (cached_llm_calls = "
                          f"llm_calls > 0): they count for success, tokens and turns, not for latency.")
    return paragraphs


def cost_sentence(frame: pd.DataFrame, groups: list[str]) -> str | None:
    """What each group cost per successful run, when some run cost anything (the embedded and scripted models
    cost nothing, and an unknown price is said so rather than guessed)."""
    if not (frame["cost_usd"].fillna(0) > 0).any():
        return None
    parts = []
    for group in groups:
        columns = cost_columns(frame[frame["group"] == group])
        per_success = columns["cost per success (USD)"]
        parts.append(f"**{group}** {per_success if per_success in ('unknown', 'no success') else '$' + per_success}")
    return f"Cost per successful run (LiteLLM's price map, see the cost source column): {_join(parts)}."


def source_line(frame: pd.DataFrame) -> str:
    """Where the numbers come from."""
    def names(column: str) -> str:
        return ", ".join(sorted(str(v) for v in frame[column].unique() if v != "")) or "-"

    return (f"Suites: {names('suite')}. Models: {names('model')}. Runs: {len(frame)} ({frame['task_id'].nunique()} "
            f"tasks, {frame['epoch'].nunique()} epoch(s)) from run(s) {names('run_id')}; harness {names('harness_version')}"
            f" at {', '.join(sha[:12] for sha in names('git_sha').split(', '))}. Headline tokens: {names('token_source')}; the token breakdown counts every "
            f"prompt with tiktoken cl100k_base. Latency is wall time per run. Comparisons pair runs on task and "
            f"epoch; intervals are percentile bootstraps that resample whole tasks (10,000 resamples, seed 0).")


# ---- documents ----

def _md_table(table: pd.DataFrame) -> str:
    header = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def _html_table(table: pd.DataFrame) -> str:
    """A table with numbers right-aligned and words left-aligned (pandas' to_html aligns every cell alike)."""
    def cell(value) -> str:
        numeric = isinstance(value, (int, float, np.integer, np.floating)) or str(value)[:1].isdigit()
        return f"<td class='{'num' if numeric else 'text'}'>{html.escape(str(value))}</td>"

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in table.itertuples(index=False))
    return f"<div class='wide'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _md_to_html(text: str) -> str:
    parts = html.escape(text).split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;"
         "line-height:1.45}table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}"
         ".wide{overflow-x:auto}td,th{border:1px solid #ccc;padding:3px 8px;white-space:nowrap}td.num{text-align:right}"
         "th{text-align:left;white-space:normal;vertical-align:bottom}"
         "th{background:#f3f3f3}.answer{background:#f6f8fa;padding:.8em 1em;border-left:4px solid #4c72b0;margin:.6em 0}"
         ".figures{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0;flex:0 1 530px}"
         "figure img{width:100%;border:1px solid #eee}figcaption{font-size:13px;color:#555}.source{color:#555;"
         "font-size:13px}")


def _task_links_html(table: pd.DataFrame, viewer_href: str) -> str:
    """The task table with each task linked to its page in the viewer (its runs side by side)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = []
    for row in table.itertuples(index=False):
        suite, task, *cells = row
        href = f"{viewer_href}#/task/{quote(task)}?suite={quote(suite)}"
        body.append(f"<tr><td class='text'>{html.escape(suite)}</td><td class='text'><a href='{html.escape(href)}'>"
                    f"{html.escape(task)}</a></td>" + "".join(f"<td class='num'>{html.escape(c)}</td>" for c in cells)
                    + "</tr>")
    return f"<div class='wide'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def build_report(results: pd.DataFrame, out_dir: Path, title: str = "Direct tool calls vs code mode",
                 viewer_href: str | None = None) -> ReportPaths:
    """Write report.md, a self-contained report.html and the PNG figures into out_dir; with `viewer_href` (the
    run viewer's index.html, relative to out_dir) the HTML links to it, and each task to its page there."""
    from harness.analysis.figures import draw_figures

    if results.empty:
        raise UserError("the results hold no runs: nothing to report (did the run finish any sample?)")
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = label_groups(results)
    groups = group_order(frame)
    figures = draw_figures(frame, groups, out_dir, TOKEN_PARTS)
    answer = answer_paragraphs(frame)
    sections: list[tuple[str, pd.DataFrame | None, list[str]]] = [
        ("Summary", summary_table(frame), ["success_by_arm.png", "tokens_paired.png"]),
        ("Where the tokens go (mean per run)", token_table(frame), ["token_breakdown.png", "tokens_by_data_size.png"]),
        ("Where the time goes (mean per run, cache-served runs excluded)", time_table(frame), ["latency_by_arm.png"]),
        ("By category", category_table(frame), []),
        ("pass@k and pass^k over epochs", pass_k_table(frame), []),
    ]
    by_name = {p.name: p for p in figures}

    markdown = [f"# {title}", "", "## The answer", "", *[p + "\n" for p in answer], f"_{source_line(frame)}_", ""]
    page = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1><h2>The answer</h2>",
            *[f"<p class='answer'>{_md_to_html(p)}</p>" for p in answer],
            f"<p class='source'>{html.escape(source_line(frame))}</p>"]
    if viewer_href:
        page.append(f"<p>Every run, step by step (LM calls, code, tool calls): <a href='{html.escape(viewer_href)}'>"
                    "the run viewer</a>; each task below links to its runs side by side.</p>")
    for heading, table, names in sections:
        if table is None:
            continue
        shown = [by_name[n] for n in names if n in by_name]
        markdown += [f"## {heading}", "", _md_table(table), "", *[f"![{p.stem}]({p.name})\n" for p in shown]]
        page.append(f"<h2>{html.escape(heading)}</h2>{_html_table(table)}")
        if shown:
            page.append("<div class='figures'>")
            for path in shown:
                encoded = base64.b64encode(path.read_bytes()).decode()
                page.append(f"<figure><img alt='{path.stem}' src='data:image/png;base64,{encoded}'>"
                            f"<figcaption>{html.escape(CAPTIONS[path.name])}</figcaption></figure>")
            page.append("</div>")
    tasks = task_table(frame)
    markdown += ["## Tasks (runs passed / runs)", "", _md_table(tasks), ""]
    page.append("<h2>Tasks (runs passed / runs)</h2>" + (_task_links_html(tasks, viewer_href) if viewer_href
                                                          else _html_table(tasks)))
    page.append("</body></html>")
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text("\n".join(markdown) + "\n", encoding="utf-8")
    html_path.write_text("".join(page), encoding="utf-8")
    return ReportPaths(md_path, html_path, tuple(figures), "\n\n".join(answer))


CAPTIONS = {
    "success_by_arm.png": "Success rate per arm with 95% Wilson intervals.",
    "tokens_paired.png": "Tokens per task (mean over epochs), one line per task joining the arms; log scale. "
                         "Black bars: medians.",
    "token_breakdown.png": "What the LM read and wrote, counted with cl100k_base: tool definitions, tool results, "
                           "task and instructions, its own output.",
    "tokens_by_data_size.png": "Tokens per run against the data size of scale-suite tasks (log-log).",
    "latency_by_arm.png": "Latency per run (box: quartiles; points: runs). Cache-served runs are excluded.",
}
