"""τ²-bench (github.com/sierra-research/tau2-bench, MIT) read from the user's checkout: a domain's data model and
tool class imported from the checkout's source, its database, policy, tasks and splits read from its data folder.

Layout read: `src/tau2/domains/<domain>/{data_model.py,tools.py}` and `data/tau2/domains/<domain>/{db.json,
policy.md,tasks.json,split_tasks.json}`. Only the two source files of a domain are imported; what they import from
the rest of the package (the toolkit's `is_tool` marker and `ToolKitBase`, the `DB` base model, the domain's path
constants, and `loguru` where it is not installed) is given by small stand-ins during the import, so the harness
needs only pydantic (its own dependency), never the benchmark's package or its pinned LiteLLM. A tool is a method
the checkout marks with `is_tool(...)`; its tool type says whether it writes.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import hashlib
import importlib.util
import inspect
import json
import sys
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from harness.errors import UserError, describe_exception

# A domain whose user has tools of its own (telecom's dual control: `user_tools.py`) is not supported yet; of the
# others, retail and airline are the ones the published leaderboard reports and this adapter was checked on.
DUAL_CONTROL_FILE = "user_tools.py"
CLONE_HINT = "git clone https://github.com/sierra-research/tau2-bench"
TOOL_MARK = "__tool__"  # what the checkout's is_tool decorator sets on a tool method (and the stand-in here)


class _ToolType(str, enum.Enum):
    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def _is_tool(tool_type: _ToolType = _ToolType.READ, mutates_state: bool | None = None) -> Callable[[Any], Any]:
    """The stand-in of the checkout's tool marker: the same attributes on the method."""
    def mark(function: Any) -> Any:
        setattr(function, TOOL_MARK, True)
        function.__tool_type__ = tool_type
        function.__mutates_state__ = tool_type == _ToolType.WRITE if mutates_state is None else mutates_state
        return function
    return mark


class _ToolKitBase:
    def __init__(self, db: Any = None) -> None:
        self.db = db


