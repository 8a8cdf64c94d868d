"""Ids are looked up, never guessed: in a run, a tool argument that names a record by id (a parameter called
`id`, `..._id` or `..._ids`) must be a value the run has already seen, in the task's prompt or in a result a tool
returned. A call with an id seen nowhere is refused before it reaches the server, with an error that says so.

Why: a guessed id that happens to exist makes the call succeed on the wrong record, and no error tells the
model to look the id up (what the embedded model did without this rule: docs/experiments.md). The check sits in
the run's ServerSession, which every arm calls through (a direct tool call, code in the sandbox, fastmcp's
execute), so it is one rule for every arm; in code mode an id from a result the code never printed counts as
seen (a tool returned it). A guessed id that does not exist gets the same refusal instead of the server's
"not found", so every arm sees one message for one mistake.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

ID_PARAMETER = re.compile(r"(?:^|_)ids?$", re.IGNORECASE)


def id_values(arguments: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(parameter, value) for every string an id parameter holds (one value, or each of a list)."""
    for name, value in arguments.items():
        if not ID_PARAMETER.search(name):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                yield name, item


def _token(value: str) -> re.Pattern[str]:
    """`value` as a whole token: not part of a longer id (`C-001` is not seen in `C-0012`)."""
    return re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")


class SeenValues:
    """The text a run has seen so far (its task, then every tool result), to tell a looked-up id from a guess."""

    def __init__(self, *texts: str):
        self._texts: list[str] = [t for t in texts if t]

    def see(self, text: str) -> None:
        if text:
            self._texts.append(text)

    def seen(self, value: str) -> bool:
        pattern = _token(value)
        return any(pattern.search(text) for text in self._texts)

    def unseen_id(self, arguments: dict[str, Any]) -> tuple[str, str] | None:
        """The first id argument whose value the run has not seen, if any."""
        return next(((name, value) for name, value in id_values(arguments) if not self.seen(value)), None)


def guessed_id_error(tool: str, parameter: str, value: str) -> str:
    return (f"{parameter} {value!r} appears nowhere in the task or in any tool result so far, so it is a guess; "
            f"{tool} was not called. Get the id from a tool first (a search or list tool finds a record by its "
            "name; a record's fields hold the ids of related records).")
