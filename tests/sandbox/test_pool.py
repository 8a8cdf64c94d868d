"""The warm pool: leases are isolated from each other, tools are bridged, limits hold."""

import pytest

from harness.sandbox import SandboxPolicy

pytestmark = pytest.mark.sandbox

PRELUDE = 'def lookup(key: str) -> dict:\n    return _harness_call_tool_json("lookup", {"key": key})\n'


def dispatcher(calls: list):
    def dispatch(name, arguments):
        calls.append((name, arguments))
        if arguments["key"] == "missing":
            raise LookupError("key 'missing' not found")
        return {"key": arguments["key"], "value": len(arguments["key"])}
    return dispatch


async def test_nothing_leaks_from_one_lease_to_the_next(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        setup = ("import random, fractions\nrandom.seed(1)\nfirst = random.random()\nleaked = 'yes'\n"
                 "with open('/tmp/left-behind.txt', 'w') as f:\n    f.write('x')\nprint('ok')")
        assert (await sandbox.execute(setup, check_policy=False)).stdout.strip() == "ok"
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        probe = ("import os, sys, random\nprint('leaked' in dir())\nprint('fractions' in sys.modules)\n"
                 "print(os.path.exists('/tmp/left-behind.txt'))\nrandom.seed(1)\nprint(random.random())")
        out = (await sandbox.execute(probe, check_policy=False)).stdout.split()
        assert out[:3] == ["False", "False", "False"]


async def test_state_persists_within_a_lease(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        await sandbox.execute("total = 40")
        assert (await sandbox.execute("total += 2\nprint(total)")).stdout.strip() == "42"


async def test_tools_return_values_and_raise_tool_errors(sandbox_pool):
    calls = []
    async with sandbox_pool.lease(dispatcher(calls), prelude=PRELUDE) as sandbox:
        result = await sandbox.execute(
            "print(lookup('abc')['value'])\ntry:\n    lookup('missing')\nexcept ToolError as exc:\n    print('error:', exc)")
    assert result.stdout.splitlines() == ["3", "error: key 'missing' not found"]
    assert calls == [("lookup", {"key": "abc"}), ("lookup", {"key": "missing"})]


async def test_output_printed_before_an_exception_is_kept(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("print('partial')\n1 / 0")
    assert result.stdout.strip() == "partial"
    assert result.error_kind == "exception" and "ZeroDivisionError" in result.error and "line 2" in result.error


async def test_syntax_errors_name_the_line(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("x = 1\nif x\n    pass")
    assert result.error_kind == "syntax" and "line 2" in result.error


def test_policy_limits_are_configurable():
    policy = SandboxPolicy(max_chars=15, allowed_imports=frozenset({"json"}))
    assert "limit is 15" in policy.check("print('a long line')")
    assert policy.check("import json") is None
    assert "import of 're'" in policy.check("import re")
