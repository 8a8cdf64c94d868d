"""A plugin as a package outside the harness would write it, used by the tests of registration (a test registers
its parts by hand) and of plugin loading (a test copies this file into a package of its own with a
`harness.plugins` entry point naming `register`). It uses the public API only, plus the scripted engine.

- `Stockroom`: a look-alike benchmark adapter ("stockroom"); its checkout is one JSON file the tests write
  (`write_checkout`), its tools one server per checkout (`count(item)`), its published protocol a preset
  (`stockroom-rules`: plain with a 3-turn limit);
- `StockCount`: a scorer ("stock-count": the answer's number is the expected count);
- `clock_server`: a server registered by name ("stockroom-clock");
- `STOCKBOT`: a model family ("stockbot:NAME"): a scripted agent that counts the item its task names and answers
  with the tool's result, running under the stockroom's preset unless told otherwise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from fastmcp import FastMCP

import harness
from harness.models.scripted import ScriptedReply, ScriptedRequest, policy_provider
from harness.tasks.scorers import Score, ScoreContext, Scorer, passed
from harness.tasks.task import ScorerSpec, ServerRef, Suite, Task

NAME = "stockroom"
CHECKOUT_FILE = "stock.json"
STOCK = {"apples": 12, "pears": 5}
PROTOCOL = harness.PublishedProtocol("stockroom-rules", "plain", {"turn_limit": 3},
                                     "the stockroom's own rules: plain, at most 3 turns")


def write_checkout(folder: Path) -> Path:
    """A stockroom checkout: the stock and one task per item."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CHECKOUT_FILE).write_text(json.dumps({"stock": STOCK, "tasks": sorted(STOCK)}))
    return folder


def _stock(path: Path) -> dict[str, Any]:
    return json.loads((path / CHECKOUT_FILE).read_text())


@dataclass(frozen=True)
class Stockroom:
    """The stockroom benchmark, read from a checkout at run time."""

    name: str = NAME
    description: str = "how many of an item are in stock (a look-alike benchmark the tests write)"
    scorer: str = "numeric"
    protocol: harness.PublishedProtocol | None = PROTOCOL

    def load(self, path: Path) -> Suite:
        source, checkout = f"{self.name}:{path}", _stock(path)
        tasks = tuple(Task(id=item, category="count", expected=checkout["stock"][item], scorer=ScorerSpec(self.scorer),
                           prompt=f"How many {item} are in the stockroom? Answer with just the number.",
                           reference=f'print(count(item="{item}"))', servers=(ServerRef("stock", source=source),),
                           metadata={"item": item})
                      for item in checkout["tasks"])
        return Suite(self.name, self.description, tasks, path, spec=source)

    def build_server(self, path: Path, server: str) -> FastMCP:
        stock = _stock(path)["stock"]
        mcp = FastMCP(server)

        @mcp.tool
        def count(item: str) -> int:
            """How many of `item` are in stock."""
            return stock.get(item, 0)

        return mcp


class StockCount(Scorer):
    """The last number in the answer is the expected count."""

    name: ClassVar[str] = "stock-count"

    def evaluate(self, ctx: ScoreContext) -> Score:
        numbers = re.findall(r"\d+", ctx.answer)
        ok = bool(numbers) and int(numbers[-1]) == int(ctx.expected)
        return passed(ok, f"counted {numbers[-1] if numbers else 'nothing'}, expected {ctx.expected}")


def clock_server(ref: ServerRef) -> FastMCP:
    mcp = FastMCP("stockroom-clock")

    @mcp.tool
    def opening_hours() -> str:
        """When the stockroom is open."""
        return "9-17"

    return mcp


def _stockbot_policy(task: Task, arm: str):
    def policy(request: ScriptedRequest) -> ScriptedReply:
        results = [m["content"] for m in request.messages if m["role"] == "tool"]
        if not results:
            return ScriptedReply(tool_calls=(("count", {"item": task.metadata["item"]}),))
        return ScriptedReply(str(results[-1]).strip())

    return policy


STOCKBOT = harness.ModelFamily("stockbot", ("stockbot:",), lambda model, options: policy_provider(model, _stockbot_policy),
                               default_scaffold=PROTOCOL.name, free_pricing="stockbot (scripted, no charge)",
                               optimizable=False, strings="stockbot:NAME", needs="the stockroom plugin")


def register() -> None:
    """The plugin's entry point: every part, through the public register functions."""
    harness.register_adapter(Stockroom())
    harness.register_scorer(StockCount)
    harness.register_server("stockroom-clock", clock_server, "the stockroom's opening hours")
    harness.register_model_family(STOCKBOT)
