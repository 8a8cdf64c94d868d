"""Samples on a local Ray cluster (started once for this module, 2 CPUs): the same rows as the local executor,
a killed worker's samples run again, and a killed driver's run resumes without duplicates."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.executors import Executor
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from tests.cli.helpers import ROOT, harness
from tests.reliability.test_crash_and_resume import TASKS, wait_for_rows, write_suite

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray
SAME = ["task_id", "arm", "epoch", "success", "prompt_tokens", "completion_tokens", "total_tokens", "tool_calls",
        "turns", "answer", "error_type"]


@pytest.fixture(scope="module")
def ray_address():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def trajectory_ids(results: Path) -> list[str]:
    lines = results.with_name(results.stem + ".trajectories.jsonl").read_text().splitlines()
    return [json.loads(line)["sample_id"] for line in lines]


@pytest.mark.sandbox
async def test_scripted_core_suite_gives_the_same_rows_as_the_local_executor(ray_address, sandbox_pool, tmp_path):
    config = RunConfig(suite=load_suite("core"), model="scripted:reference", out_dir=tmp_path, run_id="local")
    local = read_results([(await Runner(config, pool=sandbox_pool).run()).path])
    on_ray = Executor("ray").runner(dataclasses.replace(config, run_id="ray", max_concurrency=2))
    summary = await on_ray.run()
    remote = read_results([summary.path])
    assert len(remote) == len(local) == 2 * len(config.suite.tasks)
    order = ["task_id", "arm", "epoch"]
    def rows(frame):
        return frame.sort_values(order)[SAME].reset_index(drop=True)

    assert rows(remote).equals(rows(local))  # that the reference solves every task: test_report_gate_core
    assert sorted(trajectory_ids(summary.path)) == sorted(remote.sample_id)


async def test_a_worker_killed_mid_run_has_its_samples_run_again(ray_address, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_SCRIPTED_LATENCY_S", "0.2")  # forwarded to the workers: runs last ~0.4 s
    suite = load_suite(write_suite(tmp_path))
    config = RunConfig(suite=suite, model="scripted:garbage", arms=("direct",), out_dir=tmp_path, run_id="kill",
                       max_concurrency=2)
    runner = Executor("ray").runner(config)
    killed = []

    def kill_a_worker(record) -> None:
        if not killed:
            killed.append(runner.worker_pids[0])
            os.kill(killed[0], signal.SIGKILL)

    summary = await runner.run(on_record=kill_a_worker)
    frame = read_results([summary.path])
    assert sorted(frame.task_id) == [f"t{i:02d}" for i in range(TASKS)] and frame.sample_id.is_unique
    assert sorted(trajectory_ids(summary.path)) == sorted(frame.sample_id)  # the lost runs wrote nothing
    lost = next(w for w in runner.workers if w.generation > 0)  # the driver saw the loss and took the restart
    assert lost.pid not in killed


@pytest.mark.integration
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_a_stopped_driver_resumes_on_ray_without_duplicates(ray_address, tmp_path, stop):
    suite, out = write_suite(tmp_path), tmp_path / "out"
    results = out / "many" / "drv.parquet"
    ray_args = ["--executor", "ray", "--ray-address", ray_address]
    driver = subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "run", "--suite", str(suite), "--arms",
         "direct", "--model", "scripted:garbage", "--out", str(out), "--run-id", "drv", "--max-concurrency", "2",
         *ray_args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HARNESS_SCRIPTED_LATENCY_S": "0.2"})
    wait_for_rows(results, 3, timeout=120)
    driver.send_signal(stop)
    _, stderr = driver.communicate(timeout=60)
    if stop == signal.SIGINT:
        assert driver.returncode == 130 and "resume with: harness run --resume drv" in stderr, stderr
        assert f"--executor ray --ray-address {ray_address}" in stderr
    partial = read_results([results])
    assert 3 <= len(partial) < TASKS
    resumed = harness("run", "--resume", "drv", "--out", str(out), *ray_args)
    assert resumed.returncode == 0, resumed.stderr
    frame = read_results([results])
    assert sorted(frame.task_id) == [f"t{i:02d}" for i in range(TASKS)] and frame.sample_id.is_unique


@pytest.mark.sandbox
async def test_a_session_runs_in_order_on_ray_and_its_skill_reaches_the_later_tasks(ray_address, tmp_path):
    tasks = ("net-revenue-goran-tanaka", "net-revenue-emeka-ito", "net-revenue-mateo-berg")
    config = RunConfig(suite=load_suite("sessions"), model="scripted:reference", arms=("codemode",), task_ids=tasks,
                       out_dir=tmp_path, run_id="ray", max_concurrency=2)
    frame = read_results([(await Executor("ray").runner(config).run()).path]).sort_values("session_position")
    assert list(frame.task_id) == list(tasks) and frame.success.all()
    assert list(frame.started_at) == sorted(frame.started_at)  # one after another, in the session's order
    assert list(frame.skills_used) == ["", "net_revenue", "net_revenue"]
