"""Agent-evaluation harness: direct MCP tool calls vs code mode, measured side by side.

The public API, for use from Python (the CLI, `harness ...`, is built on the same functions):

    from pathlib import Path

    import harness

    result = harness.evaluate("smoke", model="scripted:reference", arms=["direct", "codemode"], scaffold="guided",
                              limits=harness.Limits(timeout_s=300))
    frame = result.frame  # one row per run; result.transcripts[sample_id] is each run's transcript
    harness.build_report(frame, Path("reports/smoke"))
    checks = harness.run_gate(frame, ["direct=0.8"], baseline=None, max_drop=0.05, junit=None)
    assert all(check.passed for check in checks)

Arms, scorers, benchmark adapters, servers and model families are added through the `register_*` functions, the
same ones the package registers its own with; a package installed with an entry point in the `harness.plugins`
group is loaded through them too (harness.plugins, docs/plugins.md).

`import harness` does nothing else: names load on first use, and the first use applies the harness's offline
defaults (`harness.env.configure_environment`: litellm's bundled price map, tiktoken's bundled files, no
telemetry) before dspy or litellm is imported, then registers the built-in benchmarks and loads the installed
plugins (`load_plugins`). Code that imports submodules directly should call `configure_environment()` and
`load_plugins()` first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.version import __version__

# public name -> (module, attribute in it)
_EXPORTS: dict[str, tuple[str, str]] = {
    "load_suite": ("harness.tasks.registry", "load_suite"),
    "RunConfig": ("harness.run.runner", "RunConfig"),
    "run_suite": ("harness.run.executors", "run_suite"),
    "read_results": ("harness.run.records", "read_results"),
    "build_report": ("harness.analysis.report", "build_report"),
    "run_gate": ("harness.analysis.gate", "run_gate"),
    "register_scorer": ("harness.tasks.scorers", "register"),
    "register_server": ("harness.mcp.registry", "register_server"),
    "register_adapter": ("harness.tasks.registry", "register_adapter"),
    "PublishedProtocol": ("harness.tasks.registry", "PublishedProtocol"),
    "register_model_family": ("harness.models.families", "register_model_family"),
    "ModelFamily": ("harness.models.families", "ModelFamily"),
    "register_arm": ("harness.agents.arms", "register_arm"),
    "load_plugins": ("harness.plugins", "load_plugins"),
    "evaluate": ("harness.run.evaluate", "evaluate"),
    "evaluate_async": ("harness.run.evaluate", "evaluate_async"),
    "Evaluation": ("harness.run.evaluate", "Evaluation"),
    "Task": ("harness.tasks.task", "Task"),
    "Limits": ("harness.limits", "Limits"),
    "agent": ("harness.agents.arms", "agent"),
    "AgentTask": ("harness.agents.agent_task", "AgentTask"),
    "configure_environment": ("harness.env", "configure_environment"),
    "Scaffold": ("harness.agents.scaffold", "Scaffold"),
    "load_scaffold": ("harness.agents.scaffold", "load_scaffold"),
}

__all__ = ["AgentTask", "Evaluation", "Limits", "ModelFamily", "PublishedProtocol", "RunConfig", "Scaffold", "Task",
           "__version__", "agent", "build_report", "configure_environment", "evaluate", "evaluate_async",
           "load_plugins", "load_scaffold", "load_suite", "read_results", "register_adapter", "register_arm",
           "register_model_family", "register_scorer", "register_server", "run_gate", "run_suite"]

if TYPE_CHECKING:  # for type checkers and editors; at run time the names load lazily (below)
    from harness.agents.arms import agent, register_arm
    from harness.agents.agent_task import AgentTask
    from harness.agents.scaffold import Scaffold, load_scaffold
    from harness.analysis.gate import run_gate
    from harness.analysis.report import build_report
    from harness.env import configure_environment
    from harness.limits import Limits
    from harness.mcp.registry import register_server
    from harness.models.families import ModelFamily, register_model_family
    from harness.plugins import load_plugins
    from harness.run.evaluate import Evaluation, evaluate, evaluate_async
    from harness.run.executors import run_suite
    from harness.run.records import read_results
    from harness.run.runner import RunConfig
    from harness.tasks.registry import PublishedProtocol, load_suite, register_adapter
    from harness.tasks.scorers import register as register_scorer
    from harness.tasks.task import Task


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    from harness.env import configure_environment as configure

    configure()  # before the first import of dspy/litellm through the public API
    importlib.import_module("harness.adapters")  # registers the built-in benchmarks: suites, servers, presets
    importlib.import_module("harness.plugins").load_plugins()  # then the installed plugins, once per process
    module, attribute = _EXPORTS[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
