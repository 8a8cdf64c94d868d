"""The report's catalogue section: drawn only with two catalogue sizes or more, its growth the fitted tokens per
added tool; checked on synthetic rows (exact slopes) and on a scripted sweep through direct and codemode."""

import dataclasses

import pytest

from harness.analysis.report import build_report
from harness.analysis.tables import catalogue_table, label_groups
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.tasks.registry import load_suite
from tests.results_factory import record, write_records


def sized_rows(tmp_path, sizes=(16, 64, 256), window=None):
    """Direct pays 1,000 + 20 tokens a tool, codemode 500 + 2, all in tool definitions; task 1 fails at 256. With a
    `window`, direct's runs past it (its tokens per run) end as context_overflow, having sent nothing."""
    rows = []
    for size in sizes:
        for arm, base, per_tool in (("direct", 1000, 20), ("codemode", 500, 2)):
            for task in range(2):
                tokens = base + per_tool * size
                overflowed = window is not None and tokens > window
                rows.append(dataclasses.replace(
                    record("sweep", task, arm, 0, not (task == 1 and size == 256) and not overflowed),
                    total_tokens=0 if overflowed else tokens,
                    context_tool_definition_tokens=0 if overflowed else tokens, task_id=f"t{task}-{size}",
                    catalogue_size=size, sample_id=f"t{task}-{size}/{arm}/m/0", context_window=window,
                    error_type="context_overflow" if overflowed else ""))
    path = tmp_path / "catalogue" / "sweep.parquet"
    write_records(path, rows)
    return path


def test_the_table_gives_tokens_per_size_the_fitted_growth_and_success(tmp_path):
    table = catalogue_table(label_groups(read_results([sized_rows(tmp_path)]))).set_index("arm")
    assert table.loc["direct", "tokens @16"] == "1,320" and table.loc["codemode", "tokens @256"] == "1,012"
    assert table.loc["direct", "tokens per added tool"] == 20.0
    assert table.loc["codemode", "definition tokens per added tool"] == 2.0
    assert table.loc["direct", "success by size"] == "2/2 2/2 1/2"


def test_the_table_and_the_figure_mark_where_an_arm_overflows_the_window(tmp_path, monkeypatch):
    import matplotlib.axes

    from harness.agents.arms import ARMS

    frame = label_groups(read_results([sized_rows(tmp_path, window=2_000)]))  # direct: 2,280 tokens at 64 tools
    table = catalogue_table(frame).set_index("arm")
    assert table.loc["direct", "overflows from"] == "64 tools (2,000-token window)"
    assert table.loc["codemode", "overflows from"] == "-"
    marks = []
    monkeypatch.setattr(matplotlib.axes.Axes, "axvline", lambda ax, x, **kw: marks.append((x, kw["color"])))
    paths = build_report(frame, tmp_path / "report")
    assert "catalogue_sweep.png" in {p.name for p in paths.figures}
    assert {x for x, _ in marks} == {64} and len(marks) == 6  # one line on each of the six panels
    assert marks[0][1] == pytest.approx(matplotlib.colors.to_rgb(ARMS["direct"].colour))


def test_runs_that_overflowed_count_as_failures_but_not_in_tokens_or_growth(tmp_path):
    frame = label_groups(read_results([sized_rows(tmp_path, window=6_000)]))  # direct: 6,120 tokens at 256 tools
    table = catalogue_table(frame).set_index("arm")
    assert table.loc["direct", "tokens @256"] == "-"  # nothing was sent at that size
    assert table.loc["direct", "tokens per added tool"] == 20.0  # fitted over 16 and 64, not pulled down by zeros
    assert table.loc["direct", "success by size"] == "2/2 2/2 0/2"


def test_one_size_draws_no_catalogue_figure_and_no_section(tmp_path):
    frame = read_results([sized_rows(tmp_path, sizes=(64,))])
    assert catalogue_table(label_groups(frame)) is None
    paths = build_report(frame, tmp_path / "report")
    assert "catalogue_sweep.png" not in {p.name for p in paths.figures}
    assert "Against the number of tools" not in paths.markdown.read_text()


@pytest.mark.sandbox
async def test_a_scripted_sweep_draws_the_figure_and_direct_grows_faster_than_codemode(sandbox_pool, tmp_path):
    suite = load_suite("catalogue", (16, 64))
    config = RunConfig(suite=suite, model="scripted:reference", arms=("direct", "codemode"), out_dir=tmp_path,
                       run_id="sweep", task_ids=("account-billing-email-16", "account-billing-email-64",
                                                 "escalate-to-manager-16", "escalate-to-manager-64"))
    frame = read_results([(await Runner(config, pool=sandbox_pool).run()).path])
    assert frame["success"].all() and set(frame["catalogue_size"]) == {16, 64}
    paths = build_report(frame, tmp_path / "report")
    figure = next(p for p in paths.figures if p.name == "catalogue_sweep.png")
    assert figure.stat().st_size > 20_000
    table = catalogue_table(label_groups(frame)).set_index("arm")
    for arm in ("direct", "codemode"):
        means = frame[frame.arm == arm].groupby("catalogue_size")["total_tokens"].mean()
        assert table.loc[arm, "tokens @64"] == f"{means[64]:,.0f}"
        assert table.loc[arm, "tokens per added tool"] == round((means[64] - means[16]) / 48, 1)
    assert table.loc["direct", "tokens per added tool"] > table.loc["codemode", "tokens per added tool"] > 0
    assert "## Against the number of tools" in paths.markdown.read_text()
