"""The comparison in words: one paragraph per pair of groups saying what changed and whether it is more than
noise, and the line on how the numbers were measured."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.agents.arms import arm_rank
from harness.analysis.noise import POWER, holm, tasks_needed
from harness.analysis.stats import (
    ROUGH_INTERVAL_TASKS,
    SMALL_SAMPLE_TASKS,
    Comparison,
    Delta,
    changed_tasks,
    tool_latency,
)
from harness.analysis.tables import Pairing, cost_columns, group_order, pairings

# ---- the answer in words ----

def significance(delta: Delta, adjusted: float = float("nan")) -> str:
    """Whether a difference is significant, and by which test: the exact sign-flip test over task-level
    differences below SMALL_SAMPLE_TASKS tasks (saying when so few tasks cannot reach p < 0.05 at all; with its
    Holm-adjusted p over the report's tests when given), else the bootstrap interval."""
    if delta.test == "sign-flip":
        verdict = "significant" if delta.significant else "not significant"
        floor = f"; {delta.n} tasks cannot reach p < 0.05" if 2 / 2 ** delta.n >= 0.05 else ""
        rough = f"; an interval from {delta.n} task(s) is rough" if delta.rough else ""
        return (f"{verdict} (exact sign-flip test over {delta.n} task-level difference(s), "
                f"{_p_text(delta.p_value)}{_holm_text(adjusted)}{floor}{rough})")
    return ("significant at 95% (bootstrap interval over whole tasks)" if delta.significant
            else "not significant (the 95% interval includes no change)")


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _holm_text(adjusted: float) -> str:
    """', Holm-adjusted p = 0.120' beside a raw p (empty when the report states a single test or none)."""
    return f", Holm-adjusted {_p_text(adjusted)}" if np.isfinite(adjusted) else ""


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
            extra: str = "", adjusted: float = float("nan")) -> str:
    """'It used 90.0% fewer tokens (95% CI 85.0% to 93.0% fewer; ...), significant at 95%.', or `same` when no
    paired task moved at all."""
    if delta.mean == 0 and delta.low == delta.high == 0:
        return f"{same}{f' ({extra})' if extra else ''}."
    mean, low, high = (delta.relative, delta.relative_low, delta.relative_high) if relative else \
        (delta.mean, delta.low, delta.high)
    amount = f"{fmt(abs(mean))} {less if mean < 0 else more}"
    return (f"{subject} {amount} {noun} (95% CI {_span(low, high, fmt, less, more)}{f'; {extra}' if extra else ''}), "
            f"{significance(delta, adjusted)}.")


def short_names(baseline: str, candidate: str) -> tuple[str, str, str]:
    """('qwen', 'direct', 'codemode') for 'direct · qwen' vs 'codemode · qwen': what they share, then what differs."""
    a, b = baseline.split(" · "), candidate.split(" · ")
    shared = [x for x, y in zip(a, b) if x == y]
    differ_a = [x for x, y in zip(a, b) if x != y]
    differ_b = [y for x, y in zip(a, b) if x != y]
    return " · ".join(shared), " · ".join(differ_a), " · ".join(differ_b)


REPORT_ALPHA = 0.05  # the report's tests are two-sided at this level


def detectable_sentence(c: Comparison) -> str:
    """What this comparison could have seen: its minimum detectable difference in success (80% power, two-sided
    at the report's alpha, tasks as the unit, from the spread of its task-level differences)."""
    test = c.success_test
    if test.tasks < tasks_needed(REPORT_ALPHA, "two-sided"):
        return (f"With {test.tasks} task(s) no difference in success can reach p < {REPORT_ALPHA:g} (the exact test "
                f"needs {tasks_needed(REPORT_ALPHA, 'two-sided')}).")
    mdd = test.mdd(REPORT_ALPHA, POWER)
    epochs = test.runs / test.tasks
    if mdd >= 1:
        return (f"Its {test.tasks} task(s) x {epochs:g} epoch(s) could detect only a change on every task (80% "
                f"power, alpha {REPORT_ALPHA:g}).")
    return (f"Its {test.tasks} task(s) x {epochs:g} epoch(s) could detect a difference in success of "
            f"{mdd * 100:.1f} points or more (80% power, alpha {REPORT_ALPHA:g}); a smaller true difference would "
            "usually go unseen.")


