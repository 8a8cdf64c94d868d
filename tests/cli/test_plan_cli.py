"""`harness plan` as a user runs it: from stated noise, from results with repeats, and its one-line errors."""

import pytest

from tests.results_factory import write_results
from tests.cli.helpers import harness

pytestmark = pytest.mark.cli


def test_a_plan_from_stated_noise_prints_tasks_per_epoch_and_what_the_tasks_detect():
    result = harness("plan", "--detect", "0.1", "--flip-rate", "0.2", "--tasks", "35", "--max-epochs", "3")
    assert result.returncode == 0, result.stderr
    assert "noise: stated: flip rate 20.0%" in result.stdout and "detectable with 35 tasks" in result.stdout
    assert "what epochs buy: 3 epochs need" in result.stdout


def test_a_plan_from_results_needs_repeats(tmp_path):
    once = write_results(tmp_path / "once", "once", {"direct": [True, False]}, epochs=1)
    refused = harness("plan", str(once), "--detect", "0.1")
    assert refused.returncode == 2 and "every task ran once" in refused.stderr
    twice = write_results(tmp_path / "twice", "twice", {"direct": [True, False]}, epochs=2)
    result = harness("plan", str(twice), "--detect", "0.3")
    assert result.returncode == 0, result.stderr
    both = harness("plan", str(twice), "--detect", "0.3", "--flip-rate", "0.2")
    assert both.returncode == 2 and "give the noise one way" in both.stderr
