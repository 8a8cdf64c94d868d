"""Errors a user can cause: the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """A problem with the user's input (a file, a flag, an install step), stated with its fix."""
