"""A task's system instructions (Task.system_instructions) reach every arm's system message identically, after the
arm's own text, and are counted in the row's context tokens as the arm's instructions are (context_task_tokens)."""

import asyncio
from dataclasses import replace

import pytest

from harness.agents.arms import ARM_NAMES, ARMS
from harness.models.tokens import count_tokens
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

RULES = "House rule: answer with the value alone, and never reveal a customer's email address."
TASK = "customer-country"


async def run_task(arms: tuple[str, ...], tmp_path, rules: str, run_id: str, pool=None):
    """The smoke task through `arms` on scripted:reference, with `rules` as its system instructions."""
    suite = load_suite("smoke")
    task = replace(next(t for t in suite.tasks if t.id == TASK), system_instructions=rules)
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:reference", arms=arms,
                       out_dir=tmp_path, run_id=run_id)
    return await Runner(config, pool=pool).run()


def check_arms(with_rules, without, arms: tuple[str, ...]) -> None:
    """Each arm's every agent call starts its system message with exactly what it sends without the rules, and
    ends it with the rules; the run still passes, and its task tokens grow by the rules' tokens in every call."""
    ruled, plain = read_results([with_rules.path]).set_index("arm"), read_results([without.path]).set_index("arm")
    rules_tokens = count_tokens(RULES)
    for arm in arms:
        row, base = ruled.loc[arm], plain.loc[arm]
        assert bool(row.success) and row.llm_calls == base.llm_calls, arm
        calls = read_trajectory(with_rules.path, row.sample_id).lm_calls
        base_calls = read_trajectory(without.path, base.sample_id).lm_calls
        for call, base_call in zip(calls, base_calls, strict=True):
            system, base_system = call.messages[0]["content"], base_call.messages[0]["content"]
            assert call.messages[0]["role"] == "system" and system.endswith(RULES), arm
            if arm == "react":  # dspy's ChatAdapter indents the instructions it is given, the arm's and the task's alike
                assert system.split() == [*base_system.split(), *RULES.split()]
            else:
                assert system == f"{base_system}\n\n{RULES}", arm
            assert call.messages[1:] == base_call.messages[1:], arm  # the task text is untouched
        grown = row.context_task_tokens - base.context_task_tokens
        assert row.llm_calls * rules_tokens <= grown <= row.llm_calls * (rules_tokens + 3), arm
        assert row.context_tool_definition_tokens == base.context_tool_definition_tokens, arm


NO_SANDBOX = tuple(name for name in ARM_NAMES if not ARMS[name].needs_sandbox)


def test_the_arms_without_a_sandbox_put_the_rules_last_in_the_system_message_and_count_them(tmp_path):
    with_rules = asyncio.run(run_task(NO_SANDBOX, tmp_path / "a", RULES, "with"))
    without = asyncio.run(run_task(NO_SANDBOX, tmp_path / "b", "", "without"))
    check_arms(with_rules, without, NO_SANDBOX)


@pytest.mark.sandbox
async def test_the_sandbox_arms_put_the_rules_last_in_the_system_message_and_count_them(sandbox_pool, tmp_path):
    arms = tuple(name for name in ARM_NAMES if ARMS[name].needs_sandbox)
    with_rules = await run_task(arms, tmp_path / "a", RULES, "with", sandbox_pool)
    without = await run_task(arms, tmp_path / "b", "", "without", sandbox_pool)
    check_arms(with_rules, without, arms)
