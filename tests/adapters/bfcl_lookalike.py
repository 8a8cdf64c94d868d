"""A tiny `bfcl_eval` package in BFCL's layout, written by the tests (nothing of the real benchmark is copied): two
made-up API classes (a stateful `Counter` whose scenario records the long-context flag, and a stateless `EchoAPI`),
their function docs in BFCL's type names, four entries (two of base, one of long_context, one of miss_func holding
`read` back until its second turn) with their ground truth,
and a checker stub that records every call it is given and says `valid` when each turn's calls are the ground truth's.
The classes, like BFCL's, live in modules its backend config names; the stub caches a value in its utils module's
globals under the model name, as the real checker does."""

from __future__ import annotations

import json
from pathlib import Path

BACKEND = '''
MULTI_TURN_FUNC_DOC_FILE_MAPPING = {"Counter": "counter.json", "EchoAPI": "echo.json"}
_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASS_FILE_PATH_MAPPING = {"Counter": f"{_PREFIX}.counter", "EchoAPI": f"{_PREFIX}.echo_api"}
STATELESS_CLASSES = ["EchoAPI"]
'''
TYPES = 'GORILLA_TO_OPENAPI = {"integer": "integer", "float": "number", "string": "string", "dict": "object", ' \
        '"array": "array", "boolean": "boolean"}\n'
PROMPTS = 'MAXIMUM_STEP_LIMIT = 20\nDEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC = "More functions now."\n'
COUNTER = '''
class Counter:
    def __init__(self):
        self.value = 0
        self.long_context = None

    def _load_scenario(self, scenario, long_context=False):
        self.value = scenario.get("start", 0)
        self.long_context = long_context

    def increment(self, by: int = 1):
        if by < 0:
            raise ValueError("cannot go down")
        self.value += by
        return {"value": self.value}

    def read(self):
        return {"value": self.value, "long_context": self.long_context}
'''
ECHO = '''
class EchoAPI:
    def echo(self, text: str, times: float = 1, prefix=None):
        return (prefix or "") + text * int(times)
'''
UTILS = "CACHE_NOTE = 'the checker caches instances in these globals'\n"
CHECKER = '''
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

RECEIVED = []


def multi_turn_checker(decoded, ground_truth, test_entry, test_category, model_name):
    RECEIVED.append({"decoded": decoded, "ground_truth": ground_truth, "entry": test_entry["id"],
                     "category": test_category, "model_name": model_name})
    vars(multi_turn_utils)[model_name + "_" + test_entry["id"] + "_Counter_instance"] = object()
    if any("unreadable" in call for turn in decoded for step in turn for call in step):
        raise SyntaxError("invalid syntax")
    for n, (turn, expected) in enumerate(zip(decoded, ground_truth)):
        if [call for step in turn for call in step] != expected:
            return {"valid": False, "error_type": "stub:mismatch", "error_message": f"turn {n} differs"}
    return {"valid": True}
'''
COUNTER_DOCS = [
    {"name": "increment", "description": "Add to the counter.", "parameters": {"type": "dict", "properties": {
        "by": {"type": "integer", "description": "How much.", "default": 1}}, "required": []},
     "response": {"type": "dict", "properties": {"value": {"type": "integer"}}}},
    {"name": "read", "description": "The counter's value.", "parameters": {"type": "dict", "properties": {},
                                                                             "required": []}},
]
ECHO_DOCS = [{"name": "echo", "description": "Repeat a text.", "parameters": {"type": "dict", "properties": {
    "text": {"type": "string", "description": "The text."}, "times": {"type": "float", "description": "How often."},
    "prefix": {"type": "string", "description": "Put first.", "default": "None"}},
    "required": ["text"]}}]
ENTRIES = {
    "multi_turn_base": [
        {"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "Add 2 to the counter."}],
                                                  [{"role": "user", "content": "Now add 3."}]],
         "initial_config": {"Counter": {"start": 10}}, "involved_classes": ["Counter", "EchoAPI"]},
        {"id": "multi_turn_base_1", "question": [[{"role": "user", "content": "Echo hi twice."}]],
         "initial_config": {}, "involved_classes": ["EchoAPI"]},
    ],
    "multi_turn_long_context": [
        {"id": "multi_turn_long_context_0", "question": [[{"role": "user", "content": "Read the counter."}]],
         "initial_config": {"Counter": {"start": 1}}, "involved_classes": ["Counter"]},
    ],
    "multi_turn_miss_param": [],
    "multi_turn_miss_func": [
        {"id": "multi_turn_miss_func_0", "question": [[{"role": "user", "content": "Read the counter."}], []],
         "initial_config": {"Counter": {"start": 4}}, "involved_classes": ["Counter"], "missed_function": {"1": ["read"]}},
    ],
}
GROUND_TRUTH = {
    "multi_turn_base_0": [["increment(by=2)"], ["increment(by=3)"]],
    "multi_turn_base_1": [["echo(text='hi', times=2)"]],
    "multi_turn_long_context_0": [["read()"]],
    "multi_turn_miss_func_0": [[], ["read()"]],
}


def _lines(items: list[dict]) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def write_bfcl_lookalike(root: Path) -> Path:
    """A gorilla-like checkout at `root` (`berkeley-function-call-leaderboard/bfcl_eval`); returns `root`."""
    package = root / "berkeley-function-call-leaderboard" / "bfcl_eval"
    files = {
        "__init__.py": "", "constants/__init__.py": "", "constants/executable_backend_config.py": BACKEND,
        "constants/type_mappings.py": TYPES, "constants/default_prompts.py": PROMPTS,
        "eval_checker/__init__.py": "", "eval_checker/multi_turn_eval/__init__.py": "",
        "eval_checker/multi_turn_eval/multi_turn_checker.py": CHECKER,
        "eval_checker/multi_turn_eval/multi_turn_utils.py": UTILS,
        "eval_checker/multi_turn_eval/func_source_code/__init__.py": "",
        "eval_checker/multi_turn_eval/func_source_code/counter.py": COUNTER,
        "eval_checker/multi_turn_eval/func_source_code/echo_api.py": ECHO,
        "data/multi_turn_func_doc/counter.json": _lines(COUNTER_DOCS),
        "data/multi_turn_func_doc/echo.json": _lines(ECHO_DOCS),
    }
    for category, entries in ENTRIES.items():
        files[f"data/BFCL_v4_{category}.json"] = _lines(entries)
        files[f"data/possible_answer/BFCL_v4_{category}.json"] = _lines(
            [{"id": e["id"], "ground_truth": GROUND_TRUTH[e["id"]]} for e in entries])
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
