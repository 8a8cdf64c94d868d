"""The worked examples are true: each code step, run in the real sandbox against the example's own tool results,
prints exactly what the example shows, and the direct arm's calls are the same calls."""

import pytest

from harness.agents.example import EXAMPLES, WorkedExample, code_demo, tool_calling_demo


def example_tools(example: WorkedExample) -> tuple[str, dict]:
    """A sandbox prelude defining the example's tools, and a dispatcher answering each call with its result."""
    results = {(step.tool, repr(sorted(step.arguments.items()))): step.result for step in example.calls}
    prelude = "".join(f"def {name}(**arguments):\n    return _harness_call_tool_json({name!r}, arguments)\n\n"
                      for name in {step.tool for step in example.calls})

    def dispatch(name: str, arguments: dict):
        return results[(name, repr(sorted(arguments.items())))]  # a call the example does not show: KeyError

    return prelude, dispatch


@pytest.mark.sandbox
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.task.splitlines()[-1][:40])
async def test_each_code_step_prints_what_the_example_shows(example, sandbox_pool):
    prelude, dispatch = example_tools(example)
    async with sandbox_pool.lease(dispatch, prelude=prelude) as sandbox:
        for step in example.steps:
            result = await sandbox.execute(step.code)
            assert result.error is None and result.stdout.rstrip("\n") == step.printed


def test_both_arms_show_the_same_tasks_tool_calls_and_answers():
    for example in EXAMPLES:
        direct, code = tool_calling_demo(example), code_demo(example)
        assert direct["task"] == code["task"] == example.task
        assert direct["reply"]["text"] == code["reply"] == example.answer
        calls = [turn["action"]["tool_calls"][0] for turn in direct["history"]]
        assert [(c["name"], c["arguments"]) for c in calls] == [(s.tool, s.arguments) for s in example.calls]
        assert len(code["history"]) == len(example.steps) >= len(calls)


def test_every_example_answer_is_read_from_or_computed_from_what_was_shown():
    for example in EXAMPLES:
        shown = " ".join(step.printed for step in example.steps)
        assert example.answer in shown
