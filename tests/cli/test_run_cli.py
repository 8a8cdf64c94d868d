import pytest

from harness.run.records import read_results
from tests.benchmarks.lookalike import write_lookalike
from tests.cli.helpers import harness


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
    (("--suite", "smoke", "--epochs", "0"), "--epochs must be at least 1"),
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


def test_the_arm_registry_is_what_run_offers_and_accepts():
    from harness.agents.arms import ARMS

    help_text = " ".join(harness("run", "--help").stdout.split())
    for name, arm in ARMS.items():
        assert name in help_text and " ".join(arm.description.split())[:30] in help_text
    assert "known: direct, codemode, codemode-discover, react" in one_line_error(
        harness("run", "--suite", "smoke", "--arms", "nope", "--model", "scripted:reference"))


def test_an_unknown_model_string_fails_before_any_run_in_one_line(tmp_path):
    message = one_line_error(harness("run", "--suite", "smoke", "--model", "nosuchprovider:xyz/abc",
                                     "--out", str(tmp_path)))
    assert "unknown model 'nosuchprovider:xyz/abc'" in message
    assert list(tmp_path.iterdir()) == []  # refused before a manifest, a sandbox or a model was started


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
