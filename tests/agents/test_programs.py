"""Saved programs: JSON with metadata, a content hash of the tuned state, validated when loaded."""

from __future__ import annotations

import json

import dspy
import pytest

from harness.agents.programs import (
    DevScore,
    SavedProgram,
    load_program,
    new_program,
    program_hash,
    save_program,
    tuned_state,
)
from harness.agents.scaffold import GUIDED
from harness.errors import UserError


def saved(arm: str = "direct", instructions: str | None = None, **changes) -> SavedProgram:
    module = new_program(arm, GUIDED)
    if instructions:
        module.step.signature = module.step.signature.with_instructions(instructions)
    fields = {"arm": arm, "suite": "core", "model": "openai/x", "optimizer": "gepa", "budget": 10, "seed": 0,
              "train_ids": ("a",), "dev_ids": ("b", "c"), "dev_before": DevScore(0.0, 0.0, ()),
              "dev_after": DevScore(0.5, 0.5, ("b",)), "interrupted": False, "episodes": 10,
              "state": tuned_state(module)}
    return SavedProgram(**{**fields, **changes})


def test_a_program_round_trips_with_its_metadata_and_hash(tmp_path):
    program = saved(instructions="Be brief.")
    path = save_program(program, tmp_path / "p.json")
    loaded = load_program(path)
    assert loaded.hash == program.hash and loaded.state == program.state
    assert (loaded.dev_after, loaded.dev_ids, loaded.optimizer) == (DevScore(0.5, 0.5, ("b",)), ("b", "c"), "gepa")
    data = json.loads(path.read_text())
    assert data["hash"] == program.hash and data["harness_version"] and data["created_at"]


def test_the_hash_is_of_the_tuned_content():
    assert saved().hash == saved(model="other", optimizer="mipro").hash
    assert saved(instructions="Be brief.").hash != saved().hash
    assert len(saved().hash) == 16 and program_hash({"a": 1}) == program_hash({"a": 1})


def test_a_hand_edited_program_is_a_different_program(tmp_path):
    path = save_program(saved(), tmp_path / "p.json")
    data = json.loads(path.read_text())
    data["state"]["step"]["signature"]["instructions"] = "Edited by hand."
    path.write_text(json.dumps(data))
    assert load_program(path).hash != data["hash"]


def test_a_bound_lm_is_not_saved():
    module = new_program("codemode", GUIDED)
    module.set_lm(dspy.LM("openai/some-model"))
    state = tuned_state(module)
    assert state["step"]["lm"] is None
    assert module.step.lm is not None  # the module itself is untouched


@pytest.mark.parametrize("arm", ["direct", "codemode", "react", "hybrid"])
def test_loaded_state_drives_every_arms_agent(arm):
    from harness.agents.arms import build_agent

    program = saved(arm, instructions="Use few tools.")
    agent = build_agent(arm, object(), GUIDED, program_state=program.state)
    assert agent.program.step.signature.instructions == "Use few tools."


def test_a_program_saved_before_the_shared_loop_is_refused_with_a_hint(tmp_path):
    path = save_program(saved(), tmp_path / "p.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "format_version": 1}))
    with pytest.raises(UserError, match="tune it again"):
        load_program(path)


@pytest.mark.parametrize("content, fragment", [
    ("{", "not JSON"),
    (json.dumps({"generate": {}}), "not a harness program"),
    (json.dumps([1, 2]), "not a harness program"),
])
def test_a_foreign_file_is_a_user_error(content, fragment, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(UserError, match=fragment):
        load_program(path)


def test_a_bad_field_or_a_state_for_another_arm_is_a_user_error(tmp_path):
    path = save_program(saved(), tmp_path / "p.json")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "surprise": 1}))
    with pytest.raises(UserError, match="field 'surprise'"):
        load_program(path)
    path.write_text(json.dumps({**data, "arm": "codemode"}))
    with pytest.raises(UserError, match="does not fit the codemode arm"):
        load_program(path)
    with pytest.raises(UserError, match="cannot read the program file"):
        load_program(tmp_path / "missing.json")


def test_a_saved_program_keeps_its_scaffold_and_run_program_uses_it(tmp_path):
    from harness.agents.scaffold import PLAIN
    from harness.cli.run import _program_options

    path = save_program(saved(scaffold=PLAIN), tmp_path / "p.json")
    assert json.loads(path.read_text())["scaffold"]["worked_examples"] is False
    assert load_program(path).scaffold == PLAIN
    assert _program_options(path, "smoke", ("direct",), ())["scaffold"] == PLAIN


def test_a_program_saved_before_scaffolds_were_recorded_runs_under_guided(tmp_path):
    path = save_program(saved(), tmp_path / "p.json")
    data = json.loads(path.read_text())
    del data["scaffold"]
    path.write_text(json.dumps({**data, "format_version": 2}))
    assert load_program(path).scaffold == GUIDED
