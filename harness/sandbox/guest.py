"""The guest: the Python the harness installs inside every Pyodide interpreter (sent as source, run once).

Ordinary code, so the linter and plain-CPython tests see it; inside the sandbox it runs in `__main__`, and
the host (harness/sandbox/runtime.py) appends one call, `_harness_start(...)`, that injects its parameters
(the output limit, the policy's rule source, the bridged tool function) and records the baseline state a
reset returns to. Only the standard library: Pyodide's Python is not the host's.

Agent code runs through `_harness_run(source)`: compiled and exec'd in a separate user-globals dict, with
stdout and stderr captured up to a limit (kept even when the code fails, and streamed to the host as written:
guest_output.py) and exceptions formatted here, inside the sandbox, so nothing unusual (e.g. an exception whose
args are not JSON) can break the host protocol. `_harness_reset()` returns the interpreter to its state at start:
fresh user globals, modules imported since start dropped, the shallow state of modules loaded at start (builtins,
json, random's seed...) restored, files written since start deleted, cwd/env/sys.path/recursion limit restored,
pending asyncio tasks cancelled. It answers "dirty" when it cannot restore something (a file present at start was
changed) and the host then replaces the process.
"""

import ast as _ast
import json as _json
import os as _os
import sys as _sys
import traceback as _traceback
import types as _types

try:  # plain CPython (the host, its tests): the module; in the sandbox its source ran just before this one
    from harness.sandbox.guest_async import (
        _async_begin,
        _async_end,
        _connect_async,
        _in_async_code,
        _in_outer_loop,
        _PendingCall,
        _run_code,
    )
    from harness.sandbox.guest_files import _files, _harness_take_reads, _harness_unmount
    from harness.sandbox.guest_output import _CappedOutput, _console_line
except ImportError:
    pass

_dumps, _loads = _json.dumps, _json.loads  # bound now: agent code changing json must not break the protocol

# Set by _harness_start (the host's parameters and the baseline a reset returns to).
_OUTPUT_LIMIT = 0
_harness_rules = _call_host = _harness_user = _stream_line = None
_BASELINE_MODULES, _BASELINE_STATE, _BASELINE_FILES, _BASELINE_ENV, _BASELINE_PATH = set(), {}, {}, {}, []
_BASELINE_CWD, _BASELINE_RECURSION = "/", 0


class ToolError(Exception):
    """A tool call failed; the message is the server's."""


class _FinalAnswer(BaseException):
    """Raised by final_answer(): ends the code at once. A BaseException, so `except Exception` in agent code
    does not swallow the end of the run."""


_FINAL = []  # the value final_answer() was called with in this run: async code ends on it even if a task swallowed it


def final_answer(value):
    """End the task with `value` as the answer (a string, number, list or dict)."""
    _FINAL[:] = [value]
    raise _FinalAnswer(value)


def _jsonable(value):
    try:
        _dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


class _MissingKey(KeyError):
    """A KeyError whose message is plain text (KeyError's own str() quotes its argument)."""

    def __str__(self):
        return str(self.args[0])


_MissingKey.__name__ = _MissingKey.__qualname__ = "KeyError"
_NOTED_ITERATIONS = set()  # tool results whose iteration was noted (cleared with every run of agent code)
_NOTES = {"on": True, "shown": 0}  # this run's result-notes switch, and how many notes or named errors it showed


def _keys_text(mapping):
    keys = list(dict.keys(mapping))
    return ", ".join(repr(k) for k in keys[:30]) + (", ..." if len(keys) > 30 else "")


def _list_hint(mapping):
    """Where the items are when a tool result is a dict holding a list (a paged result): `result['orders']`."""
    lists = [k for k, v in dict.items(mapping) if isinstance(v, list)]
    return f"; its list is result[{lists[0]!r}]" if len(lists) == 1 else ""


