"""Running a task's reference solution: through the real sandbox, against fresh servers, with the same
bridged tools an agent gets. Used by `scripted:reference`, `harness validate` and tests."""

from __future__ import annotations

import asyncio

from harness.mcp.bridge import make_dispatcher
from harness.mcp.servers import open_servers
from harness.models.scripted import ReferenceTrace
from harness.sandbox import SandboxPool
from harness.tasks.suite import Task


def answer_from_stdout(stdout: str) -> str:
    """A reference prints its answer last: the last non-empty line of its output."""
    lines = [line.strip() for line in stdout.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


async def run_reference(task: Task, pool: SandboxPool) -> ReferenceTrace:
    async with open_servers(task.servers) as session:
        dispatcher = make_dispatcher(session, asyncio.get_running_loop())
        async with pool.lease(dispatcher, prelude=session.toolbox.sandbox_prelude()) as sandbox:
            result = await sandbox.execute(task.reference)
        return ReferenceTrace(
            answer=answer_from_stdout(result.stdout), stdout=result.stdout,
            tool_calls=tuple((c.tool, c.arguments) for c in session.calls),
            end_state=session.end_state(), error=result.error,
        )
