"""`build_report` on synthetic results written through the real record path."""

import dataclasses
import re

import pandas as pd
import pytest

from harness.analysis.prose import answer_paragraphs
from harness.analysis.report import build_report
from harness.analysis.tables import (
    category_table,
    label_groups,
    pass_k_table,
    planned_pairings,
    summary_table,
)
from harness.errors import UserError
from harness.run.records import read_results
from tests.results_factory import record, write_records, write_results

FIGURES = {"success_by_arm.png", "tokens_paired.png", "latency_by_arm.png", "token_breakdown.png"}


def labelled(*paths) -> pd.DataFrame:
    return label_groups(read_results(list(paths)))


def test_report_writes_markdown_self_contained_html_and_figures(tmp_path):
    path = write_results(tmp_path / "r", "run1", {"direct": [True, False, True], "codemode": [True]}, sizes=True)
    paths = build_report(read_results([path]), tmp_path / "report", "My title")
    assert {p.name for p in paths.figures} == FIGURES | {"tokens_by_data_size.png"}
    assert all(p.stat().st_size > 5000 for p in paths.figures)  # drawn, not empty canvases
    markdown = paths.markdown.read_text()
    assert markdown.startswith("# My title") and "## The answer" in markdown
    for heading in ("## Summary", "## Where the tokens go", "## Where the time goes", "## By category",
                    "## pass@k and pass^k over epochs"):
        assert heading in markdown
    assert all(f"]({name})" in markdown for name in FIGURES)
    page = paths.html.read_text()
    assert page.count("data:image/png;base64,") == len(paths.figures)
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"https?:|//[a-z]|url\(|@import", text)  # no external assets or links
    assert not re.search(r"""(src|href)=['"](?!')""", text)  # every src was a data URI
    assert "codemode" in paths.answer and "direct" in paths.answer


def test_answer_states_each_difference_and_whether_it_is_significant(tmp_path):
    # direct fails 2 of 6 tasks in both epochs, codemode none: 4 discordant pairs, but 2 tasks: units +2, +2 and
    # four 0, so the clustered sign-flip test's two-sided p = P(|S| >= 4) = 2/4 = 0.5.
    # tokens: direct mean 2000 + 500·2.5 = 3250, codemode 200 + 40·2.5 = 300 -> 300/3250 - 1 = -90.8%
    path = write_results(tmp_path, "run1", {"direct": [True, False, True], "codemode": [True]})
    paragraph = answer_paragraphs(labelled(path))[0]
    assert paragraph.startswith("**codemode vs direct: codemode used fewer tokens, was faster and took fewer turns;"
                                " success differs only within noise (only 6 task(s): rough intervals, exact tests).**")
    assert "codemode succeeded on 100.0% and direct on 66.7%: +33.3 points" in paragraph
    assert ("4 pair(s) only codemode solved, 0 only direct); paired sign-flip test over tasks p = 0.500, Holm-adjusted "
            "p = 0.500, not significant.") in paragraph
    # task-level differences 1, 1, 0, 0, 0, 0 (sd 0.5164) over 6 tasks: even a 100-point change misses the margin
    # (harness.analysis.noise.detection_margin), so only a change on every task is detectable
    assert "Its 6 task(s) x 2 epoch(s) could detect only a change on every task (80% power, alpha 0.05)." in paragraph
    assert "Its latency pairs were paired in time: each task x epoch ran through both sides next to each other" \
        in paragraph
    assert "It used 90.8% fewer tokens (95% CI" in paragraph and "2,950 fewer per run;" in paragraph
    # latency: direct 1.5 + 0.1t (mean 1.75), codemode 1.0 + 0.1t: -0.5 s = 29% of 1.75 on every task
    # 6 tasks all faster: the exact sign-flip test's p = 2/2^6 = 0.031; Holm over the report's 4 tests (success
    # 0.5, tokens, latency and turns 0.031 each): 4 · 0.031 = 0.125 for the smallest, then max(3 · 0.031, 0.125)
    assert ("It was 0.50 s (29%) faster per run (95% CI 0.50 s to 0.50 s faster), significant (exact sign-flip "
            "test over 6 task-level difference(s), p = 0.031, Holm-adjusted p = 0.125; an interval from 6 task(s) is "
            "rough)") in paragraph
    assert "It took 2.00 fewer turns per run" in paragraph