class _ToolResult(dict):
    """Every object in a tool's JSON result. Misuse says what the result holds: the direct arm sees whole
    results in its context, code mode sees only what it prints, and `KeyError: 'country'` alone leaves a model
    guessing. Otherwise a plain dict (isinstance, json.dumps, repr and .get behave as usual)."""

    __slots__ = ()

    def _note_once(self, what):
        # `for order in list_orders(...)` or `len(list_orders(...))` walks or counts the keys of a paged result:
        # say so once, where the output shows it
        if id(self) not in _NOTED_ITERATIONS:
            _NOTED_ITERATIONS.add(id(self))
            _NOTES["shown"] += 1
            _sys.stdout.write(f"[note: {what} its keys ({_keys_text(self)}), not items{_list_hint(self)}]\n")

    def __iter__(self):
        self._note_once("iterating over a tool result (a dict) gives")
        return dict.__iter__(self)

    def __len__(self):
        self._note_once("len() of a tool result (a dict) counts")
        return dict.__len__(self)

    def __bool__(self):  # `if result:` is not a count
        return dict.__len__(self) > 0

    def __missing__(self, key):
        _NOTES["shown"] += 1
        raise _MissingKey(f"{key!r} (this tool result is a dict with the keys: {_keys_text(self) or 'none'}"
                          f"{_list_hint(self)})")


class _ToolList(list):
    """A tool result that is a list: indexing it with a key says it is a list and what its items hold."""

    __slots__ = ()

    def __getitem__(self, index):
        if isinstance(index, str):
            first = list.__getitem__(self, 0) if list.__len__(self) else None
            items = (f"; its first item has the keys: {_keys_text(first)}" if isinstance(first, dict) else "")
            _NOTES["shown"] += 1
            raise TypeError(f"list indices must be integers or slices, not str (this tool result is a list of "
                            f"{list.__len__(self)} items{items})")
        return list.__getitem__(self, index)


# How the host's answer for a large result starts, and the tool name its chunks are fetched under: the protocol of
# harness.sandbox.transfer, declared here (the host imports them; the guest cannot import the host's modules).
CHUNKED_PREFIX, RESULT_CHUNK_TOOL = '{"chunks": ', "__harness_result_chunk"


# dspy's runner.js (its makeToolWrapper) bridges a tool by calling the JS function `_js_tool_call(tool, json)` with
# {"kwargs": ...}; the Python wrapper it defines gets the reply converted to a Python str, which Pyodide does slowly
# (a few MB/s). The same JS call whose text is encoded to UTF-8 bytes in JS arrives as a byte array instead (copied
# at memory speed), so the guest calls it that way when it can; an error object comes back as JSON text.
_BRIDGED_TOOL = "_harness_call_tool"  # the host function's name (harness.sandbox.interpreter)
_AS_BYTES_JS = ("(call) => async (tool, args) => { const v = await call(tool, args); "
                "return typeof v === 'string' ? new TextEncoder().encode(v) : JSON.stringify(v); }")


def _bytes_caller(call_host):
    """`call_host` with the same arguments and result, its reply crossing from JS as bytes; `call_host` itself
    outside Pyodide (plain CPython tests) or if the runner defines no `_js_tool_call`."""
    js_call = globals().get("_js_tool_call")
    if js_call is None:
        return call_host
    from pyodide.code import run_js
    from pyodide.ffi import run_sync

    as_bytes = run_js(_AS_BYTES_JS)(js_call)

    def call(name, arguments):
        reply = run_sync(as_bytes(_BRIDGED_TOOL, _dumps({"kwargs": {"name": name, "arguments": arguments}})))
        if isinstance(reply, str):
            raise RuntimeError(_loads(reply).get("message", "Tool bridge error"))
        return reply.to_bytes().decode()

    return call


def _host_call(name, arguments):
    """One round trip to the host (`arguments` already JSON), from ordinary or async code; output pending is
    streamed first (a call that hangs leaves the host what was printed before it)."""
    if type(_sys.stdout) is _CappedOutput:
        _sys.stdout.flush()
    return _in_outer_loop(lambda: _harness_receive(_call_host(name=name, arguments=arguments)))


def _harness_receive(raw):
    """The host's encoded reply: as it came, or, when it came as a header `{"chunks": N, ...}`, its N chunks
    fetched in order and joined (a large result never crosses as one line)."""
    if not raw.startswith(CHUNKED_PREFIX):
        return raw
    count = _loads(raw)["chunks"]
    return "".join([_call_host(name=RESULT_CHUNK_TOOL, arguments=_dumps({"index": i})) for i in range(count)])


