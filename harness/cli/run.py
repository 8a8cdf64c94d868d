"""`harness run`: a suite through the arms on one model, rows to Parquet, a summary at the end."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from harness.agents.arms import ARMS, DEFAULT_ARMS
from harness.cli.app import (
    AT_LEAST_ONE,
    CATALOGUE_SIZE_HELP,
    MORE_THAN_ZERO,
    NOT_NEGATIVE,
    STRICT_NO_ACTION_HELP,
    Table,
    app,
    catalogue_sizes,
    stop_on_signals,
)
from harness.cli.app import console as new_console
from harness.defaults import (
    DEFAULT_MAX_TOOL_RESULT_MB,
    DEFAULT_SERVER_START_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOOL_LATENCY_S,
    DEFAULT_TOOL_TIMEOUT_S,
)
from harness.run.records import RunRecord

if TYPE_CHECKING:
    from rich.console import Console

    from harness.exports.otel import RunStreamer
    from harness.models.cache import CacheMode
    from harness.run.runner import RunConfig
    from harness.tasks.task import Task

SCAFFOLD_HELP = ("the rules beyond the task and tools: plain | guided | m3tooleval | tau2 | bfcl (a benchmark's published "
                 "rules) | FILE.yaml (a preset with fields changed); default: guided for the embedded model, plain for "
                 "any other (docs/fair-comparison.md)")


CACHE_HELP = ("which stored LM answers a call may reuse: resume (default: only this run's own, when it is resumed; "
              "a new run asks the model again) | replay (any run's stored answer to the same request: reproduce a "
              "run without asking the model) | off (as --no-cache); the manifest and each row record it")


def cache_mode(cache: str | None, no_cache: bool) -> CacheMode:
    """The run's cache mode from --cache and --no-cache (which is --cache off); a mode that is not one, or both
    options disagreeing, is a UserError naming what was given."""
    from harness.errors import UserError
    from harness.models.cache import CACHE_MODES

    if cache is not None and cache not in CACHE_MODES:
        raise UserError(f"--cache '{cache}': give one of {', '.join(CACHE_MODES)} (resume: reuse only this run's own "
                        "answers; replay: any run's; off: none)")
    if no_cache and cache not in (None, "off"):
        raise UserError(f"--no-cache and --cache {cache} disagree: give one of them")
    return "off" if no_cache else cache or "resume"  # type: ignore[return-value]


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


INTERNAL_NOTE = ("internal errors: runs that failed inside the harness (a bug, a missing module), not answers of "
                 "the model; they are left out of success and the means")


def summary_table(records: list[RunRecord]) -> Table:
    """One row per arm. Runs that ended in an `internal` error are counted apart (a column and a caption, shown
    only when there are some) and left out of success and the means: they say nothing about the model. The means
