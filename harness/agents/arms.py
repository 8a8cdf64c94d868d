"""The arms, declared once: the runner, the optimizer, saved programs, the CLI's --arms choices, reports, figures,
the viewer and gates all read this registry (it imports nothing heavy: agents are built on demand), and nothing
outside harness/agents/ names an arm. An arm is an agent built on the shared loop (harness.agents.loop) and a
tunable program (the dspy.Module holding its step predictor), both built under the run's Scaffold; the registry's
order is the order reports and the viewer show arms in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.agents.arm import SPEC_PREFIXES, Arm, ArmKind, Replay, replays
from harness.agents.bridges import BRIDGE_ARMS
from harness.agents.bridges.js_arms import JS_ARMS
from harness.agents.scaffold import Scaffold
from harness.errors import UserError

__all__ = ["ARMS", "ARM_NAMES", "DEFAULT_ARMS", "OPTIMIZED_ARM", "SPEC_PREFIXES", "Arm", "ArmKind", "Replay", "agent",
           "arm_names", "arm_rank", "build_agent", "calls_tools_natively", "check_arms", "get_arm", "register_arm",
           "replays"]

if TYPE_CHECKING:  # the registry is read by the CLI before anything heavy is imported
    import dspy

    from harness.agents.base import Agent
    from harness.sandbox import SandboxPool


def _direct_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.direct import DirectProgram

    return DirectProgram(scaffold)


def _direct_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.direct import DirectAgent

    return DirectAgent(scaffold, program=program)


def _search_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.direct_search import DirectSearchProgram

    return DirectSearchProgram(scaffold)


def _search_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.direct_search import DirectSearchAgent

    return DirectSearchAgent(scaffold, program=program)


def _react_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.react import ReactProgram

    return ReactProgram(scaffold)


def _react_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.react import ReactAgent

    return ReactAgent(scaffold, program=program)


def _code_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.codemode import CodeModeProgram

    return CodeModeProgram(scaffold)


def _code_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.codemode import CodeModeAgent

    assert pool is not None
    return CodeModeAgent(pool, scaffold, program=program)


def _discover_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.codemode import DiscoveryCodeModeAgent

    assert pool is not None
    return DiscoveryCodeModeAgent(pool, scaffold, program=program)


def _files_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.codemode_files import FilesCodeModeProgram

    return FilesCodeModeProgram(scaffold)


def _files_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.codemode_files import FilesCodeModeAgent

    assert pool is not None
    return FilesCodeModeAgent(pool, scaffold, program=program)


def _hybrid_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.hybrid import HybridProgram

    return HybridProgram(scaffold)


def _hybrid_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.hybrid import HybridAgent

    assert pool is not None
    return HybridAgent(pool, scaffold, program=program)


def _fastmcp_program(scaffold: Scaffold) -> dspy.Module:
    from harness.agents.fastmcp_codemode import FastMCPCodeModeProgram

    return FastMCPCodeModeProgram(scaffold)


def _fastmcp_agent(pool: SandboxPool | None, program: dspy.Module, scaffold: Scaffold) -> Agent:
    from harness.agents.fastmcp_codemode import FastMCPCodeModeAgent

    return FastMCPCodeModeAgent(scaffold, program=program)


def _check_monty() -> None:
    from harness.agents.fastmcp_codemode import check_monty

    check_monty()


ARMS: dict[str, Arm] = {arm.name: arm for arm in (  # in display order: the baseline arm first
    Arm("direct", "native tool calling; all calls of a reply run if the scaffold allows parallel_tool_calls", False,
        _direct_program, _direct_agent, "#4c72b0", replays("tool_calls", "harness.agents.direct"), parallel_calls=True,
        module="harness.agents.direct", native_tools=True),
    Arm("direct-search", "native tool calling whose tools start as a tool_search tool: each search adds the "
        "definitions it finds (the scaffold's tool_search_method and tool_search_limit)", False, _search_program,
        _search_agent, "#c44e52", replays("tool_search", "harness.agents.direct_search"), parallel_calls=True,
        module="harness.agents.direct_search", native_tools=True),
    Arm("codemode", "Python in the sandbox calling the tools as functions, typed stubs up front", True,
        _code_program, _code_agent, "#dd8452", replays("code_blocks", "harness.agents.codemode"), module="harness.agents.codemode"),
    Arm("codemode-discover", "code mode that looks tools up (search_tools / get_tool_schema)", True,
        _code_program, _discover_agent, "#55a868", replays("code_blocks", "harness.agents.codemode"), module="harness.agents.codemode"),
    Arm("codemode-files", "code mode whose tools are a read-only servers/ package of files (one module per tool) "
        "that the code lists, reads and imports on demand", True, _files_program, _files_agent, "#ccb974",
        replays("tool_files", "harness.agents.codemode_files"), module="harness.agents.codemode_files"),
    Arm("react", "DSPy ReAct's text protocol (thought / tool / JSON args fields), one call per turn", False,
        _react_program, _react_agent, "#937860", replays("react_fields", "harness.agents.react"), module="harness.agents.react"),
    Arm("codemode-fastmcp", "fastmcp's CodeMode: search / get_schema / execute meta-tools, code in the Monty "
        "sandbox, driven by native tool calling (extra fastmcp-codemode)", False, _fastmcp_program, _fastmcp_agent,
        "#da8bc3", replays("meta_tools", "harness.agents.fastmcp_codemode"), _check_monty,
        module="harness.agents.fastmcp_codemode", native_tools=True),
    Arm("hybrid", "native tool calling plus a run_python tool (code in the sandbox calling the tools); each "
        "server's callers say which way its tools are offered", True, _hybrid_program, _hybrid_agent, "#64b5cd",
        replays("code_tool", "harness.agents.hybrid"), parallel_calls=True, module="harness.agents.hybrid",
        native_tools=True),
)}
ARM_NAMES: tuple[str, ...] = tuple(ARMS)  # the built-in arms; registered ones follow them (`arm_names`)
ARMS.update((arm.name, arm) for arm in BRIDGE_ARMS)  # frameworks' agents, opt-in (an extra each): after the built-ins
ARMS.update((arm.name, arm) for arm in JS_ARMS)  # the JavaScript code modes (npm packages: harness setup --js-codemodes)


def register_arm(arm: Arm) -> Arm:
    """Add an arm (registering a name again replaces it): the CLI's --arms, the runner, reports and gates read it
    from here like a built-in one."""
    ARMS[arm.name] = arm
    return arm


def agent(name: str | None = None, description: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function as an arm: `@harness.agent("my-agent")` on `def my_agent(task: AgentTask) -> str` (an
    agent from outside the package: harness.agents.foreign); then `--arms my-agent` (its module imported first, by
    a plugin; or name it `agent:MODULE:FUNCTION`, which imports it)."""
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        from harness.agents.foreign import python_arm

        register_arm(python_arm(name or function.__name__.replace("_", "-"), function, description))
        return function

    return register


