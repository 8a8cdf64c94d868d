"""The no-action check: the expected answer with no tool call on fresh servers fails every task whose scorer reads
the end state or the calls, and says which part held when it does not."""

from pathlib import Path

import pytest

import harness.adapters  # noqa: F401  registers the published benchmarks
from harness.errors import UserError
from harness.run import no_action
from harness.run.no_action import CALLS_HELD, STATE_HELD, answer_only_line, check_before_run, check_no_action
from harness.tasks.registry import load_suite as load_any_suite
from harness.tasks.suite import load_suite, suite_files
from tests.adapters.lookalike import write_lookalike
from tests.adapters.tau2_lookalike import write_tau2_lookalike
from tests.run.no_action_suites import (
    CHURN_ALREADY_CHURNED,
    CHURN_FOR_REAL,
    COUNTRY,
    ONLY_FORBIDS_A_CALL,
    crm_suite,
)

GUESSABLE = crm_suite("guessable", CHURN_ALREADY_CHURNED, ONLY_FORBIDS_A_CALL, CHURN_FOR_REAL, COUNTRY)

DECLARED = """
suite: declared
servers: [crm]
tasks:
  - id: restraint-with-a-read
    category: write
    prompt: "Churn C-0003 unless it is churned already. Answer with its name."
    expected: Rosa Abara
    state_holds_at_start: restraint
    scorer:
      all:
        scorers:
          - exact
          - state: {server: crm, collection: customers, where: {id: C-0003, status: churned}, count: 1}
          - tool_called: {tool: get_customer, args: {customer_id: C-0003}}
    reference: print(get_customer(customer_id="C-0003")["name"])
  - id: restraint-without-a-read
    category: write
    prompt: "Churn C-0003 unless it is churned already. Answer with its name."
    expected: Rosa Abara
    state_holds_at_start: restraint
    scorer:
      all:
        scorers:
          - exact
          - state: {server: crm, collection: customers, where: {id: C-0003, status: churned}, count: 1}
    reference: print(get_customer(customer_id="C-0003")["name"])
  - id: declared-but-not-holding
    category: write
    prompt: "Churn C-0007. Answer with its name."
    expected: Chen Tanaka
    state_holds_at_start: idempotent
    scorer:
      all:
        scorers:
          - exact
          - state: {server: crm, collection: customers, where: {id: C-0007, status: churned}, count: 1}
          - tool_called: {tool: get_customer}
    reference: print(update_customer_status(customer_id="C-0007", status="churned")["name"])
"""


def write(tmp_path: Path, text: str, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


async def checks_of(suite) -> dict:
    return {c.task_id: c for c in await check_no_action(suite.tasks)}


async def test_a_write_task_whose_state_already_holds_is_reported_with_the_part_that_held(tmp_path):
    checks = await checks_of(load_suite(str(write(tmp_path, GUESSABLE))))
    held = checks["churn-already-churned"]
    assert held.passes and held.held == (STATE_HELD,) and held.problem.startswith(STATE_HELD)
    forbids = checks["only-forbids-a-call"]
    assert forbids.passes and forbids.held == (CALLS_HELD,) and forbids.problem == CALLS_HELD
    assert not checks["churn-for-real"].passes and checks["churn-for-real"].problem == ""
    assert checks["country"].answer_only and checks["country"].passes and checks["country"].problem == ""


async def test_a_declared_task_must_check_a_read_and_its_state_must_hold(tmp_path):
    checks = await checks_of(load_suite(str(write(tmp_path, DECLARED))))
    read = checks["restraint-with-a-read"]
    assert read.declared == "restraint" and read.held == (STATE_HELD,) and not read.passes and read.problem == ""
    assert "no call check fails with no calls" in checks["restraint-without-a-read"].problem
    assert "state check fails on the seed data" in checks["declared-but-not-holding"].problem


@pytest.mark.parametrize("name", sorted(suite_files()))
async def test_no_built_in_task_can_be_passed_without_acting_unless_it_is_a_lookup(name):
    checks = await check_no_action(load_suite(name).tasks)
    assert [(c.task_id, c.problem) for c in checks if c.problem] == []
    assert all(c.answer_only for c in checks if c.passes)


async def test_the_fixed_core_tasks_fail_under_no_action():
    core = load_suite("core")
    checks = await checks_of(core)
    revoke, close = checks["sprawl-revoke-key"], checks["write-close-ticket"]
    assert not revoke.passes and revoke.held == () and revoke.problem == ""
    assert close.declared == "restraint" and close.held == (STATE_HELD,) and not close.passes


async def test_a_tau2_task_that_passes_with_no_action_is_reported_not_changed(tmp_path):
    suite = load_any_suite(f"tau2:{write_tau2_lookalike(tmp_path / 'tau2-bench')}#kiosk")
    checks = await check_no_action(suite.tasks)
    assert [(c.passes, c.held) for c in checks] == [(False, ()), (True, (STATE_HELD,))]  # kiosk/2 only reads
    assert await check_before_run(suite, suite.tasks) == [no_action.warning_line(checks[1])]


async def test_m3tooleval_tasks_are_counted_as_passed_from_the_answer_alone(tmp_path):
    suite = load_any_suite(f"m3tooleval:{write_lookalike(tmp_path)}")
    checks = await check_no_action(suite.tasks)
    assert all(c.answer_only and not c.problem for c in checks)
    assert answer_only_line(checks).startswith(f"{len(checks)} of {len(checks)} task(s) can be passed from the answer")


async def test_before_a_run_a_users_suite_gets_a_warning_line_per_task(tmp_path):
    suite = load_suite(str(write(tmp_path, GUESSABLE)))
    lines = await check_before_run(suite, suite.tasks)
    assert lines == [(f"warning: task 'churn-already-churned' can be passed without acting: "
                      f"{(await checks_of(suite))['churn-already-churned'].problem}"),
                     f"warning: task 'only-forbids-a-call' can be passed without acting: {CALLS_HELD}"]


async def test_before_a_run_a_built_in_task_that_fails_the_check_stops_it(tmp_path, monkeypatch):
    monkeypatch.setattr(no_action, "builtin_suites_dir", lambda: tmp_path)
    suite = load_suite(str(write(tmp_path, GUESSABLE)))
    assert no_action.is_builtin(suite) and no_action.is_builtin(load_suite("core")) is False
    with pytest.raises(UserError) as info:
        await check_before_run(suite, suite.tasks)
    assert str(info.value).startswith("built-in suite 'guessable': task 'churn-already-churned' can be passed "
                                      f"without acting: {STATE_HELD}")
    assert "(and 1 more task(s))" in str(info.value)


def test_the_shipped_suites_are_built_in():
    assert no_action.is_builtin(load_suite("core")) and no_action.is_builtin(load_suite("smoke"))


@pytest.mark.sandbox
async def test_the_fixed_core_tasks_pass_under_the_reference_in_every_arm(sandbox_pool, tmp_path):
    from dataclasses import replace

    from harness.agents.arms import ARM_NAMES
    from harness.run.records import read_results
    from harness.run.runner import RunConfig, Runner

    core = load_suite("core")
    fixed = replace(core, tasks=tuple(t for t in core.tasks if t.id in ("sprawl-revoke-key", "write-close-ticket")))
    config = RunConfig(suite=fixed, model="scripted:reference", arms=ARM_NAMES, out_dir=tmp_path, run_id="ref")
    frame = read_results([(await Runner(config, pool=sandbox_pool).run()).path])
    assert len(frame) == 2 * len(ARM_NAMES)
    failures = frame[~frame.success][["task_id", "arm", "score_reason", "error_message"]]
    assert failures.empty, failures.to_string()
