"""The scaffold: every rule that changes what an agent sees or may do beyond the task, its tools and its turn
limit, as one frozen value. The loop, the arms, the sandbox's guest code and the run's server session each read
the rule they apply from the run's scaffold; a new rule is a new field here, never a special case elsewhere.

The rules are an experimental factor (tuned on one model: docs/experiments.md), so each run names its scaffold and a
content hash in its row, and counts how often each rule fired (`FIRING_COLUMNS`); the trajectory names the rules
that fired at each step. Two presets: `guided` (every rule on, but one tool call per turn: on the embedded model
several calls in one reply were repeats, docs/experiments.md) and `plain` (what a plain agent framework does: the
tools, the task, every tool call of a reply runs as providers' native tool calling does by default, the answer is
the model's reply without an action or its final_answer call; the observation limit stays, the same for every
arm). A YAML file overrides single fields of a preset.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ConfigDict, TypeAdapter, ValidationError

from harness.errors import UserError, describe_error, read_user_file
from harness.hashing import content_hash
from harness.mcp.tool_search import SearchMethod

LOOKUP_INSTRUCTION = ("Never guess an id or a value: look it up with the tools (a search or list tool finds an id "
                      "from a name) and answer only from what they returned.")


_NO_NEUTRAL = object()


def _rule(default: Any, description: str, neutral: Any = _NO_NEUTRAL) -> Any:
    """A rule field. `neutral`: the value under which the harness behaves as it did before the field existed; a
    field at its neutral value is left out of the hash, so adding a rule changes no hash of a scaffold that does
    not use it (a gate's baseline stays comparable). Fields older than this rule have none: always hashed."""
    metadata = {"description": description, **({"neutral": neutral} if neutral is not _NO_NEUTRAL else {})}
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Scaffold:
    """The rules of one run, beyond the task, its tools and its turn limit (see the module docstring)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    name: str = _rule("guided", "The preset or file the rules came from (not part of the hash).")
    worked_examples: bool = _rule(True, "Four solved tasks on made-up tools (harness.agents.example) precede every "
                                        "task, in each arm's own modality (about 900 prompt tokens per LM call).")
    lookup_instruction: str = _rule(LOOKUP_INSTRUCTION, "Sentence put before the instruction on how to end the "
                                                        "task, in every arm's instructions (empty: none).")
    refuse_answer_before_action: bool = _rule(True, "A reply without an action, before any action has "
                                                    "acted (called one of the run's tools or run code; a tool "
                                                    "search does not), is refused once (an error observation), not "
                                                    "taken as the answer.")
    refuse_unread_answer: bool = _rule(True, "An answer right after an action that failed or showed nothing is "
                                             "refused once (the model may give it again); so is a final_answer "
                                             "call made beside other tool calls in one reply.")
    refuse_error_answer: bool = _rule(True, "An answer that starts with \"Error:\" (an error message the model was "
                                            "shown) is never accepted, however it is given.")
    constant_block_is_answer: bool = _rule(True, "Code mode: a code block that only states a constant (`3`, "
                                                 "`print('IN')`) is taken as the answer instead of being run.")
    answer_or_act_grammar: bool = _rule(True, "Embedded engine only: the grammar admits a plain answer only right "
                                              "after an action showed a result, once some action has acted (a "
                                              "tool search alone does not); otherwise the reply must act.")
    id_guard: bool = _rule(True, "A tool argument naming an id that appears neither in the task nor in any tool "
                                 "result so far is refused before it reaches the server (harness.mcp.provenance).")
    repeat_note: bool = _rule(True, "An action repeating an earlier one with the same result gets a note saying "
                                    "so in its observation.")
    max_repeats: int = _rule(2, "The run stops (error repeated_action) after this many identical repeats of an "
                                "action and its result in a row; 0: never.")
    observation_limit_chars: int = _rule(4000, "What the model sees of one action's outcome, in characters; the "
                                               "rest is cut with a marker saying how much.")
    result_notes: bool = _rule(True, "Code mode: misusing a tool result (iterating a paged dict, len() of it, a "
                                     "missing key, a list indexed by a key) prints a note or an error naming what "
                                     "the result holds.")
    echo_last_expression: bool = _rule(True, "Code mode: the value of a block's last line, if it is an expression, "
                                             "is shown as a REPL shows it.")
    async_tools: bool = _rule(True, "Code mode: the instructions say the tools are also awaitable (`await "
                                    "asyncio.gather(...)` runs independent calls concurrently); they are awaitable "
                                    "whether or not the sentence is there.")
    parallel_tool_calls: bool = _rule(False, "Native tool calling: every tool call of a reply runs, concurrently, "
                                             "each result its own tool message; off: only the first runs and the "
                                             "rest are named as dropped (one call per turn).")
    answer_feedback: str = _rule("", "An answer the task's scorer rejects does not end the run: this text is its "
                                     "observation and the run goes on, until an answer is accepted or the turn "
                                     "limit (the run's answer: the accepted one, else the last given); empty: off, "
                                     "the first answer ends the run.", neutral="")
    turn_limit: int = _rule(0, "The run's turn limit (LM calls) in place of each task's own max_turns; 0: the "
                               "task's.", neutral=0)
    skills: bool = _rule(True, "Sessions that declare skills (a suite's `sessions`): code-mode arms may save functions "
                               "under skills/ (`save_skill`) and later tasks of the session see their index and import "
                               "them; off: no skills. Outside a session it does nothing.", neutral=True)
    workspace: bool = _rule(True, "Sessions that declare a workspace: files code writes under workspace/ persist to "
                                  "the session's later tasks, which are told what is there; off: every task starts "
                                  "with none. Outside a session it does nothing.", neutral=True)
    refuse_messages_to_user: bool = _rule(False, "Conversation tasks: refuse_answer_before_action, "
                                                 "refuse_unread_answer and the answer-or-act grammar also apply to "
                                                 "each message to the simulated user; off: a message to the user is "
                                                 "not an answer, so they do not.",
                                          neutral=False)
    tool_search_method: SearchMethod = _rule(
        "bm25", "direct-search: how its tool_search ranks the tools it has not shown yet: `bm25` (Okapi BM25 over "
                "each tool's name, its words and its description) or `keyword` (how often the query's words appear "
                "there); a tool whose name is the query comes first either way.", neutral="bm25")
    tool_search_limit: int = _rule(5, "direct-search: the most tool definitions one tool_search call adds to the "
                                      "tools the model can call.", neutral=5)

    @property
    def rules(self) -> dict[str, Any]:
        """The rule fields and their values (everything but the name)."""
        return {k: v for k, v in asdict(self).items() if k != "name"}

    @property
    def hash(self) -> str:
        """16 hex digits naming the rules (not the name): equal rules, equal hash, in any process; a field at its
        neutral value is left out (`_rule`)."""
        neutral = {f.name: f.metadata["neutral"] for f in fields(self) if "neutral" in f.metadata}
        return content_hash({k: v for k, v in self.rules.items() if k not in neutral or neutral[k] != v})

    def finish_instruction(self, end: str) -> str:
        """The instruction sentences every arm ends its instructions with: the lookup sentence, then `end`."""
        return " ".join(part for part in (self.lookup_instruction, end) if part)


GUIDED = Scaffold()
PLAIN = replace(GUIDED, name="plain", worked_examples=False, lookup_instruction="",
                refuse_answer_before_action=False, refuse_unread_answer=False, refuse_error_answer=False,
                constant_block_is_answer=False, answer_or_act_grammar=False, id_guard=False, repeat_note=False,
                max_repeats=0, result_notes=False, echo_last_expression=False, async_tools=False,
                parallel_tool_calls=True)
# An agent from outside the package runs under none of the harness's rules (it is measured as its own code builds
# it): its runs record this scaffold, and none of its rules fires (the id guard, the one rule the session applies,
# is off). Not a preset a run chooses.
OWN = replace(PLAIN, name="own")
PRESETS: dict[str, Scaffold] = {"plain": PLAIN, "guided": GUIDED}  # built in; adapters declare more (all_presets)
RULE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Scaffold) if f.name != "name")

# Per-run firing counts as results columns: column -> (the rules it counts, what it means). Each counts the turns
# at which one of its rules fired (a trajectory step's `rules`).
FIRING_COLUMNS: dict[str, tuple[tuple[str, ...], str]] = {
    "answers_refused": (("refuse_answer_before_action", "refuse_unread_answer", "refuse_error_answer"),
                        "turns whose answer a refusal rule turned into an error observation"),
    "ids_refused": (("id_guard",), "turns at which the id guard refused a tool call"),
    "repeat_notes": (("repeat_note",), "turns whose observation got the repeated-action note"),
    "repeat_stops": (("max_repeats",), "1 if the run was stopped for repeating itself (max_repeats), else 0"),
    "result_notes": (("result_notes",), "code-mode turns at which a note or error named what a tool result holds"),
    "constant_answers": (("constant_block_is_answer",), "code blocks stating a constant, taken as the answer"),
    "echoed_values": (("echo_last_expression",), "code-mode turns whose last expression's value was shown"),
    "action_only_turns": (("answer_or_act_grammar",), ("turns whose LM call asked the embedded engine's grammar "
                                                      "for an action only (other engines ignore grammars)")),
    "observations_truncated": (("observation_limit_chars",), "turns whose observation was cut at the limit"),
}


def firing_counts(step_rules: Iterable[tuple[str, ...]]) -> dict[str, int]:
    """The FIRING_COLUMNS of one run, from the rules that fired at each of its steps."""
    fired = Counter(rule for rules in step_rules for rule in set(rules))
    return {column: sum(fired[rule] for rule in rules) for column, (rules, _) in FIRING_COLUMNS.items()}


def default_scaffold(model: str) -> Scaffold:
    """The preset the model's family names: `guided` for the embedded model its rules were tuned on, `plain` for
    every other built-in family (scripted test models included), so no other model runs under rules it was not
    measured with unless asked to. A family registered from outside may name any preset; an unknown one is a
    UserError naming the family."""
    from harness.models.families import (
        family_of,  # late: the arms registry reads this module before anything heavy
    )

    family = family_of(model)
    if family.default_scaffold in PRESETS:
        return PRESETS[family.default_scaffold]
    presets = all_presets()
    if family.default_scaffold not in presets:
        raise UserError(f"model family '{family.name}' names default scaffold '{family.default_scaffold}', which "
                        f"is no preset (known: {', '.join(presets)})")
    return presets[family.default_scaffold]


def benchmark_presets() -> dict[str, Scaffold]:
    """The presets registered benchmark adapters declare (harness.tasks.registry: each one's PublishedProtocol,
    the rules its benchmark's own harness runs agents under), built on the built-in preset each names. A preset
    named like a built-in one or another adapter's is a UserError naming the adapter."""
    import harness.adapters  # noqa: F401  late: registers the built-in benchmarks (and loads fastmcp)
    from harness.tasks.registry import ADAPTERS

    presets: dict[str, Scaffold] = {}
    for adapter in ADAPTERS.values():
        protocol = adapter.protocol
        if protocol is None:
            continue
        if protocol.name in PRESETS or protocol.name in presets:
            raise UserError(f"benchmark adapter '{adapter.name}': its published protocol's preset name "
                            f"'{protocol.name}' is taken (by a built-in preset or another adapter); rename it")
        presets[protocol.name] = replace(PRESETS[protocol.base], name=protocol.name, **dict(protocol.rules))
    return presets


def all_presets() -> dict[str, Scaffold]:
    """Every preset `--scaffold` takes by name: plain, guided, then the benchmarks' own."""
    return {**PRESETS, **benchmark_presets()}


_ADAPTER = TypeAdapter(Scaffold)


def load_scaffold(spec: str) -> Scaffold:
    """A preset by name (plain, guided, a benchmark's: `all_presets`), or a YAML file naming a `preset` and the
    fields it overrides; anything else (an unknown preset or field, a wrong type) is a one-line UserError."""
    if spec in PRESETS:
        return PRESETS[spec]
    presets = all_presets()
    names = ", ".join(presets)
    if spec in presets:
        return presets[spec]
    path = Path(spec)
    if path.suffix not in (".yaml", ".yml"):
        raise UserError(f"unknown scaffold '{spec}': use a preset ({names}) or a YAML file (FILE.yaml)")
    try:
        data = yaml.safe_load(read_user_file(path, "scaffold file")) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or data.get("preset") not in presets:
        raise UserError(f"{path}: field 'preset' must be one of {names} (the preset this file overrides)")
    overrides = {k: v for k, v in data.items() if k != "preset"}
    written = {**asdict(presets[data["preset"]]), "name": path.stem, **overrides}
    try:
        return _ADAPTER.validate_python(written)
    except ValidationError as exc:
        unknown = any(e["type"] == "unexpected_keyword_argument" for e in exc.errors())
        known = f" (fields: preset, {', '.join(RULE_NAMES)})" if unknown else ""
        raise UserError(f"{path}: {describe_error(exc, written)}{known}") from None


def scaffold_from_dict(data: dict[str, Any]) -> Scaffold:
    """A scaffold saved as `asdict` (a run manifest, a saved program), read back."""
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise UserError(f"saved scaffold: {describe_error(exc, data)}") from None


def resolve_scaffold(spec: str | None, model: str) -> Scaffold:
    """The run's scaffold: `spec` (--scaffold, or HARNESS_SCAFFOLD) if given, else the model's default."""
    return load_scaffold(spec) if spec else default_scaffold(model)


def describe(scaffold: Scaffold) -> str:
    """One line for the start of a run and for reports: the name, the hash and what differs from its preset."""
    presets = PRESETS if scaffold.name in PRESETS else all_presets()
    base = presets.get(scaffold.name)
    if base is None:
        base = min(presets.values(), key=lambda p: sum(p.rules[k] != v for k, v in scaffold.rules.items()))
    changed = [k for k, v in scaffold.rules.items() if base.rules[k] != v]
    more = f" ({base.name} with {', '.join(changed)} changed)" if changed else ""
    return f"scaffold {scaffold.name} {scaffold.hash}{more}"


def fields_markdown() -> str:
    """The fields with their presets and descriptions, then the firing columns, as Markdown tables:
    docs/fair-comparison.md holds this text (a test keeps it in sync; `harness scaffolds --markdown` prints it)."""
    def cell(value: Any) -> str:
        return f"`{value}`" if not isinstance(value, str) else (f'"{value}"' if value else '""')

    presets = all_presets()
    rows = [f"| field | {' | '.join(presets)} | what it does |", "|---|" + "---|" * (len(presets) + 1)]
    for item in fields(Scaffold):
        if item.name != "name":
            values = " | ".join(cell(getattr(preset, item.name)) for preset in presets.values())
            rows.append(f"| `{item.name}` | {values} | {item.metadata['description']} |")
    rows += ["", "| results column | counts | rules |", "|---|---|---|"]
    rows += [f"| `{column}` | {description} | {', '.join(f'`{r}`' for r in rules)} |"
             for column, (rules, description) in FIRING_COLUMNS.items()]
    return "\n".join(rows) + "\n"
