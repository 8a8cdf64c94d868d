"""The registry knows the catalogue's servers and refuses a catalogue size it cannot build, before any run."""

import pytest

from harness.errors import UserError
from harness.mcp.registry import check_servers, list_servers
from harness.tasks.registry import load_suite


def test_the_catalogue_servers_are_listed_as_fixtures():
    fixtures = {s.name for s in list_servers() if s.kind == "fixture"}
    assert {"cat_people", "cat_helpdesk", "cat_facilities"} <= fixtures


def test_a_size_beyond_the_catalogue_is_a_user_error_naming_the_bounds():
    check_servers(load_suite("catalogue", (16, 1024)))
    with pytest.raises(UserError, match=r"server 'cat_people': size: a catalogue has 8 to \d+ tools, not 5000"):
        check_servers(load_suite("catalogue", (5000,)))


def test_a_fixture_size_below_one_is_a_user_error_naming_the_file_task_server_and_value(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\nservers: [{crm: {size: -4}}]\ntasks:\n  - {id: t1, prompt: p, expected: 1, scorer: exact}\n")
    with pytest.raises(UserError) as info:
        check_servers(load_suite(str(path)))
    assert str(info.value) == (f"{path}: task 't1': server 'crm': size: -4 is not valid: expected a whole number of "
                               "at least 1")
