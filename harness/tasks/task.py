"""What a suite is made of, as frozen values: a Task (prompt, system instructions, expected answer, scorer, servers,
turn limit) and the Suite that holds them. Loading them from YAML is harness.tasks.suite."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import UserError, describe_error
from harness.hashing import content_hash

DEFAULT_MAX_TURNS = 10
DEFAULT_CATEGORY = "uncategorized"


# Who may call a server's tools in an arm that offers both ways (the hybrid arm): the model through native tool
# calling ("direct", Anthropic's word in `allowed_callers`: the caller, not the arm of that name), or code it runs
# in the sandbox ("code").
ToolCaller = Literal["direct", "code"]
TOOL_CALLERS: tuple[ToolCaller, ...] = get_args(ToolCaller)


def parse_callers(values: Any) -> tuple[ToolCaller, ...]:
    """A `callers` list as given in a suite or mcp_servers.json: a non-empty list of known callers, each once
    (a ValueError saying what is wrong otherwise). An empty list would leave a server's tools unreachable."""
    if not isinstance(values, list) or not values:
        raise ValueError(f"'callers' is a non-empty list of {', '.join(TOOL_CALLERS)}, e.g. [{', '.join(TOOL_CALLERS)}]")
    unknown = [v for v in values if v not in TOOL_CALLERS]
    if unknown:
        raise ValueError(f"unknown caller {unknown[0]!r} in 'callers' (known: {', '.join(TOOL_CALLERS)})")
    if len(set(values)) != len(values):
        raise ValueError("'callers' names a caller twice")
    return tuple(c for c in TOOL_CALLERS if c in values)


# Why a task's end state already holds on fresh servers, by design (`state_holds_at_start` in a suite file): its
# right outcome is to change nothing when the record is already as asked ("restraint": close it unless it is closed)
# or a write that leaves the record as it was ("idempotent": set a status it already has). `harness validate`'s
# no-action check (harness.run.no_action) then asks for a call check that fails with no calls instead: an agent
# that only guesses must still fail, so the task checks that the agent read the record.
StateHoldsAtStart = Literal["restraint", "idempotent"]
STATE_HOLDS_AT_START: tuple[StateHoldsAtStart, ...] = get_args(StateHoldsAtStart)


@dataclass(frozen=True)
class ServerRef:
    """A fixture or external server a task needs, with the options it is built with. `source` names where a
    benchmark's server comes from (`ADAPTER:PATH`, harness.adapters); empty for fixtures and external ones.
    `callers`: who may call its tools in the hybrid arm, as the suite declares it (None: not declared here, so
    an external server's own entry in mcp_servers.json decides, else both)."""

    name: str
    size: int | None = None
    seed: int = 0
    source: str = ""
    callers: tuple[ToolCaller, ...] | None = None


class _ServerOptions(BaseModel):
    """A server's options as a suite file writes them: `{crm: {size: 50, seed: 1, callers: [code]}}`."""

    model_config = ConfigDict(extra="forbid")

    size: int | None = None
    seed: int = 0
    callers: list[str] | None = None


def _server_ref(entry: Any, label: str, at: str) -> ServerRef:
    """A task's server given from Python: a ServerRef, a name, or `{name: {size, seed, callers}}` as a suite file
    writes it; anything else is a UserError naming the task (`label`), the entry (`at`, `servers[0]`) and the value."""
    if isinstance(entry, ServerRef):
        return entry
    if isinstance(entry, str) and entry:
        return ServerRef(entry)
    if not (isinstance(entry, dict) and len(entry) == 1 and isinstance(next(iter(entry)), str)):
        raise UserError(f"{label}: field '{at}': {entry!r} is not valid: expected a server name, "
                        "{name: {size, seed, callers}} or a ServerRef")
    (name, options), = entry.items()
    try:
        model = _ServerOptions.model_validate(options or {})
        callers = parse_callers(model.callers) if model.callers is not None else None
    except ValidationError as exc:
        raise UserError(f"{label}: {describe_error(exc, options, at=f'{at}.{name}')}") from None
    except ValueError as exc:
        raise UserError(f"{label}: field '{at}.{name}.callers': {exc}") from None
    return ServerRef(name, size=model.size, seed=model.seed, callers=callers)


