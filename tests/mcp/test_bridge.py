"""The host side of sandbox tool calls, without a sandbox: a batch runs its calls concurrently on the session's loop
and stamps them with one batch id; a single call stays a call made alone."""

import asyncio

from harness.mcp.bridge import BridgedToolError, make_dispatcher
from harness.mcp.servers import open_servers
from harness.tasks.task import ServerRef


async def test_a_batch_runs_concurrently_and_shares_one_batch_id():
    async with open_servers((ServerRef("crm"),)) as session:
        call, running, most = session.call, [0], [0]

        async def counted(*args, **kwargs):
            running[0] += 1
            most[0] = max(most[0], running[0])
            await asyncio.sleep(0.05)
            running[0] -= 1
            return await call(*args, **kwargs)

        session.call = counted
        dispatch = make_dispatcher(session, asyncio.get_running_loop())
        calls = [("get_customer", {"customer_id": "C-0001"}), ("get_customer", {"customer_id": "C-9999"}),
                 ("get_customer", {"customer_id": "C-0007"})]
        outcomes = await asyncio.to_thread(dispatch.batch, calls)
        alone = await asyncio.to_thread(dispatch, "get_customer", {"customer_id": "C-0001"})
    assert most[0] == 3
    assert outcomes[0]["id"] == "C-0001" and outcomes[2]["id"] == "C-0007"
    assert isinstance(outcomes[1], BridgedToolError) and "C-9999" in str(outcomes[1])
    assert sorted(c.batch for c in session.calls[:3]) == [1, 1, 1] and session.calls[3].batch is None
    assert alone["id"] == "C-0001"
