"""Suite files: YAML under tasks/ read into the frozen values of harness.tasks.task, with errors naming file,
task and field (a scorer name or argument is checked against the scorer registry while loading, and the
expected value against its scorer: a regex that does not compile is an error here, before any run)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.env import checkout_root
from harness.errors import UserError, describe_error, read_user_file
from harness.tasks.scorers import ExpectedValueError, Probe, build_scorer, check_scorer, scorer_spec
from harness.tasks.task import (
    DEFAULT_CATEGORY,
    DEFAULT_MAX_TURNS,
    TOOL_CALLERS,
    ScorerEntry,
    ScorerSpec,
    ServerRef,
    Session,
    StateHoldsAtStart,
    Suite,
    Task,
    UserScenario,
    parse_callers,
)

# The wheel's copy of the checkout's tasks/ (pyproject.toml maps this package onto that folder).
INSTALLED_SUITES = Path(__file__).resolve().parents[1] / "builtin_suites"

# ---- YAML boundary (pydantic, extra="forbid") ----

ServerEntry = str | dict[str, dict[str, int | list[str]]]


def _instructions(value: str | None) -> str | None:
    """System instructions in a suite file: text, or the field left out (blank text would only hide a mistake)."""
    if value is not None and not value.strip():
        raise ValueError("system instructions are text (leave the field out for none)")
    return value


class _TaskModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    category: str = Field(default=DEFAULT_CATEGORY, min_length=1)
    prompt: str = ""  # required unless the task has a user (checked in parse_suite, naming the field)
    system_instructions: str | None = Field(default=None, min_length=1)
    user: str | None = Field(default=None, min_length=1)  # the scenario a simulated user plays: a conversation task
    expected: Any
    scorer: ScorerEntry
    reference: str | None = Field(default=None, min_length=1)
    servers: list[ServerEntry] | None = None
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=100)
    tags: list[str] = []
    metadata: dict[str, Any] = {}
    state_holds_at_start: StateHoldsAtStart | None = None  # by design: restraint | idempotent (harness.tasks.task)

    @field_validator("system_instructions")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        return _instructions(value)

    @field_validator("scorer")
    @classmethod
    def _one_scorer(cls, value: ScorerEntry) -> ScorerEntry:
        if isinstance(value, dict) and len(value) != 1:
            raise ValueError("short form takes exactly one scorer name, e.g. {numeric: {tolerance: 0.01}}")
        return value


class _SessionModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    tasks: list[str] = Field(min_length=1)
    skills: bool = False
    workspace: bool = False
    shared_servers: bool = False


class _SuiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = Field(min_length=1)
    description: str = ""
    servers: list[ServerEntry] = []
    system_instructions: str | None = Field(default=None, min_length=1)  # every task's, unless it sets its own
    tasks: list[dict[str, Any]] = Field(min_length=1)
    sessions: list[dict[str, Any]] = []
    catalogue_sizes: list[int] | None = Field(default=None, min_length=1)  # the sizes a run takes by default

    @field_validator("system_instructions")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        return _instructions(value)


def parse_sessions(raw: list[Any], task_ids: list[str], path: Path) -> tuple[Session, ...]:
    """The suite's sessions: each names tasks of the suite, in the order they run; a task is in one session at
    most (its skills and workspace come from one chain). Every problem is one line naming the session."""
    sessions: list[Session] = []
    owner: dict[str, str] = {}
    for index, entry in enumerate(raw):
        label = f"session '{entry.get('id')}'" if isinstance(entry, dict) and entry.get("id") else f"session #{index + 1}"
        try:
            model = _SessionModel.model_validate(entry)
        except ValidationError as exc:
            raise UserError(f"{path}: {label}: {describe_error(exc)}") from None
        if any(s.id == model.id for s in sessions):
            raise UserError(f"{path}: {label}: field 'id': duplicate session id (ids are unique in a suite)")
        for task_id in model.tasks:
            if task_id not in task_ids:
                raise UserError(f"{path}: {label}: field 'tasks': no task '{task_id}' in this suite")
            if task_id in owner:
                where = "twice in this session" if owner[task_id] == model.id else f"also in session '{owner[task_id]}'"
                raise UserError(f"{path}: {label}: field 'tasks': task '{task_id}' is {where} (a task belongs to "
                                "one session at most)")
            owner[task_id] = model.id
        sessions.append(Session(model.id, tuple(model.tasks), skills=model.skills, workspace=model.workspace,
                                shared_servers=model.shared_servers))
    return tuple(sessions)


def _server_ref(entry: ServerEntry) -> ServerRef:
    if isinstance(entry, str):
        return ServerRef(entry)
    if len(entry) != 1:
        raise ValueError(f"a server entry is a name or {{name: {{size: N, seed: S, callers: "
                         f"[{', '.join(TOOL_CALLERS)}]}}}}")
    (name, options), = entry.items()
    options = options or {}
    unknown = set(options) - {"size", "seed", "callers"}
    if unknown:
        raise ValueError(f"server '{name}' has unknown option(s) {sorted(unknown)} (known: size, seed, callers)")
    for key in ("size", "seed"):
        if isinstance(options.get(key), list):
            raise ValueError(f"server '{name}': option '{key}' is a number")  # noqa: TRY004 (the file's error)
    try:
        callers = parse_callers(options["callers"]) if "callers" in options else None
    except ValueError as exc:
        raise ValueError(f"server '{name}': {exc}") from None
    return ServerRef(name, size=options.get("size"), seed=options.get("seed", 0), callers=callers)


def _check_probe_servers(probes: tuple[Probe, ...], servers: tuple[ServerRef, ...]) -> None:
    """A probe reads one of the task's own servers: any other has no session to call after the run."""
    names = {s.name for s in servers}
    for probe in probes:
        if probe.server not in names:
            raise ValueError(f"scorer 'probe' argument 'server': '{probe.server}' is not one of the task's servers "
                             f"({', '.join(sorted(names))})")


