"""Errors a user can cause: the CLI prints them as one line and exits with code 2."""

import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError


class UserError(Exception):
    """A problem with the user's input (a file, a flag, an install step), stated with its fix."""


def read_user_file(path: Path, what: str) -> str:
    """A file the user pointed at, or a UserError naming it ("cannot read the suite file ...", or where it is
    not UTF-8: the offset and value of the first byte that is not)."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: the {what} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                        f"{exc.start}); save it as UTF-8") from None


def check_writable_folder(path: Path, option: str) -> None:
    """A folder a command will write into is one, or can be made, and takes a new file: checked before the
    command starts, so a bad `--out` is one line instead of a failure after work was done."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: a file, not a folder (give a folder to write into)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write there ({exc.strerror}); give a folder you can write to") \
            from None


NOT_GIVEN: Any = object()  # no data given to describe_error: union tags are recognised by their look


def first_error(exc: ValidationError, data: Any = NOT_GIVEN) -> tuple[str, str]:
    """Where the error a user should fix first is, as they wrote it in `data` (`servers[0].crm.size`; "(top level)"
    when it has no place), and what is wrong there (the value and what was expected): see `describe_error`."""
    (where, errors), *_ = _errors_by_place(exc, data)
    return where or "(top level)", _what_is_wrong(errors)


def describe_error(exc: ValidationError, data: Any = NOT_GIVEN, at: str = "") -> str:
    """"field 'servers[0].crm.size': 'big' is not valid: expected a valid integer or a valid list" for a validated
    file, in the words of the file: pydantic's location becomes the path the user wrote (list indexes in brackets,
    the tags pydantic adds for each member of a union dropped), `at` (the path of the validated part in its file)
    in front. Of the errors, the deepest place is reported (the union member the value was meant for), with every
    member's expectation there. `data` is what was validated: without it, union tags are told by their look."""
    where, what = first_error(exc, data)
    if at:
        where = at if where == "(top level)" else f"{at}{'' if where.startswith('[') else '.'}{where}"
    return f"field '{where}': {what}"


def _errors_by_place(exc: ValidationError, data: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    """The errors grouped by the place the user wrote, deepest first (ties in pydantic's order)."""
    places: dict[str, list[dict[str, Any]]] = {}
    depth: dict[str, int] = {}
    for error in exc.errors():
        parts = _written_path(error, data)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")
        places.setdefault(where, []).append(error)
        depth[where] = len(parts)
    return sorted(places.items(), key=lambda item: -depth[item[0]])


def _written_path(error: Any, data: Any) -> list[str | int]:
    """pydantic's `loc` walked through the data the user wrote: a key or index present there is part of the path;
    anything else is a union member's tag (`str`, `dict[str,int]`, `function-after[...]`), except the last part of a
    missing field (its name)."""
    loc = list(error["loc"])
    value = data
    path: list[str | int] = []
    for index, part in enumerate(loc):
        present = (isinstance(value, dict) and part in value) or (
            isinstance(value, (list, tuple)) and isinstance(part, int) and 0 <= part < len(value))
        if present:
            value = value[part]
        missing = index == len(loc) - 1 and error["type"] in ("missing", "missing_keyword_argument")
        if present or missing or (value is NOT_GIVEN and not _is_tag(part)):
            path.append(part)
    return path


def _is_tag(part: str | int) -> bool:
    """A union member's tag in pydantic's loc: a type's name (`str`, `int`, `list[str]`, `function-after[...]`)."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part)


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "dict", "list", "tuple", "set", "none", "bytes", "decimal",
                        "date", "datetime", "is-instance", "lax-or-strict", "json-or-python"})


def _what_is_wrong(errors: list[dict[str, Any]]) -> str:
    """The value the user wrote and what was expected there, from every union member's error at that place:
    "'big' is not valid: expected a valid integer or a valid list"; a validator's own sentence as it is (with the
    value in front unless the sentence names it)."""
    first = errors[0]
    if first["type"] in ("missing", "missing_keyword_argument", "extra_forbidden", "unexpected_keyword_argument"):
        return first["msg"]
    shown = _shown(first.get("input"))
    expected = list(dict.fromkeys(e["msg"].removeprefix("Input should be ") for e in errors
                                  if e["msg"].startswith("Input should be ")))
    if not expected:
        message = first["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        return message if shown in message else f"{shown}: {message}"
    if len(expected) > 1:  # one per union member: their first clauses, "a valid integer or a valid list"
        expected = list(dict.fromkeys(e.split(", ")[0] for e in expected))
    return f"{shown} is not valid: expected {' or '.join(expected)}"


def _shown(value: Any) -> str:
    """A value as a short one-line repr (a long one cut at 60 characters)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_exception(exc: BaseException) -> str:
    """"KeyError: 'x'": an unexpected failure as one line for a row (the type, then its message's first line)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"
