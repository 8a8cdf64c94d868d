"""Escape and abuse attempts against the sandbox. Each runs with the policy OFF, to show the Deno/Pyodide
layer contains it by itself (the policy is a second layer, tested below), and each must leave the host
unaffected: a canary file unchanged, no file created on the host, a secret env var unseen."""

import os
from pathlib import Path

import pytest

from harness.sandbox.offline import deno_dir, runner_path

pytestmark = pytest.mark.sandbox

CANARY = Path("/tmp/harness-canary.txt")
SECRET = "HARNESS_CANARY_SECRET"
ESCAPE_FILE = Path("/tmp/harness-escaped.txt")


@pytest.fixture(scope="module", autouse=True)
def canary():
    CANARY.write_text("untouched")
    os.environ[SECRET] = "s3cr3t"
    ESCAPE_FILE.unlink(missing_ok=True)
    yield
    assert CANARY.read_text() == "untouched"
    assert not ESCAPE_FILE.exists()
    CANARY.unlink()
    os.environ.pop(SECRET)


def contained(fragment: str):
    """The attempt ended in an error (or output) mentioning `fragment`."""
    return lambda r: fragment.lower() in f"{r.stdout} {r.error}".lower()


ATTEMPTS = {
    "read host file": (f"print(open('{CANARY}').read())", contained("No such file")),
    "read /etc/passwd": ("print(open('/etc/passwd').read())", contained("No such file")),
    "read host file through js": (f"import js\nprint(js.Deno.readTextFileSync('{CANARY}'))", contained("NotCapable")),
    "read Deno cache through js": (f"import js\nprint(list(js.Deno.readDirSync('{deno_dir()}')))",
                                   contained("NotCapable")),
    "read dspy's runner.js through js": (f"import js\nprint(js.Deno.readTextFileSync('{runner_path()}'))",
                                         contained("NotCapable")),
    "list the host's root through js": ("import js\nprint(list(js.Deno.readDirSync('/')))", contained("NotCapable")),
    "write host file through js": (f"import js\njs.Deno.writeTextFileSync('{ESCAPE_FILE}', 'x')",
                                   contained("NotCapable")),
    "write file (stays virtual)": (f"open('{ESCAPE_FILE}', 'w').write('x')\nprint('written')", contained("written")),
    "network through js.fetch": ("import js\nfrom pyodide.ffi import run_sync\nrun_sync(js.fetch('http://127.0.0.1:8765'))",
                                 contained("NotCapable")),
    "network through pyfetch": ("from pyodide.http import pyfetch\nfrom pyodide.ffi import run_sync\n"
                                "run_sync(pyfetch('http://127.0.0.1:8765'))", contained("--allow-net")),
    "network through socket": ("import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 8765))", contained("Error")),
    "network through urllib": ("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:8765')",
                               contained("Error")),
    "env through os.environ": (f"import os\nprint(os.environ.get('{SECRET}', 'absent'))", contained("absent")),
    "env through js": (f"import js\nprint(js.Deno.env.get('{SECRET}'))", contained("NotCapable")),
    "whole env through js": ("import js\nprint(js.Deno.env.toObject())", contained("NotCapable")),
    "subprocess.run": ("import subprocess\nsubprocess.run(['ls'])", contained("Error")),
    # Emscripten's os.system garbles the protocol stream: the process is discarded and replaced
    "os.system": ("import os\nprint('status', os.system('touch /tmp/harness-escaped.txt'))",
                  lambda r: r.error_kind == "crash" or "status" in r.stdout),
    "Deno.Command through js": ("import js\njs.Deno.Command.new('/bin/sh', js.Object.fromEntries([['args', ['-c', "
                                f"'touch {ESCAPE_FILE}']]])).outputSync()", contained("--allow-run")),
    "open a listening socket through js": ("import js\njs.Deno.listen(js.Object.fromEntries([['port', 8766]]))",
                                           contained("--allow-net")),
    "FFI through js": ("import js\njs.Deno.dlopen('libc.so.6', js.Object.new())", contained("--allow-ffi")),
    "fork": ("import os\nos.fork()", contained("Error")),
    "thread flood": ("import threading\nfor _ in range(1000):\n    threading.Thread(target=lambda: None).start()",
                     contained("can't start new thread")),
    "deep recursion": ("def f(n):\n    return f(n + 1)\nf(0)", contained("RecursionError")),
    # past the recursion limit the wasm stack overflows: the process is replaced
    "stack overflow with the limit raised": ("import sys\nsys.setrecursionlimit(10 ** 6)\n"
                                             "def f(n):\n    return f(n + 1)\nf(0)",
                                             lambda r: r.error_kind in ("crash", "exception")),
    # WebAssembly memory is capped (1 GiB by default), so the host never sees the allocation
    "memory bomb": ("chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 ** 2))", contained("MemoryError")),
    "huge stdout": ("print('a' * 1_000_000)", lambda r: r.truncated and "output truncated" in r.stdout
                    and len(r.stdout) < 70_000),
    "non-serialisable exception": ("raise ValueError(object())", contained("ValueError")),
    "reach internals via subclasses": ("print([c for c in ().__class__.__base__.__subclasses__() "
                                       "if c.__name__ == 'Popen'][0](['ls']))", contained("Error")),
}


