"""Errors a user can cause: the CLI prints them as one line and exits with code 2."""

import tempfile
from pathlib import Path

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


def first_error(exc: ValidationError) -> tuple[str, str]:
    """Where pydantic's first error is (dotted path, "(top level)" when it has none) and its message: a user
    fixes one problem at a time, so one line says it."""
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]) or "(top level)", first["msg"]


def describe_error(exc: ValidationError) -> str:
    """"field 'tasks.0.prompt': Field required" for the first error of a validated file."""
    where, msg = first_error(exc)
    return f"field '{where}': {msg}"


def describe_exception(exc: BaseException) -> str:
    """"KeyError: 'x'": an unexpected failure as one line for a row (the type, then its message's first line)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"
