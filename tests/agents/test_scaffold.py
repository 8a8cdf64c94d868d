"""The scaffold: presets, files that override single fields, its hash, and the one place the default is chosen."""

import subprocess
import sys
from dataclasses import fields, replace

import pytest

from harness.agents.scaffold import (
    FIRING_COLUMNS,
    GUIDED,
    PLAIN,
    RULE_NAMES,
    Scaffold,
    default_scaffold,
    describe,
    firing_counts,
    load_scaffold,
    resolve_scaffold,
)
from harness.errors import UserError


def test_guided_has_every_rule_on_and_plain_keeps_only_the_observation_limit_and_what_sessions_declare():
    assert load_scaffold("guided") is GUIDED and load_scaffold("plain") is PLAIN
    differing = {name for name in RULE_NAMES if getattr(PLAIN, name) != getattr(GUIDED, name)}
    # a benchmark's published protocol (answer feedback, its own turn limit) is its preset's, off in both; skills
    # and workspace act only in a session that declares them: a plain agent there has what it was given; how
    # direct-search searches is that arm's design, the same in both
    assert differing == set(RULE_NAMES) - {"observation_limit_chars", "answer_feedback", "turn_limit", "skills",
                                           "workspace", "refuse_messages_to_user", "tool_search_method",
                                           "tool_search_limit"}
    assert PLAIN.skills and PLAIN.workspace
    assert PLAIN.lookup_instruction == "" and PLAIN.max_repeats == 0
    assert PLAIN.parallel_tool_calls and not GUIDED.parallel_tool_calls  # providers' default; one call per turn


def test_every_rule_has_a_description_and_a_firing_column_names_only_rules():
    assert all(f.metadata.get("description") for f in fields(Scaffold))
    assert {rule for rules, _ in FIRING_COLUMNS.values() for rule in rules} <= set(RULE_NAMES)


def test_the_hash_changes_when_any_rule_changes_and_not_with_the_name():
    changed = {replace(GUIDED, **{name: (not value) if isinstance(value, bool) else
                                  (value + 1 if isinstance(value, int) else value + "!")}).hash
               for name, value in GUIDED.rules.items()}
    assert len(changed) == len(RULE_NAMES) and GUIDED.hash not in changed
    assert replace(GUIDED, name="mine").hash == GUIDED.hash


def test_a_field_at_its_neutral_value_leaves_the_hash_as_it_was_before_the_field_existed():
    from harness.hashing import content_hash

    neutral = {"answer_feedback": "", "turn_limit": 0, "skills": True, "workspace": True,
               "refuse_messages_to_user": False, "tool_search_method": "bm25", "tool_search_limit": 5}
    assert PLAIN.hash == content_hash({k: v for k, v in PLAIN.rules.items() if k not in neutral})
    assert PLAIN.hash == "04e8451dbdb6b1b2"  # plain's hash before those fields were added (results of 2026-11-25)
    assert replace(PLAIN, skills=False).hash != PLAIN.hash
    assert replace(PLAIN, tool_search_method="keyword").hash != PLAIN.hash


def test_the_hash_is_the_same_in_another_process():
    code = "from harness.agents.scaffold import GUIDED, PLAIN; print(GUIDED.hash, PLAIN.hash)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == [GUIDED.hash, PLAIN.hash]


def test_a_file_overrides_single_fields_of_its_preset(tmp_path):
    path = tmp_path / "no-examples.yaml"
    path.write_text("preset: guided\nworked_examples: false\nmax_repeats: 3\n")
    scaffold = load_scaffold(str(path))
    assert scaffold == replace(GUIDED, name="no-examples", worked_examples=False, max_repeats=3)
    assert describe(scaffold) == f"scaffold no-examples {scaffold.hash} (guided with worked_examples, max_repeats changed)"


