"""M3ToolEval's own harness beside this one, on the same tasks and model: `benchmarks/m3tooleval.py CHECKOUT
--reference-harness` (this module does the work).

The checkout's `scripts/eval/m3tooleval/main.py` runs unmodified, in a virtual environment of its own that this
module creates once (its pre-1.0 `openai` client conflicts with LiteLLM's), against an OpenAI-compatible endpoint:
one the user names (--api-base, --api-model) or the embedded model served here by llama.cpp's server (the `server`
extra of llama-cpp-python, as `python -m llama_cpp.server`). Its one import the harness cannot satisfy,
`google.generativeai` (used only for Gemini models), gets a stand-in module on its PYTHONPATH. The harness runs the
same tasks on the same model under the benchmark's published rules (the `m3tooleval` scaffold preset), one arm per
mode: code = codemode, JSON = direct, text = react. Nothing of the benchmark is copied: its files are read and run
where the user's checkout has them.

Both sides count a turn as one LM reply and stop at 10; success is an answer the benchmark's rule accepts within
them (the harness's rule is written from the benchmark's definition: docs/benchmarks.md lists where they differ).
Where the two disagree on a task, the comparison names the first step at which their trajectories diverge: each
step reduced to a move (an action and the tools it calls, an answer and its text, or an unreadable reply).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The benchmark's mode (main.py --action_mode) for each arm, and the short name tables use.
MODES = {"code": ("code_as_action", "codemode"), "json": ("json_as_action", "direct"),
         "text": ("text_as_action", "react")}
# What main.py imports, pinned where it needs an old release (openai.ChatCompletion is gone from openai>=1).
REFERENCE_PACKAGES = ("openai==0.28.1", "backoff", "requests", "pandas", "tqdm", "ipython")
STAND_IN = '''"""Stand-in for google.generativeai (written by the harness): main.py imports it at the top and uses it only
for Gemini models."""


def __getattr__(name):
    raise RuntimeError("google.generativeai is a stand-in here: Gemini models are not supported")
'''
PLACEHOLDER_KEY = "sk-no-key-needed"  # the old client refuses to send without a key; local servers ignore it
SERVED_ALIAS = "embedded"


@dataclass(frozen=True)
class Endpoint:
    api_base: str  # .../v1
    model: str  # the name the server answers to


Move = tuple[str, str]  # ("action", "tool,tool") | ("answer", text) | ("invalid", "")


@dataclass(frozen=True)
class Outcome:
    success: bool
    turns: int
    moves: tuple[Move, ...]
    end: str  # why it ended: the reference's end_reason, or the harness row's error_type (empty: an answer)


# ---------------------------------------------------------------- the reference harness's environment and endpoint

def reference_python(venv_dir: Path) -> Path:
    """The interpreter of a venv with what main.py imports, created (and filled from PyPI) the first time."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / ".harness-reference-ready"
    if marker.is_file() and python.is_file():
        return python
    print(f"creating the reference harness's environment in {venv_dir} (once; pip from PyPI)", flush=True)
    venv.create(venv_dir, with_pip=True, clear=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *REFERENCE_PACKAGES], check=True)
    marker.write_text(" ".join(REFERENCE_PACKAGES) + "\n")
    return python


def stand_ins(folder: Path) -> Path:
    """A folder to put on main.py's PYTHONPATH with the google.generativeai stand-in (a namespace `google`)."""
    module = folder / "google" / "generativeai" / "__init__.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(STAND_IN)
    return folder


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served_embedded_model(log: Path, n_ctx: int = 16384, start_timeout_s: float = 300.0) -> Iterator[Endpoint]:
    """The embedded model (the GGUF `harness setup` assembled) behind llama.cpp's OpenAI-compatible server, for as
    long as the context lasts; the server is this process's child and is stopped at the end."""
    from harness.models.model_file import resolve_local_model

    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(resolve_local_model()), "--model_alias",
               SERVED_ALIAS, "--n_ctx", str(n_ctx), "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", SERVED_ALIAS)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if server.poll() is not None:
                raise SystemExit(f"llama.cpp's server exited at start (is the `server` extra of llama-cpp-python "
                                 f"installed?); its log: {log}")
            try:
                urllib.request.urlopen(f"{endpoint.api_base}/models", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"llama.cpp's server did not answer in {start_timeout_s:g} s; its log: {log}")
                time.sleep(1)
        yield endpoint
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


