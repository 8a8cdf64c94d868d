import pytest

from harness.run.records import read_results
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
    (("--suite", "smoke", "--scaffold", "loose"), "unknown scaffold 'loose'"),
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
