"""The embedded model through the harness's engine vs raw llama-cpp-python, side by side in one run.

1. Overhead: the same messages (cold KV cache each time) through LlamaEngine.complete (the DSPy engine:
   request conversion, prefix accounting, locking) and through llama_cpp.Llama directly; wall-time ratio
   (target <= 1.05).
2. KV reuse: a 3-turn agent-like loop (the prompt grows by one step per turn); the share of prompt tokens
   on turns 2-3 reused from the KV cache rather than evaluated (target >= 80%).

Usage: .venv/bin/python benchmarks/local_model.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dspy.lm15 import Config, Message, Request  # noqa: E402

from harness.local_model import LlamaEngine, chatml, resolve_local_model  # noqa: E402

SYSTEM = ("You solve tasks by calling tools. Tools: get_customer(customer_id) returns a customer; "
          "list_orders(customer_id, status) returns orders. Reply with the next tool call as JSON.")
TASK = "What is the total of shipped orders for customer C-0007? Answer with the number."
STEPS = ['{"tool": "get_customer", "args": {"customer_id": "C-0007"}}\nObservation: {"id": "C-0007", "name": '
         '"Chen Tanaka", "country": "IN", "tier": "pro"}',
         '{"tool": "list_orders", "args": {"customer_id": "C-0007", "status": "shipped"}}\nObservation: '
         '{"orders": [{"id": "O-00046", "total": 18.0}, {"id": "O-00125", "total": 9.0}], "total": 2}']
MAX_TOKENS = 24


def messages(turn: int) -> list[dict[str, str]]:
    trajectory = "\n".join(STEPS[:turn]) or "(nothing yet)"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Task: {TASK}\nSo far:\n{trajectory}"}]


def cold(engine: LlamaEngine) -> None:
    engine.llm.reset()
    engine.llm._ctx.kv_cache_clear()


def through_harness(engine: LlamaEngine, turn: int) -> float:
    cold(engine)
    request = Request(model="local", system=messages(turn)[0]["content"],
                      messages=(Message.user(messages(turn)[1]["content"]),),
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
