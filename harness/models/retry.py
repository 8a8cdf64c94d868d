"""Which LM failures are worth another try and which will fail every call the same way.

The engine retries the first kind with backoff; the runner stops a suite on the second (a missing key, an
unknown model) instead of writing a row of errors per sample."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from dataclasses import dataclass

TRANSIENT_ERROR_NAMES = frozenset({
    "RateLimitError", "Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError",
    "InternalServerError", "BadGatewayError", "TransientLMError",
})


class TransientLMError(Exception):
    """An LM failure worth retrying (test doubles and engines may raise it directly)."""


def is_transient(exc: BaseException) -> bool:
    """Rate limits, timeouts, dropped connections and 5xx answers: worth another try. Not a client that could
    not even be built (litellm reports a missing api key as a 500, but no request was sent)."""
    if any(_is_client_setup_error(error) for error in _causes(exc)):
        return False
    return isinstance(exc, (ConnectionError, TimeoutError)) or any(
        cls.__name__ in TRANSIENT_ERROR_NAMES for cls in type(exc).__mro__)


# Errors that fail every call of a suite the same way (a missing key, an unknown model, a refused request);
# a prompt too long or refused for its content is about that prompt, not the model setup.
PERMANENT_ERROR_NAMES = frozenset({
    "AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError", "UnsupportedParamsError",
    "LMAuthError", "LMBillingError", "LMUnsupportedModelError", "LMConfigurationError", "LMUnsupportedFeatureError",
    "UserError",  # raised inside an engine (dspy wraps it): e.g. tools offered to a GGUF without a chat template
})
PROMPT_ERROR_NAMES = frozenset({"ContextWindowExceededError", "ContentPolicyViolationError", "ContextLengthError"})
UNREACHABLE_ERRORS = (ConnectionRefusedError, socket.gaierror)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_permanent(exc: BaseException) -> bool:
    """True for an LM error that will fail every call the same way: bad credentials, an unknown model or
    provider, a request the provider refuses, an api_base that refuses connections or does not resolve.
    Reads the whole cause chain (dspy wraps engine errors)."""
    chain = list(_causes(exc))
    names = {cls.__name__ for error in chain for cls in type(error).__mro__}
    if names & PROMPT_ERROR_NAMES:
        return False
    return (bool(names & PERMANENT_ERROR_NAMES) or any(isinstance(error, UNREACHABLE_ERRORS) for error in chain)
            or any(_is_client_setup_error(error) for error in chain))


def _is_client_setup_error(error: BaseException) -> bool:
    """The OpenAI client raises its bare base error (no HTTP status) when it cannot even be built, e.g. with no
    api key; litellm reports that as a 500. Its subclasses are the API's own answers."""
    return type(error).__name__ == "OpenAIError" and type(error).__module__.split(".")[0] == "openai"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int) -> float:
        """Exponential backoff with jitter (attempt 0 is the first retry)."""
        return min(self.max_delay_s, self.base_delay_s * 2 ** attempt) * random.uniform(0.5, 1.0)
