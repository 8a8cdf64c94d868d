import io
import json
import subprocess
import sys

import pytest

from harness.run.records import read_results
from tests.adapters.lookalike import write_lookalike
from tests.cli.helpers import harness
from tests.mcp import stub_servers

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def one_line_error(result) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_suites_lists_smoke_with_its_task_count():
    result = harness("suites")
    assert result.returncode == 0
    line = next(line for line in result.stdout.splitlines() if [c.strip() for c in line.split("│")[1:2]] == ["smoke"])
    assert " 4 " in line


@pytest.mark.parametrize("args, fragment", [
    (("--suite", "nope"), "unknown suite 'nope'"),
    (("--suite", "smoke", "--arms", "direct,bogus"), "unknown arm 'bogus'"),
    (("--suite", "smoke", "--model", "gpt4"), "unknown model 'gpt4'"),
    (("--suite", "smoke", "--model", "scripted:nonsense"), "unknown scripted model"),
    (("--suite", "smoke", "--tasks", "nope"), "no task 'nope'"),
    (("--suite", "smoke", "--epochs", "0"), "Invalid value for '--epochs'"),
    (("--suite", "smoke", "--scaffold", "loose"), "unknown scaffold 'loose'"),
    (("--suite", "smoke", "--catalogue-size", "16"), "suite 'smoke'"),
    (("--suite", "catalogue", "--catalogue-size", "16,many"), "give tool counts separated by commas"),
    (("--suite", "catalogue", "--catalogue-size", "9999"), "a catalogue has 8 to"),
])
def test_bad_run_input_is_one_line_and_exit_code_2(args, fragment, tmp_path):
    message = one_line_error(harness("run", *args, "--out", str(tmp_path)))
    assert fragment in message


def test_malformed_suite_file_is_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: bad\ntasks:\n  - id: [unclosed\n")
    assert "bad.yaml" in one_line_error(harness("run", "--suite", str(bad)))


def test_run_writes_rows_and_prints_the_summary(tmp_path):
    result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage",
                     "--tasks", "customer-country,enterprise-active-count", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "results:" in result.stdout and "react" in result.stdout
    frame = read_results([tmp_path])
    assert sorted(frame.task_id) == ["customer-country", "enterprise-active-count"]
    assert set(frame.error_type) == {"parse_error"}


def test_a_scaffold_file_with_an_unknown_field_is_one_line_and_exit_code_2(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("preset: plain\nid_gaurd: true\n")
    message = one_line_error(harness("run", "--suite", "smoke", "--scaffold", str(bad), "--out", str(tmp_path)))
    assert "mine.yaml: field 'id_gaurd'" in message


def test_the_scaffold_from_harness_scaffold_is_printed_at_the_start_and_recorded_in_every_row(tmp_path):
    from harness.agents.scaffold import GUIDED, PLAIN

    for name, scaffold in (("", PLAIN), ("guided", GUIDED)):  # the default for a scripted model is plain
        result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage", "--tasks",
                         "customer-country", "--out", str(tmp_path / (name or "default")),
                         env={"HARNESS_SCAFFOLD": name} if name else None)
        assert result.returncode == 0, result.stderr
        assert f"scaffold {scaffold.name} {scaffold.hash}" in " ".join(result.stderr.split())
        row = read_results([tmp_path / (name or "default")]).iloc[0]
        assert (row.scaffold, row.scaffold_hash) == (scaffold.name, scaffold.hash)


def test_the_tool_result_limit_is_an_option_and_every_row_records_it(tmp_path):
    from harness.defaults import DEFAULT_MAX_TOOL_RESULT_MB

    for folder, env in (("default", None), ("env", {"HARNESS_MAX_TOOL_RESULT_MB": "2.5"})):
        result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage", "--tasks",
                         "customer-country", "--out", str(tmp_path / folder), env=env)
        assert result.returncode == 0, result.stderr
    assert read_results([tmp_path / "default"]).iloc[0].max_tool_result_mb == DEFAULT_MAX_TOOL_RESULT_MB
    assert read_results([tmp_path / "env"]).iloc[0].max_tool_result_mb == 2.5


def test_the_tool_latency_is_an_option_and_an_env_var_and_every_row_records_it(tmp_path):
    for folder, args, env in (("default", (), None), ("option", ("--tool-latency", "0.05"), None),
                              ("env", (), {"HARNESS_TOOL_LATENCY": "0.1"})):
        result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage", "--tasks",
                         "customer-country", "--out", str(tmp_path / folder), *args, env=env)
        assert result.returncode == 0, result.stderr
    assert [read_results([tmp_path / folder]).iloc[0].tool_latency_s for folder in ("default", "option", "env")] \
        == [0.0, 0.05, 0.1]


