"""Sessions in a run: which samples form a chain (one session's tasks, in order, for one arm and epoch), and the
state each chain carries from task to task, kept on disk beside the results so a resumed run goes on from where
the chain stopped instead of from nothing.

A chain runs its samples one after another; different chains (other sessions, arms, epochs, and every task
outside a session, a chain of one) run concurrently. After each task the state it left is appended to
`<run>.sessions.jsonl` (fsync'd) before its row is stored, so on resume the first task of a chain without a row
finds the state its predecessor left: the row and the state never disagree in the direction that matters (a
state written whose row was lost makes the task run again from the state before it, also on file).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import fixtures_servers
from harness.agents.scaffold import Scaffold
from harness.agents.sessions import SessionPlace, SessionSlot, SessionState
from harness.errors import UserError
from harness.run.reference import ReferenceTrace
from harness.tasks.task import Suite, Task


def check_shared_servers(suite: Suite) -> None:
    """A session that shares server state carries each fixture server's state to its next task; any other server
    (external, a benchmark's) starts fresh for every run, so such a session is refused before any run."""
    fixtures = set(fixtures_servers.available())
    tasks = {t.id: t for t in suite.tasks}
    for session in suite.sessions:
        if not session.shared_servers:
            continue
        for task_id in session.tasks:
            other = next((ref for ref in tasks[task_id].servers if ref.source or ref.name not in fixtures), None)
            if other is not None:
                raise UserError(f"{suite.path}: session '{session.id}': shared_servers keeps the state of fixture "
                                f"servers only, and task '{task_id}' uses '{other.name}' (started fresh for every "
                                "run): drop shared_servers, or seed that server's state yourself")


def chain_key(session: str, arm: str, epoch: int) -> str:
    return f"{session}/{arm}/{epoch}"


def session_chains(suite: Suite, tasks: tuple[Task, ...]) -> list[tuple[str | None, tuple[Task, ...]]]:
    """The tasks as chains, in suite order of each chain's first task: (session id, its tasks in session order)
    for each session with a task among `tasks`, (None, (task,)) for every other task."""
    chosen = {t.id: t for t in tasks}
    chains: list[tuple[str | None, tuple[Task, ...]]] = []
    placed: set[str] = set()
    for task in tasks:
        if task.id in placed:
            continue
        found = suite.session_of(task.id)
        if found is None:
            chains.append((None, (task,)))
            continue
        session = found[0]
        members = tuple(chosen[t] for t in session.tasks if t in chosen)
        placed.update(t.id for t in members)
        chains.append((session.id, members))
    return chains


def place(suite: Suite, session_id: str, position: int, before: SessionState, scaffold: Scaffold) -> SessionPlace:
    session = next(s for s in suite.sessions if s.id == session_id)
    return SessionPlace(session_id, position, before, skills=session.skills and scaffold.skills,
                        workspace=session.workspace and scaffold.workspace, shared_servers=session.shared_servers)


class SessionStates:
    """The states chains left, one JSON line per finished task: {chain, position, state} (the state after that
    position). `before(chain, position)` is what the task at `position` starts from."""

    def __init__(self, path: Path):
        self.path = path
        self._after: dict[tuple[str, int], SessionState] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry: dict[str, Any] = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                self._after[(entry["chain"], entry["position"])] = SessionState.from_json(entry["state"])

    def before(self, chain: str, position: int) -> SessionState | None:
        """The state the task at `position` starts from; None when the chain must start over (its predecessor's
        state is not on file)."""
        if position == 0:
            return SessionState()
        return self._after.get((chain, position - 1))

    def record(self, chain: str, position: int, state: SessionState) -> None:
        self._after[(chain, position)] = state
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"chain": chain, "position": position, "state": state.to_json()})
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())


class SessionReferences:
    """Reference solutions traced as their sessions run them: a session's references in its order, each starting
    from the state the one before it left (so a reference may import a skill an earlier reference saved), under
    `scaffold`'s `skills` and `workspace`. Each task is traced once; a task outside a session is traced alone."""

    def __init__(self, suite: Suite, scaffold: Scaffold,
                 trace: Callable[[Task, SessionSlot | None], Awaitable[ReferenceTrace]]):
        self.suite, self.scaffold, self._trace = suite, scaffold, trace
        self._traces: dict[str, ReferenceTrace] = {}
        self._after: dict[str, SessionState] = {}  # the state each traced task of a session left
        self._locks: dict[str, asyncio.Lock] = {}

    async def __call__(self, task: Task) -> ReferenceTrace:
        found = self.suite.session_of(task.id)
        if found is None:
            return await self._trace(task, None)
        session = found[0]
        async with self._locks.setdefault(session.id, asyncio.Lock()):
            if task.id not in self._traces:
                await self._trace_through(session.id, task.id)
        return self._traces[task.id]

    async def _trace_through(self, session_id: str, last: str) -> None:
        session = next(s for s in self.suite.sessions if s.id == session_id)
        tasks = {t.id: t for t in self.suite.tasks}
        state = SessionState()
        for position, task_id in enumerate(session.tasks):
            if task_id not in self._traces:
                slot = SessionSlot(place(self.suite, session_id, position, state, self.scaffold))
                self._traces[task_id] = await self._trace(tasks[task_id], slot)
                self._after[task_id] = slot.state_after
            state = self._after[task_id]
            if task_id == last:
                return
