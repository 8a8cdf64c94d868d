"""What one request may ask: code size, a timeout up to the cap, a place among the executions running or waiting;
each refusal is a tool error naming the bound and its option (through the executor: test_executor.py)."""

import asyncio

import pytest
from fastmcp.exceptions import ToolError

from harness.serve.bounds import Admission, ExecutorBounds

BOUNDS = ExecutorBounds(max_code_chars=10, running=1, queued=1, default_timeout_s=5, max_timeout_s=20)


def test_code_and_timeout_within_the_bounds_pass():
    BOUNDS.check_request("x" * 10, 20)


def test_code_over_the_size_bound_is_refused():
    with pytest.raises(ToolError, match="the code is 11 characters; this server runs at most 10 .*--max-code-chars"):
        BOUNDS.check_request("x" * 11, 5)


@pytest.mark.parametrize("timeout", [0, -1, float("nan")])
def test_a_timeout_that_is_not_more_than_zero_is_refused(timeout):
    with pytest.raises(ToolError, match="give more than 0 s"):
        BOUNDS.check_request("x", timeout)


def test_a_timeout_over_the_cap_is_refused():
    with pytest.raises(ToolError, match="timeout 21 s is over this server's cap of 20 s .*--max-timeout"):
        BOUNDS.check_request("x", 21)


def test_a_default_over_the_cap_cannot_be_built():
    with pytest.raises(ValueError, match="over the cap"):
        ExecutorBounds(default_timeout_s=30, max_timeout_s=10)


async def test_requests_past_the_running_and_queued_ones_are_refused_and_the_queued_one_runs_later():
    admission = Admission(BOUNDS)
    release, order = asyncio.Event(), []

    async def execution(name: str) -> None:
        async with admission.slot():
            order.append(name)
            await release.wait()

    first = asyncio.create_task(execution("first"))
    second = asyncio.create_task(execution("second"))  # waits in the queue
    await asyncio.sleep(0.01)
    assert order == ["first"] and admission.admitted == 2
    with pytest.raises(ToolError, match=r"busy \(1 execution running and 1 waiting.*--pool-size, --queue"):
        async with admission.slot():
            pass
    release.set()
    await asyncio.gather(first, second)
    assert order == ["first", "second"] and admission.admitted == 0


async def test_a_refused_or_failed_execution_gives_its_place_back():
    admission = Admission(ExecutorBounds(running=1, queued=0))
    with pytest.raises(RuntimeError):
        async with admission.slot():
            raise RuntimeError("the code's failure")
    async with admission.slot():
        assert admission.admitted == 1
