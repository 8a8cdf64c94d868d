"""The warm pool: leases are isolated from each other, tools are bridged, limits hold."""

import pytest

pytestmark = pytest.mark.sandbox

PRELUDE = 'def lookup(key: str) -> dict:\n    return _harness_call_tool_json("lookup", {"key": key})\n'


def dispatcher(calls: list):
    def dispatch(name, arguments):
        calls.append((name, arguments))
        if arguments["key"] == "missing":
            raise LookupError("key 'missing' not found")
        if arguments["key"] == "page":
            return {"items": [{"id": 1}, {"id": 2}], "total": 2}
        if arguments["key"] == "list":
            return [{"id": 1, "name": "a"}]
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


async def test_a_missing_key_in_a_tool_result_names_the_keys_there_are(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        result = await sandbox.execute("row = lookup('abc')\nprint(row['country'])")
        assert result.error == ("KeyError: 'country' (this tool result is a dict with the keys: 'key', 'value') "
                                "(line 2: print(row['country']))")
        plain = await sandbox.execute(
            "import json\ntry:\n    row['nope']\nexcept KeyError:\n    print('caught')\n"
            "print(isinstance(row, dict), row.get('nope'), repr(row), json.dumps(row), {}['x'] if False else 'ok')")
    assert plain.stdout.splitlines() == ["caught", "True None {'key': 'abc', 'value': 3} "
                                         '{"key": "abc", "value": 3} ok']


async def test_iterating_over_a_tool_result_says_once_that_it_walks_the_keys(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        result = await sandbox.execute("row = lookup('abc')\nfor k in row:\n    pass\nprint(sorted(row), dict(row))")
        again = await sandbox.execute("print(list(row))")
    note = "[note: iterating over a tool result (a dict) gives its keys ('key', 'value'), not items]"
    assert result.stdout.splitlines() == [note, "['key', 'value'] {'key': 'abc', 'value': 3}"]
    assert again.stdout.splitlines() == [note, "['key', 'value']"]  # once per object and per execution


async def test_len_of_a_tool_result_says_once_that_it_counts_the_keys(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        result = await sandbox.execute("row = lookup('abc')\nprint(len(row), bool(row), len(row))")
    note = "[note: len() of a tool result (a dict) counts its keys ('key', 'value'), not items]"
    assert result.stdout.splitlines() == [note, "2 True 2"]


async def test_misusing_a_paged_result_names_the_key_that_holds_its_list(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        counted = await sandbox.execute("print(len(lookup('page')))")
        indexed = await sandbox.execute("print(lookup('page')[0])")
    assert counted.stdout.splitlines()[0] == ("[note: len() of a tool result (a dict) counts its keys ('items', "
                                              "'total'), not items; its list is result['items']]")
    assert indexed.error.startswith("KeyError: 0 (this tool result is a dict with the keys: 'items', 'total'; "
                                    "its list is result['items'])")


async def test_indexing_a_list_result_with_a_key_says_it_is_a_list(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        wrong = await sandbox.execute("rows = lookup('list')\nprint(rows['id'])")
        right = await sandbox.execute("print(rows[0]['name'], rows[:1], isinstance(rows, list))")
    assert wrong.error.startswith("TypeError: list indices must be integers or slices, not str (this tool result "
                                  "is a list of 1 items; its first item has the keys: 'id', 'name')")
    assert right.stdout.strip() == "a [{'id': 1, 'name': 'a'}] True"


async def test_output_printed_before_an_exception_is_kept(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("print('partial')\n1 / 0")
    assert result.stdout.strip() == "partial"
    assert result.error_kind == "exception" and "ZeroDivisionError" in result.error and "line 2" in result.error


async def test_syntax_errors_name_the_line(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("x = 1\nif x\n    pass")
    assert result.error_kind == "syntax" and "line 2" in result.error



async def test_state_changed_in_preloaded_modules_does_not_leak(sandbox_pool):
    tamper = ("import builtins, os, sys\nbuiltins.len = lambda x: -1\n"
              "os.environ['LEAK'] = '1'\nos.chdir('/tmp')\nsys.path.insert(0, '/tmp')\n"
              "open('/home/pyodide/planted.py', 'w').write('X = 1')\n"
              "os.makedirs('/lib/python3.13/site-packages/planted_pkg', exist_ok=True)\n"
              "open('/lib/python3.13/site-packages/planted_pkg/__init__.py', 'w').write('X = 1')\n")
    async with sandbox_pool.lease(dispatcher([]), prelude=PRELUDE) as sandbox:
        replaced = await sandbox.execute("import json\njson.dumps = lambda *a, **k: 'pwned'\nprint(json.dumps({}))",
                                         check_policy=False)
        assert replaced.stdout.strip() == "pwned"
        await sandbox.execute(tamper, check_policy=False)
    restarts = sandbox_pool.stats().restarts
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        probe = ("import json, os, sys\nprint(json.dumps({'a': 1}), len('abc'), 'LEAK' in os.environ, os.getcwd(),\n"
                 "      '/tmp' in sys.path)\n"
                 "for name in ('planted', 'planted_pkg'):\n"
                 "    try:\n        __import__(name)\n        print('found', name)\n"
                 "    except ImportError:\n        print('gone', name)")
        result = await sandbox.execute(probe, check_policy=False)
    assert result.stdout.splitlines() == ['{"a": 1} 3 False /home/pyodide False', "gone planted", "gone planted_pkg"]
    assert sandbox_pool.stats().restarts == restarts  # undone by the reset, not by replacing the process


async def test_a_clean_lease_reuses_the_process(sandbox_pool):
    before = sandbox_pool.stats()
    for _ in range(3):
        async with sandbox_pool.lease(dispatcher([])) as sandbox:
            assert (await sandbox.execute("print(1)")).ok
    after = sandbox_pool.stats()
    assert after.restarts == before.restarts and after.leases == before.leases + 3


async def test_changing_a_file_present_at_start_replaces_the_process(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        await sandbox.execute("import glob\nopen(glob.glob('/lib/python3*.zip')[0], 'ab').write(b'x')", check_policy=False)
        restarts = sandbox_pool.stats().restarts
    assert sandbox_pool.stats().restarts == restarts + 1
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        assert (await sandbox.execute("import statistics\nprint(statistics.mean([1, 3]))")).stdout.strip() == "2"


async def test_tool_values_of_every_json_type_and_errors_that_keep_the_session(sandbox_pool):
    values = {"dict": {"a": [1, 2]}, "list": [1, "x"], "str": "text", "int": 7, "float": 1.5, "none": None}

    def dispatch(name, arguments):
        if name == "boom":
            raise RuntimeError("server exploded")
        return values[arguments["kind"]]

    prelude = ('def value(kind: str):\n    return _harness_call_tool_json("value", {"kind": kind})\n'
               'def boom():\n    return _harness_call_tool_json("boom", {})\n')
    async with sandbox_pool.lease(dispatch, prelude=prelude) as sandbox:
        result = await sandbox.execute("for k in ['dict', 'list', 'str', 'int', 'float', 'none']:\n"
                                       "    print(repr(value(k)))")
        assert result.stdout.splitlines() == ["{'a': [1, 2]}", "[1, 'x']", "'text'", "7", "1.5", "None"]
        assert result.tool_calls == 6 and result.tool_time_s >= 0
        failed = await sandbox.execute("x = 41\nboom()")
        assert failed.error_kind == "exception" and failed.error.startswith("ToolError: server exploded")
        assert (await sandbox.execute("print(x + 1)")).stdout.strip() == "42"


async def test_huge_output_is_truncated_with_a_marker(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("for i in range(200_000):\n    print(i)")
    assert result.truncated and len(result.stdout) < 66 * 1024
    assert result.stdout.rstrip().endswith("more not shown]") and "output truncated at 65,536 characters" in result.stdout


async def test_newer_syntax_is_policy_checked_inside_the_sandbox(sandbox_pool):
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        fine = await sandbox.execute('x = {"k": 1}\nprint(f"{x["k"]}")')
        assert fine.ok and fine.stdout.strip() == "1"
        blocked = await sandbox.execute('import os\nprint(f"{os.getcwd()["k"]}")')
        assert blocked.error_kind == "policy" and "import of 'os'" in blocked.error


async def test_every_allowed_module_imports_offline(sandbox_pool):
    modules = sorted(sandbox_pool.policy.allowed_imports)
    async with sandbox_pool.lease(dispatcher([])) as sandbox:
        result = await sandbox.execute("\n".join(f"import {m}" for m in modules) + "\nprint('all')")
    assert result.ok and result.stdout.strip() == "all", result.error


def test_pyodide_cache_check_when_warm_is_a_stat_and_never_starts_deno(monkeypatch):
    from harness.sandbox import ensure_pyodide_cached, offline

    ensure_pyodide_cached()

    def no_deno(*args, **kwargs):
        raise AssertionError(f"a warm cache check ran {args[0]}")

    monkeypatch.setattr(offline.subprocess, "run", no_deno)
    assert ensure_pyodide_cached() == offline.deno_dir()


async def test_a_lease_still_ending_when_its_pool_closes_ends_quietly():
    """Ctrl-C: the runner closes the pool while a cancelled run is still leaving its lease."""
    from harness.sandbox import SandboxPool

    pool = SandboxPool(size=1)
    async with pool.lease(dispatcher([])) as sandbox:
        assert (await sandbox.execute("print(1)")).stdout.strip() == "1"
        await pool.close()
    assert pool.stats().leases == 1 and pool.stats().idle == 0  # nothing raised, nothing returned to it


async def test_tool_functions_defined_mid_lease_are_callable_and_defined_again_after_a_restart(sandbox_pool):
    calls: list = []
    async with sandbox_pool.lease(dispatcher(calls), prelude=PRELUDE) as sandbox:
        assert "NameError" in (await sandbox.execute("print(lookup2('ab'))")).error
        await sandbox.define(PRELUDE.replace("def lookup(", "def lookup2("))
        assert (await sandbox.execute("print(lookup2('ab')['value'])")).stdout.strip() == "2"
        looped = await sandbox.execute("while True:\n    pass", timeout_s=1.5)
        assert looped.error_kind == "code_timeout"
        again = await sandbox.execute("print(lookup('a')['value'], lookup2('abc')['value'])")
        assert again.stdout.strip() == "1 3"  # the lease's prelude and the one defined later, after the restart
    assert [name for name, _ in calls] == ["lookup", "lookup", "lookup"]
