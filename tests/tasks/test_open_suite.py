"""The built-in `open` suite of judged tasks and its hand-written label file."""

from __future__ import annotations

from collections import Counter

from harness.analysis.judge_record import suite_labels
from harness.analysis.labels import load_labels
from harness.tasks.scorers import build_scorer
from harness.tasks.suite import load_suite


def test_the_open_suite_has_at_least_15_judged_tasks_of_each_kind():
    suite = load_suite("open")
    assert len(suite.tasks) >= 15
    assert all(build_scorer(t.scorer).needs_judge() for t in suite.tasks)
    assert {t.category for t in suite.tasks} == {"summary", "explanation", "recommendation"}
    assert {build_scorer(t.scorer).name for t in suite.tasks} == {"rubric", "claims"}
    assert any(build_scorer(t.scorer).show_calls for t in suite.tasks)  # trajectory grading is exercised


def test_its_label_file_labels_at_least_150_answers_of_every_task():
    suite = load_suite("open")
    labels = load_labels(suite_labels(suite.path))
    assert len(labels.items) >= 150
    per_task = Counter(item.task.id for item in labels.items)
    assert set(per_task) == {t.id for t in suite.tasks}
    verdicts = Counter(item.human() for item in labels.items)
    assert verdicts[True] >= 40 and verdicts[False] >= 40  # both verdicts, well represented
    sources = Counter(item.source for item in labels.items)
    assert {"hand:good", "hand:partial", "hand:wrong"} <= set(sources)
    claim_tasks = [i for i in labels.items if build_scorer(i.task.scorer).name == "claims"]
    assert all(i.claims for i in claim_tasks)  # claims labelled one by one
