"""What a session keeps between its tasks in code-mode arms: a workspace/ folder and a skills/ folder.

A suite's session (harness.tasks.task.Session) runs its tasks in order; the runner hands each task the state the
previous one left (`SessionState`) in its context's slot (SampleContext.slot), and reads back the state this one
leaves. Any arm that runs code in a leased sandbox gets it by leasing through `session_lease` with that slot (code
mode and its variants, the hybrid arm and the reference agent do): the host writes the session's files into the lease before the
task's first code runs, defines `save_skill`, and reads the files back when the task ends (the pool's reset then
deletes them, so nothing leaks into another lease). `session_api` is what the model is told: the skills index
(names and one-line descriptions) and the workspace's files. Arms without a sandbox (direct, react) never lease
one: in a session their tasks just run in order and their rows' session columns stay null.

Skills are files: /skills/NAME.py, its module docstring's first line the description; `save_skill` writes one,
and so does code that writes a file there. A skill counts as used when code of the task imported it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from harness.sandbox import Sandbox, SandboxPolicy, SandboxPool, ToolDispatcher
from harness.sandbox.file_transfer import write_files_source
from harness.trace.transcript import Transcript

SKILLS_DIR, WORKSPACE_DIR = "/skills", "/workspace"
SKILLS_MODULE_PREFIX = "skills."
MAX_LISTED_FILES = 20  # workspace files named in the prompt; the rest are counted

SAVE_SKILL_PRELUDE = f'''
def __harness_make_save_skill(rules):
    import sys
    check = sys.modules["__main__"]._harness_rules.find_violation  # the policy's own rules (harness.sandbox.rules)
    rules = {{key: frozenset(value) for key, value in rules.items()}}

    def save_skill(name: str, source: str, description: str = "") -> str:
        """Save reusable Python source as {SKILLS_DIR}/NAME.py; later tasks of this session import it."""
        import ast, importlib, keyword, os
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"a skill's name is a Python identifier, not {{name!r}}")
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"the skill's source does not parse: {{exc.msg}} (line {{exc.lineno}})") from None
        rule = check(tree, **rules)
        if rule is not None:  # a skill runs as the task's code does: under the same policy
            raise ValueError(f"POLICY_VIOLATION in the skill's source: {{rule}}")
        first = " ".join(str(description).split())
        text = (repr(first) + "\\n" if first else "") + source
        os.makedirs("{SKILLS_DIR}", exist_ok=True)
        with open(f"{SKILLS_DIR}/{{name}}.py", "w") as handle:
            handle.write(text if text.endswith("\\n") else text + "\\n")
        importlib.invalidate_caches()
        return f"saved skills/{{name}}.py: import it with `from skills.{{name}} import ...`"

    return save_skill
'''

# A skill is a module of its own: its functions see the tools (and final_answer, save_skill) as builtins, as the
# task's code sees them as globals; the reset between leases restores builtins. The task's callables are shared
# when the lease starts and again whenever code imports from `skills`, so a skill also sees the tools the task's
# code imported itself (codemode-files defines none up front: `from servers.crm import f` is how code gets one).
# "/" on sys.path makes /skills the package `skills`.
SKILLS_SEE_TOOLS = """
def __harness_share_tools():
    import builtins, sys
    user = globals()

    def share():
        for name, value in list(user.items()):
            if not name.startswith("_") and callable(value) and not hasattr(builtins, name):
                setattr(builtins, name, value)

    original = builtins.__import__

    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "skills" or name.startswith("skills.")):
            share()
        return original(name, globals, locals, fromlist, level)

    share()
    builtins.__import__ = importing
    sys.path.insert(0, "/")