@dataclass(frozen=True)
class ScorerSpec:
    """A scorer's registered name and its keyword arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.args)


ScorerEntry = str | dict[str, dict[str, Any]]  # a scorer as a suite file writes it: a name, or {name: {args}}


def scorer_spec(entry: ScorerEntry | ScorerSpec) -> ScorerSpec:
    """A scorer as a suite file or the Python API writes it, as a spec: `exact`, or `{numeric: {tolerance: 0.01}}`."""
    if isinstance(entry, ScorerSpec):
        return entry
    if isinstance(entry, str):
        return ScorerSpec(entry)
    if not isinstance(entry, dict) or len(entry) != 1:
        raise ValueError("a scorer entry is a name or {name: {argument: value}}")
    (name, args), = entry.items()
    return ScorerSpec(name, tuple(sorted((args or {}).items())))


@dataclass(frozen=True)
class UserScenario:
    """A conversation task's simulated user: the scenario a second model (the run's user model) plays, in its own
    words (who the user is, what they want, what they know and do not). With one, a reply of the agent without an
    action is a message to the user, and the run ends when the user ends the conversation
    (harness.agents.conversation)."""

    instructions: str
    # a scripted user's messages, one per turn (a benchmark's fixed user turns): no user model plays it
    # (harness.agents.conversation.ScriptedUser); empty: the instructions are played by the user model
    turns: tuple[str, ...] = ()
    # a reference solution per turn (Python, as Task.reference), which `scripted:reference` and `harness validate`
    # give turn by turn (harness.agents.turn_reference); empty: the task's reference, if any, is one
    references: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.references and len(self.references) != len(self.turns):
            raise UserError(f"a scripted user's references are one per turn: {len(self.references)} for "
                            f"{len(self.turns)} turns")


@dataclass(frozen=True, kw_only=True)
class Task:
    """One thing to ask an agent. `reference` is a Python solution that `validate` and `scripted:reference` run;
    None when the task has none (a benchmark imported from elsewhere): it is then checked by its scorer only. A task
    whose scripted user gives fixed turns may have its reference per turn (`UserScenario.references`; `reference`
    is then their code in order).
    `system_instructions`: rules the agent works under for the whole run (a benchmark's policy), which every arm
    puts in its system message after its own instructions (harness.agents.chat.system_prompt); empty: none, the
    prompt alone says what to do. Built by keyword; from Python a scorer may be written as a suite file writes it
    (`"exact"`, `{"numeric": {"tolerance": 0.01}}`) and servers by name (`["crm"]`) or with their options
    (`[{"crm": {"size": 50}}]`). `state_holds_at_start` declares that the scorer's end-state check holds before the
    agent acts, by design (StateHoldsAtStart)."""

    id: str
    category: str = DEFAULT_CATEGORY
    prompt: str
    expected: Any
    scorer: ScorerSpec = ScorerSpec("exact")
    reference: str | None = None
    servers: tuple[ServerRef, ...] = ()
    max_turns: int = DEFAULT_MAX_TURNS
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    user: UserScenario | None = None  # a conversation task's simulated user (None: one instruction, one answer)
    system_instructions: str = ""
    # the task's state check holds on fresh servers by design (restraint, idempotency); None: it must not
    state_holds_at_start: StateHoldsAtStart | None = None

    def __post_init__(self) -> None:
        """Values written as a suite file writes them become the task's types (a scorer name, server names)."""
        try:
            object.__setattr__(self, "scorer", scorer_spec(self.scorer))
        except ValueError as exc:
            raise UserError(f"task '{self.id}': field 'scorer': {exc}") from None
        servers = (self.servers,) if isinstance(self.servers, (str, ServerRef, dict)) else self.servers
        object.__setattr__(self, "servers", tuple(_server_ref(entry, f"task '{self.id}'", f"servers[{index}]")
                                                  for index, entry in enumerate(servers)))
        object.__setattr__(self, "tags", tuple(self.tags))
        if isinstance(self.user, str):
            object.__setattr__(self, "user", UserScenario(self.user))

    @property
    def data_size(self) -> int | None:
        """The data size a scale-style task runs at: metadata `data_size`, else the largest server size (not for a
        catalogue task: its servers' size counts tools, not rows)."""
        if "data_size" in self.metadata:
            return int(self.metadata["data_size"])
        sizes = [s.size for s in self.servers if s.size is not None]
        return max(sizes) if sizes and self.catalogue_size is None else None

    @property
    def catalogue_size(self) -> int | None:
        """The number of tools a catalogue-suite task runs with (metadata `catalogue_size`, set when a suite's tasks
        are made once per size: harness.tasks.suite), else None."""
        return int(self.metadata["catalogue_size"]) if "catalogue_size" in self.metadata else None

    @functools.cached_property
    def content_hash(self) -> str:
        """16 hex digits of sha256 over what the agent is given and how it is scored (prompt, system instructions,
        servers and their options, turn limit, expected answer, scorer, metadata). Rows carry it, so a baseline
        comparison or a resume can tell that a task changed under the same id. Id, category, tags, the reference
        solution and `state_holds_at_start` (a declaration for validation) are left out: renaming or regrouping a task does not change what is measured."""
        # a server's callers count only where declared, so declaring none leaves a task's hash as it was
        servers = [[s.name, s.size, s.seed] + ([list(s.callers)] if s.callers is not None else [])
                   for s in self.servers]
        content = {"prompt": self.prompt, "servers": servers,
                   "max_turns": self.max_turns, "expected": self.expected,
                   "scorer": [self.scorer.name, [list(a) for a in self.scorer.args]], "metadata": self.metadata}
        if self.user is not None:  # a task without a user hashes as before users existed
            content["user"] = self.user.instructions
            if self.user.turns:
                content["user_turns"] = list(self.user.turns)
        if self.system_instructions:  # likewise a task without system instructions
            content["system_instructions"] = self.system_instructions
        return content_hash(content)


@dataclass(frozen=True)
class Session:
    """An ordered chain of a suite's tasks that share what the agent leaves behind: each session runs its tasks in
    this order, once per arm and epoch, fresh for each (harness.run.sessions). `skills`: code-mode arms may save
    functions under skills/ that later tasks import; `workspace`: files under workspace/ persist to later tasks.
    Both are off unless the session declares them (what it is built for); the run's scaffold may still switch
    either off.
    `shared_servers`: each task starts from the state the previous task left its fixture servers in (a workflow
    that continues an earlier task's change); otherwise every task gets fresh servers, as outside a session."""

    id: str
    tasks: tuple[str, ...]
    skills: bool = False
    workspace: bool = False
    shared_servers: bool = False


@dataclass(frozen=True)
class Suite:
    """A named set of tasks. `path` is its file (or a benchmark's folder); `spec` is what loads it again
    (`--suite`, a resumed run's manifest, with `catalogue_sizes`): the file's path unless a benchmark adapter set
    `ADAPTER:PATH`."""

    name: str
    description: str
    tasks: tuple[Task, ...]
    path: Path
    spec: str = ""
    sessions: tuple[Session, ...] = ()
    catalogue_sizes: tuple[int, ...] = ()  # the sizes its tasks were made at (a suite declaring catalogue_sizes)

    @property
    def load_spec(self) -> str:
        return self.spec or str(self.path.resolve())

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

    def session_of(self, task_id: str) -> tuple[Session, int] | None:
        """The session a task belongs to and its 0-based position there, or None (a task runs on its own)."""
        for session in self.sessions:
            if task_id in session.tasks:
                return session, session.tasks.index(task_id)
        return None

    @property
    def server_names(self) -> tuple[str, ...]:
        return tuple(sorted({s.name for t in self.tasks for s in t.servers}))
