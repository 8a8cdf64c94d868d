"""BFCL's ground truth as each task's per-turn reference, in the sandbox: `scripted:reference` gives each turn's calls
in its turn through direct and codemode (miss_func's held-back function defined in the sandbox when its turn offers
it), `harness validate` passes every look-alike task, and the real package's first entry of each category replays
valid through both arms."""

import importlib.util
from dataclasses import replace

import pytest

import harness.adapters  # noqa: F401  registers the adapters
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.run.validate import validate_suite
from harness.tasks.registry import load_suite
from tests.adapters.test_bfcl import _checker, _forget_bfcl, checkout  # noqa: F401  (a fixture)

pytestmark = pytest.mark.sandbox


async def _reference_rows(suite, tmp_path, pool):
    config = RunConfig(suite=suite, model="scripted:reference", arms=("direct", "codemode"), out_dir=tmp_path,
                       run_id="reference")
    await Runner(config, pool=pool).run()
    return read_results([tmp_path])


async def test_the_reference_gives_each_turns_calls_in_its_turn_through_direct_and_codemode(checkout, tmp_path,
                                                                                            sandbox_pool):
    rows = await _reference_rows(load_suite(f"bfcl:{checkout}"), tmp_path, sandbox_pool)
    assert len(rows) == 8 and rows.success.all(), rows[["arm", "task_id", "score_reason", "error_message"]]
    decoded = [r["decoded"] for r in _checker().RECEIVED if r["entry"] == "multi_turn_miss_func_0"]
    assert decoded[-2:] == [[[], [["read()"]]]] * 2  # the held-back call made in its turn, in both arms


async def test_validate_passes_every_task_on_its_per_turn_reference(checkout, sandbox_pool):
    checks = await validate_suite(load_suite(f"bfcl:{checkout}"), sandbox_pool)
    assert [c.task_id for c in checks if not c.ok] == [] and all(c.has_reference for c in checks)


@pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason="bfcl-eval is not installed")
async def test_the_real_ground_truth_replays_valid_in_each_category(tmp_path, sandbox_pool):
    _forget_bfcl()
    try:
        suite = load_suite("bfcl:installed")
        first = tuple(t for t in suite.tasks if t.id.endswith("_0"))
        rows = await _reference_rows(replace(suite, tasks=first), tmp_path, sandbox_pool)
        assert len(rows) == 8 and rows.success.all(), rows[["arm", "task_id", "score_reason"]]
    finally:
        _forget_bfcl()
