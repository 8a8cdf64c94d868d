"""Every kind of bad input a user can give is one line on stderr and exit code 2, never a traceback."""

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.helpers import harness
from tests.results_factory import write_results

GOOD_TASK = """
  - id: t1
    category: lookup
    prompt: "Country of C-0007?"
    expected: IN
    scorer: exact
    reference: print(get_customer(customer_id="C-0007")["country"])
"""


def suite_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / f"suite{len(list(tmp_path.glob('suite*.yaml')))}.yaml"
    path.write_text(text)
    return str(path)


def cases(tmp: Path) -> dict[str, tuple[list[str], str, dict]]:
    foreign = tmp / "foreign.parquet"
    pq.write_table(pa.table({"x": [1]}), foreign)
    garbage = tmp / "garbage.parquet"
    garbage.write_bytes(b"not a parquet file at all")
    results = write_results(tmp / "res", "r", {"direct": [True], "codemode": [True]}, tasks=2, epochs=1)
    bad_json = tmp / "bad.json"
    bad_json.write_text('{"mcpServers": {"x": ')
    text_model = tmp / "model.gguf"
    text_model.write_text("not a model")
    latin1 = tmp / "latin1.yaml"
    latin1.write_bytes(b"suite: caf\xe9\n")
    a_file = tmp / "a-file"
    a_file.write_text("")
    smoke = ["run", "--suite", "smoke", "--model", "scripted:reference"]
    s = lambda text: suite_file(tmp, text)
    return {
        "malformed YAML": (["run", "--suite", s("suite: x\ntasks: [\n")], "malformed YAML", {}),
        "unknown field": (["run", "--suite", s("suite: x\nservers: [crm]\ntasks:" + GOOD_TASK + "    colour: red\n")],
                          "colour", {}),
        "duplicate task id": (["run", "--suite", s("suite: x\nservers: [crm]\ntasks:" + GOOD_TASK * 2)],
                              "duplicate task id", {}),
        "unknown server": (["run", "--suite", s("suite: x\nservers: [nowhere]\ntasks:" + GOOD_TASK)],
                           "unknown server 'nowhere'", {}),
        "unknown scorer": (["run", "--suite", s("suite: x\nservers: [crm]\ntasks:" + GOOD_TASK.replace("exact", "fuzzy"))],
                           "unknown scorer 'fuzzy'", {}),
        "invalid regex": (["run", "--suite", s("suite: x\nservers: [crm]\ntasks:" + GOOD_TASK.replace(
            "expected: IN\n    scorer: exact", "expected: '([unclosed'\n    scorer: regex"))],
            "task 't1': field 'expected': scorer 'regex': '([unclosed' is not a regular expression", {}),
        "unknown suite": (["run", "--suite", "no-such-suite"], "unknown suite", {}),
        "unknown arm": (["run", "--suite", "smoke", "--arms", "json-mode"], "unknown arm 'json-mode'", {}),
        "unknown model": (["run", "--suite", "smoke", "--model", "gpt5"], "unknown model 'gpt5'", {}),
        "unknown task id": (["run", "--suite", "smoke", "--tasks", "nope"], "no task 'nope'", {}),
        "missing model weights": (["setup", "--no-sandbox"], "model file not found",
                                  {"HARNESS_LOCAL_MODEL": str(tmp / "missing.gguf")}),
        "not a GGUF file": (["setup", "--no-sandbox", "--model", f"local:{text_model}"], "not a GGUF", {}),
        "foreign Parquet": (["report", str(foreign), "--out", str(tmp / "rep")], "not a harness results file", {}),
        "unreadable Parquet": (["gate", str(garbage), "--min-success", "direct=0.5"], "not a readable Parquet", {}),
        "bad gate expression": (["gate", str(results), "--min-success", "direct>0.5"], "expected ARM=RATE", {}),
        "gate rate out of range": (["gate", str(results), "--min-success", "direct=7"], "between 0 and 1", {}),
        "invalid mcp_servers.json": (["servers"], "invalid JSON", {"HARNESS_MCP_CONFIG": str(bad_json)}),
        "unknown run to resume": (["run", "--resume", "nope", "--out", str(tmp)], "no run 'nope'", {}),
        "no results to report": (["report", str(tmp / "empty-dir")], "no results files", {}),
        "suite file not UTF-8": (["run", "--suite", str(latin1)],
                                 "latin1.yaml: the suite file is not UTF-8 text (byte 0xe9 at offset 10)", {}),
        "suite path a folder": (["run", "--suite", str(tmp / "empty-dir")], "a folder, not a suite file", {}),
        "--out a file": ([*smoke, "--out", str(a_file)], "a file, not a folder", {}),
        "--out not writable": ([*smoke, "--out", str(a_file / "results")], "cannot write there", {}),
        "--timeout 0": ([*smoke, "--timeout", "0"], "'--timeout' (env var: 'HARNESS_TIMEOUT'): Input should be greater than "
                                                         "or equal to 0.001", {}),
        "--tool-timeout negative": ([*smoke, "--tool-timeout", "-1"], "Invalid value for '--tool-timeout'", {}),
        "--server-start-timeout 0": ([*smoke, "--server-start-timeout", "0"], "Invalid value for '--server-start-timeout'", {}),
        "--epochs 0": ([*smoke, "--epochs", "0"], "'--epochs' (env var: 'HARNESS_EPOCHS'): Input should be greater "
                                                        "than or equal to 1", {}),
        "--max-concurrency 0": ([*smoke, "--max-concurrency", "0"], "Invalid value for '--max-concurrency'", {}),
        "HARNESS_TIMEOUT=0": (smoke, "Invalid value for '--timeout' (env var: 'HARNESS_TIMEOUT')",
                              {"HARNESS_TIMEOUT": "0"}),
        "gate --max-drop 2": (["gate", str(results), "--max-drop", "2"], "'--max-drop': Input should be less than or equal to 1", {}),
        "view --port 70000": (["view", str(results), "--port", "70000"], "'--port': Input should be less than or equal to 65535", {}),
        "optimize --timeout 0": (["optimize", "--suite", "smoke", "--optimizer", "bootstrap", "--out",
                                  str(tmp / "p.json"), "--timeout", "0"], "Invalid value for '--timeout'", {}),
    }


