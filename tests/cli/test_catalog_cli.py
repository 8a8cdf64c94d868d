"""`harness servers --check`: every server started once within the start limit, its tool count or its error."""

import pytest

from tests.cli.helpers import harness
from tests.mcp import stub_servers


def server_row(stdout: str, name: str) -> list[str]:
    return next(cells for line in stdout.splitlines()
                if (cells := [c.strip() for c in line.split("│")[1:-1]]) and cells[0] == name)


@pytest.mark.integration
def test_check_passes_when_every_server_starts_and_shows_its_tool_count(tmp_path):
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.crm(tmp_path))
    result = harness("servers", "--check", env={"HARNESS_MCP_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr
    assert server_row(result.stdout, "mycrm")[1:3] == ["external", "8"]
    assert server_row(result.stdout, "crm")[1:3] == ["fixture", "8"]


@pytest.mark.integration
def test_check_names_each_server_that_does_not_start_and_exits_2(tmp_path):
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.crm(tmp_path),
                                       quitter=stub_servers.quitting(), absent=stub_servers.missing())
    result = harness("servers", "--check", env={"HARNESS_MCP_CONFIG": str(config)})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert server_row(result.stdout, "mycrm")[2] == "8" and server_row(result.stdout, "quitter")[2] == "did not start"
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("error: server '") for line in errors)
    assert "'quitter' did not start: the process exited" in errors[0] and "bad token" in errors[0]
    assert "'absent' did not start: " in errors[1] and "no-such-mcp-server-command" in errors[1]


@pytest.mark.integration
def test_check_gives_up_on_a_server_that_never_answers_at_the_start_limit(tmp_path):
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", sleeper=stub_servers.sleeping(tmp_path))
    result = harness("servers", "--check", "--server-start-timeout", "1", env={"HARNESS_MCP_CONFIG": str(config)})
    assert result.returncode == 2 and server_row(result.stdout, "sleeper")[2] == "did not start"
    assert "error: server 'sleeper' did not start: no answer" in result.stderr and "within 1 s" in result.stderr


@pytest.mark.integration
def test_without_check_a_server_that_does_not_start_is_listed_and_the_exit_is_0(tmp_path):
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", quitter=stub_servers.quitting())
    result = harness("servers", env={"HARNESS_MCP_CONFIG": str(config)})
    assert result.returncode == 0 and server_row(result.stdout, "quitter")[2] == "did not start"
    assert "error: server 'quitter' did not start" in result.stderr