def describe(c: Comparison, adjusted: dict[str, float] | None = None) -> str:
    """One paragraph: the verdict first, then success, tokens, latency and turns of the candidate against the
    baseline, each with its interval and whether it is significant, the success test's Holm-adjusted p beside its
    raw one (`adjusted`: per metric, over the report's family of tests), and what the comparison could detect."""
    adjusted = adjusted or {}
    nan = float("nan")
    context, base, cand = short_names(c.baseline, c.candidate)
    s, pairs, test = c.success, c.mcnemar, c.success_test
    significant = test.p_value < REPORT_ALPHA
    sentences = [
        f"**{_verdict(c, context, base, cand)}**",
        (f"Over {c.tasks} task(s) and {c.pairs} paired run(s), {cand} succeeded on {c.success_candidate.value:.1%} "
         f"and {base} on {c.success_baseline.value:.1%}: {s.mean * 100:+.1f} points (95% CI {s.low * 100:+.1f} to "
         f"{s.high * 100:+.1f}; {pairs.only_b} pair(s) only {cand} solved, {pairs.only_a} only {base}); paired "
         f"sign-flip test over tasks {_p_text(test.p_value)}{_holm_text(adjusted.get('success', nan))}, "
         f"{'significant at 95%' if significant else 'not significant'}. {detectable_sentence(c)}")]
    t = c.tokens
    if np.isfinite(t.relative):
        typical = c.tokens_median_task_change
        extra = "" if t.mean == 0 else f"{abs(t.mean):,.0f} {'fewer' if t.mean < 0 else 'more'} per run" + (
            f"; the median task {abs(typical):.1%} {'fewer' if typical < 0 else 'more'}"
            if np.isfinite(typical) and typical != 0 else "")
        sentences.append(_change("It used", t, _percent, "fewer", "more", "tokens",
                                 "It used the same number of tokens on every paired task", relative=True, extra=extra,
                                 adjusted=adjusted.get("tokens", nan)))
    lat = c.latency
    if lat.n:
        excluded = f"{c.cache_excluded} pair(s) with a cache-served run left out" if c.cache_excluded else ""
        share = f" ({abs(lat.relative):.0%})" if np.isfinite(lat.relative) and lat.mean else ""
        sentences.append(_change("It was", lat, _seconds, "faster", "slower", "per run",
                                 "Latency was the same on every paired task", extra=excluded,
                                 adjusted=adjusted.get("latency", nan))
                         .replace(" s faster per run", f" s{share} faster per run", 1)
                         .replace(" s slower per run", f" s{share} slower per run", 1))
        sentences.append(paired_in_time(c))
    else:
        sentences.append("Latency cannot be compared: every pair had a cache-served run.")
    sentences.append(_change("It took", c.turns, _plain, "fewer", "more", "turns per run",
                             "It took the same number of turns on every paired task",
                             adjusted=adjusted.get("turns", nan)))
    return " ".join(sentences)


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def paired_in_time(c: Comparison) -> str:
    """Whether the latency pairs ran next to each other (one run, arms interleaved) or apart (drift between them,
    a provider's latency through the day, is then part of the difference)."""
    gap = f"median {_duration(c.start_gap_s)} apart" if np.isfinite(c.start_gap_s) else "start times unknown"
    if c.same_run:
        return (f"Its latency pairs were paired in time: each task x epoch ran through both sides next to each other "
                f"in one run ({gap}).")
    return (f"Its latency pairs were not paired in time (they come from different runs, {gap}): drift between "
            "those runs is part of this latency difference.")


def _verdict(c: Comparison, context: str, base: str, cand: str) -> str:
    """The comparison in one sentence: which differences are beyond noise, which within it, which are nil."""
    found, noise, same = [], [], []
    if c.success_test.p_value < REPORT_ALPHA:
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
    if c.tasks < ROUGH_INTERVAL_TASKS:
        words += f" (only {c.tasks} task(s): rough intervals, exact tests)"
    return words + "."


def holm_family(comparisons: list[Comparison]) -> dict[int, dict[str, float]]:
    """Holm-adjusted p of every test the report states (each comparison's success test, and its sign-flip tests
    of tokens, latency and turns), per comparison (by id) and metric; none when the report states one test."""
    tests = [(id(c), "success", c.success_test.p_value) for c in comparisons]
    tests += [(id(c), name, delta.p_value) for c in comparisons
              for name, delta in (("tokens", c.tokens), ("latency", c.latency), ("turns", c.turns))
              if delta.test == "sign-flip" and delta.n]
    if len(tests) < 2:
        return {}
    adjusted: dict[int, dict[str, float]] = {}
    for (key, name, _), p in zip(tests, holm([p for _, _, p in tests])):
        adjusted.setdefault(key, {})[name] = p
    return adjusted


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def answer_paragraphs(frame: pd.DataFrame, found: list[Pairing] | None = None) -> list[str]:
    """The comparison in plain words: what differed, by how much, and whether it is more than noise (`found`: the
    comparisons, when the caller already made them)."""
    groups = group_order(frame)
    if len(groups) < 2:
        only = groups[0] if groups else "nothing"
        return [(f"Only one arm ({only}) is in these results, so there is no comparison to state; the tables "
                 "and figures describe it alone.")]
    paragraphs = []
    found = pairings(frame) if found is None else found
    family = holm_family([p.comparison for p in found if p.comparison is not None])
    for pairing in found:
        if pairing.comparison is None:
            paragraphs.append(f"**{pairing.candidate}** and **{pairing.baseline}** share no task and epoch, so "
                              f"they cannot be compared pairwise.")
        else:
            paragraphs.append(describe(pairing.comparison, family.get(id(pairing.comparison))))
    changed = changed_tasks(frame)
    if changed:
        paragraphs.append(f"**Warning:** {len(changed)} task(s) appear with different definitions (task_hash) in "
                          f"these results: {', '.join(changed)}. They were edited between runs, so comparisons "
                          f"across those runs pair different versions of them.")
    cost = cost_sentence(frame, groups)
    if cost:
        paragraphs.append(cost)
    return paragraphs


