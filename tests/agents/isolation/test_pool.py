"""An agent's zygote: its module imported once in a process of its own (never in the harness), one line naming the
file and line when it does not import, and a function no other process can import by name (a notebook's, a script's
`__main__`) copied there by value; `--agent-isolation in-process` runs the agent in the harness's process instead,
and the row says so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from harness.agents.arms import ARMS, get_arm
from harness.agents.isolation.pool import AgentTarget
from harness.errors import UserError
from tests.agents.test_foreign import run
from tests.cli.helpers import ROOT


@pytest.fixture(autouse=True)
def forget_registered_arms():
    built_in = dict(ARMS)
    yield
    ARMS.clear()
    ARMS.update(built_in)


@pytest.fixture
def agents_folder(tmp_path, monkeypatch):
    """A folder of the user's agent modules, the folder the run starts in (as `python -m` would find them)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("source, where", [
    ("import os\n\ndef agent(task)\n    return 'x'\n", ":3: SyntaxError: expected ':'"),
    ("import os\nCONFIG = os.environ['NO_SUCH_VARIABLE_HERE']\n", ":2: KeyError: 'NO_SUCH_VARIABLE_HERE'"),
    ("import sys\nsys.exit(4)\n", ":2: SystemExit: 4"),
])
def test_a_module_that_does_not_import_is_one_line_naming_its_file_and_line(agents_folder, source, where):
    (agents_folder / "team_broken.py").write_text(source)
    with pytest.raises(UserError) as raised:
        get_arm("agent:team_broken:agent")
    message = str(raised.value)
    assert "\n" not in message and f"{agents_folder / 'team_broken.py'}{where}" in message
    assert "team_broken" not in sys.modules  # imported in its zygote only, never in the harness


def test_a_function_a_module_lacks_is_one_line(agents_folder):
    (agents_folder / "team_empty.py").write_text("X = 1\n")
    with pytest.raises(UserError, match="team_empty has no agent"):
        get_arm("agent:team_empty:agent")


def test_a_function_of_a_module_is_found_by_name_and_a_notebooks_by_value():
    from tests.agents.team_agent import tool_loop

    assert AgentTarget.of_function(tool_loop) == AgentTarget("tests.agents.team_agent", "tool_loop")
    namespace: dict = {"__name__": "__main__"}
    exec("def agent(task):\n    return 'IN'\n", namespace)  # noqa: S102 - a notebook cell's function
    copied = AgentTarget.of_function(namespace["agent"])
    assert copied.by_value and copied.pickled()


def test_in_process_runs_the_agent_in_the_harness_and_the_row_says_so(tmp_path):
    frame = run(tmp_path, ("direct", "agent:tests.agents.team_agent:country_of_first_customer"),
                policy=lambda task, arm: lambda request: "IN", agent_isolation="in-process")
    row = frame.loc["agent:tests.agents.team_agent:country_of_first_customer"]
    assert row.success and row.agent_isolation == "in-process" and frame.loc["direct"].agent_isolation == ""


@pytest.mark.integration
def test_a_function_defined_in_a_scripts_main_runs_through_harness_evaluate(tmp_path):
    script = tmp_path / "evaluate_mine.py"
    script.write_text(textwrap.dedent("""
        import os

        import harness

        COUNTRY = "IN"

        @harness.agent("mine")
        def mine(task):
            import os
            return f"{COUNTRY} {os.getpid()} {os.getcwd() == str(task.workdir)}"

        result = harness.evaluate("smoke", model="scripted:reference", arms=["mine"], task_ids=("customer-country",),
                                  out_dir=__import__("pathlib").Path("results"))
        row = result.frame.iloc[0]
        print(row.answer, os.getpid(), row.agent_isolation)
    """))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    country, agent_pid, in_workdir, harness_pid, isolation = done.stdout.split()[-5:]
    assert (country, in_workdir, isolation) == ("IN", "True", "process") and agent_pid != harness_pid