def _reply_value(reply):
    """A decoded reply's value (its lists noted when result notes are on), or its error raised as ToolError."""
    if "error" in reply:
        raise ToolError(reply["error"])
    value = reply["ok"]
    return _ToolList(value) if _NOTES["on"] and isinstance(value, list) else value


def _decode(raw):
    return _loads(raw, object_hook=_ToolResult if _NOTES["on"] else None)


def _call_now(name, arguments):
    """One host call, waited for: the synchronous form of a tool call."""
    return _reply_value(_decode(_host_call(name, _dumps(arguments))))


def _harness_call_tool_json(name, arguments):
    """Call host tool `name` with a JSON-able dict; returns its JSON value or raises ToolError. With result notes
    on (the scaffold's `result_notes`), its dicts and lists say what they hold when misused. From a tool function
    called in async code (`_in_async_code` of its caller), a pending call to await instead."""
    try:
        caller = _sys._getframe(2)
    except ValueError:  # called at the top of a module: ordinary code
        caller = None
    if _in_async_code(caller):
        return _PendingCall(_sys._getframe(1).f_code.co_name, name, arguments)
    return _call_now(name, arguments)


_connect_async(call_now=_call_now, request=lambda name, arguments: _decode(_host_call(name, _dumps(arguments))),
               value=_reply_value, tool_error=ToolError, final=_FINAL, final_error=_FinalAnswer)


def _harness_new_globals():
    return {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError,
            "final_answer": final_answer, "_harness_call_tool_json": _harness_call_tool_json}


_NOT_SET = object()


def _restore_module(module, saved):
    state = module.__dict__
    for key in [k for k in state if k not in saved]:
        del state[key]
    for key, value in saved.items():
        if state.get(key, _NOT_SET) is not value:
            state[key] = value


def _harness_reset():
    global _harness_user
    _harness_user = _harness_new_globals()
    _harness_unmount()  # its folders writable again: deleted below like any file written since start
    dirty = False
    for name in [m for m in _sys.modules if m not in _BASELINE_MODULES]:
        del _sys.modules[name]
    for name, (module, saved) in _BASELINE_STATE.items():
        _sys.modules[name] = module
        _restore_module(module, saved)
    asyncio = _sys.modules.get("asyncio")
    if asyncio is not None:  # tasks agent code left scheduled must not run in the next lease
        try:
            current = asyncio.current_task()  # the host's execute call itself runs as a task
            for task in asyncio.all_tasks(asyncio.get_event_loop()):
                if task is not current:
                    task.cancel()
        except Exception:  # noqa: BLE001,S110 - best effort: a loop in a strange state must not fail the reset
            pass
    now = _files()
    for path in sorted(set(now) - set(_BASELINE_FILES), key=len, reverse=True):
        try:
            _os.rmdir(path) if now[path][0] else _os.remove(path)
        except OSError:
            dirty = True
    for path, (is_dir, size, mtime) in _BASELINE_FILES.items():
        if path not in now or (not is_dir and now[path] != (is_dir, size, mtime)):
            dirty = True
    _os.chdir(_BASELINE_CWD)
    _os.environ.clear()
    _os.environ.update(_BASELINE_ENV)
    _sys.path[:] = _BASELINE_PATH
    _sys.path_importer_cache.clear()
    _sys.setrecursionlimit(_BASELINE_RECURSION)
    if "random" in _sys.modules:  # preloaded by Pyodide, so it survives; its seed state must not
        _sys.modules["random"].seed()
    return "dirty" if dirty else "reset"


def _harness_describe(exc, source):
    frames = [f for f in _traceback.extract_tb(exc.__traceback__) if f.filename == "<code>"]
    where = ""
    if frames:
        lineno = frames[-1].lineno
        lines = source.splitlines()
        text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
        where = f" (line {lineno}: {text})" if text else f" (line {lineno})"
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ itself raises
        message = "<unprintable>"
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


_ECHO = "__harness_last_value__"  # the name a block's last expression is assigned to, for the echo


