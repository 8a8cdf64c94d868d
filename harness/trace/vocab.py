"""The closed vocabularies of a run's record: why a run ended without an answer (a row's `error_type`) and why
one step failed (a step's `error_kind`). Each value has its description here, and the results-schema page and
the report's error table are written from these descriptions, so a new kind cannot go undocumented."""

from __future__ import annotations

from typing import Literal, get_args

ErrorType = Literal["max_turns", "repeated_action", "parse_error", "lm_error", "timeout", "server_error",
                    "sandbox_crash", "internal", "token_limit", "cost_limit", "interrupted", "agent_error",
                    "context_overflow", "resource_limit", "judge_error", "stale_tools"]

ERROR_TYPES: dict[ErrorType, str] = {
    "max_turns": "the run used every turn it had without a final answer",
    "repeated_action": "the model repeated the same action with the same result until the scaffold stopped it",
    "parse_error": "the model's last reply could not be read as an action",
    "lm_error": "an LM call failed, after the engine's retries",
    "timeout": "the run exceeded its time limit, `--timeout`",
    "server_error": ("a server did not come up: its name and the last lines of its stderr log are in "
                     "error_message"),
    "sandbox_crash": "the code-mode sandbox died under the run's last action; the answer is empty",
    "internal": "the harness itself failed, a bug or a broken server: left out of the report's numbers",
    "token_limit": "the run passed `--max-tokens-per-run`",
    "cost_limit": "the run passed `--max-cost-per-run`",
    "agent_error": ("an agent from outside the package failed: its code raised or exited, its answer could not be "
                    "stored, or its command exited non-zero (error_message has the end of its stderr)"),
    "resource_limit": "an agent from outside passed its memory limit, `--agent-memory` (its process ran out or died)",
    "interrupted": ("the run was stopped from outside (Ctrl-C, a stop signal) before it ended: what it did until then "
                    "is counted; `--resume` runs it again and its new row replaces this one"),
    "context_overflow": ("an LM call's prompt did not fit the model's context window (`--context-window`, the "
                         "embedded model's context, LiteLLM's model table), so it was not sent: error_message gives "
                         "the prompt's and the window's sizes"),
    "stale_tools": ("the run's tool list changed mid-run (a server offered tools held back until a user turn, as BFCL's "
                    "miss_func does) and the arm cannot re-read it: the run ended there rather than go on with a "
                    "list that is no longer the server's"),
    "judge_error": ("the run's scorer needed a judge model and got no verdict it could read (after retries), or no "
                    "judge was named: the run fails, it is not scored as a pass"),
}

StepErrorKind = Literal["tool", "exception", "syntax", "code_timeout", "policy", "crash", "parse", "unread_answer",
                        "echoed_error", "wrong_answer"]

STEP_ERROR_KINDS: dict[StepErrorKind, str] = {
    "tool": "the tool the model called returned an error",
    "exception": "the code raised an exception",
    "syntax": "the code did not parse",
    "code_timeout": "the code block ran past its time limit; the sandbox was restarted",
    "policy": "the code did something the sandbox policy forbids: an import, a file, the network",
    "crash": "the sandbox process died under the code; it was restarted",
    "parse": "the reply could not be read as an action",
    "unread_answer": "an answer refused because the last action failed or showed nothing",
    "echoed_error": "an answer refused because it is an error message the model was shown",
    "wrong_answer": "an answer the task's scorer rejected during the run (scaffold rule answer_feedback)",
}

assert set(ERROR_TYPES) == set(get_args(ErrorType)), "every error type needs its description"
assert set(STEP_ERROR_KINDS) == set(get_args(StepErrorKind)), "every step error kind needs its description"


def error_types_text() -> str:
    """The error types as one sentence for the results schema: each value and what it means."""
    return "; ".join(f"{name} ({description})" for name, description in ERROR_TYPES.items())
