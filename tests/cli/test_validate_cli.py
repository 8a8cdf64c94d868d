"""`harness validate` on a suite whose server cannot start: one line naming it, exit code 2."""

import pytest

from tests.cli.helpers import harness
from tests.cli.test_run_cli import EXTERNAL_SUITE
from tests.mcp import stub_servers


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
    assert lines[-2] == "2 passed, 0 failed"
    assert lines[-1] == ("1 of 2 task(s) pass doing nothing (no answer, the servers untouched): kiosk/2; a model "
                         "that does nothing scores 50% here")
