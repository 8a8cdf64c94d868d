"""Every reader of results refuses a results file or a trajectory written by a newer harness, in one line naming
both versions (exit 2), instead of reading it as if it were its own."""

import asyncio
import json

import pyarrow.parquet as pq
import pytest

from harness.models.scripted import policy_provider
from harness.run.records import SCHEMA_VERSION
from harness.run.runner import Runner
from harness.version import __version__
from tests.cli.helpers import harness
from tests.run.test_transcript_runs import chaining, config

pytestmark = pytest.mark.cli
READERS = [("report", "--out", "{tmp}/report"), ("gate", "--min-success", "direct=0.5"), ("view", "--out", "{tmp}/v"),
           ("export", "--format", "inspect", "--out", "{tmp}/logs")]


def results(tmp_path):
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run())
    return tmp_path / "smoke" / "r.parquet"


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
def test_a_results_file_of_a_newer_schema_is_refused_naming_both_versions(tmp_path, command):
    path = results(tmp_path)
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({"harness_schema_version": str(SCHEMA_VERSION + 1)}), path)
    done = harness(command[0], str(path), *[part.format(tmp=tmp_path) for part in command[1:]])
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"schema version {SCHEMA_VERSION + 1}" in line and f"versions 1 to {SCHEMA_VERSION}" in line
    assert __version__ in line and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", READERS[2:], ids=[c[0] for c in READERS[2:]])
def test_a_trajectory_of_a_newer_version_is_refused_naming_both_versions(tmp_path, command):
    path = results(tmp_path)
    lines = path.with_name("r.trajectories.jsonl")
    entry = json.loads(lines.read_text())
    lines.write_text(json.dumps({**entry, "trajectory_version": 99}) + "\n")
    done = harness(command[0], str(path), *[part.format(tmp=tmp_path) for part in command[1:]])
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "trajectory version 99" in line and __version__ in line