def test_a_four_task_report_uses_the_exact_test_and_claims_nothing_it_cannot(tmp_path):
    # 4 tasks, codemode faster, cheaper and shorter on every one: the percentile bootstrap's interval excludes
    # zero, but the exact sign-flip test over 4 task-level differences gives p = 2/2^4 = 0.125 at best
    path = write_results(tmp_path, "run1", {"direct": [True], "codemode": [True]}, tasks=4, epochs=1)
    paths = build_report(read_results([path]), tmp_path / "report")
    paragraph = paths.answer
    assert paragraph.startswith("**codemode vs direct: tokens, latency and turns differ only within noise; success "
                                "identical on every paired task (only 4 task(s): rough intervals, exact tests).**")
    # Holm over the 4 stated tests (success p = 1, three at 0.125): 4 · 0.125 = 0.5 for each of the three
    assert paragraph.count("not significant (exact sign-flip test over 4 task-level difference(s), p = 0.125, "
                           "Holm-adjusted p = 0.500; 4 tasks cannot reach p < 0.05; an interval from 4 task(s) is "
                           "rough)") == 3
    assert "With 4 task(s) no difference in success can reach p < 0.05 (the exact test needs 6)." in paragraph
    assert re.findall(r"(?<!not )significant", paragraph) == []
    assert "exact sign-flip permutation test over the task-level differences" in paths.markdown.read_text()


def test_summary_and_category_tables_carry_wilson_intervals(tmp_path):
    path = write_results(tmp_path, "run1", {"direct": [True, False], "codemode": [True]})
    summary = summary_table(labelled(path)).set_index("arm")
    assert list(summary.index) == ["direct", "codemode"]
    # 6 of 12: z²/12 = 0.320122; center 0.5; half = z·sqrt(0.25/12 + z²/576)/(1 + z²/12)
    #        = 1.959964 · sqrt(0.0208333 + 0.0066692)/1.320122 = 0.246218  ->  [25.4%, 74.6%]
    assert summary.loc["direct", "success [95% CI]"] == "50.0% [25.4%, 74.6%]"
    categories = category_table(labelled(path))
    # category c0 holds tasks t0 (success) and t3 (failure) in two epochs: 2 of 4; d = 1 + z²/4 = 1.960365,
    # half = z·sqrt(0.25/4 + z²/64)/d = 1.959964 · 0.350033/1.960365 = 0.349962  ->  [15%, 85%]
    row = categories[(categories["category"] == "c0") & (categories["arm"] == "direct")].iloc[0]
    assert (row["n"], row["success [95% CI]"], row["mean tokens"]) == (4, "50% [15%, 85%]", "2,750")
    assert row["mean latency (s)"] == pytest.approx(1.65)  # (1.5 + 1.8) / 2


def test_pass_k_table_uses_the_epochs(tmp_path):
    # t0 succeeds in 1 of 3 epochs, t1 in 3 of 3 (k = 3): pass@1 = (1/3 + 1)/2 = 66.7%;
    # pass@3 = 100% (t0: only 2 failures, so any 3 samples include the success); pass^3 = (0 + 1)/2 = 50%;
    # pass^2 = (C(1,2)/C(3,2) = 0 + 1)/2 = 50%; pass^1 = pass@1
    outcomes = {(0, 0): True, (0, 1): False, (0, 2): False}
    path = tmp_path / "k.parquet"
    write_records(path, [record("r", t, "codemode", e, outcomes.get((t, e), True)) for t in range(2) for e in range(3)])
    row = pass_k_table(labelled(path)).iloc[0]
    assert (row["k"], row["pass^1"], row["pass^2"], row["pass^3"], row["pass@3"]) == (
        3, "66.7%", "50.0%", "50.0%", "100.0%")
    single = tmp_path / "one.parquet"
    write_records(single, [record("r", 0, "codemode", 0, True)])
    assert pass_k_table(labelled(single)) is None


def test_all_successful_runs_draw_their_intervals(tmp_path):
    # Wilson's upper bound equals the rate here: an error bar below zero length used to crash matplotlib
    path = write_results(tmp_path, "run1", {"direct": [True], "codemode": [True]}, tasks=31)
    paths = build_report(read_results([path]), tmp_path / "report")
    assert "100.0% [94.2%, 100.0%]" in paths.markdown.read_text()


def test_a_single_arm_and_a_single_task_still_report(tmp_path):
    path = write_results(tmp_path, "run1", {"codemode": [True]}, tasks=1, epochs=1)
    paths = build_report(read_results([path]), tmp_path / "report")
    assert "Only one arm (codemode)" in paths.markdown.read_text()
    assert {p.name for p in paths.figures} == FIGURES
    two_arms = write_results(tmp_path / "two", "run1", {"direct": [False], "codemode": [True]}, tasks=1, epochs=1)
    answer = build_report(read_results([two_arms]), tmp_path / "report2").answer
    assert "Over 1 task(s) and 1 paired run(s)" in answer and "not significant" in answer


