"""Every model path but the embedded one works where llama-cpp-python is not installed (the minimal install):
each test runs Python in a subprocess where `llama_cpp` cannot be imported, and where any attempt to import
it is written to stderr with the stack that asked, so an import caught and forgiven still fails the test."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness.run.records import read_results
from harness.tasks.suite import load_suite
from tests.cli.helpers import ROOT

NO_LLAMA_CPP = textwrap.dedent('''
    import sys
    import traceback


    class NoLlamaCpp:
        """Finds no llama_cpp, as on an install without the `local` extra, and says who asked."""

        def find_spec(self, name, path=None, target=None):
            if name == "llama_cpp" or name.startswith("llama_cpp."):
                sys.stderr.write(f"blocked import of {name}:\\n" + "".join(traceback.format_stack()))
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, NoLlamaCpp())
    for loaded in [name for name in sys.modules if name.split(".")[0] == "llama_cpp"]:
        del sys.modules[loaded]
''')
BLOCKED = "blocked import of llama_cpp"
ARMS_WITHOUT_EXTRAS = ("direct", "direct-search", "codemode", "codemode-discover", "codemode-files", "react",  # fastmcp
                       "hybrid")  # needs an extra


def python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_LLAMA_CPP + textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_the_blocker_makes_llama_cpp_unimportable():
    result = python("import llama_cpp")
    assert result.returncode == 1 and "ModuleNotFoundError: No module named 'llama_cpp'" in result.stderr
    assert BLOCKED in result.stderr


@pytest.mark.cli
def test_every_harness_module_imports_and_the_arms_build_their_calls_without_llama_cpp():
    result = python('''
        import importlib
        import pkgutil

        import harness
        from harness.env import configure_environment

        configure_environment()
        for module in pkgutil.walk_packages(harness.__path__, "harness."):
            if module.name != "harness.__main__":
                importlib.import_module(module.name)

        from harness.agents.chat import FINAL_ANSWER_FUNCTION, CodeChatAdapter, ToolCallingAdapter
        from harness.models import resolve_model

        for history in ([], [{"action": {}, "observation": "1", "may_answer": True}]):
            ToolCallingAdapter().options({"tools": [FINAL_ANSWER_FUNCTION], "history": history})
            CodeChatAdapter().options({"history": history})
        resolve_model("openai/served", api_base="http://127.0.0.1:9/v1")  # an --api-base model (no call made)
        print("imported")
    ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "imported" and BLOCKED not in result.stderr


@pytest.mark.sandbox
def test_a_scripted_run_succeeds_in_every_arm_that_needs_no_extra_without_llama_cpp(tmp_path):
    result = python(f'''
        import sys

        from harness.cli import main

        sys.argv = ["harness", "run", "--suite", "smoke", "--model", "scripted:reference",
                    "--arms", "{",".join(ARMS_WITHOUT_EXTRAS)}", "--out", {str(tmp_path)!r}]
        main()
    ''', timeout=600)
    assert result.returncode == 0, result.stderr
    assert BLOCKED not in result.stderr
    frame = read_results([tmp_path])
    assert sorted(set(frame.arm)) == sorted(ARMS_WITHOUT_EXTRAS)
    assert len(frame) == len(load_suite("smoke").tasks) * len(ARMS_WITHOUT_EXTRAS)  # every task in every arm
    failures = frame[~frame.success | (frame.error_type != "")][["task_id", "arm", "error_type", "error_message"]]
    assert failures.empty, failures.to_string()
