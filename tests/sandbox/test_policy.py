"""The guardrails alone (no interpreter): what passes, what is refused, and the message the agent reads."""

import pytest

from harness.sandbox import SandboxPolicy

POLICY = SandboxPolicy()


@pytest.mark.parametrize("code", [
    "import json, re, math\nprint(json.dumps({'a': re.sub('a', 'b', 'aa')}))",
    "from collections import Counter, defaultdict\nfrom collections.abc import Mapping",
    "from urllib.parse import urlparse\nimport urllib.parse",
    "from urllib import parse",
    "class Point:\n    def __init__(self, x):\n        self.x = x\n    def __repr__(self):\n        return f'P({self.x})'",
    "result = get_customer(customer_id='C-1')\nprint(result['name'])",
    "import datetime as dt\nprint(dt.date(2024, 1, 1).isoformat())",
])
def test_ordinary_code_passes(code):
    assert POLICY.check(code) is None


@pytest.mark.parametrize("code, fragment", [
    ("import os", "import of 'os' is not allowed (the tools are already defined: call them without importing; "
                  "allowed modules: "),
    ("import js", "import of 'js'"),
    ("import pyodide.http", "import of 'pyodide.http'"),
    ("from pyodide.ffi import run_sync", "import of 'pyodide.ffi'"),
    ("from urllib import request", "import of 'urllib'"),
    ("import sys", "import of 'sys'"),
    ("from . import x", "relative imports"),
    ("x = 1\n__import__('os')", "calling __import__() is not allowed (line 2)"),
    ("eval('1')", "calling eval()"),
    ("exec('1')", "calling exec()"),
    ("compile('1', 'f', 'exec')", "calling compile()"),
    ("open('/etc/passwd')", "calling open()"),
    ("getattr(object, 'x')", "calling getattr()"),
    ("globals()['x'] = 1", "calling globals()"),
    ("().__class__.__base__.__subclasses__()", "attribute '__subclasses__'"),
    ("f = lambda: 1\nf.__globals__", "attribute '__globals__' is not allowed (line 2)"),
    ("print(__builtins__)", "'__builtins__' is not allowed"),
    ("import json\njson.dumps = None", "changing module 'json'"),
    ("x = 1\n" * 401, "limit is 400"),
    ("x = '" + "a" * 8001 + "'", "limit is 8000"),
])
def test_violations_name_the_rule(code, fragment):
    rule = POLICY.check(code)
    assert rule is not None and fragment in rule, rule


def test_newer_syntax_is_left_to_the_sandbox_parser():
    code = 'x = {"k": 1}\nprint(f"{x["k"]}")'  # valid on 3.12+ (Pyodide runs 3.13), not on this host's 3.11
    try:
        compile(code, "<t>", "exec")
    except SyntaxError:
        assert POLICY.check(code) is None
        assert POLICY.rules_if_unparsed(code) == POLICY.rules()
    else:
        assert POLICY.rules_if_unparsed(code) is None


def test_policy_limits_are_configurable():
    policy = SandboxPolicy(max_chars=15, allowed_imports=frozenset({"json"}))
    assert "limit is 15" in policy.check("print('a long line')")
    assert policy.check("import json") is None
    assert "import of 're'" in policy.check("import re")
