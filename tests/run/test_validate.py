import pytest

import harness.adapters  # noqa: F401  registers the published benchmarks
from harness.run.judge import open_judge
from harness.run.validate import WRONG_TEXT, expected_as_answers, validate_suite, wrong_answers
from harness.tasks.registry import load_suite as load_any_suite
from harness.tasks.scorers import build_scorer
from harness.tasks.suite import load_suite, suite_files
from tests.adapters.lookalike import write_lookalike

pytestmark = pytest.mark.sandbox

BROKEN = """
suite: broken
servers: [crm]
tasks:
  - id: wrong-expected
    category: lookup
    prompt: "Country of C-0007?"
    expected: FR
    scorer: exact
    reference: print(get_customer(customer_id="C-0007")["country"])
  - id: cannot-fail
    category: lookup
    prompt: "Anything"
    expected: ""
    scorer: contains
    reference: print("whatever")
  - id: crashing-reference
    category: lookup
    prompt: "Country of C-9999?"
    expected: IN
    scorer: exact
    reference: print(get_customer(customer_id="C-9999")["country"])
"""


UNREFERENCED = """
suite: unreferenced
servers: [crm]
tasks:
  - id: country
    prompt: "Country of C-0007?"
    expected: IN
    scorer: exact
  - id: cannot-fail
    prompt: "Anything"
    expected: ""
    scorer: contains
"""


def test_wrong_answers_are_empty_made_up_another_task_answer_one_off_and_far_off():
    assert wrong_answers(27.0, "IN") == ["", WRONG_TEXT, "IN", "28.0", "1081.0"]
    assert wrong_answers("IN") == ["", WRONG_TEXT]
    assert wrong_answers("IN", "IN") == ["", WRONG_TEXT]  # another task with the same answer is no wrong answer


def test_the_expected_value_as_an_answer_is_the_text_or_the_value_as_python_and_as_json():
    assert expected_as_answers("IN") == ["IN"]
    assert expected_as_answers(("A", 3)) == ["('A', 3)", '["A", 3]']
    assert expected_as_answers(100.0) == ["100.0"]


async def test_a_task_without_reference_is_checked_by_its_scorer_alone(sandbox_pool, tmp_path):
    path = tmp_path / "unreferenced.yaml"
    path.write_text(UNREFERENCED)
    checks = {c.task_id: c for c in await validate_suite(load_suite(str(path)), pool=sandbox_pool)}
    assert checks["country"].ok and not checks["country"].has_reference and checks["country"].tool_calls == 0
    assert checks["country"].category == "uncategorized"
    assert not checks["cannot-fail"].ok and not checks["cannot-fail"].fails_on_wrong


async def test_a_benchmark_checkout_validates_with_its_expected_answers(sandbox_pool, tmp_path):
    suite = load_any_suite(f"m3tooleval:{write_lookalike(tmp_path)}")
    checks = await validate_suite(suite, pool=sandbox_pool)
    assert [c.task_id for c in checks if not c.ok] == [] and len(checks) == 4


async def test_a_tau2_checkout_validates_by_replaying_the_expected_actions(sandbox_pool, tmp_path):
    from tests.adapters.tau2_lookalike import write_tau2_lookalike

    suite = load_any_suite(f"tau2:{write_tau2_lookalike(tmp_path / 'tau2-bench')}#kiosk")
    checks = await validate_suite(suite, pool=sandbox_pool)
    assert [(c.task_id, c.reference_error or c.reference_reason) for c in checks if not c.ok] == []
    assert [(c.tool_calls, c.reference_answer) for c in checks] == [(1, "6.5"), (1, "done")]
    # task 2 only reads (its assertion unjudged without a judge): an agent that does nothing passes it; not task 1
    assert [c.passes_doing_nothing for c in checks] == [False, True]
    assert [c.no_action.passes for c in checks] == [False, True]  # reported by the no-action check, not changed


@pytest.mark.parametrize("name", sorted(suite_files()))
async def test_every_suite_validates(name, sandbox_pool):
    suite = load_suite(name)
    judged = any(build_scorer(t.scorer).needs_judge() for t in suite.tasks)  # the open suite: word-overlap judge
    judge = {"judge": await open_judge("scripted:judge"), "judge_model": "scripted:judge"} if judged else {}
    checks = await validate_suite(suite, pool=sandbox_pool, **judge)
    assert [(c.task_id, c.reference_error or c.reference_reason or c.wrong_reason) for c in checks if not c.ok] == []
    assert all(c.tool_calls > 0 for c in checks)
    assert not any(c.passes_doing_nothing for c in checks)  # the shipped tasks all need an action
    # and none can be passed by guessing the expected answer without acting, unless its scorer reads only the answer
    assert [(c.task_id, c.no_action.problem) for c in checks if c.no_action.problem] == []


