"""The output of code cut short while it runs (its execution cancelled: the run's time limit, an interrupt) is what
it had printed by then, streamed from the sandbox as it was written; an execution that ends has its own output, as
before."""

import asyncio
import threading

import pytest

pytestmark = pytest.mark.sandbox

PRELUDE = 'def wait() -> dict:\n    return _harness_call_tool_json("wait", {})\n'


def waiting_tool(release: threading.Event, called: threading.Event):
    def dispatch(name, arguments):
        called.set()
        release.wait(10)
        return {"done": True}
    return dispatch


async def cut_short(sandbox, code: str, called: threading.Event, release: threading.Event) -> str:
    """Run `code` until it waits in the tool, cancel it there, and give its output so far (read after the code was
    let go and had time to print more)."""
    running = asyncio.ensure_future(sandbox.execute(code))
    await asyncio.to_thread(called.wait, 10)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    release.set()
    await asyncio.sleep(0.2)
    return sandbox.output_so_far()


async def test_code_cancelled_while_waiting_in_a_tool_keeps_what_it_had_printed(sandbox_pool):
    release, called = threading.Event(), threading.Event()
    async with sandbox_pool.lease(waiting_tool(release, called), prelude=PRELUDE) as sandbox:
        code = "print('first')\nprint('second', end='')\nwait()\nprint('after the cut')"
        assert await cut_short(sandbox, code, called, release) == "first\nsecond"


async def test_code_that_ends_has_its_own_output_once(sandbox_pool):
    async with sandbox_pool.lease(waiting_tool(threading.Event(), threading.Event()), prelude=PRELUDE) as sandbox:
        result = await sandbox.execute("print('a')\nprint('b', end='')\nprint('c')\n6 * 7")
    assert result.stdout == "a\nbc\n42\n" and not result.truncated


async def test_output_so_far_past_the_limit_is_truncated_as_an_executions_output_is(sandbox_pool):
    printing = "print('x' * 70000)\nprint('more')\n"
    release, called = threading.Event(), threading.Event()
    release.set()  # the tool answers at once: the execution ends
    async with sandbox_pool.lease(waiting_tool(release, called), prelude=PRELUDE) as sandbox:
        ended = await sandbox.execute(printing + "done = wait()")  # (no echo of a last value)
    assert ended.truncated
    release, called = threading.Event(), threading.Event()
    async with sandbox_pool.lease(waiting_tool(release, called), prelude=PRELUDE) as sandbox:
        so_far = await cut_short(sandbox, printing + "wait()\nprint('after the cut')", called, release)
    assert so_far == ended.stdout
    assert so_far.endswith("\n... [output truncated at 65,536 characters: 4,470 more not shown]")
