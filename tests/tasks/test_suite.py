from dataclasses import replace
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.tasks import suite as suite_module
from harness.tasks.suite import builtin_suites_dir, check_scorers, load_suite
from harness.tasks.task import ScorerSpec, ServerRef

VALID_TASK = """
  - id: t1
    category: lookup
    prompt: "What?"
    expected: 1
    scorer: numeric
    reference: print(1)
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def load_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(UserError) as info:
        load_suite(str(write(tmp_path, text)))
    message = str(info.value)
    assert "\n" not in message
    return message


def test_smoke_suite_loads_with_defaults_and_short_forms():
    suite = load_suite("smoke")
    assert suite.name == "smoke"
    assert 3 <= len(suite.tasks) <= 5
    shipped = next(t for t in suite.tasks if t.id == "shipped-total")
    assert shipped.servers == (ServerRef("crm"),)
    assert shipped.scorer == ScorerSpec("numeric", (("tolerance", 0.01),))


def test_task_servers_override_suite_servers_with_options(tmp_path):
    path = write(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK + "    servers: [{crm: {size: 7, seed: 3}}]\n")
    task = load_suite(str(path)).tasks[0]
    assert task.servers == (ServerRef("crm", size=7, seed=3),)
    assert task.data_size == 7


def test_a_server_entry_declares_who_may_call_its_tools_and_the_hash_changes_only_where_declared(tmp_path):
    path = write(tmp_path, "suite: s\nservers: [{crm: {callers: [code]}}]\ntasks:" + VALID_TASK)
    task = load_suite(str(path)).tasks[0]
    assert task.servers == (ServerRef("crm", callers=("code",)),)
    undeclared = replace(task, servers=(ServerRef("crm"),))
    assert task.content_hash != undeclared.content_hash
    assert replace(task, servers=(ServerRef("crm", callers=("direct", "code")),)).content_hash != task.content_hash


@pytest.mark.parametrize("callers, fragment", [
    ("[code, shell]", "unknown caller 'shell' in 'callers' (known: direct, code)"),
    ("[]", "'callers' is a non-empty list of direct, code"),
    ("[code, code]", "'callers' names a caller twice"),
    ("code", "field 'servers"),
])
def test_bad_callers_are_one_line_errors_naming_the_file_and_server(tmp_path, callers, fragment):
    message = load_error(tmp_path, "suite: s\nservers: [{crm: {callers: " + callers + "}}]\ntasks:" + VALID_TASK)
    assert "s.yaml" in message and fragment in message


def test_malformed_yaml_names_file_and_line(tmp_path):
    message = load_error(tmp_path, "suite: s\ntasks: [\n  - id: x\n")
    assert "s.yaml" in message and "malformed YAML" in message and "line" in message


def test_unknown_task_field_names_task_and_field(tmp_path):
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK + "    expectd: 2\n")
    assert "task 't1'" in message and "expectd" in message


def test_duplicate_task_id_is_rejected(tmp_path):
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK + VALID_TASK)
    assert "duplicate task id" in message and "'t1'" in message


def test_unknown_scorer_lists_known_ones(tmp_path):
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK.replace("numeric", "fuzzy"))
    assert "unknown scorer 'fuzzy'" in message and "field 'scorer'" in message and "numeric" in message


def test_bad_scorer_argument_is_rejected(tmp_path):
    text = VALID_TASK.replace("scorer: numeric", "scorer: {numeric: {tolerence: 1}}")
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + text)
    assert "tolerence" in message


def test_a_regex_that_does_not_compile_is_refused_at_load_naming_file_task_and_field(tmp_path):
    text = VALID_TASK.replace("expected: 1\n    scorer: numeric", "expected: '([unclosed'\n    scorer: regex")
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + text)
    assert message.startswith(f"{tmp_path / 's.yaml'}: task 't1': field 'expected': scorer 'regex': ")
    assert "unterminated character set" in message


def test_a_suite_made_in_python_has_its_scorers_checked_too(tmp_path):
    suite = load_suite(str(write(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK)))
    broken = replace(suite, tasks=(replace(suite.tasks[0], expected="many"),))
    with pytest.raises(UserError, match="task 't1': field 'expected': scorer 'numeric': 'many' is not a number"):
        check_scorers(broken)


def test_task_without_any_server_is_rejected(tmp_path):
    message = load_error(tmp_path, "suite: s\ntasks:" + VALID_TASK)
    assert "field 'servers'" in message


def test_missing_required_field_is_named(tmp_path):
    message = load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK.replace("    expected: 1\n", ""))
    assert "field 'expected'" in message


def test_unknown_suite_name_lists_known_suites():
    with pytest.raises(UserError, match="unknown suite 'nope'.*smoke"):
        load_suite("nope")


def test_select_unknown_task_id_is_a_user_error():
    with pytest.raises(UserError, match="no task 'zzz'"):
        load_suite("smoke").select(["zzz"])


def task_hash(tmp_path: Path, task_yaml: str) -> str:
    return load_suite(str(write(tmp_path, "suite: s\nservers: [crm]\ntasks:" + task_yaml))).tasks[0].content_hash


@pytest.mark.parametrize("old, new", [
    ('prompt: "What?"', 'prompt: "What now?"'),
    ("expected: 1", "expected: 2"),
    ("scorer: numeric", "scorer: {numeric: {tolerance: 0.5}}"),
    ("reference: print(1)", "reference: print(1)\n    servers: [{crm: {seed: 3}}]"),
    ("reference: print(1)", "reference: print(1)\n    max_turns: 3"),
    ("reference: print(1)", "reference: print(1)\n    system_instructions: Be brief."),
])
def test_the_task_hash_changes_with_what_is_measured(tmp_path, old, new):
    assert task_hash(tmp_path, VALID_TASK) != task_hash(tmp_path, VALID_TASK.replace(old, new))


@pytest.mark.parametrize("old, new", [
    ("category: lookup", "category: other"),
    ("reference: print(1)", "reference: print(1)\n    tags: [new]"),
    ("reference: print(1)", "reference: print(2 - 1)"),
])
def test_the_task_hash_ignores_labels_and_the_reference_solution(tmp_path, old, new):
    assert task_hash(tmp_path, VALID_TASK) == task_hash(tmp_path, VALID_TASK.replace(old, new))


def test_system_instructions_are_set_per_suite_or_per_task_and_none_leaves_the_hash_as_it_was(tmp_path):
    text = ("suite: s\nservers: [crm]\nsystem_instructions: \"  Follow the house policy.\\n\"\ntasks:" + VALID_TASK
            + VALID_TASK.replace("id: t1", "id: t2") + "    system_instructions: Answer in French.\n")
    first, second = load_suite(str(write(tmp_path, text))).tasks
    assert first.system_instructions == "Follow the house policy." and second.system_instructions == "Answer in French."
    plain = load_suite(str(write(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK))).tasks[0]
    assert plain.system_instructions == "" and plain.content_hash == replace(first, system_instructions="").content_hash


@pytest.mark.parametrize("where", ["suite", "task"])
def test_blank_system_instructions_are_an_error_naming_the_field(tmp_path, where):
    if where == "suite":
        text = "suite: s\nservers: [crm]\nsystem_instructions: '  '\ntasks:" + VALID_TASK
    else:
        text = "suite: s\nservers: [crm]\ntasks:" + VALID_TASK + "    system_instructions: ' '\n"
    message = load_error(tmp_path, text)
    assert "system_instructions" in message and "system instructions are text" in message
    assert where == "suite" or "task 't1'" in message


def test_category_and_reference_are_optional(tmp_path):
    path = write(tmp_path, 'suite: s\nservers: [crm]\ntasks:\n  - id: t1\n    prompt: "What?"\n'
                           '    expected: 1\n    scorer: numeric\n')
    task = load_suite(str(path)).tasks[0]
    assert task.category == "uncategorized" and task.reference is None


def test_an_empty_reference_is_still_an_error(tmp_path):
    assert "reference" in load_error(tmp_path, "suite: s\nservers: [crm]\ntasks:" + VALID_TASK.replace(
        "reference: print(1)", "reference: ''"))


def test_a_checkout_reads_its_live_tasks_folder():
    assert builtin_suites_dir() == Path(__file__).resolve().parents[2] / "tasks"


def test_an_installed_package_reads_the_suites_it_carries(monkeypatch, tmp_path):
    monkeypatch.setattr(suite_module, "checkout_root", lambda: None)
    monkeypatch.setattr(suite_module, "INSTALLED_SUITES", tmp_path)
    (tmp_path / "shipped.yaml").write_text("suite: shipped\nservers: [crm]\ntasks:" + VALID_TASK)
    monkeypatch.chdir(tmp_path.parent)
    assert load_suite("shipped").name == "shipped"


def test_tasks_in_the_current_folder_come_before_the_built_in_suites(monkeypatch, tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "smoke.yaml").write_text("suite: my-smoke\nservers: [crm]\ntasks:" + VALID_TASK)
    monkeypatch.chdir(tmp_path)
    assert load_suite("smoke").name == "my-smoke"


def test_a_task_with_a_user_is_a_conversation_and_needs_no_prompt(tmp_path):
    suite = load_suite(str(write(tmp_path, 'suite: s\nservers: [crm]\ntasks:\n  - id: talk\n'
                                           '    user: "  You want the country of account C-0007.  "\n'
                                           '    expected: IN\n    scorer: contains\n')))
    task = suite.tasks[0]
    assert task.user is not None and task.user.instructions == "You want the country of account C-0007."
    assert task.prompt == ""


def test_a_task_without_a_user_or_a_prompt_is_a_one_line_error_naming_the_prompt(tmp_path):
    message = load_error(tmp_path, 'suite: s\nservers: [crm]\ntasks:\n  - id: t1\n    expected: 1\n'
                                   '    scorer: numeric\n')
    assert "task 't1': field 'prompt': Field required" in message and "'user'" in message


DECLARED = """
suite: declared
servers: [tickets]
tasks:
  - id: close-unless-closed
    prompt: "Close T-1005 unless it is closed. Answer with its id."
    expected: T-1005
    state_holds_at_start: restraint
    scorer: exact
"""


def test_a_task_declares_that_its_state_holds_at_start_outside_its_hash(tmp_path):
    (declared,) = load_suite(str(write(tmp_path, DECLARED))).tasks
    assert declared.state_holds_at_start == "restraint"
    assert replace(declared, state_holds_at_start=None).content_hash == declared.content_hash


def test_an_unknown_state_holds_at_start_is_one_line_naming_the_field(tmp_path):
    message = load_error(tmp_path, DECLARED.replace("state_holds_at_start: restraint", "state_holds_at_start: yes"))
    assert "task 'close-unless-closed'" in message and "state_holds_at_start" in message
    assert "restraint" in message and "idempotent" in message
