"""Errors a user can cause: the CLI prints them as one line and exits with code 2."""

from pathlib import Path


class UserError(Exception):
    """A problem with the user's input (a file, a flag, an install step), stated with its fix."""


def read_user_file(path: Path, what: str) -> str:
    """A file the user pointed at, or a UserError naming it ("cannot read the suite file ...")."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc.strerror})") from None
