"""The guest program's pieces in plain CPython (no Pyodide): what the model reads when it misuses a tool
result, how much output is kept, and how it is streamed to the host as it is written."""

import io
import json
from contextlib import redirect_stdout

import pytest

from harness.sandbox import guest, guest_async, guest_output
from harness.sandbox import rules as rules_module
from harness.sandbox.runtime import OUTPUT_LIMIT_CHARS, RUNTIME, guest_program


def _result(value):
    """A tool reply as the guest decodes it (every JSON object a _ToolResult)."""
    return json.loads(json.dumps(value), object_hook=guest._ToolResult)


def test_missing_key_names_the_keys_and_the_list():
    page = _result({"orders": [{"id": 1}], "next_page": None})
    with pytest.raises(KeyError) as caught:
        page["country"]
    assert str(caught.value) == ("'country' (this tool result is a dict with the keys: 'orders', 'next_page'; "
                                 "its list is result['orders'])")
    assert type(caught.value).__name__ == "KeyError"


def test_missing_key_in_an_empty_result_says_none():
    with pytest.raises(KeyError, match=r"with the keys: none\)"):
        _result({})["x"]


def test_iterating_a_paged_result_is_noted_once_per_run():
    guest._NOTED_ITERATIONS.clear()
    page = _result({"orders": [1, 2], "total": 2})
    out = io.StringIO()
    with redirect_stdout(out):
        assert list(page) == ["orders", "total"]
        assert len(page) == 2
    assert out.getvalue() == ("[note: iterating over a tool result (a dict) gives its keys ('orders', 'total'), "
                              "not items; its list is result['orders']]\n")


def test_truthiness_of_a_result_is_not_a_len_call():
    guest._NOTED_ITERATIONS.clear()
    out = io.StringIO()
    with redirect_stdout(out):
        assert _result({"a": 1})
        assert not _result({})
    assert out.getvalue() == ""


def test_a_result_stays_a_plain_dict_for_json_and_get():
    page = _result({"a": {"b": 1}})
    assert isinstance(page, dict)
    assert page.get("missing") is None
    assert json.dumps(page) == '{"a": {"b": 1}}'


def test_indexing_a_list_result_with_a_key_says_what_the_items_hold():
    items = guest._ToolList(_result([{"id": 1, "name": "x"}]))
    with pytest.raises(TypeError) as caught:
        items["id"]
    assert str(caught.value) == ("list indices must be integers or slices, not str (this tool result is a list "
                                 "of 1 items; its first item has the keys: 'id', 'name')")
    assert items[0] == {"id": 1, "name": "x"}


def test_capped_output_keeps_the_limit_and_counts_the_rest():
    out = guest._CappedOutput(5)
    assert out.write("abc") == 3
    assert out.write("defg") == 4
    out.write("hij")
    assert "".join(out.parts) == "abcde"
    assert out.dropped == 5


@pytest.fixture
def run(monkeypatch):
    """The guest's _harness_run with fresh user globals and a 10-character output limit (what
    _harness_start would install, without its walk of the whole filesystem)."""
    monkeypatch.setattr(guest, "_harness_user", guest._harness_new_globals())
    monkeypatch.setattr(guest, "_OUTPUT_LIMIT", 10)
    return lambda source, **kwargs: json.loads(guest._harness_run(source, **kwargs))


def test_run_caps_output_and_keeps_it_when_the_code_fails(run):
    outcome = run("print('0123456789abcdef')\ny = 1 / 0")
    assert outcome["stdout"] == "0123456789"
    assert outcome["dropped"] == 7
    assert outcome["error"] == {"kind": "exception",
                                "message": "ZeroDivisionError: division by zero (line 2: y = 1 / 0)"}


def test_run_shows_the_last_expression_and_ends_with_final_answer(run):
    assert run("1 + 1")["stdout"] == "2\n"
    outcome = run("final_answer({'n': 3})\nprint('never')")
    assert outcome["final"] == {"value": {"n": 3}}
    assert outcome["stdout"] == ""


def test_run_reports_syntax_errors_and_policy_rules(run, monkeypatch):
    assert run("def (")["error"]["kind"] == "syntax"
    monkeypatch.setattr(guest, "_harness_rules", rules_module)
    outcome = run("import socket", rules={"allowed_imports": ["json"], "forbidden_calls": [],
                                          "forbidden_attributes": []})
    assert outcome["error"]["kind"] == "policy"
    assert outcome["error"]["message"].startswith("POLICY_VIOLATION: import of 'socket' is not allowed")


def _sent(lines):
    """The params of each output notification the guest sent."""
    assert all(line.startswith(guest_output.OUTPUT_PREFIX) and line.endswith("}") for line in lines)
    return [json.loads(line)["params"] for line in lines]


def test_capped_output_streams_each_line_as_its_newline_is_written():
    lines = []
    out = guest._CappedOutput(100, lines.append)
    out.write("a")
    assert lines == []  # a line is sent when it ends
    out.write("\n")
    out.write("b")
    out.flush()  # print(..., flush=True), or a tool call: what is pending goes now
    out.flush()  # nothing new: nothing sent
    assert _sent(lines) == [{"text": "a\n", "dropped": 0}, {"text": "b", "dropped": 0}]


