"""harness optimize through the real CLI, against a scripted model served over HTTP the way a hosted model is
(an OpenAI-compatible endpoint reached with --model openai/... --api-base): its answers depend on the prompt
(tests.optimize.test_optimizer.py: tunable_policy). Then `harness run --program` and `harness report` on the held-out
tasks, as a user would compare a tuned prompt with the built-in one."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.agents.programs import SavedProgram, load_program, new_program, save_program, tuned_state
from harness.agents.scaffold import GUIDED
from harness.models.scripted import ScriptedReply, ScriptedRequest, output_fields
from harness.models.tokens import count_tokens
from harness.run.records import read_results
from tests.adapters.lookalike import write_lookalike
from tests.cli.helpers import ROOT, harness
from tests.optimize.test_optimizer import DEV, PHRASE, TRAIN, tunable_policy

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


class ScriptedServer:
    """An OpenAI-compatible /chat/completions endpoint answering with a scripted policy."""

    def __init__(self, policy, delay_s: float = 0.0):
        self.policy, self.delay_s, self.calls = policy, delay_s, 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                messages = tuple({key: m[key] for key in ("role", "content", "tool_calls", "tool_call_id")
                                  if key in m} for m in body["messages"])
                system = messages[0]["content"] if messages[0]["role"] == "system" else ""
                tools = tuple(t["function"]["name"] for t in body.get("tools") or ())
                reply = server.answer(ScriptedRequest(messages, output_fields(system), server.calls, tools))
                message, finish = reply_message(reply)
                prompt = sum(count_tokens(str(m.get("content") or "")) for m in messages)
                completion = count_tokens(json.dumps(message))
                data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                                   "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                             "total_tokens": prompt + completion}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()

    def answer(self, request: ScriptedRequest):
        with self.lock:
            self.calls += 1
        time.sleep(self.delay_s)
        return self.policy(request)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_port}/v1"

    def __enter__(self) -> ScriptedServer:
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.http.shutdown()


def reply_message(reply) -> tuple[dict, str]:
    """A policy's reply as an OpenAI chat completion message: native tool calls, DSPy fields, or text."""
    if isinstance(reply, ScriptedReply):
        calls = [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                 for n, (name, args) in enumerate(reply.tool_calls)]
        return {"role": "assistant", "content": reply.text or None, **({"tool_calls": calls} if calls else {})}, \
            "tool_calls" if calls else "stop"
    text = reply if isinstance(reply, str) else "\n\n".join(
        [f"[[ ## {k} ## ]]\n{json.dumps(v) if isinstance(v, (dict, list)) else v}" for k, v in reply.items()]
        + ["[[ ## completed ## ]]"])
    return {"role": "assistant", "content": text}, "stop"


def model_args(server: ScriptedServer) -> list[str]:
    return ["--model", "openai/scripted", "--api-base", server.url, "--no-cache"]


ENV = {"OPENAI_API_KEY": "not-used"}
SPLIT = ["--train", ",".join(TRAIN), "--dev", ",".join(DEV)]


def optimize(server, tmp_path, optimizer: str, budget: int, arm: str = "direct", name: str = "program.json"):
    out = tmp_path / name
    result = harness("optimize", "--suite", "core", "--arm", arm, "--optimizer", optimizer, *SPLIT,
                     "--budget", str(budget), *model_args(server), "--out", str(out), env=ENV)
    return result, out


@pytest.mark.parametrize("optimizer, budget", [("bootstrap", 8), ("mipro", 20), ("gepa", 10), ("simba", 30)])
def test_every_optimizer_runs_from_the_cli_and_saves_a_better_program(optimizer, budget, tmp_path):
    with ScriptedServer(tunable_policy()) as server:
        result, out = optimize(server, tmp_path, optimizer, budget)
    assert result.returncode == 0, result.stderr
    program = load_program(out)
    assert (program.dev_before.success_rate, program.dev_after.success_rate) == (0.0, 1.0)
    assert (program.optimizer, program.arm, program.model, program.dev_ids) == (optimizer, "direct",
                                                                                "openai/scripted", DEV)
    step = program.state["step"]
    assert PHRASE in step["signature"]["instructions"] or step["demos"]
    assert f"--tasks {','.join(DEV)}" in result.stdout and f"--program {out}" in result.stdout
    assert (tmp_path / "program.log").stat().st_size > 0  # the optimizer's own output, off the terminal


