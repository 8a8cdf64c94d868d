"""The embedded model through the harness's engine vs raw llama-cpp-python, side by side in one run.

1. Overhead: the same messages (cold KV cache each time) through LlamaEngine.complete (the DSPy engine:
   request conversion, prefix accounting, locking) and through llama_cpp.Llama directly; wall-time ratio
   (target <= 1.05).
2. KV reuse: the code-mode agent's real prompts for 3 turns (system prompt, task and tool API first, the
   trajectory growing by one step per turn); the share of prompt tokens on turns 2-3 reused from the KV
   cache rather than evaluated (target >= 80%).

Usage: .venv/bin/python benchmarks/local_model.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dspy  # noqa: E402
from dspy.lm15 import Config, Message, Request  # noqa: E402

from harness.agents.codemode import GenerateCode  # noqa: E402
from harness.local_model import LlamaEngine, chatml, resolve_local_model  # noqa: E402
from harness.servers import open_servers  # noqa: E402
from harness.suite import ServerRef  # noqa: E402

TASK = "What is the total value in USD of all shipped orders placed by the customer named Chen Tanaka?"
STEPS = [
    ("customer = search_customers(query='Chen Tanaka')[0]\nprint(customer['id'])", "C-0007"),
    ("orders = list_orders(customer_id='C-0007', status='shipped', limit=100)['orders']\nprint(len(orders))", "2"),
]
MAX_TOKENS = 24


@functools.cache
def _tool_api() -> str:
    async def stubs() -> str:
        async with open_servers((ServerRef("crm"),)) as session:
            return session.toolbox.python_stubs()

    return asyncio.run(stubs())


def messages(turn: int) -> list[dict[str, str]]:
    """The code-mode agent's real prompt at a given turn (DSPy ChatAdapter over GenerateCode)."""
    trajectory = "".join(f"### Step {i + 1}\nCode:\n{code}\nOutput:\n{out}\n" for i, (code, out) in
                         enumerate(STEPS[:turn])) or "(nothing yet)"
    return dspy.ChatAdapter().format(GenerateCode, demos=[], inputs={"task": TASK, "tool_api": _tool_api(),
                                                                     "trajectory": trajectory})


def cold(engine: LlamaEngine) -> None:
    engine.llm.reset()
    engine.llm._ctx.kv_cache_clear()


def through_harness(engine: LlamaEngine, turn: int) -> float:
    cold(engine)
    system, user = messages(turn)
    request = Request(model="local", system=system["content"], messages=(Message.user(user["content"]),),
                      config=Config(max_tokens=MAX_TOKENS, temperature=0.0))
    started = time.perf_counter()
    engine.complete(request)
    return time.perf_counter() - started


def through_llama(engine: LlamaEngine, turn: int) -> float:
    cold(engine)
    started = time.perf_counter()
    engine.llm.create_completion(chatml(messages(turn)), max_tokens=MAX_TOKENS, temperature=0.0, seed=0,
                                 stop=["<|im_end|>"])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    engine = LlamaEngine.for_path(resolve_local_model("local"))
    through_harness(engine, 0)  # warm-up
    ours, raw = [], []
    for _ in range(args.repeats):
        for turn in range(3):  # interleaved, so machine noise hits both alike
            ours.append(through_harness(engine, turn))
            raw.append(through_llama(engine, turn))
    cold(engine)
    loop = []
    for turn in range(3):
        _, stats = engine.complete_messages(messages(turn), max_tokens=MAX_TOKENS)
        loop.append(stats)
    later = loop[1:]
    reuse = sum(s.reused_prompt_tokens for s in later) / sum(s.prompt_tokens for s in later)
    print(f"model load: {engine.load_seconds:.1f} s")
    print(f"{'same messages, cold cache':<36}{'harness':>10}{'raw llama':>11}{'ratio':>8}")
    print(f"{'mean wall time (s)':<36}{statistics.mean(ours):>10.2f}{statistics.mean(raw):>11.2f}"
          f"{statistics.mean(ours) / statistics.mean(raw):>8.3f}  (target <= 1.05)")
    print(f"\n{'3-turn loop':<12}{'prompt':>8}{'reused':>8}{'evaluated':>11}{'seconds':>9}")
    for turn, stats in enumerate(loop, start=1):
        print(f"{'turn ' + str(turn):<12}{stats.prompt_tokens:>8}{stats.reused_prompt_tokens:>8}"
              f"{stats.evaluated_prompt_tokens:>11}{stats.seconds:>9.2f}")
    print(f"prompt tokens reused on turns 2-3: {reuse:.0%}  (target >= 80%)")


if __name__ == "__main__":
    main()
