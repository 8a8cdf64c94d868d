"""The probe scorer: a read-only tool's result after the run, checked by key path, filter, value, count, contains."""

import pytest

from harness.tasks.matching import MISSING, resolve_path
from harness.tasks.scorers import ProbeOutcome, ScoreContext, build_scorer, scorer_spec

GRAPH = {"entities": [{"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]},
                      {"name": "Analytical Engine", "entityType": "machine", "observations": []}],
         "relations": [{"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"}]}


@pytest.mark.parametrize("path, value", [
    ("entities[*].name", ["Ada Lovelace", "Analytical Engine"]), ("$.entities.0.entityType", "person"),
    ("entities[-1].name", "Analytical Engine"), ("entities.*.observations.*", ["wrote the first program"]),
    ("relations[0].to", "Analytical Engine"), ("entities[5].name", MISSING), ("nodes", MISSING),
])
def test_a_key_path_picks_keys_items_and_every_item(path, value):
    assert resolve_path(GRAPH, path) == value


def judge(check: dict, outcome: ProbeOutcome | None = ProbeOutcome(GRAPH, "graph")):
    scorer = build_scorer(scorer_spec({"probe": {"server": "memory", "tool": "read_graph", **check}}))
    probes = {scorer.probes()[0].key: outcome} if outcome is not None else {}
    return scorer.evaluate(ScoreContext("done", probes=probes))


def test_equals_count_contains_and_where_on_the_result():
    assert judge({"path": "entities[*].name", "contains": "Ada Lovelace"}).passed
    assert judge({"path": "entities", "where": {"entityType": "person"}, "count": 1}).passed
    assert judge({"path": "relations[0]", "equals": {"relationType": "programmed"}}).passed
    assert judge({"path": "entities", "contains": {"name": "Ada Lovelace", "entityType": "person"}}).passed
    missing = judge({"path": "entities[*].name", "contains": "Charles Babbage"})
    assert not missing.passed and "does not contain 'Charles Babbage'" in missing.reason
    assert not judge({"path": "entities", "where": {"entityType": "person"}, "count": 2}).passed
    assert not judge({"path": "nodes", "count": 0}).passed


def test_a_probe_that_failed_or_never_ran_fails_with_the_reason():
    failed = judge({"count": 1}, ProbeOutcome(None, "server 'memory' has no tool 'read_graph'", is_error=True))
    assert not failed.passed and "has no tool" in failed.reason
    assert "was not run" in judge({"count": 1}, None).reason


def test_a_probe_needs_a_check():
    with pytest.raises(ValueError, match="equals, count or contains"):
        build_scorer(scorer_spec({"probe": {"server": "memory", "tool": "read_graph"}}))