@pytest.mark.parametrize("args, fragment", [
    (("--tool-latency", "-0.2"), "'--tool-latency'"),
    (("--tool-latency", "2", "--tool-timeout", "1"), "--tool-latency 2 s is not below --tool-timeout 1 s"),
])
def test_a_negative_tool_latency_or_one_past_the_tool_timeout_is_one_line_and_no_row(tmp_path, args, fragment):
    result = harness("run", "--suite", "smoke", "--model", "scripted:garbage", "--out", str(tmp_path), *args)
    assert fragment in one_line_error(result)
    assert not list(tmp_path.glob("**/*.parquet"))


def test_the_arm_registry_is_what_run_offers_and_accepts():
    # the registry as a fresh process has it: in this one, earlier tests registered arms named by spec (agent:...)
    script = ("import json; from harness.agents.arms import ARMS; "
              "print(json.dumps({n: a.description for n, a in ARMS.items()}))")
    listed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    registry = json.loads(listed.stdout)
    assert {"direct", "codemode", "react"} <= set(registry)
    help_text = " ".join(harness("run", "--help").stdout.replace("│", " ").split())  # the panel's borders out
    for name, description in registry.items():
        assert name in help_text and " ".join(description.split())[:30] in help_text
    assert "known: direct, direct-search, codemode, codemode-discover, codemode-files, react" in one_line_error(
        harness("run", "--suite", "smoke", "--arms", "nope", "--model", "scripted:reference"))


def test_an_unknown_model_string_fails_before_any_run_in_one_line(tmp_path):
    message = one_line_error(harness("run", "--suite", "smoke", "--model", "nosuchprovider:xyz/abc",
                                     "--out", str(tmp_path)))
    assert "unknown model 'nosuchprovider:xyz/abc'" in message
    assert list(tmp_path.iterdir()) == []  # refused before a manifest, a sandbox or a model was started


def test_a_finished_run_prints_the_report_and_view_commands_for_its_own_file(tmp_path):
    from tests.cli.helpers import ROOT

    env = {"PYTHONPATH": str(ROOT)}
    result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage",
                     "--tasks", "customer-country", "--run-id", "first", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    after = lines[lines.index("next:") + 1:]
    report, view = (line.split() for line in after[:2])
    assert report == ["harness", "report", "results/smoke/first.parquet", "--out", "reports/smoke-first"]
    assert view == ["harness", "view", "results/smoke/first.parquet"]
    assert (tmp_path / view[2]).is_file()
    reported = harness(*report[1:], cwd=tmp_path, env=env)
    assert reported.returncode == 0, reported.stderr
    assert (tmp_path / "reports/smoke-first/report.html").is_file()
    assert (tmp_path / "reports/smoke-first/viewer/index.html").is_file()


EXTERNAL_SUITE = """
suite: ext
servers: [mycrm]
tasks:
  - id: country
    category: lookup
    prompt: "In which country is customer C-0007? Two-letter code only."
    expected: IN
    scorer: exact
    reference: print(get_customer(customer_id="C-0007")["country"])
"""


@pytest.mark.integration
def test_a_server_whose_command_does_not_exist_stops_the_run_with_exit_2_and_resume_finishes_it(tmp_path):
    suite = tmp_path / "ext.yaml"
    suite.write_text(EXTERNAL_SUITE)
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.missing())
    env = {"HARNESS_MCP_CONFIG": str(config)}
    out = tmp_path / "out"
    stopped = harness("run", "--suite", str(suite), "--arms", "direct", "--model", "scripted:garbage",
                      "--out", str(out), "--run-id", "r1", env=env)
    assert stopped.returncode == 2 and "Traceback" not in stopped.stderr
    line = stopped.stderr.strip().splitlines()[-1]
    assert line.startswith("error: server 'mycrm' did not start: ") and "no-such-mcp-server-command" in line
    assert f"harness run --resume r1 --out {out}" in line
    assert not (out / "ext" / "r1.parquet").exists()
    stub_servers.write_config(config, mycrm=stub_servers.crm(tmp_path))
    resumed = harness("run", "--resume", "r1", "--out", str(out), env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert list(read_results([out]).task_id) == ["country"]


@pytest.mark.integration
def test_a_server_that_writes_a_banner_on_stdout_stops_the_run_with_one_line_naming_it(tmp_path):
    suite = tmp_path / "ext.yaml"
    suite.write_text(EXTERNAL_SUITE)
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.greeting("Starting up..."))
    stopped = harness("run", "--suite", str(suite), "--arms", "direct", "--model", "scripted:garbage",
                      "--out", str(tmp_path / "out"), "--run-id", "r1", env={"HARNESS_MCP_CONFIG": str(config)})
    assert stopped.returncode == 2 and "Traceback" not in stopped.stderr, stopped.stderr
    errors = [line for line in stopped.stderr.splitlines() if "error" in line.lower() or "Starting up" in line]
    assert len(errors) == 1, stopped.stderr
    assert errors[0].startswith("error: server 'mycrm' wrote non-MCP output on stdout: 'Starting up...' (MCP over "
                                "stdio needs stdout for protocol messages only; send logs to stderr); stopped before")


