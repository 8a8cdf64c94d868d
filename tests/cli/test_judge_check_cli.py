"""`harness judge-check` as a user runs it: the tables, the saved measurement, one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.cli.helpers import harness

ITEMS = [
    {"task": "churned-no-orders", "labels": {"ab": "pass", "cd": "pass"},
     "answer": "C-0003 is Rosa Abara of Globex. Rosa Abara was on the pro tier and the status is churned. "
               "Rosa Abara has no orders at all."},
    {"task": "churned-no-orders", "answer": "C-0003 is an enterprise customer.", "labels": {"ab": "fail", "cd": "fail"}},
]


@pytest.mark.cli
def test_judge_check_reports_agreement_and_probes_and_saves_them(tmp_path):
    labels = tmp_path / "open.labels.yaml"
    labels.write_text(yaml.safe_dump({"suite": "open", "items": ITEMS}))
    result = harness("judge-check", str(labels), "--judge-model", "scripted:judge", "--save",
                     env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "judge vs people" in result.stdout and "Krippendorff's alpha among labellers" in result.stdout
    assert "bias probes" in result.stdout and "filler" in result.stdout
    saved = json.loads((tmp_path / "open.labels.agreement.json").read_text())
    (entry,) = saved["checks"].values()
    assert entry["judge_model"] == "scripted:judge" and entry["overall"]["n"] == 2
    assert set(entry["probes"]) == {"filler", "reorder", "position", "self"}


@pytest.mark.cli
def test_a_malformed_label_file_is_one_line_and_exit_2(tmp_path):
    labels = tmp_path / "bad.yaml"
    labels.write_text(yaml.safe_dump({"suite": "open", "items": [{"task": "nope", "answer": "x",
                                                                  "labels": {"ab": "pass"}}]}))
    result = harness("judge-check", str(labels), "--judge-model", "scripted:judge")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {labels}: item #1: field 'task': suite 'open' has no task 'nope'"]


@pytest.mark.cli
def test_a_judge_temperature_is_its_own_judge_in_the_cache_and_the_saved_check(tmp_path):
    labels = tmp_path / "open.labels.yaml"
    labels.write_text(yaml.safe_dump({"suite": "open", "items": ITEMS}))
    cache = tmp_path / "cache"
    result = harness("judge-check", str(labels), "--judge-model", "scripted:judge", "--judge-temperature", "0.7",
                     "--probes", "none", "--save", env={"HARNESS_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "judge scripted:judge@temperature=0.7 on 2 labelled answers" in " ".join(result.stdout.split())
    cached = {json.loads(p.read_text())["judge_model"] for p in (cache / "judge-verdicts").rglob("*.json")}
    assert cached == {"scripted:judge@temperature=0.7"}
    saved = json.loads((tmp_path / "open.labels.agreement.json").read_text())
    assert [e["judge_model"] for e in saved["checks"].values()] == ["scripted:judge@temperature=0.7"]