def test_capped_output_streams_the_first_drop_at_once_and_later_ones_at_most_every_quarter_second(monkeypatch):
    lines, now = [], [0.0]
    monkeypatch.setattr(guest_output, "_monotonic", lambda: now[0])
    out = guest._CappedOutput(5, lines.append)
    out.write("abc")  # no newline, under the limit: pending
    out.write("defg")  # reaches the limit: sent, with what it dropped
    out.write("hi")
    now[0] = guest_output.STREAM_DROPPED_EVERY_S
    out.write("j")
    assert _sent(lines) == [{"text": "abcde", "dropped": 2}, {"text": "", "dropped": 5}]
    assert "".join(out.parts) == "abcde" and out.dropped == 5  # what the outcome returns is as before


def test_capped_output_sends_nothing_once_the_execution_has_ended():
    lines = []
    out = guest._CappedOutput(100, lines.append)
    out.write("pending")
    out.stop_streaming()
    out.write("more\n")
    out.close()  # closing flushes: nothing pending any more
    assert lines == []


def test_run_streams_agent_code_output_only_while_it_runs(run, monkeypatch):
    lines = []
    monkeypatch.setattr(guest, "_stream_line", lines.append)
    outcome = run("print('one')\nprint('two', end='')")
    assert outcome["stdout"] == "one\ntwo"
    assert _sent(lines) == [{"text": "one\n", "dropped": 0}]  # the unended last line is in the outcome only
    lines.clear()
    run("print('prelude')", define=True)  # trusted start-up code: not the run's output
    assert lines == []


def test_describe_survives_an_unprintable_exception():
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError

    assert guest._harness_describe(Odd(), "") == "Odd: <unprintable>"


def test_the_program_is_the_guest_then_one_start_call():
    assert RUNTIME == guest_program()
    assert RUNTIME.startswith(guest_async.__doc__.join(['"""', '"""']))  # its awaitable tools, then the guest
    assert guest.__doc__.join(['"""', '"""']) in RUNTIME
    assert RUNTIME.rstrip().splitlines()[-1].startswith(f"_harness_start({OUTPUT_LIMIT_CHARS}, ")
    assert "%(" not in RUNTIME


def test_run_without_echo_shows_no_last_expression_and_says_whether_it_echoed(run):
    assert run("1 + 1")["echoed"] is True
    quiet = run("1 + 1", echo_last=False)
    assert quiet["stdout"] == "" and quiet["echoed"] is False


def test_result_notes_off_gives_plain_dicts_and_counts_nothing(run, monkeypatch):
    monkeypatch.setattr(guest, "_call_host", lambda name, arguments: json.dumps({"ok": {"orders": [1], "total": 1}}))
    source = "page = _harness_call_tool_json('t', {})\nprint(type(page).__name__, len(page))\npage['x']"
    noted = run(source, echo_last=False)
    assert noted["notes"] == 2 and noted["stdout"].startswith("[note: len") and "its list is result" in noted["error"]["message"]
    plain = run(source, echo_last=False, result_notes=False)
    assert plain["notes"] == 0 and plain["stdout"] == "dict 2\n" and plain["error"]["message"].startswith("KeyError: 'x'")


def _tool_function(guest_module):
    """A prelude-style tool function bound to the guest module (as the sandbox defines them)."""
    namespace = {"_harness_call_tool_json": guest_module._harness_call_tool_json}
    exec("def lookup(key):\n    return _harness_call_tool_json('lookup', {'key': key})\n", namespace)  # noqa: S102
    return namespace["lookup"]


def test_tools_awaited_together_cross_to_the_host_as_one_batch(monkeypatch):
    import asyncio

    sent = []

    def host(name, arguments):
        sent.append(name)
        calls = json.loads(arguments)["calls"]
        return json.dumps({"ok": [{"ok": c["arguments"]["key"].upper()} if c["arguments"]["key"] != "x" else
                                  {"error": "no x"} for c in calls]})

    monkeypatch.setattr(guest, "_call_host", host)
    lookup = _tool_function(guest)

    async def main():
        return await asyncio.gather(*(lookup(k) for k in "abx"), return_exceptions=True)

    got = guest_async._run_awaitable(main())
    assert sent == [guest_async.BATCH_TOOL] and got[:2] == ["A", "B"]
    assert isinstance(got[2], guest.ToolError) and str(got[2]) == "no x"


def test_a_tool_called_outside_async_code_calls_the_host_at_once(monkeypatch):
    monkeypatch.setattr(guest, "_call_host", lambda name, arguments: json.dumps({"ok": json.loads(arguments)["key"]}))
    assert _tool_function(guest)("k") == "k"


def test_a_pending_call_used_as_a_result_says_to_await_it():
    pending = guest_async._PendingCall("get_customer", "get_customer", {})
    with pytest.raises(TypeError, match=r"write `await get_customer\(\.\.\.\)`"):
        pending["name"]
    assert "never awaited" in guest_async._unawaited_note()