# ---------------------------------------------------------------- running the reference harness

def task_filter(task_ids: tuple[str, ...]) -> str:
    """main.py's --task_regex_filter selecting exactly these task names."""
    return "^(" + "|".join(re.escape(t) for t in task_ids) + ")$"


def run_reference(python: Path, bench_folder: Path, endpoint: Endpoint, mode: str, task_ids: tuple[str, ...],
                  out: Path, turn_limit: int) -> Path:
    """Run the checkout's main.py, unmodified, in `mode` on `task_ids`; returns the JSONL file it wrote (one line
    per task: is_correct, n_turns, messages, ...). Its console output goes to a log beside it."""
    action_mode = MODES[mode][0]
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OPENAI_API_BASE": endpoint.api_base,
           "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(stand_ins(out / "stand-ins")), str(bench_folder),
                                                       os.environ.get("PYTHONPATH", "")]))}
    log = out / f"{action_mode}.log"
    with open(log, "w") as handle:
        done = subprocess.run([str(python), "main.py", "--model", endpoint.model, "--action_mode", action_mode,
                               "--output_dir", str(out.resolve()), "--task_regex_filter", task_filter(task_ids),
                               "--n_turns_limit", str(turn_limit)],
                              cwd=bench_folder, env=env, stdout=handle, stderr=subprocess.STDOUT,
                              check=False)  # a failure is reported below, with the end of its log
    results = out / endpoint.model / f"{action_mode}.json"
    if done.returncode != 0 or not results.is_file():
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-5:])
        raise SystemExit(f"the reference harness failed in {action_mode} (exit {done.returncode}); log {log}:\n{tail}")
    return results


# ---------------------------------------------------------------- both trajectories as moves

def _called(code: str, tools: tuple[str, ...]) -> str:
    return ",".join(sorted({t for t in tools if re.search(rf"\b{re.escape(t)}\s*\(", code)}))


def reference_move(reply: str, mode: str, tools: tuple[str, ...]) -> Move:
    """One reply of the reference's model as a move, read as main.py reads it (Action: ... End Action / Answer:)."""
    if "Answer:" in reply and "Action:" in reply:
        return ("invalid", "")
    if "Answer:" in reply:
        return ("answer", reply.split("Answer:")[1].strip())
    if "Action:" not in reply:
        return ("invalid", "")
    action = reply.split("Action:")[1].split("End Action")[0].strip()
    if mode == "json":
        try:
            return ("action", str(json.loads(action)["tool"]))
        except (ValueError, KeyError, TypeError):
            return ("action", "")
    if mode == "text":
        return ("action", action.split(",")[0].strip())
    return ("action", _called(action, tools))


def reference_outcomes(results: Path, mode: str, tools_of: dict[str, tuple[str, ...]]) -> dict[str, Outcome]:
    outcomes = {}
    for line in results.read_text().splitlines():
        entry = json.loads(line)
        replies = [m["content"] for m in entry["messages"] if m["role"] == "assistant"]
        tools = tools_of[entry["task_name"].split("/")[0]]
        outcomes[entry["task_name"]] = Outcome(bool(entry["is_correct"]), int(entry["n_turns"]),
                                               tuple(reference_move(r, mode, tools) for r in replies),
                                               str(entry.get("end_reason", "")))
    return outcomes


def harness_move(step: Any, tools: tuple[str, ...]) -> Move:
    """One step of a harness trajectory as a move: final_answer (tool or code alone) is an answer."""
    from harness.agents.loop import FINAL_ANSWER_TOOL, answer_text

    if step.kind == "answer":
        return ("answer", step.text.strip())
    if step.kind == "tool":
        names = [use.tool for use in step.calls]
        if names == [FINAL_ANSWER_TOOL]:
            arguments = step.calls[0].arguments
            return ("answer", answer_text(arguments.get("answer", next(iter(arguments.values()), ""))))
        return ("action", ",".join(sorted(set(names) - {FINAL_ANSWER_TOOL})))
    if step.kind == "code":
        called = _called(step.code, tools)
        if not called and "final_answer" in step.detail:
            return ("answer", answer_text(step.detail["final_answer"]))
        return ("action", called)
    return ("invalid", "")


