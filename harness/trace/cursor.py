"""Which step of a run is being made, so every LM call and tool call is stamped with its step as it is made
(never attributed afterwards by counting). The episode opens a cursor, the loop moves it before each step, and
the LM recorder and the run's server session read it when they log a call."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

# Whose LM call it is: the agent under test, the simulated user of a conversation task, or a judge model.
LMRole = Literal["agent", "user", "judge"]


@dataclass
class StepCursor:
    """The index of the step in progress (None: before the first step, or outside any loop)."""

    index: int | None = None


_CURSOR: contextvars.ContextVar[StepCursor | None] = contextvars.ContextVar("harness_step_cursor", default=None)


@contextmanager
def stepping() -> Iterator[StepCursor]:
    """A fresh cursor for one run, seen by everything this context (and the tasks and threads it starts) does."""
    cursor = StepCursor()
    token = _CURSOR.set(cursor)
    try:
        yield cursor
    finally:
        _CURSOR.reset(token)


def current_cursor() -> StepCursor:
    """The run's cursor; outside a run, a detached one that stays at None."""
    return _CURSOR.get() or StepCursor()


def begin_step(index: int) -> None:
    """The run is now making step `index`: the calls made from here on are that step's."""
    cursor = _CURSOR.get()
    if cursor is not None:
        cursor.index = index


def current_step() -> int | None:
    cursor = _CURSOR.get()
    return cursor.index if cursor is not None else None


_ROLE: contextvars.ContextVar[LMRole] = contextvars.ContextVar("harness_lm_role", default="agent")


@contextmanager
def acting_as(role: LMRole) -> Iterator[None]:
    """The LM calls made in this context are `role`'s (the user simulator's, a judge's), recorded apart from the
    agent's so a row's tokens stay the agent's."""
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def current_role() -> LMRole:
    return _ROLE.get()
