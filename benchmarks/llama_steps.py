"""Raw decoding steps of the embedded model: how much one llama.cpp step costs for 1, 2, 4, ... sequences.

Each level gets a fresh context with one KV stream per sequence (as the batched engine makes it), evaluates the
same 256-token prompt into every sequence, then times `--steps` decoding steps of one token per sequence with no
sampling and no Python work between steps. It prints ms per step and tokens per second, and the throughput ratio
to one sequence: the most that batching can buy the generated tokens on this machine (prompt evaluation is not
helped). Usage: python benchmarks/llama_steps.py [--levels 1,2,4] [--steps 48] [--smallest]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROMPT = b"def fibonacci(n):\n    return n\n" * 40
PROMPT_TOKENS = 256


def step_seconds(llm, n_seq: int, steps: int) -> float:
    """Mean seconds of one `llama_decode` over one token of each of `n_seq` sequences."""
    import llama_cpp
    from llama_cpp import _internals

    params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx, params.n_seq_max, params.kv_unified = n_seq * (PROMPT_TOKENS + steps + 64), n_seq, False
    context = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    prompt = llm.tokenize(PROMPT, add_bos=False)[:PROMPT_TOKENS]
    batch = llama_cpp.llama_batch_init(max(len(prompt), n_seq), 0, 1)
    try:
        def decode(items: list[tuple[int, int, int]]) -> None:
            batch.n_tokens = len(items)
            for i, (token, position, seq) in enumerate(items):
                batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, position, 1, True
                batch.seq_id[i][0] = seq
            if llama_cpp.llama_decode(context.ctx, batch) != 0:
                raise RuntimeError(f"llama_decode failed on {len(items)} tokens")

        for seq in range(n_seq):
            decode([(token, position, seq) for position, token in enumerate(prompt)])
        started = time.perf_counter()
        for k in range(steps):
            decode([(prompt[k % len(prompt)], len(prompt) + k, seq) for seq in range(n_seq)])
        return (time.perf_counter() - started) / steps
    finally:
        llama_cpp.llama_batch_free(batch)
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,2,4")
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--smallest", action="store_true", help="levels 1 and 2, 2 steps each")
    args = parser.parse_args()
    if args.smallest:
        args.levels, args.steps = "1,2", 2
    import llama_cpp

    from harness.models.model_file import resolve_local_model

    llm = llama_cpp.Llama(model_path=str(resolve_local_model()), n_ctx=512, n_threads=os.cpu_count(), verbose=False)
    levels = [int(level) for level in args.levels.split(",")]
    print(f"{resolve_local_model().name}, {os.cpu_count()} threads, {args.steps} steps a level")
    print(f"{'sequences':>9} {'ms/step':>8} {'tokens/s':>9} {'vs 1':>6}")
    base = None
    for n_seq in levels:
        seconds = step_seconds(llm, n_seq, args.steps)
        rate = n_seq / seconds
        base = base or rate
        print(f"{n_seq:>9} {seconds * 1000:>8.1f} {rate:>9.1f} {rate / base:>5.2f}x")


if __name__ == "__main__":
    main()
