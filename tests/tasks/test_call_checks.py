"""Scorers of the tool calls: the same verdict whether a call came from the model or from code, composable with
`all` / `any`, and each with wrong versions of a correct run's calls that it fails."""

import pytest

from harness.tasks.scorers import ScoreContext, build_scorer, scorer_spec
from harness.trace.calls import ToolCallRecord


def call(tool: str, in_code: bool = False, is_error: bool = False, **arguments) -> ToolCallRecord:
    return ToolCallRecord(tool=tool, arguments=arguments, is_error=is_error, server="crm", in_code=in_code)


RUN = (call("get_customer", customer_id="C-0012"), call("update_customer_status", customer_id="C-0012",
                                                        status="churned"))


def verdict(entry, calls=RUN) -> bool:
    return build_scorer(scorer_spec(entry)).evaluate(ScoreContext("Farah", "Farah", tool_calls=calls)).passed


@pytest.mark.parametrize("in_code", [False, True])
def test_tool_called_matches_name_glob_server_argument_subset_and_pattern(in_code):
    calls = tuple(ToolCallRecord(**{**vars(c), "in_code": in_code}) for c in RUN)
    assert verdict({"tool_called": {"tool": "update_customer_status", "args": {"status": "churned"}}}, calls)
    assert verdict({"tool_called": {"tool": "update_*", "server": "crm", "args_match": {"customer_id": "^C-00"}}},
                   calls)
    assert not verdict({"tool_called": {"tool": "update_customer_status", "args": {"status": "active"}}}, calls)
    assert not verdict({"tool_called": {"tool": "update_customer_status", "server": "tickets"}}, calls)
    assert not verdict({"tool_called": {"tool": "add_note"}}, calls)


def test_a_failed_call_counts_as_called_only_when_asked():
    failed = (call("close_ticket", is_error=True, ticket_id="T-1"),)
    assert not verdict({"tool_called": {"tool": "close_ticket"}}, failed)
    assert verdict({"tool_called": {"tool": "close_ticket", "count_failed": True}}, failed)
    assert not verdict({"tool_not_called": {"tool": "close_*"}}, failed)  # an attempt is a call


def test_tool_not_called_and_counts():
    assert verdict({"tool_not_called": {"tool": "delete_*"}})
    assert not verdict({"tool_not_called": {"tool": "get_customer"}})
    assert verdict({"tool_call_count": {"at_most": 2}}) and not verdict({"tool_call_count": {"at_most": 1}})
    assert verdict({"tool_call_count": {"tool": "update_*", "at_least": 1, "at_most": 1}})
    assert not verdict({"tool_call_count": {"tool": "get_*", "at_least": 2}})


def test_tool_order_allows_calls_between_but_not_the_reverse():
    around = (call("search_customers"),) + RUN[:1] + (call("list_notes"),) + RUN[1:]
    assert verdict({"tool_order": {"tools": ["get_customer", "update_customer_status"]}}, around)
    assert not verdict({"tool_order": {"tools": ["update_customer_status", "get_customer"]}}, around)


def test_checks_compose_with_all_and_any_and_answer_scorers():
    checks = [{"tool_called": {"tool": "update_customer_status"}}, {"tool_not_called": {"tool": "add_note"}}]
    assert verdict({"all": {"scorers": ["exact", *checks]}})
    assert not verdict({"all": {"scorers": ["exact", {"tool_called": {"tool": "add_note"}}]}})
    assert verdict({"any": {"scorers": [{"tool_called": {"tool": "add_note"}}, *checks]}})
    assert not verdict({"any": {"scorers": [{"tool_called": {"tool": "add_note"}}, {"tool_not_called": {"tool": "get_*"}}]}})


@pytest.mark.parametrize("entry", [
    {"tool_called": {"tool": "update_customer_status"}},
    {"tool_not_called": {"tool": "delete_*"}},
    {"tool_call_count": {"tool": "update_customer_status", "at_least": 1, "at_most": 1}},
    {"tool_order": {"tools": ["get_customer", "update_customer_status"]}},
    {"all": {"scorers": ["exact", {"tool_called": {"tool": "get_customer"}}, {"tool_not_called": {"tool": "add_note"}}]}},
    {"any": {"scorers": [{"tool_called": {"tool": "get_customer"}}, {"tool_called": {"tool": "update_*"}}]}},
])
def test_each_check_passes_on_the_right_calls_and_fails_on_every_wrong_version(entry):
    scorer = build_scorer(scorer_spec(entry))
    right = ScoreContext("Farah", "Farah", tool_calls=RUN)
    wrong = scorer.wrong_calls(RUN)
    assert scorer.evaluate(right).passed and wrong
    for label, calls in wrong:
        assert not scorer.evaluate(ScoreContext("Farah", "Farah", tool_calls=calls)).passed, label


def test_answer_scorers_have_no_wrong_calls_and_arguments_are_checked_at_load():
    assert build_scorer(scorer_spec("exact")).wrong_calls(RUN) == []
    with pytest.raises(ValueError, match="args_match"):
        build_scorer(scorer_spec({"tool_called": {"tool": "x", "args_match": {"id": "("}}}))
    with pytest.raises(ValueError, match="at_least, at_most"):
        build_scorer(scorer_spec({"tool_call_count": {"tool": "x"}}))
    with pytest.raises(ValueError, match="tool_order"):
        build_scorer(scorer_spec({"tool_order": {"tools": ["only-one"]}}))