def test_the_saved_program_runs_and_the_report_compares_it_on_held_out_tasks(tmp_path):
    results = tmp_path / "results"
    with ScriptedServer(tunable_policy()) as server:
        result, out = optimize(server, tmp_path, "bootstrap", 8)
        assert result.returncode == 0, result.stderr
        common = ["run", "--suite", "core", "--arms", "direct", *model_args(server), "--out", str(results)]
        baseline = harness(*common, "--tasks", ",".join(DEV), env=ENV)
        tuned = harness(*common, "--program", str(out), env=ENV)  # tasks default to the program's dev tasks
    assert baseline.returncode == 0 and tuned.returncode == 0, baseline.stderr + tuned.stderr
    frame = read_results([results])
    program_hash = load_program(out).hash
    assert set(frame.program_hash) == {"", program_hash}
    for hash_, rate in (("", 0.0), (program_hash, 1.0)):
        rows = frame[frame.program_hash == hash_]
        assert sorted(rows.task_id) == sorted(DEV) and rows.success.mean() == rate
    report = harness("report", str(results / "core"), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    assert program_hash[:8] in text and "built-in" in text


@pytest.mark.sandbox
def test_code_mode_optimizes_and_runs_from_the_cli(tmp_path):
    results = tmp_path / "results"
    with ScriptedServer(tunable_policy()) as server:
        result, out = optimize(server, tmp_path, "bootstrap", 8, arm="codemode")
        assert result.returncode == 0, result.stderr
        run = harness("run", "--suite", "core", "--arms", "codemode", *model_args(server), "--program", str(out),
                      "--out", str(results), env=ENV)
    assert run.returncode == 0, run.stderr
    program = load_program(out)
    assert program.dev_after.success_rate == 1.0 and "def get_customer(" in program.state["step"]["demos"][0]["tool_api"]
    frame = read_results([results])
    assert frame.success.all() and set(frame.program_hash) == {program.hash}


def test_ctrl_c_saves_the_best_program_so_far(tmp_path):
    """Bootstrap with room for 3 demos: the two easy train tasks give two, then Ctrl-C in the third episode."""
    out = tmp_path / "program.json"
    with ScriptedServer(tunable_policy(), delay_s=0.2) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", "from harness.cli import main; main()", "optimize", "--suite", "core", "--arm",
             "direct", "--optimizer", "bootstrap", *SPLIT, "--max-demos", "3", *model_args(server), "--out",
             str(out)], cwd=ROOT, env={**__import__("os").environ, **ENV}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while server.calls < 5 and time.time() < deadline:  # 2 dev + 2 train episodes of one call each, then one
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    program = load_program(out)
    assert program.interrupted and program.dev_after is None and len(program.state["step"]["demos"]) == 2
    assert "interrupted" in stderr and f"program: {out}" in stdout


def one_line_error(result) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize("args, fragment", [
    (["--optimizer", "nope"], "unknown optimizer 'nope'"),
    (["--optimizer", "gepa", "--arm", "nope"], "cannot optimize arm 'nope'"),
    (["--optimizer", "gepa", "--train", "lookup-customer-country", "--dev", "lookup-customer-country"], "held out"),
    (["--optimizer", "gepa", "--train", "nope"], "no task 'nope'"),
    (["--optimizer", "gepa", "--model", "scripted:reference"], "cannot be optimized"),
])
def test_bad_optimize_input_is_one_line(args, fragment, tmp_path):
    result = harness("optimize", "--suite", "core", *args, "--out", str(tmp_path / "p.json"))
    assert fragment in one_line_error(result)


def test_optimize_takes_a_benchmark_checkout_as_its_suite(tmp_path):
    checkout = write_lookalike(tmp_path / "code-act")
    result = harness("optimize", "--suite", f"m3tooleval:{checkout}", "--optimizer", "bootstrap", "--train", "nope",
                     "--out", str(tmp_path / "p.json"))
    assert "suite 'm3tooleval' has no task 'nope'" in one_line_error(result)


def test_run_with_a_bad_program_file_is_one_line(tmp_path):
    direct = tmp_path / "direct.json"
    save_program(SavedProgram(arm="direct", suite="core", model="m", optimizer="bootstrap", budget=1, seed=0,
                              train_ids=(), dev_ids=(), dev_before=None, dev_after=None, interrupted=False,
                              episodes=0, state=tuned_state(new_program("direct", GUIDED))), direct)
    message = one_line_error(harness("run", "--suite", "core", "--arms", "codemode", "--program", str(direct)))
    assert "tuned for the direct arm: run it with --arms direct" in message
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"generate": {"demos": []}}))
    assert "not a harness program" in one_line_error(harness("run", "--suite", "core", "--program", str(foreign)))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert "not JSON" in one_line_error(harness("run", "--suite", "core", "--program", str(broken)))