KINDS = ["malformed YAML", "unknown field", "duplicate task id", "unknown server", "unknown scorer", "invalid regex",
         "unknown suite", "unknown arm", "unknown model", "unknown task id", "missing model weights", "not a GGUF file",
         "foreign Parquet", "unreadable Parquet", "bad gate expression", "gate rate out of range",
         "invalid mcp_servers.json", "unknown run to resume", "no results to report", "suite file not UTF-8",
         "suite path a folder", "--out a file", "--out not writable", "--timeout 0", "--tool-timeout negative",
         "--server-start-timeout 0", "--epochs 0", "--max-concurrency 0", "HARNESS_TIMEOUT=0", "gate --max-drop 2",
         "view --port 70000", "optimize --timeout 0"]


def test_every_kind_is_exercised(tmp_path):
    assert sorted(cases(tmp_path)) == sorted(KINDS) and len(KINDS) >= 15


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.cli
def test_bad_input_is_one_line_and_exit_code_2(kind, tmp_path):
    (tmp_path / "empty-dir").mkdir()
    args, fragment, env = cases(tmp_path)[kind]
    result = harness(*args, env=env, cwd=tmp_path if kind != "unknown suite" else None)
    assert result.returncode == 2, (kind, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], (kind, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert not list(tmp_path.rglob("*.run.json"))  # no run started: no manifest, no rows


@pytest.mark.integration
def test_a_stdio_server_dying_mid_run_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    import asyncio

    from harness.models.scripted import policy_provider
    from harness.run.reference import ReferenceTrace, reference_policy
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.suite import load_suite

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"dying": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("dying_server.py"))]}}}))
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))
    suite = load_suite(suite_file(tmp_path, """
suite: dies
servers: [dying]
tasks:
  - id: twice
    category: fault
    prompt: "Ping twice."
    expected: pong
    scorer: exact
    reference: print(ping())
  - id: once
    category: fault
    prompt: "Ping once."
    expected: pong
    scorer: exact
    reference: print(ping())
"""))
    traces = {"twice": (("ping", {}), ("ping", {})), "once": (("ping", {}),)}
    provider = policy_provider("scripted:t", lambda task, arm: reference_policy(
        ReferenceTrace("pong", "", traces[task.id], {}), task, arm))
    run = RunConfig(suite=suite, model="scripted:t", arms=("direct",), out_dir=tmp_path / "out", tool_timeout_s=10)
    rows = {r.task_id: r for r in asyncio.run(Runner(run, provider=provider).run()).records}
    assert rows["twice"].tool_calls == 2 and rows["twice"].tool_errors == 1
    assert rows["once"].tool_errors == 0 and rows["once"].success  # a fresh process for the next run
