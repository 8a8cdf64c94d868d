"""A run's manifest and resuming from it: what `--resume RUN_ID` needs to finish a run the same way, the check
that its tasks did not change meanwhile, and the run id and commit every row names."""

from __future__ import annotations

import functools
import json
import subprocess
import uuid
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.agents.endpoints.logs import endpoints_log
from harness.agents.programs import load_program
from harness.agents.scaffold import scaffold_from_dict
from harness.env import checkout_root
from harness.errors import UserError
from harness.files import atomic_write_text
from harness.limits import Limits
from harness.mcp.registry import remote_server_names
from harness.run.config import RunConfig
from harness.run.records import RunRecord
from harness.tasks.registry import load_suite
from harness.tasks.task import Suite

# The options a manifest records beside the suite, the scaffold and the limits (absent from an older manifest: "",
# what those runs had), and the Limits fields a resumed run takes from the manifest (the start limit changes no
# measurement, and a resumed run may need a longer one).
MANIFEST_FIELDS = ("model", "arms", "epochs", "task_ids", "max_concurrency", "api_base", "cache", "program_path",
                   "program_hash", "user_model", "judge_model")
RESUMED_LIMITS = tuple(name for name in Limits().as_dict() if name != "server_start_timeout_s")
# A manifest written before the limits were recorded whole kept some flat: absent ones were no limit (None), or no
# added latency (0).
FLAT_LIMIT_DEFAULTS: dict[str, float | None] = {"max_tokens_per_run": None, "max_cost_per_run": None,
                                                "max_tool_result_mb": None, "tool_latency_s": 0.0, "max_turns": None,
                                                "context_window": None}
# limits added since the limits were recorded whole: an older manifest's run had their defaults
ADDED_LIMIT_DEFAULTS: dict[str, Any] = {"agent_isolation": "process", "agent_memory_mb": None}


def manifest_path(out_dir: Path, suite: str, run_id: str) -> Path:
    return out_dir / suite / f"{run_id}.run.json"


SCHEDULE = ("interleaved: the runs of one task x epoch go through every arm next to each other, so drift over the "
            "suite (a provider's latency, a rate limit, a warm cache) hits every arm alike")


def order_key(task_id: str, arm: str, epoch: int) -> str:
    """One sample's entry in a manifest's `order`."""
    return f"{task_id}|{arm}|{epoch}"


def recorded_order(out_dir: Path, suite: str, run_id: str) -> list[str]:
    """The order an earlier start of this run recorded (empty: none, e.g. a manifest written before orders were)."""
    path = manifest_path(out_dir, suite, run_id)
    try:
        return list(json.loads(path.read_text()).get("order", []))
    except (OSError, json.JSONDecodeError):
        return []


def write_manifest(config: RunConfig, run_id: str, order: list[str] | None = None) -> Path:
    """What `--resume RUN_ID` needs to finish the run the same way: the suite (its file, or ADAPTER:PATH for a
    benchmark, and the catalogue sizes its tasks were made at) and every option; and, for whoever reads the
    results, the limits every run was under (`limits`: the model's own context window where none was stated),
    which of its servers were remote (their state carried over from run to run), where the endpoints' server of
    agents from outside logs (`endpoints_log`: this process's file, written only when it has something to say), and
    the order its samples are started in (`schedule` says the rule, `order` lists them as task|arm|epoch; a resumed
    run keeps it)."""
    path = manifest_path(config.out_dir, config.suite.name, run_id)
    data = {"run_id": run_id, "suite": config.suite.name, "suite_path": config.suite.load_spec,
            **{name: getattr(config, name) for name in MANIFEST_FIELDS}, "limits": config.limits.as_dict(),
            "scaffold": asdict(config.rules), "catalogue_sizes": list(config.suite.catalogue_sizes),
            "remote_servers": remote_server_names(config.suite.select(list(config.task_ids) or None)),
            "endpoints_log": str(endpoints_log()), "schedule": SCHEDULE, "order": order or []}
    atomic_write_text(path, json.dumps(data, indent=1))
    return path


def resume_config(run_id: str, out_dir: Path) -> RunConfig:
    """The configuration of an earlier run, from its manifest, to finish it."""
    found = sorted(out_dir.glob(f"*/{run_id}.run.json"))
    if not found:
        raise UserError(f"no run '{run_id}' under {out_dir}/ (expected {out_dir}/<suite>/{run_id}.run.json)")
    try:
        data = json.loads(found[0].read_text())
        options = {name: data.get(name, "") if name in ("user_model", "judge_model") else data[name]
                   for name in MANIFEST_FIELDS}
        limits = data.get("limits") or {name: data[name] if name not in FLAT_LIMIT_DEFAULTS else data.get(
            name, FLAT_LIMIT_DEFAULTS[name]) for name in RESUMED_LIMITS if name not in ADDED_LIMIT_DEFAULTS}
        options.update({name: limits[name] if name not in ADDED_LIMIT_DEFAULTS else limits.get(
            name, ADDED_LIMIT_DEFAULTS[name]) for name in RESUMED_LIMITS})
    except (json.JSONDecodeError, KeyError) as exc:
        raise UserError(f"{found[0]}: not a readable run manifest ({exc})") from None
    if str(data.get("suite_path", "")).startswith("in-memory:"):
        raise UserError(f"run {run_id} ran tasks given in Python, which no file holds: finish it with "
                        f"harness.evaluate(<the same tasks>, run_id={run_id!r}, out_dir=...)")
    options["arms"], options["task_ids"] = tuple(options["arms"]), tuple(options["task_ids"])
    options["cache"] = manifest_cache_mode(options["cache"])
    program_state = None
    if options["program_path"]:
        program_state = load_program(Path(options["program_path"])).state
    # a manifest written before scaffolds were recorded: the model's default, as the run's rows will say
    scaffold = scaffold_from_dict(data["scaffold"]) if "scaffold" in data else None
    suite = load_suite(data["suite_path"], tuple(data.get("catalogue_sizes") or ()) or None)
    return RunConfig(suite=suite, out_dir=out_dir, run_id=run_id,
                     program_state=program_state, scaffold=scaffold, **options)


def manifest_cache_mode(recorded: object) -> str:
    """A manifest's cache mode; a manifest written before modes existed recorded true (the cache on: a resumed run now
    reuses its own answers only) or false (off)."""
    if isinstance(recorded, bool):
        return "resume" if recorded else "off"
    return str(recorded)


def check_unchanged_tasks(suite: Suite, records: list[RunRecord], run_id: str) -> None:
    """Resuming must not mix two versions of a task in one run: refuse if a task was edited since its rows were
    recorded (rows written before task hashes existed cannot tell, and are trusted)."""
    current = {t.id: t.content_hash for t in suite.tasks}
    changed = sorted({r.task_id for r in records if r.task_hash and r.task_id in current
                      and r.task_hash != current[r.task_id]})
    if changed:
        raise UserError(f"run {run_id}: task(s) {', '.join(changed)} changed in {suite.path} since the run recorded "
                        f"them; finish it with the old suite file or start a new run")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


@functools.cache
def git_sha() -> str:
    """The checkout's commit; an installed wheel has none (asking git there would name whatever repository
    the venv happens to sit in)."""
    root = checkout_root()
    if root is None:
        return ""
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""

