"""The code-mode arm in the real sandbox against the real in-memory crm server, driven by scripted replies."""

import pytest

from harness.agents.codemode import CodeModeAgent, DiscoveryCodeModeAgent, extract_code
from harness.agents.example import EXAMPLES
from harness.agents.scaffold import GUIDED, PLAIN
from harness.mcp.servers import open_servers
from harness.models.scripted import ScriptedEngine, ScriptedRequest
from harness.tasks.suite import load_suite
from tests.agent_runs import run_agent

pytestmark = pytest.mark.sandbox
TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")


def scripted(*codes: str):
    """Reply with each piece of code in turn, fenced as the protocol asks."""
    pending = list(codes)

    def policy(request: ScriptedRequest):
        return f"```python\n{pending.pop(0)}\n```"

    return policy


async def run_codemode(policy, pool, agent_class=CodeModeAgent, task=TASK, scaffold=GUIDED, guard_ids=False):
    async with open_servers(task.servers) as session:
        if guard_ids and scaffold.id_guard:  # as an episode does
            session.guard_ids(task.prompt)
        result, log = await run_agent(agent_class(pool, scaffold), task, session, ScriptedEngine(policy), scaffold)
    return result, log, session


def test_extract_code_keeps_only_the_code_and_a_reply_without_code_has_none():
    assert extract_code("Here:\n```python\nprint(1)\n```\nDone") == "print(1)"
    assert extract_code("```py\na = 1\n```\nand\n```python\nprint(a)\n```") == "a = 1\nprint(a)"
    assert extract_code("The answer is 27.") is None


@pytest.mark.parametrize("value, answer", [("'IN'", "IN"), ("27.0", "27.0"), ("{'country': 'IN'}", '{"country": "IN"}'),
                                           ("[1, 2]", "[1, 2]")])
async def test_final_answer_ends_the_run_with_its_value(sandbox_pool, value, answer):
    result, log, _ = await run_codemode(scripted(f"final_answer({value})\nprint('never runs')"), sandbox_pool)
    assert result.error is None and result.answer == answer
    assert result.turns == 1 and len(log.lm_calls) == 1  # no separate extract call
    assert result.steps[0].stdout == ""  # final_answer stopped the code


async def test_code_calls_bridged_tools_and_computes_the_answer(sandbox_pool):
    code = TASK.reference.replace("print(sum(", "final_answer(sum(")
    result, log, session = await run_codemode(scripted(code), sandbox_pool)
    assert result.error is None and result.answer == "27.0"
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]
    system = log.lm_calls[0].messages[0]["content"]
    assert "def list_orders(" in system and "def final_answer(" in system  # the tool API, in the system message
    assert log.lm_calls[0].messages[-1] == {"role": "user", "content": TASK.prompt}


async def test_the_worked_examples_come_before_the_task_as_code_turns_with_their_output(sandbox_pool):
    _, log, _ = await run_codemode(scripted("final_answer(1)"), sandbox_pool)
    messages = log.lm_calls[0].messages[1:]  # after the system message
    for example in EXAMPLES:  # each: its task, its code blocks and what they printed, then its answer
        assert messages[0] == {"role": "user", "content": example.task}
        for n, step in enumerate(example.steps):
            assert messages[1 + 2 * n] == {"role": "assistant", "content": f"```python\n{step.code}\n```"}
            assert messages[2 + 2 * n] == {"role": "user", "content": f"Output:\n{step.printed}"}
        assert messages[1 + 2 * len(example.steps)] == {"role": "assistant", "content": example.answer}
        messages = messages[2 + 2 * len(example.steps):]
    assert messages == [{"role": "user", "content": TASK.prompt}]


async def test_an_arm_built_without_the_example_sends_the_task_alone(sandbox_pool):
    from harness.agents.codemode import CodeModeProgram

    async with open_servers(TASK.servers) as session:
        _, log = await run_agent(CodeModeAgent(sandbox_pool, GUIDED, program=CodeModeProgram(GUIDED, examples=False)),
                                 TASK, session, ScriptedEngine(scripted("final_answer(1)")))
    assert [m["role"] for m in log.lm_calls[0].messages] == ["system", "user"]


async def test_a_run_cannot_end_before_the_model_has_seen_what_its_code_printed(sandbox_pool):
    """Printing the answer does not end the run (the old `finished` flag did, before the output was seen):
    the next call shows the output, and only the model's final_answer ends it."""
    result, log, _ = await run_codemode(scripted("print(get_customer(customer_id='C-0007')['country'])",
                                                 "final_answer('IN')"), sandbox_pool)
    assert result.turns == 2 and result.answer == "IN"
    assert log.lm_calls[1].messages[-1] == {"role": "user", "content": "Output:\nIN"}
    assert log.lm_calls[1].messages[-2]["content"].startswith("```python\nprint(get_customer(")


