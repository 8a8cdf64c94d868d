"""How scorers compare values: an expected value as a subset of an actual one, and a key path into a tool's result
(what a probe checks)."""

from __future__ import annotations

import math
import re
from typing import Any


def is_subset(expected: Any, actual: Any) -> bool:
    """Expected dict keys must match recursively; lists match element-wise in order; numbers by value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            is_subset(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().lower() == actual.strip().lower()
    return expected == actual


_SEGMENT = re.compile(r"[^.\[\]]+|\[(\*|-?\d+)\]")
MISSING = object()  # a path that leads nowhere


def resolve_path(value: Any, path: str) -> Any:
    """The part of `value` a key path names: `entities` (a key), `entities.0` or `entities[0]` (an item),
    `entities[*].name` or `entities.*.name` (that key of every item, as a list); a leading `$.` is allowed, as in
    JSONPath. MISSING when a key or item does not exist."""
    path = path.strip()
    if path.startswith("$"):
        path = path[1:].lstrip(".")
    current, many = value, False
    for match in _SEGMENT.finditer(path):
        token = match.group(1) if match.group(1) is not None else match.group(0)
        if many:
            current = [_step(item, token) for item in current]
            current = [item for part in current if part is not MISSING
                       for item in (part if token == "*" else [part])]
        else:
            current = _step(current, token)
            if current is MISSING:
                return MISSING
            many = token == "*"
    return current


def _step(value: Any, token: str) -> Any:
    if token == "*":
        if isinstance(value, list):
            return value
        return list(value.values()) if isinstance(value, dict) else MISSING
    if isinstance(value, dict):
        return value.get(token, MISSING)
    if isinstance(value, list) and re.fullmatch(r"-?\d+", token):
        index = int(token)
        return value[index] if -len(value) <= index < len(value) else MISSING
    return MISSING
