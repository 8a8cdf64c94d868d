"""M3ToolEval's answer rule: equality, coercion, Python literals, element-wise lists."""

import pytest

from harness.adapters.m3tooleval_scoring import M3ToolEvalAnswer, answer_matches
from harness.tasks.scorers import ScoreContext, build_scorer
from harness.tasks.task import ScorerSpec


@pytest.mark.parametrize("answer, expected", [
    ("fchahcufcu", "fchahcufcu"),  # direct equality
    ("  Dune ", "Dune"),  # the answer's surrounding whitespace is not part of it
    ("100", 100.0),  # int/float coercion
    ("100.0", 100),
    ("'Dune'", "Dune"),  # a Python string literal
    ("[36380.0, 48150]", [36380.0, 48150.0]),  # element-wise
    ("['1', '2']", [1, 2]),  # element-wise after coercion
    ("('A', 3)", ("A", 3)),  # a tuple literal
    ("{'T': 1, 'A': 2}", {"T": 1, "A": 2}),
    ("False", False),
])
def test_answers_the_benchmark_counts_as_correct(answer, expected):
    assert answer_matches(answer, expected)


@pytest.mark.parametrize("answer, expected", [
    ("", "Dune"),
    ("Emma", "Dune"),
    ("101", 100.0),  # off by one
    ("3", 3.7),  # coercion never truncates a number
    ("[36380.0]", [36380.0, 48150.0]),
    ("[1, 2]", [2, 1]),
    ("the answer is 100", 100),
    ("{'T': 1}", {"T": 1, "A": 2}),
])
def test_answers_the_benchmark_counts_as_wrong(answer, expected):
    assert not answer_matches(answer, expected)


def test_the_scorer_is_registered_under_the_benchmark_name_and_says_why():
    scorer = build_scorer(ScorerSpec("m3tooleval"))
    assert isinstance(scorer, M3ToolEvalAnswer)
    passed, failed = scorer.evaluate(ScoreContext("100", 100.0)), scorer.evaluate(ScoreContext("99", 100.0))
    assert passed.passed and passed.value == 1.0 and "matches" in passed.reason
    assert not failed.passed and failed.value == 0.0 and "does not match" in failed.reason