async def test_each_kind_of_broken_task_is_caught(sandbox_pool, tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    checks = {c.task_id: c for c in await validate_suite(load_suite(str(path)), pool=sandbox_pool)}
    assert not checks["wrong-expected"].passes_on_reference
    assert not checks["cannot-fail"].fails_on_wrong
    assert checks["crashing-reference"].reference_error and "no customer has the id" in checks["crashing-reference"].reference_error
    assert not any(c.ok for c in checks.values())


CHECKED = """
suite: checked
servers: [crm]
tasks:
  - id: churn
    category: write
    prompt: "Churn C-0012 and note why; answer with the name."
    expected: Farah Kowalski
    scorer:
      all:
        scorers:
          - exact
          - tool_called: {tool: update_customer_status, args: {customer_id: C-0012, status: churned}}
          - tool_not_called: {tool: "delete_*"}
          - tool_call_count: {tool: update_customer_status, at_most: 1}
          - probe: {server: crm, tool: list_notes, args: {customer_id: C-0012}, path: "[*].body", contains: churned}
    reference: |
      update_customer_status(customer_id="C-0012", status="churned")
      add_note(customer_id="C-0012", body="churned on request")
      print(get_customer(customer_id="C-0012")["name"])
  - id: calls-only
    category: write
    prompt: "Churn C-0012."
    expected: ""
    scorer: {tool_called: {tool: update_customer_status}}
    reference: |
      update_customer_status(customer_id="C-0012", status="churned")
      print("done")
  - id: required-call-never-made
    category: write
    prompt: "Churn C-0012."
    expected: Farah Kowalski
    scorer: {all: {scorers: [exact, {tool_called: {tool: update_customer_status}}]}}
    reference: print(get_customer(customer_id="C-0012")["name"])
"""


async def test_call_checks_and_probes_are_validated_on_the_reference_and_on_wrong_calls(sandbox_pool, tmp_path):
    path = tmp_path / "checked.yaml"
    path.write_text(CHECKED)
    checks = {c.task_id: c for c in await validate_suite(load_suite(str(path)), pool=sandbox_pool)}
    churn = checks["churn"]
    assert churn.ok and churn.passes_on_reference and churn.fails_on_wrong, churn.reference_reason
    # update_customer_status removed, delete_* added, update_customer_status twice more: each fails the scorer
    assert churn.wrong_trajectories == 3 and churn.fails_on_wrong_trajectory
    assert checks["calls-only"].ok and checks["calls-only"].wrong_trajectories == 1
    never = checks["required-call-never-made"]
    assert not never.passes_on_reference and "update_customer_status never called" in never.reference_reason


async def test_references_run_under_the_scaffolds_id_guard(sandbox_pool, tmp_path):
    from harness.agents.scaffold import PLAIN

    path = tmp_path / "ids.yaml"
    path.write_text(BROKEN.split("  - id: cannot-fail")[0].replace("Country of C-0007?", "Country of Chen Tanaka?")
                    .replace("expected: FR", "expected: IN"))
    suite = load_suite(str(path))
    (guarded,) = await validate_suite(suite, pool=sandbox_pool)
    (unguarded,) = await validate_suite(suite, pool=sandbox_pool, scaffold=PLAIN)
    assert "appears nowhere in the task" in guarded.reference_error and unguarded.ok


GATHERED = """
suite: gathered
servers: [crm]
tasks:
  - id: two-countries
    category: fan-out
    prompt: "Countries of C-0007 and C-0001, joined with a comma?"
    expected: IN,BR
    scorer: exact
    reference: |
      import asyncio
      a, b = await asyncio.gather(get_customer(customer_id="C-0007"), get_customer(customer_id="C-0001"))
      print(a["country"] + "," + b["country"])
"""


async def test_a_reference_that_gathers_its_calls_validates(sandbox_pool, tmp_path):
    path = tmp_path / "gathered.yaml"
    path.write_text(GATHERED)
    (check,) = await validate_suite(load_suite(str(path)), pool=sandbox_pool)
    assert check.ok and check.tool_calls == 2, check.reference_error or check.reference_reason