are the report's (harness.analysis.summary): mean latency leaves out runs served from the response cache, and is
"cached" for an arm whose every run was."""
    import pandas as pd

    from harness.analysis.summary import summarize

    internal = any(r.error_type == "internal" for r in records)
    table = Table("arm", "runs", "success", "mean tokens", "mean latency (s)", "mean turns", "errors",
                  *(["internal errors"] if internal else []), "cost (USD)", caption=INTERNAL_NOTE if internal else None)
    for arm in sorted({r.arm for r in records}):
        rows = pd.DataFrame([r.to_row() for r in records if r.arm == arm])
        whole, s = summarize(rows), summarize(rows[rows["error_type"] != "internal"])
        latency = f"{s.mean_latency_s:.2f}" if s.timed_runs else "cached" if s.cache_served_runs else "-"
        means = [f"{s.successes / s.runs:.0%}", f"{s.mean_tokens:,.0f}", latency, f"{s.mean_turns:.1f}"] \
            if s.runs else ["-"] * 4
        table.add_row(arm, str(whole.runs), *means, str(s.errors), *([str(whole.runs - s.runs)] if internal else []),
                      "unknown" if whole.cost_usd is None else f"{whole.cost_usd:.4f}")
    return table


def cache_summary(records: list[RunRecord]) -> str | None:
    """The sentence saying how many runs and LM calls the response cache answered (None: it answered none)."""
    import pandas as pd

    from harness.analysis.cache_use import cache_sentence, cache_use

    return cache_sentence(cache_use(pd.DataFrame([r.to_row() for r in records]))) if records else None


def _program_options(path: Path, suite: str | None, arms: tuple[str, ...], tasks: tuple[str, ...]) -> dict:
    """RunConfig fields for --program: its state, hash and scaffold (the rules it was tuned under), its suite
    unless --suite is given, and its held-out dev tasks unless --tasks is given (the tasks a baseline run is
    compared with)."""
    from harness.agents.programs import load_program
    from harness.errors import UserError
    from harness.tasks.registry import load_suite

    saved = load_program(path)
    if arms != (saved.arm,):
        raise UserError(f"{path} was tuned for the {saved.arm} arm: run it with --arms {saved.arm} "
                        "(and the built-in prompt in a run without --program)")
    loaded = load_suite(suite or saved.suite)
    options = {"suite": loaded, "program_path": str(path), "program_hash": saved.hash, "program_state": saved.state,
               "scaffold": saved.scaffold}
    if not tasks and saved.dev_ids and loaded.name == saved.suite:
        options["task_ids"] = saved.dev_ids
    return options


@app.command()
def run(
    suite: str = typer.Option(None, "--suite", envvar="HARNESS_SUITE",
                              help="suite name (tasks/NAME.yaml), YAML path, or a benchmark: m3tooleval:PATH"),
    arms: str = typer.Option(",".join(DEFAULT_ARMS), "--arms", envvar="HARNESS_ARMS",
                             help="comma-separated arms: " + "; ".join(f"{a} ({arm.description})"
                                                                       for a, arm in ARMS.items())
                             + "; agent:MODULE:FUNCTION (a function of yours); cmd:COMMAND (a command of yours)"),
    model: str = typer.Option("local", "--model", envvar="HARNESS_MODEL",
                              help="local | local:PATH.gguf | scripted:reference | any LiteLLM model string"),
    api_base: str = typer.Option(None, "--api-base", envvar="HARNESS_API_BASE",
                                 help="base URL of an OpenAI-compatible server (vLLM, llama.cpp, ...)"),
    user_model: str = typer.Option("", "--user-model", envvar="HARNESS_USER_MODEL",
                                   help="the model that plays the user of conversation tasks (tau2); default: "
                                        "--model (scripted:user for a scripted model); each row records it"),
    judge_model: str = typer.Option("", "--judge-model", envvar="HARNESS_JUDGE_MODEL",
                                    help="the judge of open answers (rubric, claims scorers: required for them) and "
                                         "of tau2's natural-language assertions (reported as not scored without one)"),
    epochs: int = typer.Option(1, "--epochs", envvar="HARNESS_EPOCHS", **AT_LEAST_ONE, help="repeats of every task x arm"),
    tasks: str = typer.Option(None, "--tasks", envvar="HARNESS_TASKS", help="comma-separated task ids"),
    out: Path = typer.Option(Path("results"), "--out", envvar="HARNESS_OUT", help="results folder"),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", envvar="HARNESS_TIMEOUT", **MORE_THAN_ZERO,
                                 help="per-run timeout (s)"),
    max_concurrency: int = typer.Option(None, "--max-concurrency", envvar="HARNESS_MAX_CONCURRENCY", **AT_LEAST_ONE,
                                         help="runs at once (default: 1; on the embedded model, the number it decodes "
                                              "fastest together on this machine's cores, printed at the start)"),
    run_id: str = typer.Option("", "--run-id", envvar="HARNESS_RUN_ID", help="name the run (resume: reuse it)"),
    cache: str = typer.Option(None, "--cache", envvar="HARNESS_CACHE", help=CACHE_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", envvar="HARNESS_NO_CACHE",
                                  help="ask the model for every LM call, store nothing (--cache off)"),
    tool_timeout: float = typer.Option(DEFAULT_TOOL_TIMEOUT_S, "--tool-timeout", envvar="HARNESS_TOOL_TIMEOUT", **MORE_THAN_ZERO,
                                       help="per-tool-call limit (s); a slower tool returns an error to the agent"),
    server_start_timeout: float = typer.Option(
        DEFAULT_SERVER_START_TIMEOUT_S, "--server-start-timeout", envvar="HARNESS_SERVER_START_TIMEOUT", **MORE_THAN_ZERO,
        help="limit (s) on opening a run's servers (process start, MCP initialize, tool listing); a server past "
             "it is server_error, and one that never started stops the suite (also applies with --resume)"),
    max_tool_result_mb: float = typer.Option(
        DEFAULT_MAX_TOOL_RESULT_MB, "--max-tool-result-mb", envvar="HARNESS_MAX_TOOL_RESULT_MB", min=0.01,
        help="largest tool result (MB of text) a run accepts; a larger one is a tool error the agent sees, in every "
             "arm (each row records the limit)"),
    tool_latency: float = typer.Option(
        DEFAULT_TOOL_LATENCY_S, "--tool-latency", envvar="HARNESS_TOOL_LATENCY", **NOT_NEGATIVE,
        help="seconds added to every tool call (every arm and server), as a remote MCP server's round trip; part of "
             "each call's --tool-timeout (each row records it)"),
    resume: str = typer.Option(None, "--resume", help="finish an interrupted run (its id), with its own options"),
    executor: str = typer.Option("local", "--executor", envvar="HARNESS_EXECUTOR",
                                 help="local (this process) | ray (actors on a Ray cluster; needs the ray extra)"),
    ray_address: str = typer.Option(None, "--ray-address", envvar="RAY_ADDRESS",
                                    help="Ray cluster to join (default: one started on this machine, else a new one)"),
    ray_workers: int = typer.Option(0, "--ray-workers", envvar="HARNESS_RAY_WORKERS", **NOT_NEGATIVE,
                                    help="Ray actors, each with its own model and sandboxes (0: one per cluster CPU)"),
    program: Path = typer.Option(None, "--program", envvar="HARNESS_PROGRAM",
                                 help="a program saved by harness optimize (its arm only; rows record its hash)"),
    max_tokens_per_run: int = typer.Option(None, "--max-tokens-per-run", envvar="HARNESS_MAX_TOKENS_PER_RUN", **AT_LEAST_ONE,
                                           help="end a run at the LM call that takes it past N tokens (token_limit)"),
    max_cost_per_run: float = typer.Option(None, "--max-cost-per-run", envvar="HARNESS_MAX_COST_PER_RUN", **MORE_THAN_ZERO,
                                           help="end a run at the LM call that takes it past X USD (cost_limit)"),
    context_window: int = typer.Option(
        None, "--context-window", envvar="HARNESS_CONTEXT_WINDOW", **AT_LEAST_ONE,
        help="the model's context window in tokens: an LM call whose prompt (tool definitions included) does not fit "
             "is not sent and ends its run as context_overflow (default: the embedded model's context, LiteLLM's "
             "model table, else none; each row records it)"),
    agent_isolation: str = typer.Option(
        "process", "--agent-isolation", envvar="HARNESS_AGENT_ISOLATION",
        help="process (default): each run of a Python agent from outside (agent:, registered, a bridge) in a process "
             "of its own | in-process: in the harness's process, for debugging (recorded in the manifest)"),
    agent_memory: int = typer.Option(None, "--agent-memory", envvar="HARNESS_AGENT_MEMORY", min=16,
                                     help="address space (MB) of each Python agent's process; a breach is the run's "
                                          "resource_limit error (recorded in the manifest)"),
    scaffold: str = typer.Option(None, "--scaffold", envvar="HARNESS_SCAFFOLD",
                                 help=SCAFFOLD_HELP),
    catalogue_size: str = typer.Option(None, "--catalogue-size", envvar="HARNESS_CATALOGUE_SIZE",
                                       help=CATALOGUE_SIZE_HELP),
    otel_endpoint: str = typer.Option(None, "--otel-endpoint", envvar="HARNESS_OTEL_ENDPOINT",
                                      help="send each run's OpenTelemetry GenAI spans over OTLP/HTTP as it finishes "
                                           "(Phoenix: http://localhost:6006/v1/traces; needs the otel extra; "
                                           "docs/exports.md)"),
    strict_no_action: bool = typer.Option(False, "--strict-no-action", envvar="HARNESS_STRICT_NO_ACTION",
                                          help=STRICT_NO_ACTION_HELP + "; checked before the first row"),
) -> None:
    """Run a suite through the arms and record one Parquet row per run."""
    from dataclasses import replace

    from harness.agents.scaffold import describe, load_scaffold
    from harness.analysis.diagnostics import text_tool_call_note
    from harness.env import cache_dir
    from harness.errors import UserError, check_writable_folder
    from harness.mcp.registry import remote_server_names
    from harness.models.cache import CACHE_MODES
    from harness.models.families import family_of
    from harness.models.machine_share import sharing_warning
    from harness.run.executors import Executor, run_suite
    from harness.run.manifest import new_run_id, resume_config
    from harness.run.runner import RunConfig, prepare
    from harness.tasks.registry import load_suite

    if resume:
        config = resume_config(resume, out)
    elif suite or program:
        tuned = _program_options(program, suite, _csv(arms), _csv(tasks)) if program else {}
        sizes = catalogue_sizes(catalogue_size)
        config = RunConfig(suite=tuned.pop("suite", None) or load_suite(suite, sizes), model=model, arms=_csv(arms), epochs=epochs,
                           task_ids=tuned.pop("task_ids", _csv(tasks)), out_dir=out, run_id=run_id, timeout_s=timeout,
                           max_concurrency=max_concurrency or family_of(model).default_concurrency(),
                           api_base=api_base, cache=cache_mode(cache, no_cache),
                           tool_timeout_s=tool_timeout, max_tokens_per_run=max_tokens_per_run,
                           max_cost_per_run=max_cost_per_run, max_tool_result_mb=max_tool_result_mb,
                           context_window=context_window, agent_isolation=agent_isolation,
                           agent_memory_mb=agent_memory, tool_latency_s=tool_latency, user_model=user_model, judge_model=judge_model, **tuned)
        if scaffold:  # given: it wins over a program's own
            config = replace(config, scaffold=load_scaffold(scaffold))
    else:
        raise UserError("--suite is required (or --resume RUN_ID to finish an earlier run)")
    config = replace(config, server_start_timeout_s=server_start_timeout)
    prepare(config)
    check_writable_folder(config.out_dir, "--out")
    chosen = Executor(executor, ray_address, ray_workers)
    chosen.check()  # before the bar: no ray installed is one line
    config = replace(config, run_id=config.run_id or new_run_id())
    console = new_console(stderr=True)
    tasks = config.suite.select(list(config.task_ids) or None)
    _check_no_action(config, tasks, console, strict_no_action)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("ok {task.fields[ok]}"),
                        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console)
    bar = {}
    stream = _otel_stream(otel_endpoint, config, console) if otel_endpoint else None

    def on_start(todo: int, already: int) -> None:
        if already:
            console.print(f"resuming: {already} run(s) already recorded, {todo} to go")
        bar["id"] = progress.add_task(f"{config.suite.name} on {config.model}", total=todo, ok=0)

    def on_record(record: RunRecord) -> None:
        ok = progress.tasks[0].fields["ok"] + int(record.success)
        progress.update(bar["id"], advance=1, ok=ok)
        if stream:
            stream(record)

    sessions = {found[0].id for t in tasks if (found := config.suite.session_of(t.id))}
    console.print(f"run {config.run_id}: suite {config.suite.name}, arms {', '.join(config.arms)}, "
                  f"model {config.model}, {len(tasks)} task(s) x {config.epochs} epoch(s)"
                  + (f", {len(sessions)} session(s) run in order" if sessions else "")
                  + (f", program {config.program_hash} ({config.program_path})" if config.program_hash else "")
                  + f"; {describe(config.rules)}", soft_wrap=True)
    if config.cache != "resume":  # the default says nothing; reusing any run's answers, or none, is said
        console.print(f"cache: {config.cache} ({CACHE_MODES[config.cache]})", soft_wrap=True, markup=False)
    remote = remote_server_names(tasks)
    if remote:
        console.print(f"warning: remote server(s) {', '.join(remote)} are not started per run: any state they keep "
                      "carries over from one run and arm to the next (unless a server keeps it per MCP session); "
                      "the run's manifest records them", soft_wrap=True, markup=False)
    if family_of(config.model).name == "embedded":
        origin = "the run's own" if resume else ("--max-concurrency" if max_concurrency else "default")
        console.print(concurrency_line(config.max_concurrency, origin), soft_wrap=True)
        shared = sharing_warning(cache_dir()) if chosen.name != "ray" else None  # ray: the model is in its actors
        if shared:
            console.print(shared, soft_wrap=True, markup=False)
    saved = []
    stop_on_signals()  # Ctrl-C or a cancelled CI job: rows flushed, resume printed
    try:
        with progress:
            summary = run_suite(config, chosen, on_record=lambda r: (saved.append(r), on_record(r)),
                                on_start=on_start)
    except KeyboardInterrupt:
        console.print(f"interrupted: {len(saved)} run(s) saved this session in "
                      f"{config.out_dir / config.suite.name / (config.run_id + '.parquet')}, and the runs in flight "
                      "as 'interrupted' rows with what they did (resuming runs them again)", soft_wrap=True)
        on_ray = (" --executor ray" + (f" --ray-address {ray_address}" if ray_address else "")
                  if chosen.name == "ray" else "")
        console.print(f"resume with: harness run --resume {config.run_id} --out {config.out_dir}{on_ray}",
                      soft_wrap=True)
        raise typer.Exit(130) from None
    finally:
        if stream:
            stream.close()
    out_console = new_console()
    out_console.print(summary_table(list(summary.records)))
    records = list(summary.records)
    note = text_tool_call_note([(r.arm, r.answer) for r in records], [config.model],
                               [0 < r.llm_calls == r.cached_llm_calls for r in records])
    for line in (cache_summary(records), note):
        if line:
            out_console.print(line, soft_wrap=True, markup=False)
    out_console.print(f"results: {summary.path}")
    out_console.print(f"trajectories: {summary.path.with_name(summary.path.stem + '.trajectories.jsonl')}")
    if stream and stream.sent:
        out_console.print(f"spans: {stream.sent} run(s) sent to {stream.url}", soft_wrap=True)
    out_console.print(next_steps(summary.path, config.suite.name, config.run_id), soft_wrap=True)


def _check_no_action(config: RunConfig, tasks: tuple[Task, ...], console: Console, strict: bool) -> None:
    """The no-action check before any row (harness.run.no_action): a built-in task that fails it stops the run;
    another suite's print a warning line each, and stop it (exit 1) when `strict`."""
    import asyncio

    from harness.errors import UserError
    from harness.mcp.servers import ServerStartError
    from harness.run.no_action import check_before_run

    try:
        warnings = asyncio.run(check_before_run(config.suite, tasks, config.server_start_timeout_s))
    except ServerStartError as exc:
        raise UserError(str(exc)) from None
    for line in warnings:
        console.print(line, soft_wrap=True, markup=False)
    if warnings and strict:
        console.print(f"stopped before any run (--strict-no-action): {len(warnings)} task(s) can be passed without "
                      "acting", soft_wrap=True, markup=False)
        raise typer.Exit(1)


