"""BFCL's own `generate` + `evaluate` beside the harness's `direct` arm, entry by entry, on the same model served the
same way: `python benchmarks/bfcl_own_harness.py --bfcl PATH/TO/bfcl [--model embedded|reference [--perturb]]
[--category multi_turn_base] [--limit 5 | --tasks ID,...]` (`--smallest`: two entries, the reference model, one
perturbed; BFCL's side only when --bfcl is given).

`--model reference` answers each turn with BFCL's ground truth (ReferenceModel below; `--perturb` drops a call from
every second entry): a check of the turn protocol, the calls as executed and the scoring on calls that are known,
with no model's noise. `--model embedded` is the embedded GGUF behind `python -m llama_cpp.server` (raw completions), with
benchmarks/_tool_call_server.py in front serving OpenAI chat completions with tool calls (the model's own template,
its `<tool_call>` blocks as calls, as vLLM serves Qwen2.5). BFCL's side is its plain OpenAI chat-completions FC
client (the registry's `openbmb/MiniCPM-SALA-FC` entry: that client under a name the server ignores), run from
BFCL's own venv (`--bfcl`: its `bfcl` command; it needs all of bfcl-eval's dependencies, which the harness's venv
does not have) with `BFCL_PROJECT_ROOT` in `--out`. The harness's side is `harness run --suite bfcl:installed#CAT
--model openai/qwen --api-base ... --arms direct --scaffold bfcl`. Both at temperature 0, one request at a time.

Printed: per entry, each side's verdict (BFCL's checker on each), the calls per turn, and where the two first
differ; then the agreement on verdicts. The folder keeps both sides' files for reading.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._tool_call_server import BadRequest, Shim, completion_body, gguf_chat_template, serve
from harness.adapters.bfcl import ground_truth_call, turn_texts
from harness.adapters.bfcl_package import Bfcl, call_string, load_bfcl
from harness.adapters.bfcl_scoring import calls_by_turn
from harness.models.messages import parse_arguments
from harness.run.records import read_results, read_trajectory

BFCL_MODEL = "openbmb/MiniCPM-SALA-FC"  # BFCL's plain OpenAI chat-completions FC client
SERVED_NAME = "qwen"
ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the served model


def _wait_for(url: str, limit_s: float, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise SystemExit(f"the model server exited ({process.returncode}) before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"{url} did not answer within {limit_s:.0f} s")


@contextmanager
def llama_server(gguf: Path, port: int, log: Path) -> Iterator[str]:
    """llama-cpp-python's server on the GGUF (its raw completions are all the shim asks of it)."""
    with open(log, "w") as handle:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--n_ctx", "16384",
                                    "--n_threads", str(os.cpu_count() or 2), "--host", "127.0.0.1", "--port", str(port),
                                    "--model_alias", SERVED_NAME], stdout=handle, stderr=subprocess.STDOUT)
    try:
        _wait_for(f"http://127.0.0.1:{port}/v1/models", 300, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=60)


