"""--max-concurrency's default: the embedded model's measured rule, 1 for every other model, and the line
`harness run` prints about it."""

from harness.cli.run import concurrency_line
from harness.models.batching import default_concurrency
from harness.models.families import family_of


def test_the_embedded_model_defaults_to_its_measured_rule_and_other_models_to_one():
    assert family_of("local").default_concurrency() == default_concurrency() >= 1
    assert family_of("openai/gpt-4o-mini").default_concurrency() == 1
    assert family_of("scripted:reference").default_concurrency() == 1


def test_the_printed_line_says_where_the_number_came_from():
    assert "the default here" in concurrency_line(4, "default") and "overrides" in concurrency_line(4, "default")
    assert concurrency_line(3, "--max-concurrency").startswith("concurrency: 3 run(s) at once")
    assert "(--max-concurrency)" in concurrency_line(3, "--max-concurrency")


def test_one_run_at_a_time_is_not_said_to_be_decoded_together():
    assert "decoded together" not in concurrency_line(1, "--max-concurrency")
    assert "decoded together" in concurrency_line(2, "--max-concurrency")