def _check_task_scorer(path: Path, label: str, scorer: ScorerSpec, expected: Any) -> None:
    try:
        check_scorer(scorer, expected)
    except ExpectedValueError as exc:
        raise UserError(f"{path}: {label}: field 'expected': {exc}") from None
    except ValueError as exc:
        raise UserError(f"{path}: {label}: field 'scorer': {exc}") from None


def check_scorers(suite: Suite) -> None:
    """Every task's scorer builds and can read its expected value: for suites made in Python or by an
    adapter, which do not pass through `parse_suite`."""
    for task in suite.tasks:
        _check_task_scorer(suite.path, f"task '{task.id}'", task.scorer, task.expected)


def parse_suite(data: Any, path: Path, catalogue_sizes: tuple[int, ...] | None = None) -> Suite:
    """Validate a suite document already read from YAML; every problem names file, task and field."""
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
        if not model.prompt.strip() and model.user is None:
            raise UserError(f"{path}: {label}: field 'prompt': Field required (only a task with a 'user' can leave "
                            "it out)")
        if model.id in seen:
            raise UserError(f"{path}: {label}: field 'id': duplicate task id (ids are unique in a suite)")
        seen.add(model.id)
        try:
            servers = tuple(_server_ref(s) for s in model.servers) if model.servers is not None else default_servers
        except ValueError as exc:
            raise UserError(f"{path}: {label}: field 'servers': {exc}") from None
        try:
            scorer = scorer_spec(model.scorer)
        except ValueError as exc:
            raise UserError(f"{path}: {label}: field 'scorer': {exc}") from None
        _check_task_scorer(path, label, scorer, model.expected)
        try:
            _check_probe_servers(build_scorer(scorer).probes(), servers)
        except ValueError as exc:
            raise UserError(f"{path}: {label}: field 'scorer': {exc}") from None
        if not servers:
            raise UserError(f"{path}: {label}: field 'servers': no servers (set them on the task or the suite)")
        tasks.append(Task(
            id=model.id, category=model.category, prompt=model.prompt.strip(), expected=model.expected,
            scorer=scorer, reference=model.reference, servers=servers, max_turns=model.max_turns,
            tags=tuple(model.tags), metadata=dict(model.metadata),
            system_instructions=(model.system_instructions or header.system_instructions or "").strip(),
            user=UserScenario(model.user.strip()) if model.user is not None else None,
            state_holds_at_start=model.state_holds_at_start,
        ))
    sessions = parse_sessions(header.sessions, [t.id for t in tasks], path)
    sizes = _catalogue_sizes(header, catalogue_sizes, path)
    if sizes and sessions:
        raise UserError(f"{path}: field 'sessions': a suite with catalogue_sizes cannot have sessions (its tasks "
                        "are made once per size)")
    if sizes:
        tasks = [at_catalogue_size(task, size) for size in sizes for task in tasks]
    return Suite(name=header.suite, description=header.description, tasks=tuple(tasks), path=path, sessions=sessions,
                 catalogue_sizes=sizes)


