import pytest

from harness.run.validate import WRONG_TEXT, validate_suite, wrong_answers
from harness.tasks.suite import load_suite, suite_files

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


def test_wrong_answers_include_a_far_number_for_numeric_expectations():
    assert wrong_answers(27.0) == [WRONG_TEXT, "1081.0"]
    assert wrong_answers("IN") == [WRONG_TEXT]


@pytest.mark.parametrize("name", sorted(suite_files()))
async def test_every_suite_validates(name, sandbox_pool):
    checks = await validate_suite(load_suite(name), pool=sandbox_pool)
    assert [(c.task_id, c.reference_error or c.reference_reason or c.wrong_reason) for c in checks if not c.ok] == []
    assert all(c.tool_calls > 0 for c in checks)


async def test_each_kind_of_broken_task_is_caught(sandbox_pool, tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    checks = {c.task_id: c for c in await validate_suite(load_suite(str(path)), pool=sandbox_pool)}
    assert not checks["wrong-expected"].passes_on_reference
    assert not checks["cannot-fail"].fails_on_wrong
    assert checks["crashing-reference"].reference_error and "no customer has the id" in checks["crashing-reference"].reference_error
    assert not any(c.ok for c in checks.values())


async def test_references_run_under_the_scaffolds_id_guard(sandbox_pool, tmp_path):
    from harness.agents.scaffold import PLAIN

    path = tmp_path / "ids.yaml"
    path.write_text(BROKEN.split("  - id: cannot-fail")[0].replace("Country of C-0007?", "Country of Chen Tanaka?")
                    .replace("expected: FR", "expected: IN"))
    suite = load_suite(str(path))
    (guarded,) = await validate_suite(suite, pool=sandbox_pool)
    (unguarded,) = await validate_suite(suite, pool=sandbox_pool, scaffold=PLAIN)
    assert "appears nowhere in the task" in guarded.reference_error and unguarded.ok
