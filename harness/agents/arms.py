"""The arms, declared once: the runner, the optimizer, saved programs, the CLI's --arms choices, reports and
gates all read this registry (it imports nothing heavy: agents are built on demand). An arm is an agent built on the shared loop (harness.agents.loop) and a
tunable program (the dspy.Module holding its step predictor)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import UserError

if TYPE_CHECKING:  # the registry is read by the CLI before anything heavy is imported
    import dspy

    from harness.agents.base import Agent
    from harness.sandbox import SandboxPool


@dataclass(frozen=True)
class Arm:
    name: str
    description: str
    needs_sandbox: bool
    new_program: Callable[[], dspy.Module]  # the built-in prompt: what optimizers start from, states load into
    make_agent: Callable[[SandboxPool | None, dspy.Module], Agent]  # agent running with that program
    check_available: Callable[[], None] = lambda: None  # raises UserError naming what to install, if anything


def _direct_program() -> dspy.Module:
    from harness.agents.direct import DirectProgram

    return DirectProgram()


def _direct_agent(pool: SandboxPool | None, program: dspy.Module) -> Agent:
    from harness.agents.direct import DirectAgent

    return DirectAgent(program=program)


def _react_program() -> dspy.Module:
    from harness.agents.react import ReactProgram

    return ReactProgram()


def _react_agent(pool: SandboxPool | None, program: dspy.Module) -> Agent:
    from harness.agents.react import ReactAgent

    return ReactAgent(program=program)


def _code_program() -> dspy.Module:
    from harness.agents.codemode import CodeModeProgram

    return CodeModeProgram()


def _code_agent(pool: SandboxPool | None, program: dspy.Module) -> Agent:
    from harness.agents.codemode import CodeModeAgent

    assert pool is not None
    return CodeModeAgent(pool, program=program)


def _discover_agent(pool: SandboxPool | None, program: dspy.Module) -> Agent:
    from harness.agents.codemode import DiscoveryCodeModeAgent

    assert pool is not None
    return DiscoveryCodeModeAgent(pool, program=program)


def _fastmcp_program() -> dspy.Module:
    from harness.agents.fastmcp_codemode import FastMCPCodeModeProgram

    return FastMCPCodeModeProgram()


def _fastmcp_agent(pool: SandboxPool | None, program: dspy.Module) -> Agent:
    from harness.agents.fastmcp_codemode import FastMCPCodeModeAgent

    return FastMCPCodeModeAgent(program=program)


def _check_monty() -> None:
    from harness.agents.fastmcp_codemode import check_monty

    check_monty()


ARMS: dict[str, Arm] = {arm.name: arm for arm in (
    Arm("direct", "native tool calling, one call per turn", False, _direct_program, _direct_agent),
    Arm("codemode", "Python in the sandbox calling the tools as functions, typed stubs up front", True,
        _code_program, _code_agent),
    Arm("codemode-discover", "code mode that looks tools up (search_tools / get_tool_schema)", True,
        _code_program, _discover_agent),
    Arm("react", "DSPy ReAct's text protocol (thought / tool / JSON args fields), one call per turn", False,
        _react_program, _react_agent),
    Arm("codemode-fastmcp", "fastmcp's CodeMode: search / get_schema / execute meta-tools, code in the Monty "
        "sandbox, driven by native tool calling (extra fastmcp-codemode)", False, _fastmcp_program, _fastmcp_agent,
        _check_monty),
)}
ARM_NAMES: tuple[str, ...] = tuple(ARMS)
DEFAULT_ARMS: tuple[str, ...] = ("direct", "codemode")


def get_arm(name: str) -> Arm:
    try:
        return ARMS[name]
    except KeyError:
        raise UserError(f"unknown arm '{name}' (known: {', '.join(ARM_NAMES)})") from None


def check_arms(names: tuple[str, ...]) -> None:
    unknown = [a for a in names if a not in ARMS]
    if unknown or not names:
        raise UserError(f"unknown arm {', '.join(map(repr, unknown)) or '(none given)'} "
                        f"(known: {', '.join(ARM_NAMES)})")
    for name in names:
        ARMS[name].check_available()


def build_agent(name: str, pool: SandboxPool | None, program_state: dict[str, Any] | None = None,
                program: dspy.Module | None = None) -> Agent:
    """The arm's agent, with a saved program's state or a live program (an optimizer's candidate); agents
    themselves take only a program, so loading a state happens here, once."""
    arm = get_arm(name)
    if program is None:
        program = arm.new_program()
        if program_state:
            program.load_state(program_state)
    return arm.make_agent(pool, program)
