"""The codemode-files arm in the real sandbox against the real in-memory crm server, driven by scripted replies."""

import ast

import pytest

from harness.agents.codemode_files import FilesCodeModeAgent
from harness.agents.scaffold import GUIDED
from harness.mcp.servers import open_servers
from harness.models.scripted import ScriptedEngine, ScriptedRequest
from harness.tasks.suite import load_suite
from tests.agent_runs import run_agent

pytestmark = pytest.mark.sandbox
TASK = next(t for t in load_suite("smoke").tasks if t.id == "customer-country")


def scripted(*codes: str):
    pending = list(codes)

    def policy(request: ScriptedRequest):
        return f"```python\n{pending.pop(0)}\n```"

    return policy


async def run_files(policy, pool, task=TASK):
    async with open_servers(task.servers) as session:
        result, log = await run_agent(FilesCodeModeAgent(pool, GUIDED), task, session, ScriptedEngine(policy))
    return result, log, session


async def test_the_servers_tree_lists_every_tool_and_the_prompt_names_only_the_servers(sandbox_pool):
    code = "import os\nprint(sorted(os.listdir('servers/crm')))"
    result, log, session = await run_files(scripted(code, "final_answer('x')"), sandbox_pool)
    listed = ast.literal_eval(result.steps[0].stdout)  # a list the test's own code printed
    assert {f"{spec.py_name}.py" for spec in session.toolbox.specs} | {"__init__.py"} == set(listed)
    system = log.lm_calls[0].messages[0]["content"]
    assert "servers/crm/" in system and "def get_customer(" not in system and "def final_answer(" in system
    assert result.tool_files_read == 0 and session.calls == []


async def test_importing_a_tool_calls_the_session_and_no_tool_is_defined_without_it(sandbox_pool):
    code = "from servers.crm import get_customer\nprint(get_customer(customer_id='C-0007')['country'])"
    result, _, session = await run_files(scripted("get_customer(customer_id='C-0007')", code, "final_answer('IN')"),
                                         sandbox_pool)
    assert "NameError" in (result.steps[0].error or "")
    assert result.steps[1].stdout.strip() == "IN" and result.answer == "IN"
    assert [(c.tool, c.arguments, c.in_code) for c in session.calls] == [
        ("get_customer", {"customer_id": "C-0007"}, True)]


async def test_reading_a_tool_file_counts_and_its_printed_lines_are_tool_documentation(sandbox_pool):
    code = ("print(open('servers/crm/get_customer.py').read())\nopen('servers/crm/__init__.py').read()\n"
            "with open('servers/crm/get_customer.py') as f:\n    f.read()")
    result, _, _ = await run_files(scripted(code, "final_answer('x')"), sandbox_pool)
    assert result.steps[0].detail["files_read"] == ["/home/pyodide/servers/crm/get_customer.py",
                                                    "/home/pyodide/servers/crm/__init__.py",
                                                    "/home/pyodide/servers/crm/get_customer.py"]
    assert result.tool_files_read == 1  # distinct tool modules; the index is not one
    printed = result.tool_definition_texts[1:]
    assert len(printed) == 1 and "def get_customer(customer_id: str)" in printed[0]


async def test_the_tree_is_read_only_and_gone_in_the_next_lease(sandbox_pool):
    code = ("try:\n    open('servers/crm/get_customer.py', 'w').write('x')\nexcept OSError as e:\n"
            "    print('refused', type(e).__name__)")
    result, _, _ = await run_files(scripted(code, "final_answer('x')"), sandbox_pool)
    assert result.steps[0].stdout.startswith("refused")
    async with sandbox_pool.lease(lambda name, arguments: None) as sandbox:
        after = await sandbox.execute("import json\nprint(json.dumps(__import__('sys').path))", check_policy=False)
        gone = await sandbox.execute("import os\nprint(os.path.exists('/home/pyodide/servers'))", check_policy=False)
    assert "/home/pyodide" not in after.stdout or "servers" not in after.stdout
    assert gone.stdout.strip() == "False"


def test_the_first_worked_example_lists_the_tools_and_reads_a_file_before_it_imports_and_calls():
    from harness.agents.codemode_files import EXAMPLE_TOOLS, FilesCodeModeProgram

    demos = FilesCodeModeProgram(GUIDED).step.demos
    first, second = demos[0].history[:2]
    assert "os.listdir('servers/library')" in first["action"]["code"] and "def get_loan(loan_id: str)" in \
        first["observation"]
    assert second["action"]["code"].startswith("from servers.library import get_loan\n")
    calls = [step["action"]["code"] for demo in demos for step in demo.history
             if any(f"{tool}(" in step["action"]["code"] for tool in EXAMPLE_TOOLS)]
    assert len(calls) == 8 and all(code.startswith("from servers.library import ") for code in calls)
