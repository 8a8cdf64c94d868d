"""BFCL's ground truth replayed through the harness's arms and scored by BFCL's own checker: `python
benchmarks/bfcl_reference.py [--category multi_turn_base] [--limit N] [--arms direct,codemode]` (`--smallest`: two
entries of base, direct only).

Each entry's ground-truth calls (BFCL's `possible_answer`, per turn) are replayed as a model would make them, turn by
turn, through each arm's own replay protocol (the one `scripted:reference` uses, harness.agents.replay): the turn's
calls, then an answer, which ends the turn; the next user turn follows. The runs go through everything a model's run
goes through (the adapter's MCP server over fresh BFCL instances, the scripted user, the per-turn recording) and the
`bfcl` scorer hands the executed calls to BFCL's `multi_turn_checker`. Every run should be valid: a failure is a bug
of the adapter (or a ground truth the harness cannot replay), and is printed with the checker's reason.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness.adapters  # noqa: E402,F401  (registers the bfcl adapter)
from harness.adapters.bfcl_package import load_bfcl  # noqa: E402
from harness.agents.arms import ARMS  # noqa: E402
from harness.agents.replay import ReferenceTrace  # noqa: E402
from harness.agents.scaffold import all_presets  # noqa: E402
from harness.models.scripted import ScriptedRequest, policy_provider  # noqa: E402
from harness.run.records import read_results  # noqa: E402
from harness.run.runner import RunConfig, Runner  # noqa: E402
from harness.tasks.registry import load_suite  # noqa: E402
from harness.tasks.task import Task  # noqa: E402

ANSWER = "done"


def parsed_call(text: str, param_names: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string as (name, keyword arguments); positional values take the function doc's
    parameter names in order."""
    node = ast.parse(text.strip(), mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), text
    name = node.func.id
    arguments = {param_names[name][n]: ast.literal_eval(value) for n, value in enumerate(node.args)}
    arguments.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return name, arguments


def turn_policy(task: Task, arm: str, ground_truth: list[list[str]], param_names: dict[str, list[str]], parallel: bool):
    """The ground truth as the arm's replay, one turn's replay after another: the turn in progress is the number of
    user turns the request shows."""
    turns = task.user.turns if task.user else ()
    replays = []
    for text, calls in zip(turns, ground_truth, strict=True):
        parsed = tuple(parsed_call(c, param_names) for c in calls)
        code = "\n".join([*(f"{name}(**{arguments!r})" for name, arguments in parsed), f"print({ANSWER!r})"])
        trace = ReferenceTrace(answer=ANSWER, stdout=ANSWER + "\n", tool_calls=parsed, end_state={},
                               failed_calls=None, call_servers=("bfcl",) * len(parsed))
        replays.append(ARMS[arm].replay(trace, replace(task, prompt=text, reference=code), parallel, None))

    def policy(request: ScriptedRequest):
        """The turn in progress is the last turn's text the request shows (a user message, or the result of the
        final_answer call that ended the turn before); its replay sees the conversation from that message on."""
        messages = list(request.messages)
        where = {n: i for i, m in enumerate(messages) for n, text in enumerate(turns) if str(m.get("content")) == text
                 or (m.get("role") == "user" and text in str(m.get("content")))}
        current = max(where, default=0)
        start = where.get(current, 0)
        head = [m for m in messages[:1] if m.get("role") == "system"]
        shown = head + [{"role": "user", "content": turns[current]}] + messages[start + 1:]
        return replays[current](replace(request, messages=tuple(shown)))

    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", default="installed")
    parser.add_argument("--category", default="")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--arms", default="direct,codemode")
    parser.add_argument("--tasks", default="", help="comma-separated entry ids (instead of --limit)")
    parser.add_argument("--keep", type=Path, help="keep the results (rows and trajectories) in this folder")
    parser.add_argument("--smallest", action="store_true")
    args = parser.parse_args()
    if args.smallest:
        args.category, args.limit, args.arms = args.category or "multi_turn_base", 2, "direct"
    spec = f"bfcl:{args.package}" + (f"#{args.category}" if args.category else "")
    suite = load_suite(spec)
    if args.limit:  # the first N entries of each category
        counts: Counter[str] = Counter()
        kept = [t for t in suite.tasks if (counts.update([t.category]) or counts[t.category] <= args.limit)]
        suite = replace(suite, tasks=tuple(kept))
    if args.tasks:
        wanted = set(args.tasks.split(","))
        suite = replace(suite, tasks=tuple(t for t in suite.tasks if t.id in wanted))
    bfcl = load_bfcl(args.package)
    param_names: dict[str, list[str]] = {}
    for cls in bfcl.backend.MULTI_TURN_FUNC_DOC_FILE_MAPPING:
        for doc in bfcl.func_docs(cls):
            param_names[doc["name"]] = list((doc.get("parameters") or {}).get("properties") or {})
    scaffold = all_presets()["bfcl"]
    arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())

    def make_policy(task: Task, arm: str):
        return turn_policy(task, arm, bfcl.ground_truth(task.id), param_names,
                           ARMS[arm].parallel_calls and scaffold.parallel_tool_calls)

    with tempfile.TemporaryDirectory() as temporary:
        out = args.keep or Path(temporary)
        config = RunConfig(suite=suite, model="scripted:bfcl-ground-truth", arms=arms, out_dir=out,
                           run_id="bfcl-reference", scaffold=scaffold)
        started = time.perf_counter()
        asyncio.run(Runner(config, provider=policy_provider("scripted:bfcl-ground-truth", make_policy)).run())
        wall = time.perf_counter() - started
        rows = read_results([out])
    print(f"{len(suite.tasks)} entries x {len(arms)} arms in {wall:.0f} s ({spec})")
    for (arm, category), group in rows.groupby(["arm", "category"]):
        print(f"  {arm:10} {category:26} {int(group.success.sum())}/{len(group)} valid")
    for row in rows[~rows.success.astype(bool)].itertuples():
        print(f"  FAIL {row.arm} {row.task_id}: {row.error_type} {str(row.score_reason)[:200]}")


if __name__ == "__main__":
    main()