__harness_share_tools()
del __harness_share_tools
"""

SAVE_SKILL_STUB = f'''def save_skill(name: str, source: str, description: str) -> str:
    """Save reusable Python source (functions; they may call the tools above) as {SKILLS_DIR}/NAME.py for the
    later tasks of this session, which import it with `from skills.NAME import FUNCTION`. `description`: one line."""'''


@dataclass(frozen=True)
class SessionState:
    """What a session holds between tasks: its files (absolute path -> bytes, under SKILLS_DIR and WORKSPACE_DIR)
    and, in a session sharing server state, each fixture server's state as JSON text (fixtures_servers.dump_state)."""

    files: tuple[tuple[str, bytes], ...] = ()
    servers: tuple[tuple[str, str], ...] = ()

    @property
    def server_states(self) -> dict[str, dict[str, Any]]:
        return {name: json.loads(text) for name, text in self.servers}

    @property
    def as_dict(self) -> dict[str, bytes]:
        return dict(self.files)

    def under(self, folder: str) -> dict[str, bytes]:
        return {path: data for path, data in self.files if path.startswith(folder + "/")}

    @property
    def workspace_files(self) -> tuple[str, ...]:
        return tuple(path[len(WORKSPACE_DIR) + 1:] for path in self.under(WORKSPACE_DIR))

    @property
    def skills(self) -> dict[str, str]:
        """Skill name -> its one-line description (the module docstring's first line; "" if none or unreadable)."""
        found: dict[str, str] = {}
        for path, data in self.under(SKILLS_DIR).items():
            name = path[len(SKILLS_DIR) + 1:]
            if "/" in name or not name.endswith(".py") or not name[:-3].isidentifier():
                continue
            found[name[:-3]] = _first_doc_line(data)
        return dict(sorted(found.items()))

    def to_json(self) -> dict[str, Any]:
        return {"files": {path: data.decode("latin-1") for path, data in self.files}, "servers": dict(self.servers)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> SessionState:
        return SessionState(tuple(sorted((p, t.encode("latin-1")) for p, t in data.get("files", {}).items())),
                            tuple(sorted(data.get("servers", {}).items())))


def _first_doc_line(source: bytes) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source.decode("utf-8", errors="replace"))) or ""
    except (SyntaxError, ValueError):
        return ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


@dataclass(frozen=True)
class SessionPlace:
    """Where a task stands in its session: the session's id, the task's 0-based position among the session's
    tasks this run runs, what it starts from, and which parts are on (the session's declaration and the
    scaffold's `skills` / `workspace` together)."""

    session: str
    position: int
    before: SessionState
    skills: bool
    workspace: bool
    shared_servers: bool = False

    @property
    def active(self) -> bool:
        return self.skills or self.workspace

    @property
    def folders(self) -> tuple[str, ...]:
        return (SKILLS_DIR,) * self.skills + (WORKSPACE_DIR,) * self.workspace

    def starting_files(self) -> dict[str, bytes]:
        return {p: d for folder in self.folders for p, d in self.before.under(folder).items()}


@dataclass
class SessionSlot:
    """One run of a task at its place in a session: the lease fills in what the task leaves and what its code
    imported. `after` stays None when the arm ran no sandbox (or the task ended before its lease did)."""

    place: SessionPlace
    after: SessionState | None = None
    used: tuple[str, ...] = ()
    servers_after: dict[str, dict[str, Any]] | None = None  # the fixture servers' state at the task's end

    @property
    def state_after(self) -> SessionState:
        """What the next task of the session starts from: the files the lease read back (the ones it started
        with if it ended before its lease did), and the servers' state if the session shares it."""
        before = self.place.before
        files = (self.after or before).files
        if self.servers_after is None:
            return SessionState(files, before.servers)
        return SessionState(files, tuple(sorted((name, json.dumps(state, default=str))
                                                for name, state in self.servers_after.items())))

    @property
    def skills_saved(self) -> tuple[str, ...]:
        """Skills this task added or changed."""
        if self.after is None:
            return ()
        before, after = self.place.before.as_dict, self.after.as_dict
        return tuple(name for name in self.after.skills
                     if after.get(f"{SKILLS_DIR}/{name}.py") != before.get(f"{SKILLS_DIR}/{name}.py"))


def active_slot(slot: SessionSlot | None) -> SessionSlot | None:
    """The task's session place when skills or the workspace are on (None otherwise)."""
    return slot if slot is not None and slot.place.active else None


