"""The report's noise section on small results worked by hand."""

import pandas as pd

from harness.analysis.noise_section import noise_floors, noise_paragraphs, noise_table
from harness.analysis.tables import label_groups, pairings
from tests.results_factory import record


def results(outcomes: dict[str, list[list[bool]]]) -> pd.DataFrame:
    """outcomes[arm][task] = that task's outcome per epoch."""
    rows = [record("r", t, arm, e, ok).to_row() for arm, tasks in outcomes.items()
            for t, epochs in enumerate(tasks) for e, ok in enumerate(epochs)]
    return label_groups(pd.DataFrame(rows))


def test_the_noise_floor_of_a_group_with_repeats():
    # direct: t0 passes once of 2, t1 twice: flip rate (1 + 0)/2 = 0.5; within-task variance (0.5 + 0)/2 = 0.25,
    # re-run spread 1.96 · sqrt(2 · 0.25 / (2 tasks · 2 runs)) = 0.693; shares 0.5 and 1 vary by 0.125 (ddof 1),
    # less 0.25/2 -> between 0: ICC 0, design effect 1. Tokens and latency depend only on the task: no spread.
    frame = results({"direct": [[True, False], [True, True]], "codemode": [[True, True], [True, True]]})
    direct, code = noise_floors(frame)
    assert (direct.tasks, direct.runs_per_task, direct.flips.value) == (2, 2.0, 0.5)
    assert round(direct.success_spread, 3) == 0.693 and direct.icc == 0 and direct.design_effect == 1
    assert direct.tokens_spread == 0 and direct.latency_spread == 0
    assert code.flips.value == 0
    table = noise_table(frame)
    assert list(table["re-run spread: success"]) == ["±69.3 points", "±0.0 points"]
    words = noise_paragraphs(frame, pairings(frame))
    assert words[0].startswith("**direct**: 2 task(s), 2.0 run(s) each. Between two runs of this configuration, "
                               "50.0% of tasks would flip outcome")
    assert "moves its success rate by up to ±69.3 points" in words[0]
    # codemode vs direct: +25 points in success, within direct's ±69.3
    assert words[2] == ("Differences smaller than re-running alone moves (not evidence of an effect, whatever their "
                        "p): codemode vs direct success (+25.0 points).")


def test_without_repeats_the_section_says_how_to_measure_the_noise():
    frame = results({"direct": [[True], [False]], "codemode": [[True], [True]]})
    assert noise_table(frame) is None
    assert noise_paragraphs(frame, pairings(frame))[0].startswith("Every task ran once per group")
