"""Reports from results files: the comparison in words, tables and figures (report.md, a self-contained
report.html, PNGs). Arms are compared on the same tasks (paired), with intervals, so a reader can tell a
measured difference from noise. Runs are grouped by arm x model x program; the tables are in
`harness.analysis.tables`, the words in `harness.analysis.prose`, the figures in `harness.analysis.figures`."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from harness.analysis.cache_use import cache_sentence, cache_use
from harness.analysis.diagnostics import text_tool_call_note
from harness.analysis.figures import draw_figures
from harness.analysis.noise_section import noise_paragraphs, noise_table
from harness.analysis.judge_record import judge_paragraph
from harness.analysis.prose import answer_paragraphs, internal_paragraph, source_line
from harness.analysis.stats import cache_served
from harness.analysis.tables import (
    TOKEN_PARTS,
    catalogue_table,
    category_table,
    error_table,
    group_order,
    label_groups,
    pairings,
    pass_k_table,
    session_table,
    summary_table,
    task_table,
    time_table,
    token_table,
)
from harness.errors import UserError


@dataclass(frozen=True)
class ReportPaths:
    markdown: Path
    html: Path
    figures: tuple[Path, ...]
    answer: str  # the answer paragraphs (markdown), for printing


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
    run viewer's index.html, relative to out_dir) the HTML links to it, and each task to its page there. Runs
    that failed inside the harness (error_type `internal`) are left out of every number and named first, after how
    many runs and LM calls the response cache answered (when it answered any)."""
    if results.empty:
        raise UserError("the results hold no runs: nothing to report (did the run finish any sample?)")
    internal = results[results["error_type"] == "internal"]
    results = results[results["error_type"] != "internal"]
    if results.empty:
        raise UserError(f"every run in the results failed inside the harness (error_type internal, e.g. "
                        f"{internal['error_message'].iloc[0]}): nothing to report; fix the cause and run them again")
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = label_groups(results)
    groups = group_order(frame)
    figures = draw_figures(frame, groups, out_dir, TOKEN_PARTS)
    text_calls = text_tool_call_note(zip(results["arm"], results["answer"]), results["model"], cache_served(results))
    # first: whether the numbers below were measured now or reused from the response cache
    notes = [cache_sentence(cache_use(results), "**Response cache:**"), internal_paragraph(internal), text_calls,
             judge_paragraph(results)]
    found = pairings(frame)
    answer = [p for p in notes if p] + answer_paragraphs(frame, found)
    noise = noise_paragraphs(frame, found)
    sections: list[tuple[str, pd.DataFrame | None, list[str]]] = [
        ("Summary", summary_table(frame), ["success_by_arm.png", "tokens_paired.png"]),
        ("Why runs ended without an answer", error_table(frame), []),
        ("Where the tokens go (mean per run)", token_table(frame), ["token_breakdown.png", "tokens_by_data_size.png"]),
        ("Where the time goes (mean per run, cache-served runs excluded)", time_table(frame), ["latency_by_arm.png"]),
        ("Against the number of tools (catalogue sizes)", catalogue_table(frame), ["catalogue_sweep.png"]),
        ("By category", category_table(frame), []),
        ("By position in a session", session_table(frame), []),
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
    noise_heading = "Noise: what re-running alone moves"
    markdown += [f"## {noise_heading}", "", *[p + "\n" for p in noise]]
    page += [f"<h2>{noise_heading}</h2>", *[f"<p>{_md_to_html(p)}</p>" for p in noise]]
    repeats = noise_table(frame)
    if repeats is not None:
        markdown += [_md_table(repeats), ""]
        page.append(_html_table(repeats))
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
    "catalogue_sweep.png": "Mean tokens per run by part (cl100k_base), latency and success against the number of "
                           "tools in the catalogue, per arm (log axes; success linear). The legend and the table give "
                           "each arm's growth: the least-squares slope of its tokens per run, per added tool.",
}
