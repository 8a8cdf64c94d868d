"""Task values built in Python (a task list for harness.evaluate): servers and scorers written as a suite file
writes them, and a bad one said as the user wrote it."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.tasks.task import ServerRef, Task


def task(**fields) -> Task:
    return Task(id="t", prompt="p", expected="1", **fields)


def test_servers_are_names_or_written_with_their_options_as_in_a_suite_file():
    made = task(servers=["crm", {"tickets": {"size": 7, "seed": 2, "callers": ["code"]}}, ServerRef("docs")])
    assert made.servers == (ServerRef("crm"), ServerRef("tickets", size=7, seed=2, callers=("code",)),
                            ServerRef("docs"))


@pytest.mark.parametrize("servers, message", [
    ([{"crm": {"size": "big"}}], ("task 't': field 'servers[0].crm.size': 'big' is not valid: expected a valid "
                                  "integer, unable to parse string as an integer")),
    (["crm", 5], ("task 't': field 'servers[1]': 5 is not valid: expected a server name, {name: {size, seed, callers}} "
                  "or a ServerRef")),
    ([{"crm": {"sise": 5}}], "task 't': field 'servers[0].crm.sise': Extra inputs are not permitted"),
    ([{"crm": {"callers": ["shell"]}}], "task 't': field 'servers[0].crm.callers': unknown caller 'shell'"),
])
def test_a_bad_server_in_a_task_list_is_named_as_written(servers, message):
    with pytest.raises(UserError) as info:
        task(servers=servers)
    assert str(info.value).startswith(message)