async def test_state_persists_between_turns_and_errors_are_observed(sandbox_pool):
    result, log, _ = await run_codemode(scripted(
        "rows = list_orders(customer_id='C-0007')['orders']\nprint(len(rows))",
        "print(undefined_name)",
        "final_answer(sum(r['total'] for r in rows if r['status'] == 'shipped'))"), sandbox_pool)
    assert [s.stdout.strip() for s in result.steps] == ["6", "", ""]
    assert "NameError" in result.steps[1].error
    assert "NameError" in log.lm_calls[2].messages[-1]["content"]  # the error was shown to the LM
    assert result.turns == 3 and result.error is None and result.answer == "27.0"


async def test_a_reply_with_no_code_is_the_answer_once_the_model_has_seen_an_output(sandbox_pool):
    replies = iter(["```python\nprint(get_customer(customer_id='C-0007')['country'])\n```", "IN"])
    result, _, session = await run_codemode(lambda request: next(replies), sandbox_pool)
    assert result.answer == "IN" and result.error is None and result.turns == 2 and len(session.calls) == 1


async def test_an_answer_before_any_code_is_refused_as_an_observation(sandbox_pool):
    replies = iter(["JP", "```python\nprint(get_customer(customer_id='C-0007')['country'])\n```", "IN"])
    result, log, _ = await run_codemode(lambda request: next(replies), sandbox_pool)
    assert result.answer == "IN" and result.turns == 3
    assert "an answer needs the data: use the tools first" in log.lm_calls[1].messages[-1]["content"]


async def test_a_policy_violation_is_observed_and_counted(sandbox_pool):
    result, _, _ = await run_codemode(scripted("import subprocess\nprint(subprocess.run(['ls']))",
                                               "final_answer(27.0)"), sandbox_pool)
    assert result.policy_violations == 1
    assert "POLICY_VIOLATION" in result.steps[0].error
    assert result.answer == "27.0"


async def test_tool_errors_are_exceptions_the_code_can_catch(sandbox_pool):
    code = "try:\n    get_customer(customer_id='C-9999')\nexcept Exception as exc:\n    print('caught:', exc)"
    result, _, session = await run_codemode(scripted(code, "final_answer('x')"), sandbox_pool)
    assert "caught:" in result.steps[0].stdout and "no customer has the id" in result.steps[0].stdout
    assert session.calls[0].is_error


async def test_repeating_the_same_failing_code_is_noted(sandbox_pool):
    result, log, _ = await run_codemode(scripted("print(x)", "print(x)", "final_answer(1)"), sandbox_pool)
    assert result.repeated_actions == 1 and result.steps[1].repeat_of == 0
    assert "same action as turn 1" in log.lm_calls[2].messages[-1]["content"]


async def test_running_out_of_turns_is_recorded(sandbox_pool):
    task = type(TASK)(**{**TASK.__dict__, "max_turns": 2})
    result, _, _ = await run_codemode(scripted("x = 1\nprint(x)", "print(x + 1)"), sandbox_pool, task=task)
    assert result.error is not None and result.error.type == "max_turns" and result.answer == ""


async def test_discover_arm_sees_an_index_and_looks_tools_up(sandbox_pool):
    code = ("print(search_tools('orders of a customer')[0])\n"
            "print(get_tool_schema('list_orders').splitlines()[0])")
    result, log, session = await run_codemode(scripted(code, "final_answer('x')"), sandbox_pool,
                                              DiscoveryCodeModeAgent)
    stdout = result.steps[0].stdout
    assert stdout.splitlines()[0].startswith("list_orders:")
    assert stdout.splitlines()[1].startswith("def list_orders(customer_id: str | None = None")
    assert result.tool_definition_texts[1:] == (stdout.splitlines()[1],)  # the schema it printed is tool documentation
    system = log.lm_calls[0].messages[0]["content"]
    assert "list_orders: List orders" in system and "def list_orders(" not in system
    assert session.calls == []  # discovery is not an MCP call


async def test_the_value_of_a_last_expression_is_shown_like_a_repl_shows_it(sandbox_pool):
    result, log, _ = await run_codemode(scripted("c = get_customer(customer_id='C-0007')\nc['country']",
                                                 "x = 1\nNone", "final_answer(c['country'])"), sandbox_pool)
    assert result.steps[0].stdout == "'IN'\n"
    assert log.lm_calls[1].messages[-1]["content"] == "Output:\n'IN'"
    assert result.steps[1].stdout == ""  # None is not shown
    assert result.answer == "IN"


@pytest.mark.parametrize("code, value", [("3", 3), ("'IN'", "IN"), ("{'country': 'IN'}", {"country": "IN"}),
                                         ("print('IN')", "IN"), ("print(27.0)", 27.0)])
