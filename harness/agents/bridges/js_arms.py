"""The JavaScript code modes teams ship, declared as arms (the registry reads this; nothing heavy is imported):
`cloudflare-codemode` (Cloudflare's Code Mode, the agent inside workerd, each program in a Dynamic Worker) and
`ai-sdk-codemode` (the Vercel AI SDK's code mode, QuickJS in a worker thread of Node). Commands from outside the
package (bridges.js_codemode), their packages pinned in harness/js and installed by `harness setup --js-codemodes`;
no rule of the harness's scaffold shapes them, and rows name their packages and versions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.agents.arm import Arm, replays

if TYPE_CHECKING:
    from harness.agents.base import Agent
    from harness.agents.bridges.js_codemode import JsCodeMode
    from harness.agents.scaffold import Scaffold

# each arm's code tool, the field its program goes in, and the object its programs call the tools on (the packages'
# own names: Cloudflare's `codemode` tool and `codemode.NAME(...)`; the AI SDK's README's `code_mode` tool, `js`
# and `tools.NAME(...)`)
CODE_TOOLS: dict[str, tuple[str, str, str]] = {"cloudflare": ("codemode", "code", "codemode"),
                                                "ai-sdk": ("code_mode", "js", "tools")}
# the packages behind each arm, as rows name them (arm_source)
PACKAGES: dict[str, tuple[str, ...]] = {
    "cloudflare": ("@cloudflare/codemode", "workerd", "ai", "@ai-sdk/mcp", "@ai-sdk/openai-compatible"),
    "ai-sdk": ("@ai-sdk/code-mode", "ai", "@ai-sdk/mcp", "@ai-sdk/openai-compatible")}


def _source(mode: str) -> str:
    from harness.agents.bridges.js_install import package_versions

    versions = package_versions()
    return " ".join(f"{name}@{versions[name]}" for name in PACKAGES[mode]) + " (node)"


def _agent(name: str, mode: JsCodeMode) -> Callable[[Any, Any, Scaffold], Agent]:
    def make(pool: Any, program: Any, scaffold: Scaffold) -> Agent:
        from harness.agents.bridges.js_codemode import JsCodeModeAgent

        return JsCodeModeAgent(name, mode, code_tool=CODE_TOOLS[mode][0])

    return make


def _check(name: str) -> Callable[[], None]:
    def check() -> None:
        from harness.agents.bridges.js_install import check_installed

        check_installed(name)

    return check


def js_protocol(mode: str) -> str:
    """The replay protocol of a code mode's arm (registered by bridges.js_replay): one native call of its code tool
    whose program makes the traced calls, then the answer as text."""
    return f"js_code_{mode.replace('-', '_')}"


def js_arm(name: str, description: str, mode: JsCodeMode, colour: str) -> Arm:
    """A JavaScript code mode's arm: a command from outside (`kind="command"`), its source its npm packages."""
    return Arm(name, description, False, None, _agent(name, mode), colour,
               replays(js_protocol(mode), "harness.agents.bridges.js_replay"), _check(name),
               module="harness.agents.bridges.js_codemode", native_tools=True, kind="command",
               source=_source(mode), scaffold_applies=False)


JS_ARMS: tuple[Arm, ...] = (
    js_arm("cloudflare-codemode", "Cloudflare's Code Mode: JavaScript in a Dynamic Worker of workerd, the MCP tools "
           "as codemode.* functions, one codemode tool in the AI SDK's loop (harness setup --js-codemodes)",
           "cloudflare", "#f38020"),
    js_arm("ai-sdk-codemode", "the Vercel AI SDK's code mode: JavaScript in QuickJS (WebAssembly) in a Node worker "
           "thread, the MCP tools as tools.* functions, one code_mode tool (harness setup --js-codemodes)",
           "ai-sdk", "#111111"),
)
