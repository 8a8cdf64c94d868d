import pytest

from harness.tasks.scorers import (
    ExpectedValueError,
    ScoreContext,
    build_scorer,
    check_scorer,
    extract_json,
    parse_number,
)
from harness.tasks.task import ScorerSpec


def score(name, answer, expected, end_state=None, **args):
    scorer = build_scorer(ScorerSpec(name, tuple(sorted(args.items()))))
    return scorer.evaluate(ScoreContext(answer, expected, end_state or {}))


@pytest.mark.parametrize("text, number", [("27.0", 27.0), ("The total is $1,245.50.", 1245.5), ("-3", -3.0),
                                          ("none", None), ("1e3 items", 1000.0)])
def test_parse_number_takes_the_last_number(text, number):
    assert parse_number(text) == number


def test_exact_ignores_case_whitespace_and_quotes_but_not_content():
    assert score("exact", ' "in". ', "IN").passed
    assert not score("exact", "India", "IN").passed
    assert not score("exact", "in", "IN", case_sensitive=True).passed


def test_numeric_tolerance_absolute_and_relative():
    assert score("numeric", "27.004", 27.0, tolerance=0.01).passed
    assert not score("numeric", "27.02", 27.0, tolerance=0.01).passed
    assert score("numeric", "101", 100, tolerance=0.02, relative=True).passed
    assert not score("numeric", "no idea", 100).passed


def test_contains_requires_every_listed_item():
    assert score("contains", "Alice and Bob", ["alice", "bob"]).passed
    result = score("contains", "Alice", ["alice", "bob"])
    assert not result.passed and "bob" in result.reason


def test_regex_searches_the_answer():
    assert score("regex", "ticket T-104 closed", r"T-\d{3}").passed
    assert not score("regex", "no ticket", r"T-\d{3}").passed


def test_json_subset_accepts_extra_keys_and_fenced_json():
    assert score("json", '```json\n{"a": 1, "b": [1, 2], "c": 3}\n```', {"a": 1, "b": [1, 2]}).passed
    assert not score("json", '{"a": 2}', {"a": 1}).passed
    assert not score("json", "not json", {"a": 1}).passed


def test_extract_json_finds_embedded_object():
    assert extract_json('Result: {"x": [1]} done') == {"x": [1]}


STATE = {"crm": {"notes": [{"customer_id": "C-1", "body": "VIP follow-up call"}, {"customer_id": "C-2", "body": "x"}]}}


def test_state_scorer_filters_and_counts():
    assert score("state", "", None, STATE, server="crm", collection="notes", where={"customer_id": "C-1"},
                 contains={"body": "vip"}, count=1).passed
    assert not score("state", "", None, STATE, server="crm", collection="notes", where={"customer_id": "C-2"},
                     contains={"body": "vip"}).passed
    assert not score("state", "", None, {}, server="crm", collection="notes").passed


def test_all_of_needs_every_part():
    args = {"scorers": ["exact", {"state": {"server": "crm", "collection": "notes", "where": {"customer_id": "C-1"}}}]}
    assert score("all", "C-1", "C-1", STATE, **args).passed
    assert not score("all", "C-9", "C-1", STATE, **args).passed


def test_unknown_scorer_and_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="unknown scorer"):
        build_scorer(ScorerSpec("nope"))
    with pytest.raises(ValueError, match="tolerance"):
        build_scorer(ScorerSpec("numeric", (("tolerance", "wide"),)))


@pytest.mark.parametrize("spec, expected, fragment", [
    (ScorerSpec("regex"), "([unclosed", "'([unclosed' is not a regular expression: unterminated character set"),
    (ScorerSpec("numeric"), "about ten", "'about ten' is not a number"),
    (ScorerSpec("all", (("scorers", ["exact", "regex"]),)), "a(b", "'a(b' is not a regular expression"),
])
def test_an_expected_value_the_scorer_cannot_read_is_refused_before_any_answer(spec, expected, fragment):
    with pytest.raises(ExpectedValueError, match=f"scorer '{spec.name}': ") as info:
        check_scorer(spec, expected)
    assert fragment in str(info.value)


def test_expected_values_the_scorers_can_read_pass_the_check():
    check_scorer(ScorerSpec("regex"), r"^\d{4}-\d{2}$")
    check_scorer(ScorerSpec("numeric"), "12.5")
    check_scorer(ScorerSpec("json"), {"any": ["value"]})


@pytest.mark.parametrize("spec, reads", [
    (ScorerSpec("exact"), {"answer"}),
    (ScorerSpec("state", (("collection", "customers"), ("server", "crm"))), {"state"}),
    (ScorerSpec("probe", (("count", 1), ("server", "crm"), ("tool", "list_notes"))), {"state"}),
    (ScorerSpec("tool_called", (("tool", "get_ticket"),)), {"calls"}),
    (ScorerSpec("tool_order", (("tools", ["a", "b"]),)), {"calls"}),
    (ScorerSpec("all", (("scorers", ["numeric", {"tool_not_called": {"tool": "x"}}]),)), {"answer", "calls"}),
])
def test_each_scorer_says_what_of_a_run_it_reads(spec, reads):
    assert build_scorer(spec).reads(None) == reads