def test_models_and_programs_are_compared_side_by_side(tmp_path):
    base = write_results(tmp_path / "a", "base", {"direct": [True], "codemode": [True, False]}, model="small")
    tuned = write_results(tmp_path / "b", "tuned", {"direct": [True], "codemode": [True]}, model="small",
                          program_hash="feedbeef00")
    big = write_results(tmp_path / "c", "big", {"direct": [True], "codemode": [True]}, model="big")
    frame = labelled(base, tuned, big)
    assert planned_pairings(frame) == [
        # arms within each model and program
        ("direct · small · built-in prompt", "codemode · small · built-in prompt"),
        ("direct · small · program feedbeef", "codemode · small · program feedbeef"),
        ("direct · big · built-in prompt", "codemode · big · built-in prompt"),
        # programs within each arm and model, against the built-in prompt
        ("direct · small · built-in prompt", "direct · small · program feedbeef"),
        ("codemode · small · built-in prompt", "codemode · small · program feedbeef"),
        # models within each arm and program, against the first model in the inputs
        ("direct · small · built-in prompt", "direct · big · built-in prompt"),
        ("codemode · small · built-in prompt", "codemode · big · built-in prompt"),
    ]
    summary = summary_table(frame)
    assert list(summary.columns[:3]) == ["arm", "model", "program"]
    assert len(summary) == 6
    paths = build_report(read_results([base, tuned, big]), tmp_path / "report")
    paragraphs = paths.answer.split("\n\n")
    assert len(paragraphs) == 8 and paragraphs[-1].startswith("Cost per successful run")  # 7 comparisons, then cost
    # the shared part of two labels leads, the differing part names the sides
    # 3 of 6 tasks fail both epochs under the built-in prompt: 6 discordant pairs, McNemar over epochs p = 0.031,
    # but 3 tasks changed: the clustered test's p = 2/2^3 = 0.25, within noise
    assert ("**codemode · small, program feedbeef vs built-in prompt: success differs only within noise; tokens, "
            "latency and turns identical on every paired task" in paths.answer)
    assert "program feedbeef succeeded on 100.0% and built-in prompt on 50.0%" in paths.answer
    # the synthetic models spend identical tokens, time and turns: said so, not dressed up as an interval
    model_paragraph = paragraphs[-2]
    assert model_paragraph.startswith("**codemode · built-in prompt, big vs small: success differs only within noise; "
                                      "tokens, latency and turns identical on every paired task (only 6 task(s)")
    assert "It used the same number of tokens on every paired task. Latency was the same" in model_paragraph


def test_scaffolds_are_compared_side_by_side_and_stated_in_the_report(tmp_path):
    plain = write_results(tmp_path / "a", "plain", {"direct": [True], "codemode": [True, False]})
    other = write_results(tmp_path / "b", "other", {"direct": [True], "codemode": [True]},
                          scaffold_hash="guidedhash000000")
    frame = labelled(plain, other)
    assert planned_pairings(frame) == [
        ("direct · plain scaffold", "codemode · plain scaffold"),
        ("direct · other scaffold", "codemode · other scaffold"),
        ("direct · plain scaffold", "direct · other scaffold"),
        ("codemode · plain scaffold", "codemode · other scaffold"),
    ]
    assert list(summary_table(frame).columns[:2]) == ["arm", "scaffold"]
    paths = build_report(read_results([plain, other]), tmp_path / "report")
    assert "Scaffolds (the rules beyond the task and its tools, docs/fair-comparison.md): other (guidedhash000000), " \
           "plain (" in paths.markdown.read_text()


def test_tool_latencies_are_compared_side_by_side_and_stated_in_the_report(tmp_path):
    fast = write_results(tmp_path / "a", "fast", {"direct": [True], "codemode": [True]})
    slow = write_results(tmp_path / "b", "slow", {"direct": [True], "codemode": [True]}, tool_latency_s=0.2)
    frame = labelled(fast, slow)
    assert planned_pairings(frame) == [
        ("direct · 0 s tool latency", "codemode · 0 s tool latency"),
        ("direct · 0.2 s tool latency", "codemode · 0.2 s tool latency"),
        ("direct · 0 s tool latency", "direct · 0.2 s tool latency"),
        ("codemode · 0 s tool latency", "codemode · 0.2 s tool latency"),
    ]
    summary = summary_table(frame)
    assert list(summary.columns[:2]) == ["arm", "tool latency (s)"]
    assert list(summary["tool latency (s)"]) == [0.0, 0.2, 0.0, 0.2]  # by arm, then by latency
    assert list(summary_table(labelled(slow, fast))["tool latency (s)"]) == [0.0, 0.2, 0.0, 0.2]
    text = build_report(read_results([fast, slow]), tmp_path / "report").markdown.read_text()
    assert "Tool calls were delayed on the host, as a remote server's round trip (tool_latency_s): 0 s, 0.2 s" in text