def test_suites_lists_the_benchmark_adapters_and_how_to_name_them():
    result = harness("suites")
    assert result.returncode == 0 and "--suite m3tooleval:PATH" in result.stdout


def test_validate_checks_a_benchmark_checkout_and_says_its_tasks_have_no_reference(tmp_path):
    checkout = write_lookalike(tmp_path / "code-act")
    result = harness("validate", "--suite", f"m3tooleval:{checkout}")
    assert result.returncode == 0, result.stderr
    assert "4 passed, 0 failed (4 with no reference" in " ".join(result.stdout.split())


@pytest.mark.parametrize("suite, fragment", [
    ("m3tooleval:{checkout}", "scripted:reference cannot replay task 'unit_converter/boiling_point'"),
    ("m3tooleval:{tmp}/nothing-here", "not a code-act checkout"),
    ("tau-bench:{tmp}", "unknown benchmark 'tau-bench'"),
])
def test_a_benchmark_that_cannot_run_is_one_line_and_exit_code_2(suite, fragment, tmp_path):
    checkout = write_lookalike(tmp_path / "code-act")
    spec = suite.format(checkout=checkout, tmp=tmp_path)
    message = one_line_error(harness("run", "--suite", spec, "--model", "scripted:reference", "--out", str(tmp_path)))
    assert fragment in message


def rendered(table) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def test_the_run_table_counts_internal_errors_apart_and_leaves_them_out_of_success():
    import dataclasses

    from harness.cli.run import INTERNAL_NOTE, summary_table
    from tests.results_factory import record

    broken = dataclasses.replace(record("r", 1, "direct", 0, False), error_type="internal",
                                 error_message="ModuleNotFoundError: No module named 'llama_cpp'")
    text = rendered(summary_table([record("r", 0, "direct", 0, True), broken, record("r", 0, "codemode", 0, True)]))
    direct = next(line for line in text.splitlines() if line.startswith("│ direct"))
    assert [c.strip() for c in direct.split("│")[1:4]] == ["direct", "2", "100%"]
    assert "internal errors" in text and " ".join(INTERNAL_NOTE.split()[:4]) in text


def test_the_run_table_has_no_internal_column_without_internal_errors():
    from harness.cli.run import summary_table
    from tests.results_factory import record

    assert "internal" not in rendered(summary_table([record("r", 0, "direct", 0, False)]))


@pytest.mark.parametrize("strict", [False, True])
def test_a_run_of_a_suite_whose_task_passes_without_acting_warns_and_strict_stops_before_any_row(tmp_path, strict):
    from tests.run.no_action_suites import CHURN_ALREADY_CHURNED, CHURNED_WARNING, COUNTRY, crm_suite

    suite = tmp_path / "guessable.yaml"
    suite.write_text(crm_suite("guessable", CHURN_ALREADY_CHURNED, COUNTRY))
    result = harness("run", "--suite", str(suite), "--model", "scripted:reference", "--arms", "direct", "--tasks",
                     "churn-already-churned", "--out", str(tmp_path / "results"),
                     *(["--strict-no-action"] if strict else []))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: task")]
    assert len(warnings) == 1 and warnings[0].startswith(CHURNED_WARNING), result.stderr[-2000:]
    assert result.returncode == (1 if strict else 0), result.stderr[-2000:]
    assert bool(list(tmp_path.rglob("*.parquet"))) != strict  # strict: stopped before any row
    if strict:
        assert "stopped before any run (--strict-no-action): 1 task(s)" in result.stderr
