"""Agent frameworks shipped as opt-in arms (an extra each; nothing of them is installed by default): smolagents'
`CodeAgent` and `ToolCallingAgent` (smolagents_bridge.py), a Pydantic AI `Agent` (pydantic_ai_bridge.py) and an
OpenAI Agents SDK `Agent` (openai_agents_bridge.py). Each is an agent from outside the package
(harness.agents.foreign): built as its framework's documentation builds it, with its own prompts and defaults, handed
the run's model and servers as the run's endpoints, so its LM calls and tool calls are recorded like any arm's; no
rule of the harness's scaffold is added to it, and its rows say so. It runs on the host, not in the sandbox.

This module declares the arms only (the registry reads it): a framework is imported when its arm runs.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any

from harness.agents.arm import Arm, replays
from harness.agents.endpoints import CHAT_REPLAY
from harness.errors import UserError

if TYPE_CHECKING:
    import dspy

    from harness.agents.arm import Replay
    from harness.agents.base import Agent
    from harness.agents.scaffold import Scaffold
    from harness.sandbox import SandboxPool

__all__ = ["BRIDGE_ARMS", "bridge_arm"]

SMOLAGENTS_REPLAY = f"{__name__}.smolagents_replay"  # registers smolagents' formats (smol_code, smol_tools)


def _source(distribution: str) -> str:
    """The framework's package and version (`smolagents==1.26.0`), or its name alone where it is not installed."""
    try:
        return f"{distribution}=={metadata.version(distribution)}"
    except metadata.PackageNotFoundError:
        return distribution


def _needs(arm: str, extra: str, modules: tuple[str, ...], module: str, function: str) -> Callable[[], None]:
    """The arm's check before any run: one line naming the extra to install when a module it imports is missing;
    then its zygote started (the framework imported once, in its own process), so no run's time includes that."""
    def check() -> None:
        from harness.agents.foreign import start_zygote
        from harness.agents.isolation.pool import AgentTarget

        missing = [name for name in modules if importlib.util.find_spec(name) is None]
        if missing:
            raise UserError(f"the {arm} arm needs {', '.join(missing)}: pip install 'harness[{extra}]'")
        start_zygote(arm, AgentTarget(f"{__name__}.{module}", function))

    return check


def _agent(name: str, module: str, function: str) -> Callable[[SandboxPool | None, dspy.Module, Scaffold], Agent]:
    """The arm's agent: the framework's function, imported in its own process (or in-process when asked)."""
    def make(pool: SandboxPool | None, program: Any, scaffold: Scaffold) -> Agent:
        from harness.agents.foreign import CallableAgent
        from harness.agents.isolation.pool import AgentTarget

        return CallableAgent(name, AgentTarget(f"{__name__}.{module}", function))

    return make


def bridge_arm(name: str, description: str, module: str, function: str, *, distribution: str, extra: str,
               modules: tuple[str, ...], replay: Replay, colour: str, native_tools: bool = True) -> Arm:
    """A framework's arm: a Python agent from outside (`kind="python"`), its source the framework's package and
    version, no scaffold of the harness's, no sandbox, its replay of `scripted:reference` through the framework's
    own protocol (`replay`: `replays(PROTOCOL, MODULE)`, the protocol that module registers)."""
    return Arm(name, description, False, None, _agent(name, module, function), colour, replay,
               _needs(name, extra, modules, module, function), module=f"{__name__}.{module}", native_tools=native_tools,
               kind="python", source=_source(distribution), scaffold_applies=False)


BRIDGE_ARMS: tuple[Arm, ...] = (
    bridge_arm("smolagents-code", "smolagents' CodeAgent: Python in <code> blocks run by its local executor on the "
               "host, MCP tools as functions (extra smolagents)", "smolagents_bridge", "code_agent",
               distribution="smolagents", extra="smolagents", modules=("smolagents", "mcpadapt", "openai"),
               replay=replays("smol_code", SMOLAGENTS_REPLAY), colour="#b07aa1", native_tools=False),
    bridge_arm("smolagents-tools", "smolagents' ToolCallingAgent: native tool calls, ends with its final_answer tool "
               "(extra smolagents)", "smolagents_bridge", "tool_calling_agent", distribution="smolagents",
               extra="smolagents", modules=("smolagents", "mcpadapt", "openai"), replay=replays("smol_tools", SMOLAGENTS_REPLAY),
               colour="#edc948"),
    bridge_arm("pydantic-ai", "a Pydantic AI Agent with its MCP toolset, over its OpenAI provider (extra "
               "pydantic-ai)", "pydantic_ai_bridge", "pydantic_ai_agent", distribution="pydantic-ai-slim",
               extra="pydantic-ai", modules=("pydantic_ai", "openai"), replay=replays("chat_tools", CHAT_REPLAY), colour="#e377c2"),
    bridge_arm("openai-agents", "an OpenAI Agents SDK Agent with its MCP server support, over Chat Completions "
               "(extra openai-agents)", "openai_agents_bridge", "openai_agents_agent", distribution="openai-agents",
               extra="openai-agents", modules=("agents", "openai"), replay=replays("chat_tools", CHAT_REPLAY), colour="#17becf"),
)
