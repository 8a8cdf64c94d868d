"""Awaitable tools in the real sandbox against the real in-memory crm server: calls awaited together cross to the
host as one batch that runs them concurrently; the synchronous form is unchanged."""

import time

import pytest

from benchmarks.gathered_calls import delayed_crm_lease

pytestmark = pytest.mark.sandbox
DELAY_S = 0.2
GATHER_THREE = ("import asyncio\n"
                "a, b, c = await asyncio.gather(get_customer(customer_id='C-0001'), "
                "get_customer(customer_id='C-0002'), get_customer(customer_id='C-0003'))\n"
                "print(a['id'], b['id'], c['id'])")
SEQUENTIAL_THREE = "\n".join(f"print(get_customer(customer_id='C-000{i}')['id'])" for i in (1, 2, 3))


async def run_cell(pool, code, delay_s=0.0):
    """Run `code` in a lease bridged to a crm session whose calls each take `delay_s` longer; returns the result,
    the session's call records, the batches the dispatcher was asked to run, and the wall time."""
    async with delayed_crm_lease(pool, delay_s) as (sandbox, session, dispatcher):
        batches = []
        run_batch = dispatcher.batch
        dispatcher.batch = lambda calls: batches.append(len(calls)) or run_batch(calls)
        started = time.perf_counter()
        result = await sandbox.execute(code)
        elapsed = time.perf_counter() - started
    return result, session.calls, batches, elapsed


async def test_gathered_calls_cross_as_one_batch_and_run_concurrently(sandbox_pool):
    result, calls, batches, elapsed = await run_cell(sandbox_pool, GATHER_THREE, DELAY_S)
    assert result.error is None and result.stdout.split() == ["C-0001", "C-0002", "C-0003"]
    assert batches == [3] and result.tool_calls == 3
    assert sorted(c.arguments["customer_id"] for c in calls) == ["C-0001", "C-0002", "C-0003"]
    assert len({c.batch for c in calls}) == 1 and calls[0].batch is not None
    assert elapsed < 0.5  # three 0.2 s calls, concurrently (sequentially they take >= 0.6 s)


async def test_sync_calls_are_unchanged_and_made_alone(sandbox_pool):
    result, calls, batches, elapsed = await run_cell(sandbox_pool, SEQUENTIAL_THREE, DELAY_S)
    assert result.error is None and result.stdout.split() == ["C-0001", "C-0002", "C-0003"]
    assert batches == [] and [c.batch for c in calls] == [None, None, None]
    assert elapsed >= 3 * DELAY_S


async def test_a_failed_call_raises_its_tool_error_or_is_returned_with_return_exceptions(sandbox_pool):
    code = ("import asyncio\n"
            "got = await asyncio.gather(get_customer(customer_id='C-0001'), get_customer(customer_id='C-9999'),"
            " return_exceptions=True)\n"
            "print(got[0]['id'], type(got[1]).__name__, isinstance(got[1], ToolError))\n"
            "await asyncio.gather(get_customer(customer_id='C-0001'), get_customer(customer_id='C-9999'))")
    result, calls, _, _ = await run_cell(sandbox_pool, code)
    assert result.stdout.split() == ["C-0001", "ToolError", "True"]
    assert result.error.startswith("ToolError: ") and "C-9999" in result.error
    assert sorted(c.is_error for c in calls) == [False, False, True, True]  # logged as each call ends


async def test_top_level_await_echoes_the_last_expression(sandbox_pool):
    code = "import asyncio\ntask = asyncio.create_task(get_customer(customer_id='C-0001'))\n(await task)['id']"
    result, calls, _, _ = await run_cell(sandbox_pool, code)
    assert result.error is None and result.echoed and result.stdout.strip() == "'C-0001'"
    assert [c.batch for c in calls] == [None]  # one call awaited alone is an ordinary call


async def test_final_answer_inside_an_async_function_ends_the_run(sandbox_pool):
    code = ("import asyncio\n"
            "async def name_of(customer_id):\n"
            "    final_answer((await get_customer(customer_id=customer_id))['name'])\n"
            "await asyncio.gather(name_of('C-0007'), return_exceptions=True)\n"
            "print('never printed')")
    result, _, _, _ = await run_cell(sandbox_pool, code)
    assert result.final and result.final_value == "Chen Tanaka" and "never" not in result.stdout


async def test_asyncio_run_of_an_async_main_batches_its_calls(sandbox_pool):
    code = ("import asyncio\n"
            "async def main():\n"
            "    return await asyncio.gather(*(get_customer(customer_id=f'C-000{i}') for i in (1, 2)))\n"
            "print([c['id'] for c in asyncio.run(main())])")
    result, calls, batches, _ = await run_cell(sandbox_pool, code)
    assert result.error is None and result.stdout.strip() == "['C-0001', 'C-0002']"
    assert batches == [2] and calls[0].batch == calls[1].batch is not None


async def test_a_call_used_without_await_in_async_code_says_to_await_it(sandbox_pool):
    code = "async def first():\n    return get_customer(customer_id='C-0001')['id']\nawait first()"
    result, calls, _, _ = await run_cell(sandbox_pool, code)
    assert "write `await get_customer(...)`" in result.error and result.error.startswith("TypeError")
    assert "never awaited, so they did not run" in result.stdout and calls == []


async def test_the_loop_offers_no_subprocess(sandbox_pool):
    result, _, _, _ = await run_cell(sandbox_pool, "import asyncio\nawait asyncio.create_subprocess_exec('ls')")
    assert result.error.startswith("NotImplementedError: the sandbox has no subprocesses")