def _catalogue_sizes(header: _SuiteModel, chosen: tuple[int, ...] | None, path: Path) -> tuple[int, ...]:
    """The sizes a suite's tasks are made at: those chosen (`--catalogue-size`), else the suite's own; a suite that
    declares none takes none."""
    if header.catalogue_sizes is None:
        if chosen:
            raise UserError(f"--catalogue-size: suite '{header.suite}' ({path}) takes no catalogue size (only a "
                            "suite declaring catalogue_sizes does, like catalogue)")
        return ()
    sizes = tuple(chosen or header.catalogue_sizes)
    where = "--catalogue-size" if chosen else f"{path}: field 'catalogue_sizes'"
    if any(size < 1 for size in sizes) or len(set(sizes)) != len(sizes):
        raise UserError(f"{where}: sizes are distinct whole numbers of tools, e.g. 16,64,256,1024")
    return sizes


def at_catalogue_size(task: Task, size: int) -> Task:
    """A catalogue suite's task made for one size: its id ends in `-SIZE`, every server it names is built with
    `size` (a catalogue server's size is the number of tools of the whole catalogue), and metadata
    `catalogue_size` records it (the rows' `catalogue_size` column)."""
    return replace(task, id=f"{task.id}-{size}", servers=tuple(replace(s, size=size) for s in task.servers),
                   metadata={**task.metadata, "catalogue_size": size})


def load_suite_file(path: Path, catalogue_sizes: tuple[int, ...] | None = None) -> Suite:
    text = read_user_file(path, "suite file")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise UserError(f"{path}: malformed YAML{where}: {problem}") from None
    return parse_suite(data, path, catalogue_sizes)


def builtin_suites_dir() -> Path:
    """The suites that ship with the harness: the checkout's live tasks/ when the package runs from source
    (an editable install, PYTHONPATH), else the copy an installed wheel carries, so a run works from any folder."""
    root = checkout_root()
    return root / "tasks" if root else INSTALLED_SUITES


def tasks_dirs() -> list[Path]:
    """Where suites are looked up: $HARNESS_TASKS_DIR, ./tasks, then the built-in suites."""
    dirs = [Path(os.environ["HARNESS_TASKS_DIR"])] if os.environ.get("HARNESS_TASKS_DIR") else []
    dirs += [Path.cwd() / "tasks", builtin_suites_dir()]
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


def load_suite(name_or_path: str, catalogue_sizes: tuple[int, ...] | None = None) -> Suite:
    """Load a suite by name (tasks/NAME.yaml) or by path to a YAML file; `catalogue_sizes` (`--catalogue-size`)
    replaces the sizes a catalogue suite declares."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        if candidate.is_dir():
            raise UserError(f"{candidate}: a folder, not a suite file (give a YAML file in it, or a suite name: "
                            "`harness suites` lists them)")
        if not candidate.is_file():
            raise UserError(f"{candidate}: no such suite file")
        return load_suite_file(candidate, catalogue_sizes)
    files = suite_files()
    if name_or_path not in files:
        known = ", ".join(sorted(files)) or "none"
        raise UserError(f"unknown suite '{name_or_path}' (known: {known}; or pass a path to a YAML file)")
    return load_suite_file(files[name_or_path], catalogue_sizes)
