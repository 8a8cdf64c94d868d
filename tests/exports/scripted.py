"""Scripted runs the export tests read back: the smoke suite through the direct arm on a scripted policy (no
sandbox), and what an exported log holds in numbers the Parquet file also holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
from inspect_ai.log import EvalLog, read_eval_log

from harness.models.scripted import policy_provider
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from tests.run.test_transcript_runs import chaining


def chain_run(out_dir: Path, run_id: str = "r", **options) -> Path:
    """The smoke suite's tasks through the direct arm, each by the same two lookups and the answer 27.0 (right for
    shipped-total only): the results file."""
    config = RunConfig(suite=load_suite("smoke"), model="scripted:chain", arms=("direct",), out_dir=out_dir,
                       run_id=run_id, **options)
    asyncio.run(Runner(config, provider=policy_provider("scripted:chain", chaining)).run())
    return out_dir / "smoke" / f"{run_id}.parquet"


def read_log(path: Path) -> EvalLog:
    """A log as inspect_ai reads it, its messages' texts resolved (its writer stores long ones once, as
    attachments)."""
    return read_eval_log(str(path), resolve_attachments=True)


def usage_totals(log: EvalLog) -> tuple[int, int, int]:
    """A log's prompt, completion and total tokens, summed over its samples' model usage (prompt: inspect's input
    tokens plus those read from a cache)."""
    usages = [usage for sample in log.samples for usage in sample.model_usage.values()]
    return (sum(u.input_tokens + (u.input_tokens_cache_read or 0) for u in usages),
            sum(u.output_tokens for u in usages), sum(u.total_tokens for u in usages))


def parquet_totals(rows: pd.DataFrame) -> tuple[int, int, int]:
    return int(rows.prompt_tokens.sum()), int(rows.completion_tokens.sum()), int(rows.total_tokens.sum())
