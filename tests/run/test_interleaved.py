"""Runs paired in time: each task x epoch goes through every arm next to each other, the order is recorded in the
manifest, and a resumed run keeps the recorded order."""

import asyncio
import json

from harness.models.scripted import policy_provider
from harness.run.manifest import SCHEDULE, manifest_path, order_key
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from tests.run.test_runner import replaying, suite  # noqa: F401  the mini suite fixture


def run(config: RunConfig) -> None:
    asyncio.run(Runner(config, provider=policy_provider("scripted:test", replaying)).run())


def started_order(path) -> list[str]:
    frame = read_results([path]).sort_values("started_at", kind="stable")
    return [order_key(t, a, int(e)) for t, a, e in zip(frame["task_id"], frame["arm"], frame["epoch"])]


def test_the_arms_of_each_task_and_epoch_run_next_to_each_other_in_the_order_the_manifest_records(suite, tmp_path):  # noqa: F811
    config = RunConfig(suite=suite, model="scripted:test", arms=("direct", "react"), out_dir=tmp_path, run_id="i",
                       epochs=2)
    run(config)
    manifest = json.loads(manifest_path(tmp_path, "mini", "i").read_text())
    expected = [order_key(task, arm, epoch) for epoch in range(2) for task in ("country", "wrong")
                for arm in ("direct", "react")]
    assert manifest["order"] == expected and manifest["schedule"] == SCHEDULE
    assert started_order(tmp_path / "mini" / "i.parquet") == expected


def test_a_resumed_run_keeps_the_order_its_manifest_recorded(suite, tmp_path):  # noqa: F811
    config = RunConfig(suite=suite, model="scripted:test", arms=("direct", "react"), out_dir=tmp_path, run_id="r",
                       epochs=1)
    path = manifest_path(tmp_path, "mini", "r")
    path.parent.mkdir(parents=True)
    recorded = [order_key("wrong", "react", 0), order_key("country", "direct", 0), order_key("wrong", "direct", 0),
                order_key("country", "react", 0)]
    path.write_text(json.dumps({"order": recorded}))  # as an earlier start of run r left it
    run(config)
    assert started_order(tmp_path / "mini" / "r.parquet") == recorded
    assert json.loads(path.read_text())["order"] == recorded