class _DB(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def load(cls, path: str | Path) -> Any:
        return cls.model_validate_json(Path(path).read_text())


class _Logger:
    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []  # a package, so submodules can be set under it
    module.__dict__.update(attributes)
    return module


@contextlib.contextmanager
def _stand_ins(domain: str, data: Path) -> Iterator[None]:
    """The package modules the domain's two source files import, as stand-ins, during the import only."""
    upper = domain.upper()
    paths = {f"{upper}_DATA_DIR": data, f"{upper}_DB_PATH": data / "db.json", f"{upper}_POLICY_PATH": data / "policy.md",
             f"{upper}_TASK_SET_PATH": data / "tasks.json"}
    modules = {
        "tau2": _module("tau2"), "tau2.environment": _module("tau2.environment"),
        "tau2.environment.toolkit": _module("tau2.environment.toolkit", ToolKitBase=_ToolKitBase, ToolType=_ToolType,
                                            is_tool=_is_tool, is_discoverable_tool=_is_tool),
        "tau2.environment.db": _module("tau2.environment.db", DB=_DB),
        "tau2.domains": _module("tau2.domains"), f"tau2.domains.{domain}": _module(f"tau2.domains.{domain}"),
        f"tau2.domains.{domain}.utils": _module(f"tau2.domains.{domain}.utils", **paths),
    }
    if importlib.util.find_spec("loguru") is None:
        modules["loguru"] = _module("loguru", logger=_Logger())
    saved = {name: sys.modules[name] for name in modules if name in sys.modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name in [*modules, f"tau2.domains.{domain}.data_model", f"tau2.domains.{domain}.tools"]:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def _import(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class ToolMethod:
    name: str
    description: str
    params: tuple[tuple[str, dict[str, Any]], ...]  # (name, JSON schema), in call order
    writes: bool


@dataclass(frozen=True)
class Domain:
    """One domain of a checkout, loaded once per process: its tool class and database model (the checkout's own),
    the database as text (parsed afresh for every run), the policy, the tasks as the checkout stores them and
    its splits."""

    name: str
    root: Path
    toolkit: type
    db_model: type[BaseModel]
    db_text: str
    policy: str
    tasks: tuple[dict[str, Any], ...]
    splits: dict[str, list[str]]
    tools: tuple[ToolMethod, ...]
    source_hash: str

    def fresh_db(self) -> BaseModel:
        return self.db_model.model_validate_json(self.db_text)

    def toolkit_over(self, db: BaseModel) -> Any:
        return self.toolkit(db)


def checkout_root(path: Path) -> Path:
    """The checkout's root: `path` itself or its parent's parent when given `data/tau2` or `src/tau2`."""
    for candidate in (path, path.parent.parent):
        if (candidate / "src" / "tau2" / "domains").is_dir() and (candidate / "data" / "tau2" / "domains").is_dir():
            return candidate.resolve()
    raise UserError(f"{path}: not a tau2-bench checkout (no src/tau2/domains and data/tau2/domains here); get one "
                    f"with: {CLONE_HINT}")


def _schema(annotation: Any) -> dict[str, Any]:
    try:
        schema = TypeAdapter(annotation).json_schema()
    except Exception:  # an annotation pydantic cannot describe: any value
        return {}
    schema.pop("title", None)
    return schema


def _tool_methods(toolkit: type) -> tuple[ToolMethod, ...]:
    """The toolkit's tools (methods the checkout marks), each with its parameters' JSON schemas."""
    tools = []
    for name, member in inspect.getmembers(toolkit, inspect.isfunction):
        if not getattr(member, TOOL_MARK, False):
            continue
        hints = typing.get_type_hints(member)
        params = tuple((p.name, _schema(hints.get(p.name, Any)))
                       for p in list(inspect.signature(member).parameters.values())[1:])
        tools.append(ToolMethod(name, inspect.getdoc(member) or name, params, bool(member.__mutates_state__)))
    return tuple(tools)


@functools.cache
def load_domain(root: Path, domain: str) -> Domain:
    """A domain of the checkout at `root` (loaded once per process); a domain that is missing, unsupported or does
    not import is a UserError."""
    source, data = root / "src" / "tau2" / "domains" / domain, root / "data" / "tau2" / "domains" / domain
    if (source / DUAL_CONTROL_FILE).is_file():
        raise UserError(f"tau2 domain '{domain}': its user has tools too (dual control, {DUAL_CONTROL_FILE}), which "
                        f"this adapter does not support yet (supported: {', '.join(available_domains(root))})")
    needed = [source / "data_model.py", source / "tools.py", data / "db.json", data / "policy.md", data / "tasks.json"]
    missing = [str(p.relative_to(root)) for p in needed if not p.is_file()]
    if missing:
        raise UserError(f"{root}: tau2 domain '{domain}' lacks {', '.join(missing)} (a partial checkout? {CLONE_HINT})")
    try:
        with _stand_ins(domain, data):
            models = _import(f"tau2.domains.{domain}.data_model", source / "data_model.py")
            tools = _import(f"tau2.domains.{domain}.tools", source / "tools.py")
    except Exception as exc:  # the user's checkout: its failure is one line
        raise UserError(f"{root}: importing tau2 domain '{domain}' failed ({describe_exception(exc)})") from None
    toolkit = next((v for v in vars(tools).values() if isinstance(v, type) and issubclass(v, _ToolKitBase)
                    and v is not _ToolKitBase), None)
    db_model = next((v for v in vars(models).values() if isinstance(v, type) and issubclass(v, _DB) and v is not _DB),
                    None)
    if toolkit is None or db_model is None:
        raise UserError(f"{source}: no tool class or database model found in tools.py / data_model.py")
    split_file = data / "split_tasks.json"
    sources = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in needed}
    return Domain(domain, root, toolkit, db_model, (data / "db.json").read_text(), (data / "policy.md").read_text(),
                  tuple(json.loads((data / "tasks.json").read_text())),
                  json.loads(split_file.read_text()) if split_file.is_file() else {}, _tool_methods(toolkit),
                  hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()[:16])


def available_domains(root: Path) -> list[str]:
    """The checkout's domains this adapter runs: source and database present, no user tools (sorted)."""
    source = root / "src" / "tau2" / "domains"
    return sorted(d.name for d in source.iterdir() if (d / "tools.py").is_file() and not (d / DUAL_CONTROL_FILE).is_file()
                  and (root / "data" / "tau2" / "domains" / d.name / "db.json").is_file())


def plain(value: Any) -> Any:
    """A tool's result as JSON values (the checkout's tools return pydantic models, or lists of them)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def db_state(db: BaseModel) -> dict[str, Any]:
    return db.model_dump(mode="json")


def state_hash(state: dict[str, Any]) -> str:
    """The database's end state as one hash: sha256 of its JSON with sorted keys."""
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Replay:
    state_hash: str
    failed: tuple[str, ...]  # the actions that raised, as "name: error"


@functools.cache
def expected_end_state(root: Path, domain: str, task_id: str) -> Replay:
    """The end state the task's expected actions produce, replayed in order on a fresh database (cached per
    process)."""
    loaded = load_domain(root, domain)
    task = next((t for t in loaded.tasks if str(t["id"]) == task_id), None)
    if task is None:
        raise UserError(f"{root}: tau2 domain '{domain}' has no task '{task_id}'")
    db = loaded.fresh_db()
    toolkit = loaded.toolkit_over(db)
    failed = []
    for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
        try:
            getattr(toolkit, action["name"])(**(action.get("arguments") or {}))
        except Exception as exc:  # an expected action that fails leaves the state as the tool left it
            failed.append(f"{action['name']}: {describe_exception(exc)}")
    return Replay(state_hash(db_state(db)), tuple(failed))
