"""Choosing an executor: Ray stays optional, and a missing or unknown executor is one line, exit 2."""

import subprocess
import sys

import pytest

from harness.errors import UserError
from harness.run.executors import Executor
from harness.run.ray_cluster import RAY_MISSING
from harness.run.runner import Runner
from tests.cli.helpers import ROOT


def test_without_ray_the_ray_executor_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(UserError, match=r"pip install 'harness\[ray\]'"):
        Executor("ray").check()


@pytest.mark.cli
def test_harness_run_without_ray_is_one_line_and_exit_2(tmp_path):
    code = "import sys; sys.modules['ray'] = None; from harness.cli import main; main()"
    result = subprocess.run([sys.executable, "-c", code, "run", "--suite", "smoke", "--model", "scripted:reference",
                             "--executor", "ray", "--out", str(tmp_path)],
                            check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {RAY_MISSING}"
    assert not list(tmp_path.rglob("*.parquet"))


def test_an_unknown_executor_is_a_user_error():
    with pytest.raises(UserError, match="unknown executor 'dask'"):
        Executor("dask").check()


def test_the_local_executor_is_the_plain_runner(tmp_path):
    from harness.run.runner import RunConfig
    from harness.tasks.suite import load_suite

    config = RunConfig(suite=load_suite("smoke"), model="scripted:garbage", arms=("direct",), out_dir=tmp_path)
    assert type(Executor().runner(config)) is Runner