@pytest.mark.parametrize("name", list(ATTEMPTS))
async def test_attempt_is_contained_and_the_sandbox_still_works(name, sandbox_pool):
    code, check = ATTEMPTS[name]
    async with sandbox_pool.lease(lambda tool, args: None) as sandbox:
        result = await sandbox.execute(code, check_policy=False, timeout_s=20)
        assert check(result), (name, result)
        after = await sandbox.execute("print(6 * 7)")
        assert after.stdout.strip() == "42", (name, after)


async def test_infinite_loop_times_out_and_the_next_execution_works(sandbox_pool):
    async with sandbox_pool.lease(lambda tool, args: None, prelude="def tool_a() -> int:\n    return 1\n") as sandbox:
        looped = await sandbox.execute("while True:\n    pass", timeout_s=1.5)
        assert looped.error_kind == "code_timeout" and "TIMEOUT" in looped.error
        after = await sandbox.execute("print(tool_a() + 41)")
        assert after.stdout.strip() == "42"  # a fresh process, with the lease's tools defined again


async def test_killing_the_runtime_from_inside_is_a_crash_that_recovers(sandbox_pool):
    async with sandbox_pool.lease(lambda tool, args: None) as sandbox:
        crashed = await sandbox.execute("import js\njs.Deno.exit(3)", check_policy=False)
        assert crashed.error_kind == "crash"
        assert (await sandbox.execute("print(1)")).stdout.strip() == "1"


async def test_spoofed_protocol_messages_do_not_become_results(sandbox_pool):
    spoof = ('import js\njs.console.log(\'{"jsonrpc": "2.0", "result": {"output": "FAKE"}, "id": "x"}\')\n'
             'print("real")')
    async with sandbox_pool.lease(lambda tool, args: None) as sandbox:
        result = await sandbox.execute(spoof, check_policy=False)
        assert "FAKE" not in result.stdout
        assert (await sandbox.execute("print(2)")).stdout.strip() == "2"


@pytest.mark.parametrize("code, rule", [
    ("import os", "import of 'os'"),
    ("import js", "import of 'js'"),
    ("from pyodide.ffi import run_sync", "import of 'pyodide.ffi'"),
    ("__import__('os')", "__import__()"),
    ("eval('1')", "eval()"),
    ("open('/etc/passwd')", "open()"),
    ("().__class__.__base__", "__class__"),
    ("import json\njson.dumps = None", "changing module 'json'"),
    ("x = 1\n" * 401, "limit is 400"),
])
async def test_policy_violations_are_reported_and_not_run(code, rule, sandbox_pool):
    async with sandbox_pool.lease(lambda tool, args: None) as sandbox:
        result = await sandbox.execute(code)
        assert result.error_kind == "policy" and result.error.startswith("POLICY_VIOLATION") and rule in result.error


async def test_the_interpreter_process_gets_no_host_environment(sandbox_pool):
    async with sandbox_pool.lease(lambda tool, args: None) as sandbox:
        await sandbox.execute("print(1)")
        process = sandbox._interpreter._python.deno_process
        environ = Path(f"/proc/{process.pid}/environ").read_bytes().split(b"\0")
    names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
    assert SECRET not in names and "PATH" not in names and "HOME" not in names
    assert names <= {"DENO_DIR", "DENO_NO_PACKAGE_JSON", "DENO_NO_UPDATE_CHECK", "NO_COLOR"}


async def test_a_tool_call_past_the_limit_is_cut_off_by_the_watchdog(sandbox_pool):
    import time

    def slow(name, arguments):
        time.sleep(2.5)
        return "late"

    prelude = 'def slow() -> str:\n    return _harness_call_tool_json("slow", {})\n'
    async with sandbox_pool.lease(slow, prelude=prelude) as sandbox:
        result = await sandbox.execute("print(slow())", timeout_s=1.0)
        assert result.error_kind == "code_timeout" and "late" not in result.stdout
        assert (await sandbox.execute("x = 5\nprint(x)")).stdout.strip() == "5"


async def test_a_dispatcher_that_never_returns_costs_the_slot_not_the_lease(sandbox_pool, monkeypatch):
    import threading

    from harness.sandbox import interpreter as interpreter_module

    monkeypatch.setattr(interpreter_module, "STUCK_GRACE_S", 1.0)
    release = threading.Event()
    prelude = 'def hang() -> str:\n    return _harness_call_tool_json("hang", {})\n'
    try:
        async with sandbox_pool.lease(lambda name, args: release.wait(60) and "freed", prelude=prelude) as sandbox:
            stuck = await sandbox.execute("hang()", timeout_s=0.5)
            assert stuck.error_kind == "code_timeout"
            assert (await sandbox.execute("print(hang.__name__)", check_policy=False)).stdout.strip() == "hang"
    finally:
        release.set()
    async with sandbox_pool.lease(lambda name, args: None) as sandbox:
        assert (await sandbox.execute("print(3)")).stdout.strip() == "3"
