"""Synthetic results written through the real record path, for report and gate tests."""

from __future__ import annotations

from pathlib import Path

from harness.records import ResultStore, sample_id
from tests.test_records import make_record


def write_results(path_dir: Path, run_id: str, success: dict[str, list[bool]], tasks: int = 6, epochs: int = 2,
                  sizes: bool = False) -> Path:
    """success[arm] lists outcomes task by task (cycled over epochs); code mode uses ~10x fewer tokens."""
    store = ResultStore(path_dir, "core", run_id, flush_interval_s=3600)
    for arm, outcomes in success.items():
        for epoch in range(epochs):
            for t in range(tasks):
                tokens = (2000 + 500 * t) if arm == "direct" else (200 + 40 * t)
                sid = sample_id(f"t{t}", arm, "m", epoch)
                store.add(make_record(
                    run_id=run_id, sample_id=sid, suite="core", task_id=f"t{t}", category=f"c{t % 3}", arm=arm,
                    epoch=epoch, success=outcomes[t % len(outcomes)], total_tokens=tokens, prompt_tokens=tokens - 50,
                    completion_tokens=50, latency_s=1.0 + t * 0.1 + (0.5 if arm == "direct" else 0.0),
                    turns=4 if arm == "direct" else 2, llm_calls=3, context_tool_definition_tokens=tokens // 4,
                    context_tool_result_tokens=tokens // 2, context_task_tokens=tokens // 5,
                    tiktoken_completion_tokens=50, data_size=(10 ** (1 + t % 4)) if sizes else None,
                ), {})
    store.flush()
    return store.path