class ReferenceModel:
    """A model that answers every turn with BFCL's ground truth, for both clients alike: the entry is known by its
    user turns so far (entries that open alike are told apart at the first turn where they differ, and must agree
    until then), the turn by how many runs of user messages the conversation holds, and the step by the assistant
    replies since the last one. Step 0 of a turn gives all the turn's calls in one reply (parallel calls, as both
    clients run them), the next step a short text (which ends the turn in both). `perturbed` entries lose the last
    call of their last turn with two calls or more (else with one), so the checkers must agree on a failure too."""

    model_name = "reference"

    def __init__(self, bfcl: Bfcl, entries: list[str], perturbed: frozenset[str]):
        self.calls: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {}
        self.turns: dict[str, tuple[str, ...]] = {}
        for entry_id in entries:
            truth = [[ground_truth_call(c, bfcl.param_names) for c in turn] for turn in bfcl.ground_truth(entry_id)]
            if entry_id in perturbed:  # the last turn of two calls or more (else of one) keeps all but its last
                last = max((n for n, turn in enumerate(truth) if len(turn) > 1), default=None)
                last = last if last is not None else max(n for n, turn in enumerate(truth) if turn)
                truth[last] = truth[last][:-1]
            self.calls[entry_id] = truth
            self.turns[entry_id] = tuple(_opening(text) for text in turn_texts(bfcl.entry(entry_id),
                                                                               bfcl.offered_message))
        alike = [(a, b) for a in entries for b in entries if a < b and self.turns[a] == self.turns[b]]
        if alike:
            raise SystemExit(f"{alike[0][0]} and {alike[0][1]} have the same user turns: the reference model could "
                             "not tell them apart; run them apart")

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise BadRequest("messages must be a non-empty list of objects")
        roles = [m.get("role") for m in messages]
        starts = [n for n, role in enumerate(roles) if role == "user" and (n == 0 or roles[n - 1] != "user")]
        if not starts:
            raise BadRequest("no user message")
        said = tuple(_opening(str(messages[n].get("content") or "")) for n in starts)
        turn = len(said) - 1
        candidates = [e for e, turns in self.turns.items() if turns[:len(said)] == said]
        answers = {json.dumps(self.calls[e][turn] if turn < len(self.calls[e]) else []) for e in candidates}
        if not candidates:
            raise BadRequest(f"no entry has these user turns: {said[-1][:80]!r}")
        if len(answers) > 1:
            raise BadRequest(f"entries {', '.join(candidates)} share these user turns but not their calls")
        calls = json.loads(answers.pop())
        step = sum(1 for role in roles[starts[-1]:] if role == "assistant")
        if step == 0 and calls:
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{turn}_{n}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for n, (name, arguments) in enumerate(calls)]}
        else:
            message = {"role": "assistant", "content": "Done."}
        size = len(json.dumps(messages)) // 4
        return completion_body(message, body.get("model") or self.model_name, size, 10)


def _opening(text: str) -> str:
    """A user turn as both clients send its start: the first paragraph (BFCL sends a turn's messages apart, the
    harness joins them with a blank line)."""
    return text.split("\n\n")[0].strip()


# ---------------------------------------------------------------- the two sides


