"""The host side of the guest program: what the harness sends to a new Pyodide interpreter, once, at start.

The guest itself is harness/sandbox/guest.py, with its awaitable tools in guest_async.py, a lease's files in
guest_files.py and the code's output in guest_output.py: ordinary modules (linted, unit-tested in plain CPython),
shipped as one source.
Its source is shipped as-is, followed by one explicit call that injects the host's parameters: the output
limit, the policy's rule source (harness/sandbox/rules.py, so code the host cannot parse is still checked in
the sandbox) and the tool function dspy bridged. That call answers "ready".
"""

from pathlib import Path

OUTPUT_LIMIT_CHARS = 64 * 1024
_HERE = Path(__file__).resolve().parent
# the guest's awaitable tools first: the guest's own source uses them (in plain CPython it imports them)
GUEST_SOURCE = "\n".join((_HERE / name).read_text()
                         for name in ("guest_async.py", "guest_files.py", "guest_output.py", "guest.py"))
RULES_SOURCE = (_HERE / "rules.py").read_text()


def guest_program(output_limit: int = OUTPUT_LIMIT_CHARS, rules_source: str = RULES_SOURCE) -> str:
    """The source an interpreter runs at start: the guest module, then `_harness_start(...)` (its value,
    "ready", is what the interpreter returns)."""
    return f"{GUEST_SOURCE}\n_harness_start({output_limit!r}, {rules_source!r}, _harness_call_tool)\n"


RUNTIME = guest_program()