def harness_outcomes(results: Path, tools_of: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], Outcome]:
    """(task, arm) -> its outcome, from a harness results file and its trajectories."""
    from harness.run.records import read_results, read_trajectory

    outcomes = {}
    for row in read_results([results]).itertuples():
        steps = read_trajectory(results, row.sample_id).steps
        tools = tools_of[row.task_id.split("/")[0]]
        outcomes[(row.task_id, row.arm)] = Outcome(bool(row.success), int(row.turns),
                                                   tuple(harness_move(s, tools) for s in steps), row.error_type)
    return outcomes


def divergence(reference: tuple[Move, ...], harness: tuple[Move, ...]) -> str:
    """The first step at which two runs' moves differ (kinds, the tools an action calls, an answer's text), or ''."""
    for index, (ours, theirs) in enumerate(zip(reference, harness)):
        if ours != theirs:
            return f"step {index + 1}: reference {_show(ours)}, harness {_show(theirs)}"
    if len(reference) != len(harness):
        shorter = "reference" if len(reference) < len(harness) else "harness"
        return f"step {min(len(reference), len(harness)) + 1}: the {shorter} had ended"
    return ""


def _show(move: Move) -> str:
    kind, detail = move
    if kind == "action":
        return f"action [{detail or 'no tool'}]"
    return f"answer {detail[:40]!r}" if kind == "answer" else "an unreadable reply"


# ---------------------------------------------------------------- the comparison

@dataclass(frozen=True)
class Pair:
    task: str
    mode: str
    reference: Outcome | None  # None: the reference wrote no line for the task
    harness: Outcome | None

    @property
    def agree(self) -> bool:
        return (self.reference is not None and self.harness is not None
                and self.reference.success == self.harness.success)


def pairs(task_ids: tuple[str, ...], modes: tuple[str, ...], reference: dict[str, dict[str, Outcome]],
          harness: dict[tuple[str, str], Outcome]) -> list[Pair]:
    return [Pair(task, mode, reference[mode].get(task), harness.get((task, MODES[mode][1])))
            for mode in modes for task in task_ids]


def _cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return "not run"
    return f"{'pass' if outcome.success else 'fail'}, {outcome.turns} turn{'' if outcome.turns == 1 else 's'}"


def report(compared: list[Pair]) -> str:
    """Per task and mode both outcomes and turns, the agreement rate, and where disagreeing runs diverged."""
    lines = ["| task | mode (arm) | reference main.py | harness (m3tooleval preset) | agree | first divergence |",
             "|---|---|---|---|---|---|"]
    for pair in compared:
        where = divergence(pair.reference.moves, pair.harness.moves) if pair.reference and pair.harness else ""
        lines.append(f"| {pair.task} | {pair.mode} ({MODES[pair.mode][1]}) | {_cell(pair.reference)} | "
                     f"{_cell(pair.harness)} | {'yes' if pair.agree else 'no'} | {where or '-'} |")
    lines.append("")
    lines.append("| mode (arm) | reference: passed | harness: passed | reference: mean turns | harness: mean turns | "
                 "agreement |")
    lines.append("|---|---|---|---|---|---|")
    for mode in dict.fromkeys(p.mode for p in compared):
        group = [p for p in compared if p.mode == mode]
        lines.append(f"| {mode} ({MODES[mode][1]}) | {_passed(p.reference for p in group)} | "
                     f"{_passed(p.harness for p in group)} | {_turns(p.reference for p in group)} | "
                     f"{_turns(p.harness for p in group)} | {sum(p.agree for p in group)}/{len(group)} |")
    agreed = sum(p.agree for p in compared)
    lines.append(f"\nagreement on success: {agreed}/{len(compared)} ({agreed / max(1, len(compared)):.0%}) of "
                 "task x mode pairs")
    return "\n".join(lines)


def _passed(outcomes: Any) -> str:
    done = [o for o in outcomes if o is not None]
    return f"{sum(o.success for o in done)}/{len(done)}"


def _turns(outcomes: Any) -> str:
    done = [o.turns for o in outcomes if o is not None]
    return f"{sum(done) / len(done):.1f}" if done else "-"
