"""The scripted:reference run of the smoke suite (direct and codemode) that the sandbox-tier export tests share."""

import pytest

from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite


@pytest.fixture(scope="module")
async def smoke_results(tmp_path_factory, sandbox_pool):
    """The results file of `scripted:reference` on smoke through direct and codemode, and a folder beside it."""
    out = tmp_path_factory.mktemp("reference")
    config = RunConfig(suite=load_suite("smoke"), model="scripted:reference", arms=("direct", "codemode"),
                       out_dir=out / "results", run_id="r")
    await Runner(config, pool=sandbox_pool).run()
    return out / "results" / "smoke" / "r.parquet", out