def internal_paragraph(internal: pd.DataFrame) -> str | None:
    """The runs left out of the report because they failed inside the harness (error_type `internal`: a bug, a
    missing module), per arm with their most common message: they are not answers of the model, so they count
    neither as successes nor as failures (None when there are none)."""
    if internal.empty:
        return None
    parts = [f"{arm} {len(part)} ({part['error_message'].mode().iloc[0]})"
             for arm, part in sorted(internal.groupby("arm"), key=lambda item: arm_rank(item[0]))]
    return (f"**{len(internal)} run(s) left out: they failed inside the harness** (error_type internal: a bug or a "
            f"missing module, not an answer of the model), so every number below leaves them out: {_join(parts)}. "
            "Fix the cause and run them again (`harness run --resume RUN_ID`).")


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


def tool_latency_sentence(frame: pd.DataFrame) -> str:
    """What delay the runs' tool calls had added on the host (tool_latency_s), when any had one: it is part of
    every latency number, so a reader must know it (empty when no run had one)."""
    values = sorted(tool_latency(frame).unique())
    if not any(values):
        return ""
    if len(values) == 1:
        return (f" Every tool call was delayed {values[0]:g} s on the host, as a remote server's round trip "
                "(tool_latency_s); concurrent calls overlapped their delays.")
    return (f" Tool calls were delayed on the host, as a remote server's round trip (tool_latency_s): "
            f"{', '.join(f'{v:g} s' for v in values)} in different runs; the groups are split by it.")


def feedback_sentence(frame: pd.DataFrame) -> str:
    """How turns were counted when some run went on after a rejected answer (scaffold rule answer_feedback, a
    benchmark's published protocol): empty when every run ended at its first answer."""
    again = int((frame["answer_attempts"] > 1).sum()) if "answer_attempts" in frame else 0
    if not again:
        return ""
    return (f" Under answer feedback {again} run(s) went on after a rejected answer (answer_attempts > 1): turns "
            "count every attempt, and success is any accepted answer.")


def source_line(frame: pd.DataFrame) -> str:
    """Where the numbers come from."""
    def names(column: str) -> str:
        return ", ".join(sorted(str(v) for v in frame[column].unique() if v != "")) or "-"

    scaffolds = ", ".join(sorted({f"{name} ({digest or 'no hash'})" for name, digest in
                                  zip(frame["scaffold"], frame["scaffold_hash"])}))
    return (f"Suites: {names('suite')}. Models: {names('model')}. Scaffolds (the rules beyond the task and its "
            f"tools, docs/fair-comparison.md): {scaffolds}. Runs: {len(frame)} ({frame['task_id'].nunique()} "
            f"tasks, {frame['epoch'].nunique()} epoch(s)) from run(s) {names('run_id')}; harness {names('harness_version')}"
            f" at {', '.join(sha[:12] for sha in names('git_sha').split(', '))}. Headline tokens: {names('token_source')}; the token breakdown counts every "
            f"prompt with tiktoken cl100k_base. Latency is wall time per run.{tool_latency_sentence(frame)}{feedback_sentence(frame)} Comparisons pair runs on task and "
            f"epoch; intervals are percentile bootstraps that resample whole tasks (10,000 resamples, seed 0), rough "
            f"below {ROUGH_INTERVAL_TASKS} tasks. Success differences are tested with an exact sign-flip test over tasks (each "
            f"task's difference summed over its paired epochs is one unit; two-sided, alpha {REPORT_ALPHA:g}); tokens, "
            f"latency and turns with an exact sign-flip permutation test over the task-level differences when fewer "
            f"than {SMALL_SAMPLE_TASKS} tasks pair, else by whether the bootstrap interval excludes no change. Holm-adjusted "
            f"p-values stand beside the raw ones, over every test the report states; each comparison states the "
            f"smallest difference in success it could detect (80% power).")