def _harness_run(source, define=False, rules=None, echo_last=True, result_notes=True, stream=True):
    """Run agent code (or, with define=True, the trusted prelude) in the user globals; `rules` (the policy's
    AST rule parameters) is given when the host could not parse the code: check it here before running.
    `echo_last` and `result_notes` are the scaffold's rules of those names (the REPL-style echo of a last
    expression; notes on misused tool results); `stream`: agent code's output also goes to the host as it is
    written (guest_output.py)."""
    out = _CappedOutput(_OUTPUT_LIMIT, _stream_line if stream and not define else None)
    _NOTED_ITERATIONS.clear()
    _NOTES["on"], _NOTES["shown"] = result_notes, 0
    _FINAL.clear()
    echoed = False
    saved = _sys.stdout, _sys.stderr
    _sys.stdout = _sys.stderr = out
    _async_begin()
    error = final = None
    flags = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    try:
        tree = _ast.parse(source, "<prelude>" if define else "<code>")
        rule = None
        if rules is not None:
            rule = _harness_rules.find_violation(tree, **{k: frozenset(v) for k, v in rules.items()})
        if rule is not None:
            error = {"kind": "policy", "message": f"POLICY_VIOLATION: {rule}"}
        elif not define and echo_last and tree.body and isinstance(tree.body[-1], _ast.Expr):
            # shown as a REPL shows it (repr, unless None); assigned in the same code: an async cell is one coroutine
            last = tree.body[-1]
            tree.body[-1] = _ast.copy_location(_ast.Assign([_ast.Name(_ECHO, _ast.Store())], last.value), last)
            _harness_user.pop(_ECHO, None)
            _run_code(compile(_ast.fix_missing_locations(tree), "<code>", "exec", flags=flags), _harness_user)
            value = _harness_user.pop(_ECHO, None)
            if value is not None:
                print(repr(value), file=out)
                echoed = True
        else:
            _run_code(compile(tree, "<prelude>" if define else "<code>", "exec", flags=flags), _harness_user)
    except _FinalAnswer as exc:
        final = {"value": _jsonable(exc.args[0] if exc.args else None)}
    except SyntaxError as exc:
        error = {"kind": "syntax", "message": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
    except BaseException as exc:  # noqa: BLE001 - any failure of agent code is reported, not raised
        error = {"kind": "exception", "message": _harness_describe(exc, source)}
    finally:
        out.write(_async_end())
        out.stop_streaming()  # the outcome carries it all now; nothing more may reach the host as this run's
        _sys.stdout, _sys.stderr = saved
    return _dumps({"stdout": "".join(out.parts), "dropped": out.dropped, "error": error, "final": final,
                   "notes": _NOTES["shown"], "echoed": echoed, "read": _harness_take_reads()})



def _harness_start(output_limit, rules_source, call_host):
    """Install the host's parameters, then record the state `_harness_reset` returns to. `call_host` is the
    tool dspy bridged at registration, kept here so a reset cannot lose it. Returns "ready"."""
    global _OUTPUT_LIMIT, _harness_rules, _call_host, _harness_user, _BASELINE_MODULES, _BASELINE_STATE
    global _BASELINE_FILES, _BASELINE_CWD, _BASELINE_ENV, _BASELINE_PATH, _BASELINE_RECURSION, _stream_line
    _OUTPUT_LIMIT, _call_host, _stream_line = output_limit, _bytes_caller(call_host), _console_line()
    _harness_rules = _types.ModuleType("_harness_rules")
    exec(compile(rules_source, "<harness-rules>", "exec"), _harness_rules.__dict__)  # noqa: S102 - our rules.py
    _harness_user = _harness_new_globals()
    _BASELINE_MODULES = set(_sys.modules)
    _BASELINE_STATE = {name: (module, dict(module.__dict__)) for name, module in list(_sys.modules.items())
                       if name not in ("sys", "__main__") and isinstance(module, _types.ModuleType)}
    _BASELINE_FILES = _files()
    _BASELINE_CWD = _os.getcwd()
    _BASELINE_ENV = dict(_os.environ)
    _BASELINE_PATH = list(_sys.path)
    _BASELINE_RECURSION = _sys.getrecursionlimit()
    return "ready"
