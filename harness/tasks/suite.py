"""Suites and tasks: YAML files under tasks/ loaded into frozen values, with errors naming file, task and field."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import UserError, describe_error, read_user_file
from harness.hashing import content_hash

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MAX_TURNS = 10


@dataclass(frozen=True)
class ServerRef:
    """A fixture or external server a task needs, with the options it is built with."""

    name: str
    size: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class ScorerSpec:
    """A scorer's registered name and its keyword arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.args)


@dataclass(frozen=True)
class Task:
    id: str
    category: str
    prompt: str
    expected: Any
    scorer: ScorerSpec
    reference: str
    servers: tuple[ServerRef, ...]
    max_turns: int = DEFAULT_MAX_TURNS
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def data_size(self) -> int | None:
        """The data size a scale-style task runs at: metadata `data_size`, else the largest server size."""
        if "data_size" in self.metadata:
            return int(self.metadata["data_size"])
        sizes = [s.size for s in self.servers if s.size is not None]
        return max(sizes) if sizes else None

    @functools.cached_property
    def content_hash(self) -> str:
        """16 hex digits of sha256 over what the agent is given and how it is scored (prompt, servers and their
        options, turn limit, expected answer, scorer, metadata). Rows carry it, so a baseline comparison or a
        resume can tell that a task changed under the same id. Id, category, tags and the reference solution
        are left out: renaming or regrouping a task does not change what is measured."""
        content = {"prompt": self.prompt, "servers": [[s.name, s.size, s.seed] for s in self.servers],
                   "max_turns": self.max_turns, "expected": self.expected,
                   "scorer": [self.scorer.name, [list(a) for a in self.scorer.args]], "metadata": self.metadata}
        return content_hash(content)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    tasks: tuple[Task, ...]
    path: Path

    def select(self, task_ids: list[str] | None) -> tuple[Task, ...]:
        """The tasks named by id (in suite order), or all; an unknown id is a user error."""
        if not task_ids:
            return self.tasks
        known = {t.id for t in self.tasks}
        unknown = [t for t in task_ids if t not in known]
        if unknown:
            raise UserError(f"suite '{self.name}' has no task {', '.join(map(repr, unknown))} "
                            f"(known: {', '.join(sorted(known))})")
        wanted = set(task_ids)
        return tuple(t for t in self.tasks if t.id in wanted)

    @property
    def server_names(self) -> tuple[str, ...]:
        return tuple(sorted({s.name for t in self.tasks for s in t.servers}))


# ---- YAML boundary (pydantic, extra="forbid") ----

ServerEntry = str | dict[str, dict[str, int]]
ScorerEntry = str | dict[str, dict[str, Any]]


class _TaskModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    category: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    expected: Any
    scorer: ScorerEntry
    reference: str = Field(min_length=1)
    servers: list[ServerEntry] | None = None
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=100)
    tags: list[str] = []
    metadata: dict[str, Any] = {}

    @field_validator("scorer")
    @classmethod
    def _one_scorer(cls, value: ScorerEntry) -> ScorerEntry:
        if isinstance(value, dict) and len(value) != 1:
            raise ValueError("short form takes exactly one scorer name, e.g. {numeric: {tolerance: 0.01}}")
        return value


class _SuiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = Field(min_length=1)
    description: str = ""
    servers: list[ServerEntry] = []
    tasks: list[dict[str, Any]] = Field(min_length=1)


def _server_ref(entry: ServerEntry) -> ServerRef:
    if isinstance(entry, str):
        return ServerRef(entry)
    if len(entry) != 1:
        raise ValueError("a server entry is a name or {name: {size: N, seed: S}}")
    (name, options), = entry.items()
    unknown = set(options or {}) - {"size", "seed"}
    if unknown:
        raise ValueError(f"server '{name}' has unknown option(s) {sorted(unknown)} (known: size, seed)")
    return ServerRef(name, size=(options or {}).get("size"), seed=(options or {}).get("seed", 0))


def _scorer_spec(entry: ScorerEntry) -> ScorerSpec:
    if isinstance(entry, str):
        return ScorerSpec(entry)
    (name, args), = entry.items()
    return ScorerSpec(name, tuple(sorted((args or {}).items())))


def parse_suite(data: Any, path: Path) -> Suite:
    """Validate a suite document already read from YAML; every problem names file, task and field."""
    from harness.tasks.scorers import check_scorer  # the registry lives there; imported late to avoid a cycle

    if not isinstance(data, dict):
        raise UserError(f"{path}: a suite file is a mapping with 'suite', 'servers' and 'tasks'")
    try:
        header = _SuiteModel.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: {describe_error(exc)}") from None
    try:
        default_servers = tuple(_server_ref(s) for s in header.servers)
    except ValueError as exc:
        raise UserError(f"{path}: field 'servers': {exc}") from None

    tasks: list[Task] = []
    seen: set[str] = set()
    for index, raw in enumerate(header.tasks):
        label = f"task '{raw.get('id')}'" if isinstance(raw, dict) and raw.get("id") else f"task #{index + 1}"
        try:
            model = _TaskModel.model_validate(raw)
        except ValidationError as exc:
            raise UserError(f"{path}: {label}: {describe_error(exc)}") from None
        if model.id in seen:
            raise UserError(f"{path}: {label}: field 'id': duplicate task id (ids are unique in a suite)")
        seen.add(model.id)
        try:
            servers = tuple(_server_ref(s) for s in model.servers) if model.servers is not None else default_servers
            scorer = _scorer_spec(model.scorer)
            check_scorer(scorer)
        except ValueError as exc:
            field_name = "scorer" if "scorer" in str(exc) else "servers"
            raise UserError(f"{path}: {label}: field '{field_name}': {exc}") from None
        if not servers:
            raise UserError(f"{path}: {label}: field 'servers': no servers (set them on the task or the suite)")
        tasks.append(Task(
            id=model.id, category=model.category, prompt=model.prompt.strip(), expected=model.expected,
            scorer=scorer, reference=model.reference, servers=servers, max_turns=model.max_turns,
            tags=tuple(model.tags), metadata=dict(model.metadata),
        ))
    return Suite(name=header.suite, description=header.description, tasks=tuple(tasks), path=path)


def load_suite_file(path: Path) -> Suite:
    text = read_user_file(path, "suite file")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise UserError(f"{path}: malformed YAML{where}: {problem}") from None
    return parse_suite(data, path)


def tasks_dirs() -> list[Path]:
    """Where suites are looked up: $HARNESS_TASKS_DIR, ./tasks, then the project's own tasks/."""
    dirs = [Path(os.environ["HARNESS_TASKS_DIR"])] if os.environ.get("HARNESS_TASKS_DIR") else []
    dirs += [Path.cwd() / "tasks", PROJECT_ROOT / "tasks"]
    unique: list[Path] = []
    for d in dirs:
        if d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def suite_files() -> dict[str, Path]:
    """Suite name (file stem) -> file, first directory wins."""
    found: dict[str, Path] = {}
    for directory in tasks_dirs():
        for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
            found.setdefault(path.stem, path)
    return found


def load_suite(name_or_path: str) -> Suite:
    """Load a suite by name (tasks/NAME.yaml) or by path to a YAML file."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        if not candidate.is_file():
            raise UserError(f"{candidate}: no such suite file")
        return load_suite_file(candidate)
    files = suite_files()
    if name_or_path not in files:
        known = ", ".join(sorted(files)) or "none"
        raise UserError(f"unknown suite '{name_or_path}' (known: {known}; or pass a path to a YAML file)")
    return load_suite_file(files[name_or_path])
