"""Agents from outside as arms through `harness run`, as a team runs them: a function named on the command line, an
agent a plugin registers by its entry point, and a Node program (the official MCP TypeScript SDK and the `openai`
npm package) as a `cmd:` arm; each on `scripted:reference`, whose replay reaches them through the run's endpoints,
with rows, transcripts and end-state scores beside the built-in `direct`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.run.records import read_results, read_trajectory
from tests.cli.helpers import ROOT, harness

pytestmark = [pytest.mark.cli, pytest.mark.sandbox]  # the harness command in a subprocess; references traced
NODE_AGENT = Path(__file__).resolve().parent / "node_agent"
# a task that writes (the note is on the crm server's end state) and one that reads
TASKS = "vip-note,customer-country"


def run(tmp_path: Path, arms: str, path: str = "") -> object:
    """`harness run` in a fresh folder, with the checkout (and `path`, a plugin's site) importable."""
    done = harness("run", "--suite", "smoke", "--tasks", TASKS, "--model", "scripted:reference", "--arms", arms,
                   "--out", str(tmp_path / "results"), "--run-id", "r", cwd=tmp_path,
                   env={"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p)}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_results([tmp_path / "results" / "smoke" / "r.parquet"])


def test_a_function_named_on_the_command_line_is_measured_beside_direct(tmp_path):
    frame = run(tmp_path, "direct,agent:tests.agents.team_agent:tool_loop")
    assert len(frame) == 4 and frame.success.all()
    mine = frame[frame.arm == "agent:tests.agents.team_agent:tool_loop"]
    direct = frame[frame.arm == "direct"]
    assert sorted(mine.tool_calls) == sorted(direct.tool_calls) and (mine.arm_kind == "python").all()
    note = mine[mine.task_id == "vip-note"].iloc[0]
    assert note.score_reason == direct[direct.task_id == "vip-note"].iloc[0].score_reason  # the same end state
    trajectory = read_trajectory(tmp_path / "results" / "smoke" / "r.parquet", note.sample_id)
    assert [c.tool for c in trajectory.tool_calls] == [c.tool for c in read_trajectory(
        tmp_path / "results" / "smoke" / "r.parquet", direct[direct.task_id == "vip-note"].iloc[0].sample_id).tool_calls]


PLUGIN = '''
import harness
from tests.agents.team_agent import tool_loop

harness.agent("team-loop", "a team's loop, registered by its package's entry point")(tool_loop)
'''


def test_an_agent_a_plugin_registers_by_its_entry_point_runs_by_its_name(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "team_plugin.py").write_text(PLUGIN)
    info = site / "team_plugin-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-plugin\nVersion: 2.0\n")
    (info / "entry_points.txt").write_text("[harness.plugins]\nteam = team_plugin\n")
    frame = run(tmp_path, "team-loop", path=str(site))
    assert frame.success.all() and set(frame.arm) == {"team-loop"}
    assert set(frame.arm_source) == {"module tests.agents.team_agent"}


@pytest.fixture(scope="module")
def node_agent(tmp_path_factory) -> Path:
    """The Node agent with its two packages installed from the npm registry (once per test session)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js and npm are not installed")
    folder = tmp_path_factory.mktemp("node_agent")
    for name in ("package.json", "agent.mjs"):
        shutil.copy(NODE_AGENT / name, folder / name)
    subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=folder, check=True,
                   capture_output=True, timeout=600)
    return folder


@pytest.mark.integration
def test_a_node_program_is_an_arm_through_the_official_sdks(tmp_path, node_agent):
    arm = f"cmd:node {node_agent / 'agent.mjs'}"
    frame = run(tmp_path, f"direct,{arm}")
    mine = frame[frame.arm == arm]
    assert len(mine) == 2 and mine.success.all() and (mine.arm_kind == "command").all()
    assert (mine.arm_source == f"node {node_agent / 'agent.mjs'}").all() and (mine.tool_calls >= 1).all()
    assert (mine.llm_calls == frame[frame.arm == "direct"].llm_calls.values).all()