@pytest.mark.parametrize("text, fragment", [
    ("preset: guided\nworked_exampels: false\n", "field 'worked_exampels': Unexpected keyword argument"),
    ("preset: guided\nmax_repeats: many\n", "field 'max_repeats'"),
    ("worked_examples: false\n", "field 'preset' must be one of plain, guided, m3tooleval"),
    ("preset: [unclosed\n", "not valid YAML"),
])
def test_a_bad_scaffold_file_is_one_line_naming_the_file(tmp_path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_scaffold(str(path))
    assert fragment in str(info.value) and "bad.yaml" in str(info.value) and "\n" not in str(info.value)


def test_a_rule_of_the_wrong_type_is_named_with_its_value_and_what_was_expected(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("preset: guided\nmax_repeats: many\n")
    with pytest.raises(UserError) as info:
        load_scaffold(str(path))
    assert str(info.value) == (f"{path}: field 'max_repeats': 'many' is not valid: expected a valid integer, unable "
                               "to parse string as an integer")


def test_an_unknown_preset_is_a_user_error():
    with pytest.raises(UserError, match="unknown scaffold 'loose'"):
        load_scaffold("loose")


@pytest.mark.parametrize("model, expected", [("local", GUIDED), ("local:/m/q.gguf", GUIDED),
                                             ("openai/gpt-4o-mini", PLAIN), ("scripted:reference", PLAIN)])
def test_the_default_is_guided_for_the_embedded_model_only(model, expected):
    assert default_scaffold(model) is expected and resolve_scaffold(None, model) is expected
    assert resolve_scaffold("guided", model) is GUIDED


@pytest.mark.parametrize("model", ["local", "local:/m/q.gguf", "openai/gpt-4o-mini", "scripted:reference",
                                   "scripted:garbage"])
def test_the_default_is_the_preset_the_models_family_names(model):
    from harness.agents.scaffold import PRESETS
    from harness.models.families import family_of

    assert default_scaffold(model) is PRESETS[family_of(model).default_scaffold]


def test_firing_counts_count_turns_per_column():
    counts = firing_counts([("refuse_unread_answer",), ("repeat_note", "id_guard"), ("refuse_error_answer",), ()])
    assert counts["answers_refused"] == 2 and counts["repeat_notes"] == 1 and counts["ids_refused"] == 1
    assert set(counts) == set(FIRING_COLUMNS) and counts["result_notes"] == 0


def test_the_docs_list_every_field_with_its_presets_as_the_scaffold_declares_them():
    from pathlib import Path

    from harness.agents.scaffold import fields_markdown

    page = (Path(__file__).resolve().parents[2] / "docs" / "fair-comparison.md").read_text(encoding="utf-8")
    generated = page.split("<!-- scaffold-fields:start", 1)[1].split("-->", 1)[1].split("<!-- scaffold-fields:end")[0]
    assert generated.strip() == fields_markdown().strip(), \
        "docs/fair-comparison.md is out of date: paste `harness scaffolds --markdown` between its scaffold-fields markers"


def test_a_benchmarks_published_protocol_is_a_preset_by_name_with_a_hash_of_its_own():
    from harness.adapters.m3tooleval import FEEDBACK, MAX_TURNS

    preset = load_scaffold("m3tooleval")
    assert preset.name == "m3tooleval" and preset.hash != PLAIN.hash and preset.hash != GUIDED.hash
    assert (preset.answer_feedback, preset.turn_limit) == (FEEDBACK, MAX_TURNS)
    # plain plus the protocol: feedback, its turn limit, one call per reply (its JSON mode takes one)
    assert replace(preset, answer_feedback="", turn_limit=0, parallel_tool_calls=True, name="plain") == PLAIN
    assert describe(preset) == f"scaffold m3tooleval {preset.hash}"


def test_a_scaffold_file_may_override_a_benchmarks_preset(tmp_path):
    path = tmp_path / "longer.yaml"
    path.write_text("preset: m3tooleval\nturn_limit: 20\n")
    rules = load_scaffold(str(path))
    assert rules.turn_limit == 20 and rules.answer_feedback == load_scaffold("m3tooleval").answer_feedback
    assert "m3tooleval with turn_limit changed" in describe(rules)


def test_an_unknown_scaffold_names_every_preset():
    with pytest.raises(UserError, match="plain, guided, m3tooleval"):
        load_scaffold("paper")