def run_bfcl(bfcl: Path, category: str, entries: list[str], api_base: str, root: Path) -> None:
    """BFCL's own generate then evaluate, in its venv, on these entries only (`--run-ids`)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_case_ids_to_generate.json").write_text(json.dumps({category: entries}))
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(root), "OPENAI_BASE_URL": api_base, "OPENAI_API_KEY": "none",
           "HF_HUB_OFFLINE": "1"}
    for step in (["generate", "--model", BFCL_MODEL, "--run-ids", "--temperature", "0", "--num-threads", "1",
                  "--include-input-log"],
                 ["evaluate", "--model", BFCL_MODEL, "--test-category", category, "--partial-eval"]):
        with open(root / f"{step[0]}.log", "w") as log:
            done = subprocess.run([str(bfcl), *step], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  check=False)
        if done.returncode != 0:
            raise SystemExit(f"bfcl {step[0]} exited {done.returncode}: see {root / (step[0] + '.log')}")


def run_harness(category: str, entries: list[str], api_base: str, out: Path, timeout_s: float, model: str) -> Path:
    """The harness's direct arm on the same entries through the same server; the results file it wrote."""
    env = {**os.environ, "OPENAI_API_KEY": "none"}
    with open(out / "harness.log", "w") as log:
        done = subprocess.run([sys.executable, "-m", "harness", "run", "--suite", f"bfcl:installed#{category}",
                               "--model", f"openai/{model}", "--api-base", api_base, "--arms", "direct",
                               "--scaffold", "bfcl", "--tasks", ",".join(entries), "--no-cache",
                               "--max-concurrency", "1", "--timeout", str(timeout_s), "--out", str(out / "harness"),
                               "--run-id", "own-harness"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                              check=False)
    if done.returncode != 0:
        raise SystemExit(f"harness run exited {done.returncode}: see {out / 'harness.log'}")
    return next((out / "harness").rglob("*.parquet"))


# ---------------------------------------------------------------- reading both sides


def bfcl_step_calls(response: Any) -> list[str]:
    """One step of BFCL's recorded responses as call strings: its FC client records `[{name: arguments_json}]`
    for a reply with calls and the reply's text otherwise (no call)."""
    if not isinstance(response, list):
        return []
    calls = []
    for call in response:
        for name, arguments in call.items():
            calls.append(call_string(name, parse_arguments(arguments) or {}))
    return calls


def bfcl_side(root: Path, category: str) -> dict[str, dict[str, Any]]:
    """Per entry: `calls` (per turn, per step), `verdict`, `reason`, `error` (inference failed), tokens, latency."""
    found: dict[str, dict[str, Any]] = {}
    for path in root.glob(f"result/**/*{category}_result.json"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            result = entry.get("result")
            found[entry["id"]] = {
                "calls": [[bfcl_step_calls(step) for step in turn] for turn in result] if isinstance(result, list)
                else None,
                "error": result if isinstance(result, str) else "",
                "prompt_tokens": _total(entry.get("input_token_count")),
                "completion_tokens": _total(entry.get("output_token_count")),
                "latency_s": _total(entry.get("latency")), "verdict": "valid", "reason": ""}
    for path in root.glob(f"score/**/*{category}_score.json"):
        for line in path.read_text().splitlines()[1:]:  # the first line is the summary
            entry = json.loads(line)
            if entry.get("id") in found:
                error = entry.get("error") or {}
                found[entry["id"]].update(verdict="invalid", reason=str(error.get("error_type", "")).split(":")[-1])
    return found


def _total(value: Any) -> float:
    if isinstance(value, list):
        return sum(_total(v) for v in value)
    return float(value or 0)


def harness_side(results: Path, turns_of: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Per entry, the harness's direct run read back the way its bfcl scorer reads it."""
    found: dict[str, dict[str, Any]] = {}
    for row in read_results(results).itertuples():
        trajectory = read_trajectory(results, row.sample_id)
        turn_steps = tuple(int(v["step"]) for v in (e.value for e in trajectory.events
                                                      if getattr(e, "name", None) == "user_turn"))
        found[row.task_id] = {
            "calls": calls_by_turn(trajectory.tool_calls, turn_steps, turns_of[row.task_id]),
            "verdict": "valid" if row.success else "invalid", "error": row.error_type or "",
            "reason": "" if row.success else _checker_error(str(row.score_reason)),
            "prompt_tokens": float(row.prompt_tokens), "completion_tokens": float(row.completion_tokens),
            "latency_s": float(row.latency_s)}
    return found


def _checker_error(reason: str) -> str:
    """`bfcl: multi_turn:instance_state_mismatch: ...` -> `instance_state_mismatch` (BFCL's score files' form)."""
    return reason.removeprefix("bfcl: ").split(": ")[0].split(":")[-1]


def first_difference(ours: list[list[list[str]]] | None, theirs: list[list[list[str]]] | None) -> str:
    """Where the two sides' calls first part: turn and step (1-based, counting the steps that made calls: BFCL
    records a reply without a call as an empty step, the harness records no calls for it), or `none`."""
    if ours is None or theirs is None:
        return "-"
    for turn, (a, b) in enumerate(zip(theirs, ours, strict=False), start=1):
        a, b = [step for step in a if step], [step for step in b if step]
        for step in range(max(len(a), len(b))):
            x, y = (a[step] if step < len(a) else None), (b[step] if step < len(b) else None)
            if x != y:
                return f"turn {turn} step {step + 1}: BFCL {x}, harness {y}"
    return "none" if len(theirs) == len(ours) else f"turns: BFCL {len(theirs)}, harness {len(ours)}"


def _shape(calls: list[list[list[str]]] | None) -> str:
    """Calls per turn (steps in a turn summed), e.g. `2,0,1`."""
    return "-" if calls is None else ",".join(str(sum(len(step) for step in turn)) for turn in calls)


def table(entries: list[str], bfcl: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]) -> list[str]:
    lines = [("| entry | BFCL generate + evaluate | harness `direct` | calls per turn (BFCL / harness) | "
             "first difference | tokens in/out (BFCL / harness) |"), "|---|---|---|---|---|---|"]
    agree = compared = 0
    for entry in entries:
        b, h = bfcl.get(entry), ours.get(entry)
        if b is None:
            b_text = "not run"
        elif b["error"]:
            b_text = f"inference error: {b['error'][:60]}"
        else:
            b_text = b["verdict"] + (f" ({b['reason']})" if b["reason"] else "")
        h_text = "not run" if h is None else h["verdict"] + (f" ({h['reason']})" if h["reason"] else "") + (
            f", {h['error']}" if h["error"] else "")
        if b is not None and h is not None:
            compared += 1
            agree += b["verdict"] == h["verdict"]
        tokens = " / ".join("-" if side is None else f"{side['prompt_tokens']:,.0f}/{side['completion_tokens']:,.0f}"
                            for side in (b, h))
        lines.append(f"| {entry} | {b_text} | {h_text} | {_shape(b and b['calls'])} / {_shape(h and h['calls'])} | "
                     f"{first_difference(h and h['calls'], b and b['calls'])} | {tokens} |")
    lines.append("")
    lines.append(f"verdicts agree on {agree} of {compared} entries run by both" if compared else
                 "BFCL's side was not run (give --bfcl, the `bfcl` command of BFCL's own venv)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bfcl", type=Path, help="the `bfcl` command of a venv with bfcl-eval and its dependencies")
    parser.add_argument("--model", choices=("embedded", "reference"), default="embedded",
                        help="embedded: the GGUF behind llama.cpp's server; reference: BFCL's ground truth as replies")
    parser.add_argument("--perturb", action="store_true",
                        help="reference: every second entry loses its last call (both checkers must fail it)")
    parser.add_argument("--category", default="multi_turn_base")
    parser.add_argument("--limit", type=int, default=5, help="the category's first N entries")
    parser.add_argument("--tasks", default="", help="comma-separated entry ids (instead of --limit)")
    parser.add_argument("--gguf", type=Path, help="the model file (default: the embedded model)")
    parser.add_argument("--port", type=int, default=8765, help="llama.cpp's server; the chat server is port+1 (reference: a free port)")
    parser.add_argument("--out", type=Path, default=Path("bfcl-own-harness"))
    parser.add_argument("--timeout", type=float, default=900, help="the harness's per-run limit (s)")
    parser.add_argument("--smallest", action="store_true", help="two entries, the reference model, one perturbed")
    args = parser.parse_args()
    if args.smallest:
        args.model, args.perturb, args.limit, args.tasks = "reference", True, 2, ""
    category = args.category
    entries = [t for t in args.tasks.split(",") if t] or [f"{category}_{i}" for i in range(args.limit)]
    if args.bfcl is not None and not args.bfcl.is_file():
        raise SystemExit(f"--bfcl {args.bfcl}: no such file (the `bfcl` command in BFCL's own venv's bin/)")
    package = load_bfcl("installed")
    turns_of = {entry: len(package.ground_truth(entry)) for entry in entries}
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.model == "reference":
        perturbed = frozenset(entries[1::2]) if args.perturb else frozenset()
        model: Any = ReferenceModel(package, entries, perturbed)
        upstream: Any = contextlib.nullcontext(None)
        named = ", ".join(sorted(perturbed)) if len(perturbed) <= 4 else "every second entry"
        described = f"the reference model ({len(perturbed)} perturbed: {named or 'none'})"
    else:
        from harness.models.model_file import embedded_model_path

        gguf = args.gguf or embedded_model_path()
        upstream = llama_server(gguf, args.port, out / "llama.log")
        described = gguf.name
    with upstream as upstream_url:
        if args.model == "embedded":
            model = Shim(gguf_chat_template(gguf), upstream_url, SERVED_NAME)
        server = serve(model, args.port + 1 if args.model == "embedded" else 0)  # reference: any free port
        api_base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            if args.bfcl is not None:
                run_bfcl(args.bfcl, category, entries, api_base, out / "bfcl-root")
            results = run_harness(category, entries, api_base, out, args.timeout, model.model_name)
        finally:
            server.shutdown()
    bfcl = bfcl_side(out / "bfcl-root", category) if args.bfcl is not None else {}
    print(f"BFCL {category}, {len(entries)} entries, {described}, {time.monotonic() - started:.0f} s; files in {out}")
    print("\n".join(table(entries, bfcl, harness_side(results, turns_of))))


if __name__ == "__main__":
    main()
