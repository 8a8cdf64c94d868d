"""The Python the harness installs inside every Pyodide interpreter (as source, run once at start).

Agent code runs through `_harness_run(source)`: compiled and exec'd in a separate user-globals dict, with
stdout captured up to a limit (kept even when the code fails) and exceptions formatted here, inside the
sandbox, so nothing unusual (e.g. an exception whose args are not JSON) can break the host protocol.
Reset replaces the user globals, drops modules imported since start and deletes files written since.
"""

OUTPUT_LIMIT_CHARS = 64 * 1024

RUNTIME = r'''
import io as _io, json as _json, os as _os, sys as _sys, traceback as _traceback

_OUTPUT_LIMIT = %(limit)d
_SKIP_DIRS = ("/lib", "/proc", "/dev", "/sys", "/usr")


class ToolError(Exception):
    """A tool call failed; the message is the server's."""


class _CappedOutput(_io.TextIOBase):
    def __init__(self):
        self.parts, self.size, self.dropped = [], 0, 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        room = _OUTPUT_LIMIT - self.size
        kept = text[:room] if room > 0 else ""
        if kept:
            self.parts.append(kept)
            self.size += len(kept)
        self.dropped += len(text) - len(kept)
        return len(text)


def _harness_call_tool_json(name, arguments):
    reply = _json.loads(_harness_call_tool(name=name, arguments=_json.dumps(arguments)))
    if "error" in reply:
        raise ToolError(reply["error"])
    return reply["ok"]


def _files():
    found = set()
    for root, dirs, files in _os.walk("/"):
        dirs[:] = [d for d in dirs if _os.path.join(root, d) not in _SKIP_DIRS]
        found.update(_os.path.join(root, f) for f in files)
        found.update(_os.path.join(root, d) for d in dirs)
    return found


def _harness_new_globals():
    return {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError,
            "_harness_call_tool_json": _harness_call_tool_json}


def _harness_reset():
    global _harness_user
    _harness_user = _harness_new_globals()
    for name in [m for m in _sys.modules if m not in _BASELINE_MODULES]:
        del _sys.modules[name]
    for path in sorted(_files() - _BASELINE_FILES, key=len, reverse=True):
        try:
            _os.rmdir(path) if _os.path.isdir(path) else _os.remove(path)
        except OSError:
            pass
    _os.chdir(_BASELINE_CWD)
    _sys.setrecursionlimit(_BASELINE_RECURSION)
    if "random" in _sys.modules:  # preloaded by Pyodide, so it survives; its seed state must not
        _sys.modules["random"].seed()
    return "reset"


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
    except Exception:
        message = "<unprintable>"
    return f"{type(exc).__name__}: {message}{where}"


def _harness_run(source, define=False):
    out = _CappedOutput()
    saved = _sys.stdout, _sys.stderr
    _sys.stdout = _sys.stderr = out
    error = None
    try:
        code = compile(source, "<prelude>" if define else "<code>", "exec")
        exec(code, _harness_user)
    except SyntaxError as exc:
        error = {"kind": "syntax", "message": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
    except BaseException as exc:
        error = {"kind": "exception", "message": _harness_describe(exc, source)}
    finally:
        _sys.stdout, _sys.stderr = saved
    return _json.dumps({"stdout": "".join(out.parts), "dropped": out.dropped, "error": error})


_harness_user = _harness_new_globals()
_BASELINE_MODULES = set(_sys.modules)
_BASELINE_FILES = _files()
_BASELINE_CWD = _os.getcwd()
_BASELINE_RECURSION = _sys.getrecursionlimit()
"ready"
''' % {"limit": OUTPUT_LIMIT_CHARS}
