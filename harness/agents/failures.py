"""What a failed decision of the model is: dspy could not read the reply as the step's fields (a parse error), or
the LM call failed (the engine stack raises every failure of a call, after its retries, as LMCallFailed): a call
refused for a limit of the run (a prompt over the context window, a token or cost limit) is that limit's error, any
other an lm_error. Anything else is a bug in the harness, which the episode records as internal; every arm and the
simulated user fail alike."""

from __future__ import annotations

from dspy.utils.exceptions import AdapterParseError

from harness.errors import describe_exception
from harness.models.engine import LMCallFailed
from harness.trace.errors import RunError, RunLimitReached

PARSE_FAILURES = (AdapterParseError,)
LM_FAILURES = (LMCallFailed,)


def _cause(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """`exc` or the first exception in its chain of causes that is one of `kinds` (dspy may wrap an error)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kinds):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def decision_error(exc: Exception) -> RunError | None:
    """The run's error for a decision that raised: a parse error or an LM error (None: a harness bug)."""
    if (failed := _cause(exc, PARSE_FAILURES)) is not None:
        return RunError("parse_error", describe_exception(failed))
    if (reached := _cause(exc, (RunLimitReached,))) is not None:
        assert isinstance(reached, RunLimitReached)
        return RunError(reached.error_type, reached.message)
    if (failed := _cause(exc, LM_FAILURES)) is not None:  # the provider's own error is its cause
        return RunError("lm_error", describe_exception(failed.__cause__ or failed), failed.permanent)
    return None
