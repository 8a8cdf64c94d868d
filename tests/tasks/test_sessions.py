"""A suite's sessions: read from YAML in order, with one-line errors for a bad definition."""

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.tasks.suite import load_suite

TASKS = """
suite: chained
servers: [crm]
tasks:
  - {id: a, prompt: "A?", expected: 1, scorer: numeric}
  - {id: b, prompt: "B?", expected: 2, scorer: numeric}
  - {id: c, prompt: "C?", expected: 3, scorer: numeric}
"""


def write(tmp_path: Path, sessions: str) -> str:
    path = tmp_path / "chained.yaml"
    path.write_text(TASKS + sessions)
    return str(path)


def test_a_session_lists_its_tasks_in_its_own_order_and_others_run_alone(tmp_path):
    suite = load_suite(write(tmp_path, "sessions:\n  - {id: s, tasks: [c, a], skills: true}\n"))
    (session,) = suite.sessions
    assert session.tasks == ("c", "a") and session.skills and not session.workspace  # each part only if declared
    assert suite.session_of("a") == (session, 1) and suite.session_of("c") == (session, 0)
    assert suite.session_of("b") is None


@pytest.mark.parametrize(("sessions", "message"), [
    ("sessions:\n  - {id: s, tasks: [a, nope]}\n", "session 's': field 'tasks': no task 'nope' in this suite"),
    ("sessions:\n  - {id: s, tasks: [a, b]}\n  - {id: t, tasks: [c, a]}\n",
     "session 't': field 'tasks': task 'a' is also in session 's' (a task belongs to one session at most)"),
    ("sessions:\n  - {id: s, tasks: [a, a]}\n", "task 'a' is twice in this session"),
    ("sessions:\n  - {id: s, tasks: [a]}\n  - {id: s, tasks: [b]}\n", "duplicate session id"),
    ("sessions:\n  - {id: s, tasks: []}\n", "session 's'"),
    ("sessions:\n  - {id: s, tasks: [a], shared: true}\n", "session 's'"),
])
def test_a_bad_session_is_one_line_naming_the_file_and_session(tmp_path, sessions, message):
    with pytest.raises(UserError) as error:
        load_suite(write(tmp_path, sessions))
    assert message in str(error.value) and "\n" not in str(error.value)
    assert str(error.value).startswith(str(tmp_path / "chained.yaml"))


def test_the_sessions_suite_ships_with_three_sessions_of_four_one_sharing_server_state():
    suite = load_suite("sessions")
    assert [len(s.tasks) for s in suite.sessions] == [4, 4, 4]
    assert [s.shared_servers for s in suite.sessions] == [False, False, True]
    assert all(suite.session_of(t.id) is not None for t in suite.tasks)