def _otel_stream(endpoint: str, config: RunConfig, console: Console) -> RunStreamer:
    """The callback that sends each finished run's spans to `endpoint` (harness.exports.otel, imported only here:
    a run without an endpoint loads no OpenTelemetry SDK); a backend that fails is one warning line."""
    from harness.exports.otel import RunStreamer

    results = config.out_dir / config.suite.name / f"{config.run_id}.parquet"
    return RunStreamer(endpoint, results, lambda line: console.print(line, soft_wrap=True, markup=False))


def concurrency_line(runs: int, origin: str) -> str:
    """How many runs the embedded model decodes together, and where that number came from (`origin`: "default"
    for the machine's default, else the option or the resumed run that set it)."""
    import os

    from harness.models.batching import RUNS_PER_CORE

    if origin == "default":
        origin = (f"the default here: {RUNS_PER_CORE} per core x {os.cpu_count()} cores, measured in "
                  "docs/experiments.md; --max-concurrency overrides")
    together = ", their LM calls decoded together" if runs > 1 else ""
    return f"concurrency: {runs} run(s) at once{together} ({origin})"


def next_steps(results: Path, suite: str, run_id: str) -> str:
    """The two commands that show a finished run: a report with the viewer next to it, and the live viewer."""
    report_dir = Path("reports") / f"{suite}-{run_id}"
    return ("next:\n"
            f"  harness report {shlex.quote(str(results))} --out {shlex.quote(str(report_dir))}\n"
            f"  harness view {shlex.quote(str(results))}")