def test_one_tool_latency_is_stated_once_and_splits_nothing(tmp_path):
    slow = write_results(tmp_path, "slow", {"direct": [True], "codemode": [True]}, tool_latency_s=0.2)
    assert planned_pairings(labelled(slow)) == [("direct", "codemode")]
    text = build_report(read_results([slow]), tmp_path / "report").markdown.read_text()
    assert "Every tool call was delayed 0.2 s on the host, as a remote server's round trip" in text


def test_cache_served_runs_are_left_out_of_latency_and_said_so(tmp_path):
    rows = [record("r", t, arm, 0, True, cached=(arm == "codemode" and t == 0)) for t in range(3)
            for arm in ("direct", "codemode")]
    path = tmp_path / "c.parquet"
    write_records(path, rows)
    frame = labelled(path)
    summary = summary_table(frame).set_index("arm")
    assert summary.loc["codemode", "cache-served runs"] == 1
    assert summary.loc["codemode", "mean latency (s)"] == pytest.approx(1.15)  # (1.1 + 1.2)/2: t0 left out
    answer = answer_paragraphs(frame)
    assert "faster; 1 pair(s) with a cache-served run left out)" in answer[0]
    first = build_report(read_results([path]), tmp_path / "report").answer.split("\n\n")[0]
    assert first == ("**Response cache:** 1 of 6 run(s) were answered by the cache alone: 3 of 18 LM call(s) came "
                     "from the cache, not from the model (answers stored by earlier runs). Their latency is not the "
                     "model's; --no-cache asks the model for every call.")


def test_a_task_edited_between_runs_is_named_in_a_warning(tmp_path):
    write_results(tmp_path, "before", {"direct": [True]}, tasks=3, epochs=1)
    write_results(tmp_path, "after", {"direct": [True]}, tasks=3, epochs=1, program_hash="p1", changed_tasks=(2,))
    answer = answer_paragraphs(labelled(tmp_path))
    assert ("**Warning:** 1 task(s) appear with different definitions (task_hash) in these results: t2." in
            "\n".join(answer))
    write_results(tmp_path, "after", {"direct": [True]}, tasks=3, epochs=1, program_hash="p1")
    assert "Warning" not in "\n".join(answer_paragraphs(labelled(tmp_path)))


def test_no_runs_is_a_user_error(tmp_path):
    path = tmp_path / "empty.parquet"
    write_records(path, [])
    with pytest.raises(UserError, match="no runs"):
        build_report(read_results([path]), tmp_path / "report")


def test_report_groups_follow_input_order_and_arm_order(tmp_path):
    rows = [record("r", 0, arm, 0, True, model=model) for model in ("zeta", "alpha") for arm in ("codemode", "direct")]
    path = tmp_path / "m.parquet"
    write_records(path, rows)
    summary = summary_table(labelled(path))
    assert list(zip(summary["arm"], summary["model"])) == [("direct", "zeta"), ("direct", "alpha"),
                                                           ("codemode", "zeta"), ("codemode", "alpha")]


def test_cost_per_arm_and_per_successful_run(tmp_path):
    from harness.analysis.tables import cost_columns, label_groups

    path = write_results(tmp_path / "r", "run", {"direct": [True, False], "codemode": [True]}, tasks=2, epochs=1)
    frame = label_groups(read_results([path]))
    direct = frame[frame.arm == "direct"]  # the factory prices a run at $1 per million tokens
    total = float(direct.total_tokens.sum()) * 1e-6
    assert cost_columns(direct) == {"cost (USD)": f"{total:.4f}", "cost per success (USD)": f"{total / 1:.4f}"}
    report = build_report(read_results([path]), tmp_path / "report")
    assert "Cost per successful run" in report.answer and "cost per success (USD)" in report.markdown.read_text()


def test_an_unknown_price_makes_the_cost_unknown_not_zero(tmp_path):
    from harness.analysis.tables import cost_columns, label_groups

    path = write_results(tmp_path / "r", "run", {"direct": [True]}, tasks=2, epochs=1)
    frame = label_groups(read_results([path]))
    frame.loc[0, "cost_usd"] = None
    assert cost_columns(frame) == {"cost (USD)": "unknown", "cost per success (USD)": "unknown"}


