"""The error that ended a run, one type from the agent that met it to the trajectory that stores it."""

from __future__ import annotations

from dataclasses import dataclass

from harness.trace.vocab import ErrorType


@dataclass(frozen=True)
class RunError:
    """Why a run ended without an answer. `permanent`: an LM error that will fail every call the same way
    (auth, unknown model), so the runner stops the suite; `server`: for server_error, the server that did not
    come up."""

    type: ErrorType
    message: str
    permanent: bool = False
    server: str = ""


class RunLimitReached(Exception):
    """Raised by the engine stack at the LM call that passed a per-run limit: the run ends there."""

    def __init__(self, error_type: ErrorType, message: str):
        super().__init__(message)
        self.error_type, self.message = error_type, message
