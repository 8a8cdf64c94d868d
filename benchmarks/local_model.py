"""The embedded model through the harness's engine vs raw llama-cpp-python, side by side in one run
(a printed table; no assertions).

1. Overhead: the same messages, cold KV cache each time, through LlamaEngine.complete (the DSPy engine:
   request conversion, chat template, reuse accounting, locking) and through a second, untouched
   llama_cpp.Llama loaded with the same settings; wall-time ratio (target <= 1.05).
2. KV reuse: the code-mode agent's real prompts for 3 turns (system prompt, task and tool API first, the
   trajectory growing by one step per turn); the share of prompt tokens on turns 2-3 that llama.cpp
   reused from its KV cache rather than evaluated (target >= 80%). Measured: the engine counts the tokens
   llama.cpp actually evaluates.

The engine runs without its prefix cache here (so "cold" stays cold); benchmarks/prefix_cache.py measures the
cache on a whole suite.

Usage: .venv/bin/python benchmarks/local_model.py [--repeats 1] [--turns 3] [--smallest]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.env import configure_environment

configure_environment()

from dspy.lm15 import Config, Message, Request

from benchmarks._common import rss_mb
from harness.agents.scaffold import default_scaffold
from harness.models.chat_template import chatml
from harness.models.llama import DEFAULT_SEED, LlamaEngine
from harness.models.model_file import resolve_local_model
from harness.run.executors import run_suite
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig
from harness.tasks.suite import load_suite

TASK_ID = "shipped-total"  # a smoke task of three code turns: find the customer, list the orders, add them up
MAX_TOKENS = 24
SHORT = ({"role": "system", "content": "You are a careful assistant."},
         {"role": "user", "content": "Name three colours."})


@functools.cache
def real_prompts() -> tuple[tuple[dict[str, str], ...], ...]:
    """The code-mode arm's real prompts, turn by turn, as it sends them to the embedded model (under its default
    scaffold): taken from a run of the task on the scripted reference model, so this script follows any change
    to the agent's prompt."""
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(suite=load_suite("smoke"), model="scripted:reference", arms=("codemode",),
                           task_ids=(TASK_ID,), out_dir=Path(tmp), cache="off",
                           scaffold=default_scaffold("local"))  # the prompts the embedded model gets
        path = run_suite(config).path
        sample = read_results([path]).sample_id.iloc[0]
        calls = read_trajectory(path, sample).lm_calls
    return tuple(tuple({"role": m["role"], "content": m["content"]} for m in call.messages) for call in calls)


def messages(turn: int, smallest: bool) -> tuple[dict[str, str], ...]:
    if smallest:
        return SHORT + tuple({"role": "user", "content": f"And {n + 1} more."} for n in range(turn))
    return real_prompts()[turn]


def cold(llm) -> None:
    llm.reset()
    llm._ctx.kv_cache_clear()


def through_harness(engine: LlamaEngine, turn: int, smallest: bool) -> float:
    cold(engine.llm)
    system, *rest = messages(turn, smallest)
    request = Request(model="local", system=system["content"],
                      messages=tuple(Message.user(m["content"]) if m["role"] == "user" else
                                     Message.assistant(m["content"]) for m in rest),
                      config=Config(max_tokens=MAX_TOKENS, temperature=0.0))
    started = time.perf_counter()
    engine.complete(request)
    return time.perf_counter() - started


def through_llama(llm, turn: int, smallest: bool) -> float:
    cold(llm)
    started = time.perf_counter()
    llm.create_completion(chatml(list(messages(turn, smallest))), max_tokens=MAX_TOKENS, temperature=0.0, seed=DEFAULT_SEED,
                          stop=["<|im_end|>", "<|endoftext|>"])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="overhead rounds (each: every turn, both ways)")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--smallest", action="store_true", help="short made-up prompts, two turns (seconds)")
    args = parser.parse_args()
    if args.smallest:
        args.repeats, args.turns = 1, 2
    from llama_cpp import Llama

    path = resolve_local_model()
    rss_before = rss_mb()
    engine = LlamaEngine(path, prefix_cache=None)
    rss_engine = rss_mb()
    started = time.perf_counter()
    raw = Llama(model_path=str(path), n_ctx=engine.llm.n_ctx(), n_threads=os.cpu_count(), seed=DEFAULT_SEED,
                verbose=False)
    raw_load = time.perf_counter() - started
    if not args.smallest:
        args.turns = min(args.turns, len(real_prompts()))

    ours, theirs = [], []
    for _ in range(args.repeats):
        for turn in range(args.turns):  # interleaved and alternating first, so machine noise hits both alike
            pair = [lambda turn=turn: ours.append(through_harness(engine, turn, args.smallest)),
                    lambda turn=turn, raw=raw: theirs.append(through_llama(raw, turn, args.smallest))]
            for run in pair if turn % 2 == 0 else reversed(pair):
                run()
    del raw

    cold(engine.llm)
    loop = [engine.complete_messages(list(messages(turn, args.smallest)), max_tokens=MAX_TOKENS)[1]
            for turn in range(args.turns)]
    later = loop[1:]
    reuse = sum(s.reused_prompt_tokens for s in later) / sum(s.prompt_tokens for s in later)
    first = loop[0]

    print(f"model: {path.name}, n_ctx {engine.llm.n_ctx()}, {os.cpu_count()} threads")
    print(f"load: harness engine {engine.load_seconds:.1f} s, raw Llama {raw_load:.1f} s; "
          f"RSS +{rss_engine - rss_before:,.0f} MB for one loaded model ({rss_mb():,.0f} MB now)")
    print(f"speed (turn 1, cold): prompt {first.evaluated_prompt_tokens / first.prompt_seconds:.1f} tok/s, "
          f"generation {max(first.completion_tokens - 1, 0) / (first.seconds - first.prompt_seconds):.1f} tok/s")
    print(f"\n{'same messages, cold KV cache':<32}{'harness':>10}{'raw llama':>11}{'ratio':>8}")
    print(f"{'mean wall time (s)':<32}{statistics.mean(ours):>10.2f}{statistics.mean(theirs):>11.2f}"
          f"{statistics.mean(ours) / statistics.mean(theirs):>8.3f}  (target <= 1.05; "
          f"{len(ours)} calls each)")
    print(f"\n{f'{args.turns}-turn loop':<12}{'prompt':>8}{'reused':>8}{'evaluated':>11}{'prompt s':>10}{'total s':>9}")
    for turn, stats in enumerate(loop, start=1):
        print(f"{'turn ' + str(turn):<12}{stats.prompt_tokens:>8}{stats.reused_prompt_tokens:>8}"
              f"{stats.evaluated_prompt_tokens:>11}{stats.prompt_seconds:>10.2f}{stats.seconds:>9.2f}")
    print(f"prompt tokens reused on turns 2-{args.turns}: {reuse:.0%}  (target >= 80%)")


if __name__ == "__main__":
    main()