def shared_servers_slot(slot: SessionSlot | None) -> SessionSlot | None:
    """The task's session place when its session shares server state (None otherwise)."""
    return slot if slot is not None and slot.place.shared_servers else None


def session_api(slot: SessionSlot | None) -> str:
    """What the model is told about its session, after the tool API: save_skill and the skills index (skills on),
    the workspace's files (workspace on); empty outside a session."""
    slot = active_slot(slot)
    if slot is None:
        return ""
    parts = []
    place = slot.place
    if place.skills:
        skills = place.before.skills
        index = "\n".join(f"#   {name}: {text}" if text else f"#   {name}" for name, text in skills.items())
        parts.append(f"{SAVE_SKILL_STUB}\n\n# Skills saved by earlier tasks of this session "
                     f"(`from skills.NAME import ...`):\n{index or '#   (none yet)'}")
    if place.workspace:
        names = place.before.workspace_files
        listed = ", ".join(names[:MAX_LISTED_FILES]) + (f" and {len(names) - MAX_LISTED_FILES} more"
                                                         if len(names) > MAX_LISTED_FILES else "")
        parts.append(f"# Files in {WORKSPACE_DIR}/ persist to the later tasks of this session; there now: "
                     f"{listed or '(none yet)'}")
    return "\n\n".join(parts)


def session_prelude(place: SessionPlace, policy: SandboxPolicy) -> str:
    """Trusted code run at the start of the lease (and again if the interpreter is replaced): the session's files,
    its folders, and with skills save_skill (checking a skill's source against `policy`), the tools as builtins
    and "/" on sys.path so `skills` imports as a package."""
    code = write_files_source(place.starting_files(), make_dirs=place.folders)
    if place.skills:
        rules = {key: sorted(value) for key, value in policy.rules().items()}
        code += (f"{SAVE_SKILL_PRELUDE}save_skill = __harness_make_save_skill({json.dumps(rules)})\n"
                 f"del __harness_make_save_skill\n{SKILLS_SEE_TOOLS}")
    return code


def carried_text(slot: SessionSlot | None) -> str:
    """The text of the files the task starts from in its session: values in them (ids a former task looked up)
    count as seen by the id guard, as they would had this task looked them up itself."""
    slot = active_slot(slot)
    if slot is None:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace") for data in slot.place.starting_files().values())


@asynccontextmanager
async def session_lease(pool: SandboxPool, dispatcher: ToolDispatcher, slot: SessionSlot | None, prelude: str = "",
                        policy: SandboxPolicy | None = None, transcript: Transcript | None = None,
                        **options: Any) -> AsyncIterator[Sandbox]:
    """`pool.lease` (`options` go to it as they are), in the task's session if it is in one (`slot`, the run's
    context's): the lease's policy (the arm's, else the pool's) lets code use files and skills, the session's files
    are written first, and read back (with the skills its code imported) into the slot when the task's code is
    done. Every arm that runs code in a leased sandbox leases through here, so each gets its session alike; a lease
    that waited for its sandbox to boot records that wait in the run's `transcript` as start-up (a row's
    cold_start_s), not as the run's own time."""
    if slot is not None:  # files, even with both parts off
        policy = (policy or pool.policy).in_session()
    slot = active_slot(slot)
    booting = (lambda: transcript.setting_up("sandbox boot")) if transcript is not None else None
    if slot is None:
        async with pool.lease(dispatcher, prelude=prelude, policy=policy, booting=booting, **options) as sandbox:
            yield sandbox
        return
    assert policy is not None
    async with pool.lease(dispatcher, prelude=prelude + "\n" + session_prelude(slot.place, policy), policy=policy,
                          booting=booting, **options) as sandbox:
        yield sandbox
        place = slot.place
        files, _left_out = await sandbox.read_files(place.folders)  # past the read limit: not carried
        kept = {p: d for p, d in place.before.as_dict.items() if not any(p.startswith(f + "/") for f in place.folders)}
        slot.after = SessionState(tuple(sorted({**kept, **files}.items())))
        slot.used = await sandbox.imported_modules(SKILLS_MODULE_PREFIX) if place.skills else ()
