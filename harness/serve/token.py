"""The bearer token of `harness serve --transport http`: the one credential that lets a client run code over the
user's tools. It is generated at start, or read from HARNESS_SERVE_TOKEN or a file the user names, never from the
command line (`ps` shows every process's arguments to every user of the machine)."""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UserError, read_user_file

TOKEN_VARIABLE = "HARNESS_SERVE_TOKEN"
MIN_TOKEN_CHARS = 32  # a guessable token over a network is no token: ~190 bits when made of URL-safe characters


@dataclass(frozen=True)
class BearerToken:
    """The token and where it came from: "generated" (this process made it; printed once at start), the variable's
    name, or the file's path."""

    value: str = field(repr=False)
    source: str

    @property
    def generated(self) -> bool:
        return self.source == "generated"

    def matches(self, presented: bytes) -> bool:
        """Whether a request's token is this one, compared in constant time (no timing tells how much was right)."""
        return hmac.compare_digest(presented, self.value.encode("ascii"))


def _checked(value: str, where: str) -> str:
    value = value.strip()
    if len(value) < MIN_TOKEN_CHARS:
        raise UserError(f"{where}: the token is {len(value)} characters; use at least {MIN_TOKEN_CHARS} (e.g. "
                        f"python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    if not all(33 <= ord(c) <= 126 for c in value):
        raise UserError(f"{where}: the token may hold only printable ASCII characters without spaces")
    return value


def load_token(token_file: Path | None, environ: Mapping[str, str] = os.environ) -> BearerToken:
    """The token a client must send: from `token_file`, else from HARNESS_SERVE_TOKEN, else a new random one. Both
    given is refused (which one counts would be a guess); a short or unprintable token is refused."""
    from_variable = environ.get(TOKEN_VARIABLE)
    if token_file is not None and from_variable is not None:
        raise UserError(f"--token-file {token_file} and {TOKEN_VARIABLE} are both set: give the token one way")
    if token_file is not None:
        return BearerToken(_checked(read_user_file(token_file, "token file"), f"--token-file {token_file}"),
                           str(token_file))
    if from_variable is not None:
        return BearerToken(_checked(from_variable, TOKEN_VARIABLE), TOKEN_VARIABLE)
    return BearerToken(secrets.token_urlsafe(32), "generated")