def internal(run: str, task: int, arm: str):
    import dataclasses

    return dataclasses.replace(record(run, task, arm, 0, False), error_type="internal",
                               error_message="ModuleNotFoundError: No module named 'llama_cpp'")


def test_runs_that_failed_inside_the_harness_are_left_out_and_named_first(tmp_path):
    rows = [record("r", t, "codemode", 0, True) for t in range(3)] + [record("r", 0, "direct", 0, True)] + \
        [internal("r", t, "direct") for t in (1, 2)]
    path = tmp_path / "r.parquet"
    write_records(path, rows)
    report = build_report(read_results([path]), tmp_path / "report")
    first = report.answer.split("\n\n")[0]
    assert first.startswith("**2 run(s) left out: they failed inside the harness**")
    assert "direct 2 (ModuleNotFoundError: No module named 'llama_cpp')" in first
    markdown = report.markdown.read_text()
    assert "| direct | 1 | 1 | 100.0% [" in markdown and "| codemode | 3 | 3 | 100.0% [" in markdown


def test_results_with_only_internal_errors_are_a_user_error(tmp_path):
    path = tmp_path / "r.parquet"
    write_records(path, [internal("r", 0, "direct")])
    with pytest.raises(UserError, match="every run in the results failed inside the harness"):
        build_report(read_results([path]), tmp_path / "report")


def test_the_error_table_lists_each_error_type_per_group_with_its_vocabulary_description():
    from harness.analysis.tables import error_table
    from harness.trace.vocab import ERROR_TYPES

    rows = [dataclasses.replace(record("r", 0, "direct", 0, False), error_type="max_turns"),
            dataclasses.replace(record("r", 1, "direct", 0, False), error_type="max_turns"),
            dataclasses.replace(record("r", 0, "codemode", 0, False), error_type="sandbox_crash"),
            record("r", 1, "codemode", 0, True)]
    table = error_table(label_groups(pd.DataFrame([r.to_row() for r in rows])))
    assert list(table["error_type"]) == ["max_turns", "sandbox_crash"]  # the vocabulary's order
    assert list(table["direct"]) == [2, 0] and list(table["codemode"]) == [0, 1]
    assert list(table["what it means"]) == [ERROR_TYPES["max_turns"], ERROR_TYPES["sandbox_crash"]]


def test_runs_that_all_ended_with_an_answer_have_no_error_table():
    from harness.analysis.tables import error_table

    assert error_table(label_groups(pd.DataFrame([record("r", 0, "direct", 0, True).to_row()]))) is None


def test_answers_that_are_tool_calls_written_as_text_are_named_in_the_report(tmp_path):
    fenced = '```json\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n```'
    rows = [dataclasses.replace(record("r", t, "direct", 0, False), answer=fenced) for t in range(2)] + \
        [record("r", t, "codemode", 0, True) for t in range(2)]
    path = tmp_path / "r.parquet"
    write_records(path, rows)
    report = build_report(read_results([path]), tmp_path / "report")
    assert report.answer.split("\n\n")[0].startswith("Tool calls written as text: 2 answer(s) (direct 2)")
    assert "Tool calls written as text" in report.markdown.read_text()


def test_ordinary_answers_add_no_tool_call_note(tmp_path):
    report = build_report(read_results([write_results(tmp_path, "r", {"direct": [True], "codemode": [True]})]),
                          tmp_path / "report")
    assert "Tool calls written as text" not in report.answer


def test_the_source_line_says_how_turns_were_counted_when_runs_went_on_after_a_rejected_answer():
    from harness.analysis.prose import source_line

    frame = pd.DataFrame([dataclasses.asdict(record("r", t, "codemode", 0, True, answer_attempts=1 + t))
                          for t in range(3)])
    assert "Under answer feedback 2 run(s) went on after a rejected answer" in source_line(frame)
    assert "answer feedback" not in source_line(frame.assign(answer_attempts=1))
def test_runs_in_sessions_get_a_table_by_position_and_others_none(tmp_path):
    from harness.analysis.tables import session_table

    path = write_results(tmp_path, "run1", {"codemode": [True]}, tasks=4, epochs=1)
    plain = labelled(path)
    assert session_table(plain) is None
    chained = plain.assign(session="s", session_position=plain.task_id.str[1:].astype(int),
                           skills_used=["", "f", "f", ""], total_tokens=[400, 300, 200, 100])
    table = session_table(chained)
    assert list(table.position) == [1, 2, 3, 4] and list(table["mean tokens"]) == ["400", "300", "200", "100"]
    assert list(table["reused a skill"]) == ["0/1", "1/1", "1/1", "0/1"]
