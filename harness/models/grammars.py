"""GBNF grammars for the embedded model (llama.cpp), one per agent protocol, so that a reply the harness cannot
parse is impossible on the local model rather than rare: llama.cpp only samples tokens the grammar allows, and
ends the reply (end-of-generation) exactly when the grammar is complete.

- `tool_call_grammar`: one Qwen2.5 tool call whose arguments fit the schema of the tool it names (or several).
- `code_block_grammar`: one fenced Python block and nothing else.
- `react_step_grammar`: one DSPy ChatAdapter ReAct step; no invented `[[ ## observation_N ## ]]` section.
- `fields_grammar`: DSPy ChatAdapter plain-text output fields.

Free text is bounded (`{1,N}` repetitions) and JSON whitespace is at most one space (llama.cpp's `space` rule),
so no model can loop on spaces or ramble forever inside a grammar. A reply cut by `max_tokens` is still
incomplete: callers should leave room for the bounds below.

Tool argument rules come from llama-cpp-python's JSON-schema converter. Its `char` rule lets raw control
characters into JSON strings (invalid JSON); here strings take llama.cpp's C++ converter rule instead.
Building the 64-tool grammar takes milliseconds, but the engine builds one for every call (from the reply
shape the agent declared: harness.models.llama): the builders are cached on the tools' JSON text. Only the
embedded engine calls these builders; the tool-argument rules import llama_cpp.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

THOUGHT_MAX_CHARS = 400  # one line of ReAct reasoning
FIELD_MAX_CHARS = 2000  # one DSPy output field
CODE_MAX_CHARS = 2000  # one code block (llama.cpp expands a {m,n} repetition into n rules)
JSON_STRING_MAX_CHARS = 500  # one string value in tool arguments
ANSWER_MAX_CHARS = 1000  # a plain reply that is the run's answer (native protocols: a reply with no action)
PARALLEL_CALLS_MAX = 8  # tool calls in one native reply, when the reply shape admits several

FIELD_NAME = re.compile(r"\w+")  # DSPy's ChatAdapter only recognises `[[ ## \w+ ## ]]` markers

# JSON string characters as llama.cpp's C++ converter has them: no raw control characters, which json.loads
# refuses (the Python converter's `[^"\\]` allows them).
_JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'
_JSON_STRING = rf'"\"" char{{0,{JSON_STRING_MAX_CHARS}}} "\"" space'


def _text_unit(exclude: str) -> str:
    """One step of text that can never contain "[[ ##" (a DSPy field marker), nor any character of `exclude`.
    Every "[" starts a unit and no unit ends in "[", so "[[ ##" cannot form across units either; the price
    is that text cannot hold "[[[" or end in "[", "[[ " or "[[ #"."""
    return (f'[^[{exclude}] | "[" [^[{exclude}] '
            f'| "[[" ([^[ {exclude}] | " " ([^#[{exclude}] | "#" [^#[{exclude}]))')


# Code that can never contain "```": every backtick starts a unit and no unit ends in one.
_CODE_UNIT = '[^`] | "`" [^`] | "``" [^`]'


def _literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _format(rules: dict[str, str]) -> str:
    """GBNF text, root first (llama.cpp does not care about order; people reading it do)."""
    names = ["root", *sorted(name for name in rules if name != "root")]
    return "".join(f"{name} ::= {rules[name]}\n" for name in names)


def _merge(generated: dict[str, str], own: dict[str, str]) -> dict[str, str]:
    clash = sorted(set(generated) & set(own))
    if clash:
        raise ValueError(f"grammar rule names clash with tool schema rules: {', '.join(clash)}")
    return {**generated, **own}


def _tools_key(tools: list[dict]) -> str:
    """A hashable cache key that keeps property order (it decides the order the model writes arguments in)."""
    return json.dumps(tools, ensure_ascii=False)


# ---- tool arguments ----

def _inline_refs(schema: Any, root: dict, expanding: tuple[str, ...] = ()) -> Any:
    """Replace local `$ref`s by what they point at. The converter names a ref's rule after its last path
    segment only, so two tools with different `$defs/Item` would share one rule; inlining avoids that.
    A recursive ref becomes `{}` (any JSON value) where it recurs, and so does a ref to nothing in the schema
    (a server's mistake, which should not stop every call to its tools)."""
    if isinstance(schema, list):
        return [_inline_refs(item, root, expanding) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in expanding:
            return {}
        target: Any = root
        for part in ref[2:].split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or key not in target:
                return {}
            target = target[key]
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return _inline_refs({**target, **siblings}, root, (*expanding, ref))
    return {key: _inline_refs(value, root, expanding) for key, value in schema.items()
            if key not in ("$defs", "definitions")}


_NAMED_SCHEMAS = ("properties", "$defs", "definitions", "patternProperties")  # maps of name -> schema


def _without_empty_items(schema: Any) -> Any:
    """`"items": {}` (an array of anything) as the converter can read it: no `items` at all (it would look for
    `prefixItems` instead and fail). Only the `items` keyword goes: a parameter named "items" stays."""
    if isinstance(schema, list):
        return [_without_empty_items(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {}
    for key, value in schema.items():
        if key == "items" and value in ({}, True):
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            kept[key] = {name: _without_empty_items(sub) for name, sub in value.items()}
        else:
            kept[key] = _without_empty_items(value)
    return kept


def _closed_parameters(parameters: dict | None) -> dict:
    """A tool's parameters schema, ready for the converter: refs inlined, `items: {}` dropped, and a schema
    without properties means "no arguments" (`{}`), not "any object" as the converter would read it."""
    schema = _without_empty_items(_inline_refs(parameters or {}, parameters or {}))
    if "properties" not in schema and schema.get("additionalProperties") in (None, False):
        schema = {**schema, "type": "object", "properties": {}}
    return schema


@functools.lru_cache(maxsize=64)
def _argument_rules(tools_json: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """((tool name, its arguments rule), ...) and the rules they need, for every tool."""
    # Imported here: the converter is pure Python, but importing llama_cpp loads its native library, which
    # only the `local` extra installs.
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    names: list[tuple[str, str]] = []
    for tool in json.loads(tools_json):
        function = tool["function"]
        rule = converter.visit(_closed_parameters(function.get("parameters")), f"{function['name']}-arguments")
        names.append((function["name"], rule))
    if len({name for name, _ in names}) != len(names):
        raise ValueError("tool names must be unique")
    rules = dict(converter._rules)  # the converter has no public accessor for its rules
    if "char" in rules:
        rules["char"] = _JSON_CHAR
    if "string" in rules:
        rules["string"] = _JSON_STRING
    return tuple(names), tuple(rules.items())


# ---- the grammars ----

TOOL_CALL_OPEN = '<tool_call>\n{"name": '
TOOL_CALL_CLOSE = "}\n</tool_call>"
ARGUMENTS_KEY = ', "arguments": '
CODE_OPEN = "```python\n"
CODE_CLOSE = "\n```"


def _marker(field: str) -> str:
    """A DSPy ChatAdapter field header."""
    return f"[[ ## {field} ## ]]"


def _with_tool_choice(tools_json: str, own: dict[str, str], before_arguments: Callable[[str], str]) -> str:
    """`own` rules plus `tool-and-arguments`: for one of the tools, `before_arguments(its name)` then arguments
    that fit its schema (an alternation, so the arguments always belong to the tool named)."""
    names, generated = _argument_rules(tools_json)
    if not names:
        raise ValueError("this grammar needs at least one tool")
    choice = " | ".join(f"{_literal(before_arguments(name))} {rule}" for name, rule in names)
    return _format(_merge(dict(generated), {**own, "tool-and-arguments": choice}))


def tool_call_grammar(tools: list[dict], parallel: bool = False) -> str:
    """Exactly one Qwen2.5 tool call, `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`, naming one
    of `tools` (OpenAI function definitions) with arguments valid for that tool's parameters schema; `parallel`:
    one to PARALLEL_CALLS_MAX such calls, one per line, as Qwen's chat template writes several calls."""
    return _tool_call_grammar(_tools_key(tools), parallel)


@functools.lru_cache(maxsize=32)
def _tool_call_grammar(tools_json: str, parallel: bool) -> str:
    return _with_tool_choice(tools_json, _tool_calls_rules(parallel, ""), lambda name: json.dumps(name) + ARGUMENTS_KEY)


def tool_reply_grammar(tools: list[dict], parallel: bool = False) -> str:
    """A native tool-calling reply: one tool call (as `tool_call_grammar`; several if `parallel`) OR a plain answer
    with no tool call, which the native protocol reads as the model's final answer (text that starts with a visible
    character and holds no "<" or backtick, so it can be neither half a tool call nor a call fenced as JSON; nor can
    it start with "{", the start of a call written as bare JSON)."""
    return _tool_reply_grammar(_tools_key(tools), parallel)


@functools.lru_cache(maxsize=32)
def _tool_reply_grammar(tools_json: str, parallel: bool) -> str:
    # No "<" or backtick anywhere and no leading "{": a tool call written as bare or fenced JSON is not an
    # answer (docs/experiments.md); an object answer goes through the final_answer tool.
    own = {**_tool_calls_rules(parallel, " | answer"), **_answer_rules("<`", not_first="{")}
    return _with_tool_choice(tools_json, own, lambda name: json.dumps(name) + ARGUMENTS_KEY)


def _tool_calls_rules(parallel: bool, alternatives: str) -> dict[str, str]:
    """The root of a native tool-calling reply: one call (the rule inline, as it always was), or with `parallel`
    one to PARALLEL_CALLS_MAX calls separated by a newline (bounded, so no model can loop on calls) and an optional
    newline after the last (Qwen2.5 ends a call with one before its end token: were a newline always the start of
    another call, the grammar would force one); then `alternatives` (another branch of the root, or "")."""
    call = f"{_literal(TOOL_CALL_OPEN)} tool-and-arguments {_literal(TOOL_CALL_CLOSE)}"
    if not parallel:
        return {"root": call + alternatives}
    calls = f'tool-call-block ("\\n" tool-call-block){{0,{PARALLEL_CALLS_MAX - 1}}} "\\n"?'
    return {"root": calls + alternatives, "tool-call-block": call}


def code_reply_grammar() -> str:
    """A code-mode reply: one fenced Python block (as `code_block_grammar`) OR a plain answer with no code
    (no backtick anywhere), which the code-mode protocol reads as the final answer."""
    return _code_reply_grammar()


@functools.lru_cache(maxsize=1)
def _code_reply_grammar() -> str:
    rules = {"root": f"{_literal(CODE_OPEN)} code {_literal(CODE_CLOSE)} | answer",
             "code": f"code-unit{{1,{CODE_MAX_CHARS}}}", "code-unit": _CODE_UNIT, **_answer_rules("`")}
    return _format(rules)


def _answer_rules(excluded: str, not_first: str = "") -> dict[str, str]:
    """A plain answer: a first visible character (none of `not_first`), then any text, never containing
    `excluded`."""
    return {"answer": f"[^{excluded}{not_first} \\t\\n\\r] answer-unit{{0,{ANSWER_MAX_CHARS}}}",
            "answer-unit": f"[^{excluded}]"}


def code_block_grammar() -> str:
    """Exactly one fenced Python block ("```python\\n" code "\\n```") with no "```" inside, nothing around it."""
    return _code_block_grammar()


@functools.lru_cache(maxsize=1)
def _code_block_grammar() -> str:
    return _format({
        "root": f"{_literal(CODE_OPEN)} code {_literal(CODE_CLOSE)}",
        "code": f"code-unit{{1,{CODE_MAX_CHARS}}}",
        "code-unit": _CODE_UNIT,
    })


def react_step_grammar(tools: list[dict]) -> str:
    """One DSPy ChatAdapter ReAct step: next_thought (one bounded line), next_tool_name (one of `tools`; include
    ReAct's `finish` tool), next_tool_args (JSON valid for the tool named), then `[[ ## completed ## ]]` and
    nothing more, so the model cannot write an observation of its own."""
    return _react_step_grammar(_tools_key(tools))


@functools.lru_cache(maxsize=32)
def _react_step_grammar(tools_json: str) -> str:
    root = " ".join([_literal(_marker("next_thought") + "\n"), "react-thought",
                     _literal("\n\n" + _marker("next_tool_name") + "\n"), "tool-and-arguments",
                     _literal("\n\n" + _marker("completed"))])
    own = {
        "root": root,
        "react-thought": f"react-thought-unit{{1,{THOUGHT_MAX_CHARS}}}",
        "react-thought-unit": _text_unit(exclude=r"\n\r"),
    }
    between_name_and_arguments = "\n\n" + _marker("next_tool_args") + "\n"
    return _with_tool_choice(tools_json, own, lambda name: name + between_name_and_arguments)


def fields_grammar(fields: list[str]) -> str:
    """DSPy ChatAdapter plain-text output fields, in order, each `[[ ## f ## ]]\\n<text>` (text without "[[ ##",
    at most FIELD_MAX_CHARS), then `[[ ## completed ## ]]`."""
    return _fields_grammar(tuple(fields))


@functools.lru_cache(maxsize=32)
def _fields_grammar(fields: tuple[str, ...]) -> str:
    if not fields:
        raise ValueError("a fields grammar needs at least one field")
    bad = [f for f in fields if not FIELD_NAME.fullmatch(f)]
    if bad:
        raise ValueError(f"DSPy field names are word characters only: {bad}")
    parts = []
    for i, field in enumerate(fields):
        header = ("" if i == 0 else "\n\n") + _marker(field) + "\n"
        parts += [_literal(header), "field-text"]
    return _format({
        "root": " ".join([*parts, _literal("\n\n" + _marker("completed"))]),
        "field-text": f"field-text-unit{{1,{FIELD_MAX_CHARS}}}",
        "field-text-unit": _text_unit(exclude=""),
    })


def check_grammar(grammar: str) -> None:
    """Raise ValueError if llama.cpp's own parser refuses `grammar`. In llama-cpp-python 0.3.x
    `LlamaGrammar.from_string` stores the text without parsing it; a bad grammar only surfaces when a Llama
    builds its sampler (the parser prints why on stderr and returns NULL). The parse needs no vocabulary
    (llama.cpp's own grammar tests pass none)."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.encode("utf-8"), b"root")
    if not sampler:
        raise ValueError("llama.cpp refused the grammar (its parser printed the reason on stderr)")
    llama_cpp.llama_sampler_free(sampler)
