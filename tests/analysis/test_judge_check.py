"""`judge-check` on label files, with scripted judges built to be fair or biased: agreement with people, label
file errors, and each bias probe finding the bias it is built to find."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.analysis.judge_check import check_judge, judge_all, subset
from harness.analysis.judge_probes import FILLER, probe
from harness.analysis.judge_record import agreement_sentence, measured_agreement, save_check
from harness.analysis.labels import load_labels
from harness.errors import UserError
from harness.models.scripted_judge import content_words, sections, word_share

TASK = "churned-no-orders"  # claims: Rosa Abara of Globex, pro tier, churned, no orders
GOOD = "C-0003 is Rosa Abara of Globex. Rosa Abara was on the pro tier and the status is churned. She has no orders at all."
PARTIAL = "C-0003 is Rosa Abara of Globex; her status is churned."
WRONG = "C-0003 is an enterprise customer with five shipped orders."


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))


def write_labels(tmp_path: Path, items: list[dict], **header) -> Path:
    path = tmp_path / "open.labels.yaml"
    path.write_text(yaml.safe_dump({"suite": "open", **header, "items": items}))
    return path


def item(answer: str, verdict, source: str = "hand", **extra) -> dict:
    return {"task": TASK, "answer": answer, "source": source, "labels": {"ab": verdict}, **extra}


def claims_of(message: str) -> tuple[list[str], set[str]]:
    parts = sections(message)
    claims = [line.split(". ", 1)[1] for line in parts["Claims"].splitlines() if ". " in line]
    return claims, content_words(parts["Answer"])


def covered(claim: str, words: set[str]) -> bool:
    """A claim is covered when every content word of it is in the answer (strict word overlap)."""
    return word_share(claim, words) == 1.0


def fair(system: str, user: str) -> str:
    claims, words = claims_of(user)
    return json.dumps([{"covered": covered(c, words)} for c in claims])


def lenient_when_long(system: str, user: str) -> str:
    """Biased by length: every claim covered once the answer is long."""
    claims, words = claims_of(user)
    long = len(sections(user)["Answer"]) > 200
    return json.dumps([{"covered": long or covered(c, words)} for c in claims])


def first_claim_decides(system: str, user: str) -> str:
    """Biased by order: reads the first claim only and gives its verdict to all."""
    claims, words = claims_of(user)
    first = covered(claims[0], words)
    return json.dumps([{"covered": first}] * len(claims))


def answer_first_passes(system: str, user: str) -> str:
    """Biased by position: passes every claim when the answer comes before the claims."""
    claims, words = claims_of(user)
    before = user.index("Answer:") < user.index("Claims:")
    return json.dumps([{"covered": before or covered(c, words)} for c in claims])


def prefers_its_own(system: str, user: str) -> str:
    """Self-preferring: passes answers in its own style ("As requested"), whatever they say."""
    claims, words = claims_of(user)
    own = "As requested" in sections(user)["Answer"]
    return json.dumps([{"covered": own or covered(c, words)} for c in claims])


LABELLED = [item(GOOD, "pass"), item(PARTIAL, "fail"), item(WRONG, "fail"), item(GOOD + " Thanks.", "pass")]


def run(labels, judge, model):
    loaded = load_labels(labels)
    verdicts = judge_all(loaded, judge, model)
    return loaded, verdicts, check_judge(loaded, verdicts, model)


def test_a_fair_judge_agrees_with_people(tmp_path):
    _, _, check = run(write_labels(tmp_path, LABELLED), fair, "fair")
    assert check.overall.n == 4 and check.overall.agreement.value == 1.0 and check.overall.kappa.value == 1.0
    assert check.by_category["explanation"].n == 4 and check.unreadable == 0


def test_a_lenient_judge_shows_false_passes(tmp_path):
    labels = write_labels(tmp_path, [item(WRONG + " " + FILLER * 2, "fail"), *LABELLED])
    _, _, check = run(labels, lenient_when_long, "lenient")
    assert check.overall.matrix.false_pass == 1 and check.overall.agreement.value == pytest.approx(0.8)


def test_per_claim_agreement_and_several_labellers(tmp_path):
    items = [item(GOOD, "pass", claims={"ab": [True, True, True, True]}),
             {**item(PARTIAL, "fail", claims={"ab": [True, False, True, False]}), "labels": {"ab": "fail", "cd": "pass"}},
             {**item(WRONG, "fail"), "labels": {"ab": "fail", "cd": "fail"}}]
    _, _, check = run(write_labels(tmp_path, items), fair, "fair")
    assert check.claims.n == 8 and check.claims.agreement.value == 1.0
    assert check.humans["ab~cd"].n == 2 and check.humans["ab~cd"].agreement.value == 0.5
    assert check.ties == 1 and check.overall.n == 2  # the tied item is left out of the judge's numbers
    assert check.alpha_humans is not None and check.alpha_with_judge is not None


def test_score_labels_pass_at_the_tasks_threshold(tmp_path):
    loaded = load_labels(write_labels(tmp_path, [item(GOOD, 0.75), item(PARTIAL, 0.5)]))
    assert [i.labels["ab"] for i in loaded.items] == [True, False]  # claims pass at 0.75


def test_filler_probe_finds_a_length_biased_judge(tmp_path):
    labels = write_labels(tmp_path, LABELLED)
    loaded, base, _ = run(labels, lenient_when_long, "lenient")
    result = probe("filler", loaded.items, base, lenient_when_long, "lenient")
    assert result.n == 4 and result.rate.value == 0.5 and result.to_pass == 2
    loaded, base, _ = run(labels, fair, "fair")
    assert probe("filler", loaded.items, base, fair, "fair").rate.value == 0.0


def test_reorder_probe_finds_an_order_biased_judge(tmp_path):
    loaded, base, _ = run(write_labels(tmp_path, LABELLED), first_claim_decides, "first")
    result = probe("reorder", loaded.items, base, first_claim_decides, "first")
    # PARTIAL covers the first claim (Rosa Abara of Globex) but not the last (no orders): its verdict flips
    assert result.rate.value == 0.25 and result.to_fail == 1
    assert result.rate.low <= 0.25 <= result.rate.high


def test_position_probe_finds_a_position_biased_judge(tmp_path):
    loaded, base, _ = run(write_labels(tmp_path, LABELLED), answer_first_passes, "position")
    result = probe("position", loaded.items, base, answer_first_passes, "position")
    assert result.rate.value == 0.5 and result.to_pass == 2


def test_self_preference_probe_finds_a_judge_that_favours_its_own_answers(tmp_path, monkeypatch):
    items = [item("As requested: " + WRONG, "fail", source="me"), item("As requested: " + GOOD, "pass", source="me"),
             item(WRONG, "fail"), item(PARTIAL, "fail"), item(GOOD, "pass")]
    loaded, base, _ = run(write_labels(tmp_path, items), prefers_its_own, "me")
    result = probe("self", loaded.items, base, prefers_its_own, "me")
    assert result.rate.value == 1.0 and "2 answers by me" in result.note
    monkeypatch.setenv("HARNESS_JUDGE_CACHE", "off")  # another judge under the same model string
    loaded, base, _ = run(write_labels(tmp_path, items), fair, "me")
    assert probe("self", loaded.items, base, fair, "me").rate.value == 0.0


def test_an_unreadable_judge_is_counted_not_scored(tmp_path):
    _, _, check = run(write_labels(tmp_path, LABELLED), lambda s, u: "no idea", "garbage")
    assert check.unreadable == 4 and check.overall is None


def test_subset_takes_items_from_each_task_in_turn(tmp_path):
    other = {"task": "paused-accounts", "answer": "None.", "labels": {"ab": "fail"}}
    loaded = load_labels(write_labels(tmp_path, [*LABELLED, other]))
    assert [i.task.id for i in subset(loaded, 2).items] == [TASK, "paused-accounts"]


def test_subset_takes_a_tasks_items_in_turn_from_each_source(tmp_path):
    items = [item(GOOD, "pass", "hand:good"), item(GOOD, "pass", "hand:good"), item(PARTIAL, "fail", "hand:partial"),
             item(WRONG, "fail", "hand:wrong")]
    other = [{"task": "paused-accounts", "answer": a, "source": f"hand:{kind}", "labels": {"ab": "fail"}}
             for a, kind in (("There are 6.", "good"), ("Some.", "partial"))]
    loaded = load_labels(write_labels(tmp_path, items + other))
    taken = [(i.task.id, i.source) for i in subset(loaded, 5).items]
    # each task in turn; within one, a source at a time; the second task starts one source further
    assert taken == [(TASK, "hand:good"), ("paused-accounts", "hand:partial"), (TASK, "hand:partial"),
                     ("paused-accounts", "hand:good"), (TASK, "hand:wrong")]


def test_a_saved_check_is_what_a_report_names(tmp_path):
    (tmp_path / "labels").mkdir()
    labels = write_labels(tmp_path / "labels", LABELLED)
    labels = labels.rename(tmp_path / "labels" / "open.yaml")  # labels/SUITE.yaml beside the suite file
    _, _, check = run(labels, fair, "fair")
    from harness.analysis.judge_check import as_json
    save_check(labels, "fair", as_json(check) | {"probes": {"filler": {"rate": {"value": 0.1, "low": 0.0,
                                                                                  "high": 0.3}}}})
    found = measured_agreement(tmp_path / "open.yaml", "fair")
    sentence = agreement_sentence(found, "fair")
    assert "agrees with people on 100%" in sentence and "of 4 labelled answers" in sentence and "filler 10%" in sentence
    assert "no measured agreement" in agreement_sentence(measured_agreement(tmp_path / "open.yaml", "other"), "other")


@pytest.mark.parametrize(("items", "header", "error"), [
    ([{"task": "nope", "answer": "x", "labels": {"ab": "pass"}}], {}, "item #1: field 'task': suite 'open' has no task 'nope'"),
    ([{"task": TASK, "labels": {"ab": "pass"}}], {}, "item #1: give either 'answer'"),
    ([{"task": TASK, "answer": "x", "labels": {}}], {}, "item #1: field 'labels'"),
    ([{"task": TASK, "answer": "x", "labels": {"ab": "maybe"}}], {}, "item #1: field 'labels.ab"),
    ([{"task": TASK, "answer": "x", "labels": {"ab": 1.5}}], {}, "score label is from 0 to 1"),
    ([{"task": TASK, "answer": "x", "labels": {"ab": "pass"}, "claims": {"ab": [True]}}], {}, "gave 1 verdicts for 4"),
    ([{"task": TASK, "answer": "x", "labels": {"ab": "pass"}, "colour": 1}], {}, "field 'colour'"),
    ([{"id": "a", "task": TASK, "answer": "x", "labels": {"ab": "pass"}}] * 2, {}, "item 'a': field 'id': duplicate"),
    ([{"task": TASK, "sample": "s1", "labels": {"ab": "pass"}}], {}, "names no 'results'"),
    ([{"task": TASK, "answer": "x", "labels": {"ab": "pass"}, "tool_calls": [{"arguments": {}}]}], {},
     "field 'tool_calls\\[0\\].tool': Field required"),
])
def test_a_malformed_label_file_is_a_one_line_error(tmp_path, items, header, error):
    with pytest.raises(UserError, match=error.replace("(", r"\(")) as caught:
        load_labels(write_labels(tmp_path, items, **header))
    assert "\n" not in str(caught.value) and str(tmp_path) in str(caught.value)


def test_an_answer_carries_its_tool_calls_for_a_trajectory_rubric(tmp_path):
    calls = [{"tool": "get_customer", "arguments": {"customer_id": "C-0003"}, "result": '{"name": "Rosa Abara"}'}]
    (labelled,) = load_labels(write_labels(tmp_path, [item(GOOD, "pass", tool_calls=calls)])).items
    (call,) = labelled.tool_calls
    assert (call.tool, call.arguments, call.result_preview, call.is_error) == (
        "get_customer", {"customer_id": "C-0003"}, '{"name": "Rosa Abara"}', False)


def test_a_label_for_a_task_no_judge_scores_is_refused(tmp_path):
    path = tmp_path / "labels.yaml"
    path.write_text(yaml.safe_dump({"suite": "smoke", "items": [{"task": "customer-country", "answer": "IN",
                                                                   "labels": {"ab": "pass"}}]}))
    with pytest.raises(UserError, match="scored by 'exact', not by a judge"):
        load_labels(path)


def test_a_report_of_judged_runs_names_the_judges_measured_agreement(tmp_path, monkeypatch):
    import pandas as pd

    from harness.analysis.judge_record import judge_paragraph

    (tmp_path / "labels").mkdir()
    (tmp_path / "mine.yaml").write_text((Path(__file__).parents[2] / "tasks" / "open.yaml").read_text())
    monkeypatch.setenv("HARNESS_TASKS_DIR", str(tmp_path))
    labels = tmp_path / "labels" / "mine.yaml"
    labels.write_text(yaml.safe_dump({"suite": "../mine.yaml", "items": LABELLED}))
    _, _, check = run(labels, fair, "fair")
    from harness.analysis.judge_check import as_json
    save_check(labels, "fair", as_json(check))
    rows = pd.DataFrame({"suite": ["mine", "mine", "mine"], "judge_model": ["fair", "other", ""],
                         "judge_prompt_hash": ["h", "h", ""]})
    text = judge_paragraph(rows)
    assert "Judge fair agrees with people on 100%" in text and "Judge other: no measured agreement" in text
    assert judge_paragraph(rows.iloc[2:]) == ""  # no judged run: nothing said
