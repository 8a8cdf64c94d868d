"""The public API in harness/__init__.py: importing it has no side effects, and its names drive a suite."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness


def test_importing_harness_sets_nothing_and_imports_nothing_heavy():
    code = ("import os, sys; before = dict(os.environ); import harness; "
            "print(dict(os.environ) == before, 'dspy' in sys.modules, 'litellm' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "DSPY_DISABLE_TELEMETRY",
                                                           "TIKTOKEN_CACHE_DIR")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr


def test_every_public_name_resolves():
    assert set(harness.__all__) == {"__version__", *harness._EXPORTS}
    assert set(harness.__all__) >= {"load_suite", "RunConfig", "run_suite", "build_report", "run_gate",
                                    "register_scorer", "register_server"}
    for name in harness.__all__:
        assert getattr(harness, name) is not None


def test_an_unknown_name_is_an_attribute_error():
    try:
        harness.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


@pytest.mark.cli
def test_the_public_api_runs_reports_and_gates_a_suite(tmp_path: Path):
    suite = harness.load_suite("smoke")
    summary = harness.run_suite(harness.RunConfig(suite=suite, model="scripted:reference", arms=("direct",),
                                                  out_dir=tmp_path / "results"))
    frame = harness.read_results([summary.path])
    assert len(frame) == len(suite.tasks) and frame.success.all()
    paths = harness.build_report(frame, tmp_path / "report")
    assert paths.html.exists()
    checks = harness.run_gate(frame, ["direct=0.8"], baseline=None, max_drop=0.05, junit=None)
    assert checks and all(check.passed for check in checks)