def arm_names() -> tuple[str, ...]:
    """Every arm known now: the built-in ones in their order, then the registered ones."""
    return tuple(ARMS)
DEFAULT_ARMS: tuple[str, ...] = ("direct", "codemode")
OPTIMIZED_ARM = "codemode"  # what `harness optimize` tunes unless told (--arm)


def get_arm(name: str) -> Arm:
    """The arm of that name; an arm named by what runs it (`agent:MODULE:FUNCTION`, `cmd:COMMAND`) is built and
    registered on first use, so every stage reads it like any other."""
    if name not in ARMS and name.startswith(SPEC_PREFIXES):
        from harness.agents.foreign import arm_for_spec

        return register_arm(arm_for_spec(name))
    try:
        return ARMS[name]
    except KeyError:
        raise UserError(f"unknown arm '{name}' (known: {', '.join(arm_names())}; or agent:MODULE:FUNCTION, "
                        "cmd:COMMAND)") from None


def check_arms(names: tuple[str, ...]) -> None:
    unknown = [a for a in names if a not in ARMS and not a.startswith(SPEC_PREFIXES)]
    if unknown or not names:
        raise UserError(f"unknown arm {', '.join(map(repr, unknown)) or '(none given)'} "
                        f"(known: {', '.join(arm_names())}; or agent:MODULE:FUNCTION, cmd:COMMAND)")
    for name in names:
        get_arm(name).check_available()


def build_agent(name: str, pool: SandboxPool | None, scaffold: Scaffold, program_state: dict[str, Any] | None = None,
                program: dspy.Module | None = None) -> Agent:
    """The arm's agent under `scaffold`, with a saved program's state or a live program (an optimizer's
    candidate); agents themselves take only a program, so loading a state happens here, once."""
    arm = get_arm(name)
    if program is None and arm.new_program is not None:
        program = arm.new_program(scaffold)
        if program_state:
            program.load_state(program_state)
    return arm.make_agent(pool, program, scaffold)


def calls_tools_natively(arm: str) -> bool:
    """Whether an arm takes the model's native tool calls: a server that hands such calls back as text leaves it
    with the call as its answer (harness.analysis.diagnostics)."""
    return arm in ARMS and ARMS[arm].native_tools


def arm_rank(arm: str) -> int:
    """Where an arm is shown: the registry's order, arms it does not know (older results) last."""
    names = arm_names()
    return names.index(arm) if arm in ARMS else len(names)
