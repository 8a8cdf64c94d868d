"""`harness validate` on a suite whose server cannot start: one line naming it, exit code 2."""

import pytest

from tests.cli.helpers import harness
from tests.cli.test_run_cli import EXTERNAL_SUITE
from tests.mcp import stub_servers
from tests.run.no_action_suites import CHURN_ALREADY_CHURNED, CHURNED_WARNING, COUNTRY, crm_suite


@pytest.mark.integration
def test_a_server_that_does_not_start_is_one_error_line_and_exit_2(tmp_path):
    suite = tmp_path / "ext.yaml"
    suite.write_text(EXTERNAL_SUITE)
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.quitting())
    result = harness("validate", "--suite", str(suite), env={"HARNESS_MCP_CONFIG": str(config)})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: server 'mycrm' did not start: the process exited") and "bad token" in last


@pytest.mark.integration
@pytest.mark.sandbox
def test_validate_names_the_tasks_a_model_that_does_nothing_passes(tmp_path):
    from tests.adapters.tau2_lookalike import write_tau2_lookalike

    checkout = write_tau2_lookalike(tmp_path / "tau2-bench")
    result = harness("validate", "--suite", f"tau2:{checkout}#kiosk")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[-4] == "2 passed, 0 failed"
    assert lines[-3] == ("1 of 2 task(s) pass doing nothing (no answer, the servers untouched): kiosk/2; a model "
                         "that does nothing scores 50% here")
    # a benchmark's task that passes with no action is reported, not changed (kiosk/2 only reads)
    assert lines[-2] == "warning: task 'kiosk/2' can be passed without acting: the state check already holds on " \
                        "the seed data"
    assert lines[-1] == ("0 of 2 task(s) can be passed from the answer alone, with no action (their scorers read only "
                         "the answer: lookups)")


GUESSABLE = crm_suite("guessable", CHURN_ALREADY_CHURNED, COUNTRY)


@pytest.mark.integration
@pytest.mark.sandbox
@pytest.mark.parametrize("strict", [False, True])
def test_a_users_task_passed_without_acting_is_a_warning_and_strict_exits_1(tmp_path, strict):
    suite = tmp_path / "guessable.yaml"
    suite.write_text(GUESSABLE)
    result = harness("validate", "--suite", str(suite), *(["--strict-no-action"] if strict else []))
    assert result.returncode == (1 if strict else 0), result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[-3] == "2 passed, 0 failed"  # its reference passes and wrong answers fail: only guessing is wrong
    assert lines[-2].startswith(CHURNED_WARNING)
    assert lines[-1].startswith("1 of 2 task(s) can be passed from the answer alone")

