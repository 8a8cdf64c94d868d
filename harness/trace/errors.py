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


class ContextOverflow(RunLimitReached):
    """A prompt that does not fit the model's context window, refused before it is sent (`counted`: how its tokens
    were counted): the run ends there, as context_overflow."""

    def __init__(self, prompt_tokens: int, window: int, counted: str):
        super().__init__("context_overflow", f"the prompt of {prompt_tokens:,} tokens ({counted}) does not fit the "
                                             f"model's context window of {window:,} tokens; it was not sent")
        self.prompt_tokens, self.window = prompt_tokens, window