def test_a_block_that_only_states_a_constant_states_that_value(code, value):
    from harness.agents.codemode import stated_value

    assert stated_value(code) == value


@pytest.mark.parametrize("code", ["x", "print(x)", "get_customer(customer_id='C-1')", "x = 3", "3\n4",
                                  "print('a', 'b')", "final_answer(3)", "("])
def test_a_block_that_acts_states_nothing(code):
    from harness.agents.codemode import _NOTHING, stated_value

    assert stated_value(code) is _NOTHING


async def test_a_block_stating_a_constant_after_an_output_is_the_answer(sandbox_pool):
    result, _, _ = await run_codemode(scripted("print(get_customer(customer_id='C-0007')['country'])", "'IN'"),
                                      sandbox_pool)
    assert result.answer == "IN" and result.turns == 2 and result.error is None


async def test_under_plain_a_constant_block_runs_as_code_and_nothing_is_echoed(sandbox_pool):
    result, log, _ = await run_codemode(scripted("'IN'", "print('IN')", "final_answer('IN')"), sandbox_pool,
                                        scaffold=PLAIN)
    assert [s.kind for s in result.steps] == ["code", "code", "code"] and result.answer == "IN"
    assert result.steps[0].stdout == "" and result.steps[0].rules == ()
    assert "value of its last line" not in log.lm_calls[0].messages[0]["content"]
    assert "Never guess an id" not in log.lm_calls[0].messages[0]["content"]


async def test_under_guided_the_rules_that_fired_are_named_at_their_step(sandbox_pool):
    result, _, _ = await run_codemode(scripted("c = get_customer(customer_id='C-0007')\nc['nope']",
                                               "c = get_customer(customer_id='C-0007')\nc['country']", "'IN'"),
                                      sandbox_pool)
    assert result.steps[0].rules == ("answer_or_act_grammar", "result_notes")
    assert result.steps[1].rules == ("answer_or_act_grammar", "echo_last_expression")
    assert result.steps[2].rules == ("constant_block_is_answer",) and result.answer == "IN"


async def test_a_guessed_id_is_refused_under_guided_and_reaches_the_server_under_plain(sandbox_pool):
    code = "print(get_customer(customer_id='C-0012'))"
    guided, _, _ = await run_codemode(scripted(code, "final_answer('x')"), sandbox_pool, guard_ids=True)
    plain, _, session = await run_codemode(scripted(code, "final_answer('x')"), sandbox_pool, scaffold=PLAIN,
                                           guard_ids=True)
    assert "id_guard" in guided.steps[0].rules and "appears nowhere" in guided.steps[0].observation
    assert plain.steps[0].rules == () and session.ids_refused == 0 and "C-0012" in plain.steps[0].stdout


def test_the_instructions_say_a_tool_returns_what_its_stub_declares_or_text():
    from harness.agents.codemode import instructions

    for scaffold in (PLAIN, GUIDED):
        text = instructions(scaffold)
        assert "each returns what its stub says: the declared type, or text parsed when the text is JSON" in text
        assert "parsed JSON (dicts and lists)" not in text


async def test_each_call_a_code_step_makes_carries_that_step_as_it_is_made(sandbox_pool):
    result, log, session = await run_codemode(scripted(
        "print(get_customer(customer_id='C-0007')['country'])",
        "n = len('abc')\nprint(n)",
        "rows = list_orders(customer_id='C-0007')['orders']\nc = get_customer(customer_id='C-0007')\n"
        "final_answer(len(rows))"), sandbox_pool)
    assert result.error is None and result.turns == 3
    assert [(c.tool, c.step, c.in_code) for c in session.calls] == [
        ("get_customer", 0, True), ("list_orders", 2, True), ("get_customer", 2, True)]
    assert [c.step for c in log.lm_calls] == [0, 1, 2]


def test_the_instructions_say_tools_are_awaitable_under_async_tools_only():
    from harness.agents.codemode import ASYNC_TOOLS, instructions

    assert ASYNC_TOOLS in instructions(GUIDED) and ASYNC_TOOLS not in instructions(PLAIN)


async def test_discovery_functions_can_be_gathered_with_tools(sandbox_pool):
    code = ("import asyncio\n"
            "hits, customer = await asyncio.gather(search_tools('orders of a customer'), "
            "get_customer(customer_id='C-0001'))\n"
            "print(hits[0].split(':')[0], customer['id'])")
    result, _, session = await run_codemode(scripted(code, "final_answer('x')"), sandbox_pool, DiscoveryCodeModeAgent)
    assert result.steps[0].stdout.split() == ["list_orders", "C-0001"]
    assert [(c.tool, c.batch) for c in session.calls] == [("get_customer", 1)]  # discovery is not an MCP call
