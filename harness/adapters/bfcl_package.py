"""The Berkeley Function Calling Leaderboard (BFCL, github.com/ShishirPatil/gorilla, Apache-2.0) read from the user's
own `bfcl-eval` install or a gorilla checkout at run time: its multi-turn entries, their ground truth, the function
docs of its API classes, the classes themselves and its checker. Nothing of it is copied here.

Layout read (package `bfcl_eval`): `data/BFCL_v4_multi_turn_<category>.json` and `data/possible_answer/` (JSON
lines), `data/multi_turn_func_doc/` (the class -> file map in `constants/executable_backend_config.py`), the classes
under `eval_checker/multi_turn_eval/func_source_code/`, BFCL's type names -> JSON Schema in
`constants/type_mappings.py`, its step limit in `constants/default_prompts.py`. Importing its modules writes folders
under `BFCL_PROJECT_ROOT`, which is set to a folder of the harness's cache first (else it writes beside the package).
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import json
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.env import cache_dir
from harness.errors import UserError, describe_exception

PACKAGE = "bfcl_eval"
VERSION = "2026.3.23"
INSTALL_STEP = f"pip install --no-deps bfcl-eval=={VERSION} mpmath filelock"
INSTALLED = "installed"  # `bfcl:installed`: the package in the harness's environment
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


@dataclass(frozen=True)
class Bfcl:
    """One BFCL package, as imported: where it is and its modules (loaded once per process)."""

    root: Path  # the `bfcl_eval` package folder
    type_map: dict[str, str]
    step_limit: int
    backend: types.ModuleType  # constants.executable_backend_config
    checker: types.ModuleType  # eval_checker.multi_turn_eval.multi_turn_checker
    utils: types.ModuleType  # eval_checker.multi_turn_eval.multi_turn_utils (its module globals cache instances)
    prompts: types.ModuleType  # constants.default_prompts

    @property
    def offered_message(self) -> str:
        """The user message BFCL's inference gives at a turn that offers held-back functions (FC mode)."""
        return str(self.prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC)

    @functools.cached_property
    def param_names(self) -> dict[str, list[str]]:
        """Each function's parameter names in its doc's order (a ground-truth call's positional values take them)."""
        return {doc["name"]: list((doc.get("parameters") or {}).get("properties") or {})
                for class_name in self.backend.MULTI_TURN_FUNC_DOC_FILE_MAPPING for doc in self.func_docs(class_name)}

    def entries(self, category: str) -> list[dict[str, Any]]:
        return _json_lines(self.root / "data" / f"BFCL_v4_{category}.json")

    def answers(self, category: str) -> dict[str, list[list[str]]]:
        return {a["id"]: a["ground_truth"]
                for a in _json_lines(self.root / "data" / "possible_answer" / f"BFCL_v4_{category}.json")}

    def entry(self, entry_id: str) -> dict[str, Any]:
        """One entry by its id (its category's file read once per process)."""
        found = _by_id(self.root, category_of(entry_id), "").get(entry_id)
        if found is None:
            raise UserError(f"BFCL package {self.root}: no entry '{entry_id}'")
        return found

    def ground_truth(self, entry_id: str) -> list[list[str]]:
        """The entry's ground-truth calls, one list of call strings per turn."""
        found = _by_id(self.root, category_of(entry_id), "possible_answer").get(entry_id)
        if found is None:
            raise UserError(f"BFCL package {self.root}: no ground truth for '{entry_id}'")
        return found["ground_truth"]

    def func_docs(self, class_name: str) -> list[dict[str, Any]]:
        name = self.backend.MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
        return _json_lines(self.root / "data" / "multi_turn_func_doc" / name)

    def instance(self, class_name: str, initial_config: dict[str, Any], long_context: bool) -> Any:
        """A fresh instance of an API class, loaded with its scenario as BFCL loads it (stateless classes take none)."""
        module = importlib.import_module(self.backend.CLASS_FILE_PATH_MAPPING[class_name])
        instance = getattr(module, class_name)()
        if class_name not in self.backend.STATELESS_CLASSES:
            instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
        return instance


