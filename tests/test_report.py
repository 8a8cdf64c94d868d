from harness.records import read_results
from harness.report import answer_paragraph, build_report, label_groups, summary_table
from tests.results_factory import write_results


def test_report_writes_markdown_html_and_figures(tmp_path):
    path = write_results(tmp_path / "r", "run1", {"direct": [True, False, True], "codemode": [True, True, True]},
                         sizes=True)
    paths = build_report(read_results([path]), tmp_path / "report")
    markdown = paths.markdown.read_text()
    assert "## The answer" in markdown and "codemode" in markdown and "direct" in markdown
    assert "pass@2" in markdown  # two epochs
    names = {p.name for p in paths.figures}
    assert names == {"success_by_arm.png", "tokens_paired.png", "latency_by_arm.png", "token_breakdown.png",
                     "tokens_by_data_size.png"}
    assert all(p.stat().st_size > 5000 for p in paths.figures)
    page = paths.html.read_text()
    assert page.count("data:image/png;base64,") == len(paths.figures)
    assert "http://" not in page and "https://" not in page  # self-contained


def test_answer_states_the_token_reduction_and_its_significance(tmp_path):
    path = write_results(tmp_path, "run1", {"direct": [True], "codemode": [True]})
    answer = answer_paragraph(label_groups(read_results([path])))
    assert "**codemode** succeeded on 100% vs 100% for **direct**" in answer
    assert "fewer tokens" in answer and "significant at 95%" in answer
    assert "p = 1.000" in answer


def test_summary_has_one_row_per_arm_with_intervals(tmp_path):
    path = write_results(tmp_path, "run1", {"direct": [True, False], "codemode": [True]})
    table = summary_table(label_groups(read_results([path])))
    assert list(table["arm"]) == ["direct", "codemode"]
    assert table.set_index("arm").loc["direct", "success"].startswith("50.0% [")


def test_a_single_arm_still_reports(tmp_path):
    path = write_results(tmp_path, "run1", {"codemode": [True]}, tasks=1, epochs=1)
    paths = build_report(read_results([path]), tmp_path / "report")
    assert "Only one arm (codemode)" in paths.markdown.read_text()