def category_of(entry_id: str) -> str:
    """An entry's category from its id (`multi_turn_base_12` -> `multi_turn_base`), as BFCL's checker reads it."""
    return entry_id.rsplit("_", 1)[0]


@functools.cache
def _by_id(root: Path, category: str, folder: str) -> dict[str, dict[str, Any]]:
    data = root / "data" / folder if folder else root / "data"
    return {item["id"]: item for item in _json_lines(data / f"BFCL_v4_{category}.json")}


def _json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise UserError(f"{path}: missing from the BFCL package (a partial install? {INSTALL_STEP})")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _package_dir(where: str) -> Path:
    """The `bfcl_eval` folder: the installed one, or the one in a gorilla checkout (or its leaderboard folder)."""
    if where == INSTALLED:
        spec = importlib.util.find_spec(PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise UserError(f"bfcl:{INSTALLED}: the BFCL package is not installed; install it with: {INSTALL_STEP}")
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    base = Path(where).expanduser()
    for candidate in (base / PACKAGE, base / "berkeley-function-call-leaderboard" / PACKAGE, base):
        if (candidate / "eval_checker" / "multi_turn_eval").is_dir() and candidate.name == PACKAGE:
            return candidate.resolve()
    raise UserError(f"bfcl:{where}: not a gorilla checkout or a bfcl_eval folder (no bfcl_eval/eval_checker here); "
                    f"or use bfcl:{INSTALLED} after: {INSTALL_STEP}")


@functools.cache
def load_bfcl(where: str) -> Bfcl:
    """The BFCL package at `where` (`installed` or a checkout's path), imported once per process; a missing
    package, or one that does not import, is a one-line UserError naming the install step."""
    root = _package_dir(where)
    os.environ.setdefault("BFCL_PROJECT_ROOT", str(cache_dir() / "bfcl"))
    loaded = sys.modules.get(PACKAGE)
    if loaded is None:
        sys.path.insert(0, str(root.parent))  # a checkout's package is imported from there (the installed one is first)
    elif Path(next(iter(loaded.__path__))).resolve() != root:
        raise UserError(f"bfcl:{where}: another bfcl_eval ({next(iter(loaded.__path__))}) is already loaded in this "
                        "process; run one BFCL package at a time")
    try:
        backend = importlib.import_module(f"{PACKAGE}.constants.executable_backend_config")
        mappings = importlib.import_module(f"{PACKAGE}.constants.type_mappings")
        prompts = importlib.import_module(f"{PACKAGE}.constants.default_prompts")
        checker = importlib.import_module(f"{PACKAGE}.eval_checker.multi_turn_eval.multi_turn_checker")
        utils = importlib.import_module(f"{PACKAGE}.eval_checker.multi_turn_eval.multi_turn_utils")
    except Exception as exc:  # the user's install: its failure is one line
        raise UserError(f"bfcl:{where}: importing the BFCL package failed ({describe_exception(exc)}); "
                        f"install it with: {INSTALL_STEP}") from None
    return Bfcl(root, dict(mappings.GORILLA_TO_OPENAPI), int(prompts.MAXIMUM_STEP_LIMIT), backend, checker, utils,
                prompts)


def json_schema(schema: dict[str, Any], type_map: dict[str, str]) -> dict[str, Any]:
    """A BFCL parameter schema as JSON Schema: its type names mapped by BFCL's own table, recursively, and a
    default its docs write as the text "None" (Python's None: the methods' own default) as JSON's null, so that an
    arm that passes defaults on (code mode's tool functions do) passes the method's own default, not the word."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = type_map.get(value, value)
        elif key == "default" and value == "None":
            out[key] = None
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: json_schema(sub, type_map) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = json_schema(value, type_map)
        elif key != "response":
            out[key] = value
    return out


def bfcl_result(value: Any) -> str:
    """A call's result as BFCL's executor gives it back: a str as it is, a dict as JSON (else its str), else str()."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def call_string(tool: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's checker reads it: `name(key=repr(value), ...)`."""
    return f"{tool}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
