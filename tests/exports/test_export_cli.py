"""`harness export` as a user runs it: the inspect format writes logs inspect_ai reads; without the inspect extra,
or with a format this harness lacks, it says so in one line (exit 2); a plain `harness run` does not import
inspect_ai."""

import subprocess
import sys

import pytest

from tests.cli.helpers import ROOT, harness
from tests.exports.scripted import chain_run, read_log

pytestmark = pytest.mark.cli


def test_export_writes_an_inspect_log_per_arm_and_says_how_to_open_them(tmp_path):
    results = chain_run(tmp_path / "results")
    done = harness("export", str(results), "--format", "inspect", "--out", str(tmp_path / "logs"))
    assert done.returncode == 0, done.stderr
    [log] = sorted((tmp_path / "logs").glob("*.eval"))
    assert f"{log}  smoke/direct on scripted:chain: 4 samples" in done.stdout
    assert f"inspect view start --log-dir {tmp_path / 'logs'}" in done.stdout
    assert len(read_log(log).samples) == 4


def blocked(module: str, *args: str) -> subprocess.CompletedProcess:
    """`harness ARGS` in a process where `module` cannot be imported (as if it were not installed)."""
    code = f"import sys; sys.modules[{module!r}] = None; from harness.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_without_the_inspect_extra_export_says_what_to_install(tmp_path):
    done = blocked("inspect_ai", "export", str(tmp_path), "--format", "inspect", "--out", str(tmp_path / "logs"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --format inspect needs inspect_ai: pip install "
                                                "'harness[inspect]' (or: pip install 'inspect-ai==0.3.285')"]


def test_without_the_otel_exporter_the_otel_format_is_one_line(tmp_path):
    done = blocked("harness.exports.otel", "export", str(tmp_path), "--format", "otel")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "harness.exports.otel" in done.stderr


def test_an_unknown_format_is_one_line(tmp_path):
    done = harness("export", str(tmp_path), "--format", "csv", "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --format csv: give one of inspect, otel"


def test_a_plain_run_does_not_import_inspect_ai(tmp_path):
    code = ("import sys\nfrom harness.cli import main\ntry:\n    main()\nexcept SystemExit as stop:\n"
            "    assert stop.code == 0, stop.code\n"
            "print([m for m in sys.modules if m.split('.')[0] == 'inspect_ai'])")
    done = subprocess.run([sys.executable, "-c", code, "run", "--suite", "smoke", "--model", "scripted:garbage",
                           "--arms", "direct", "--out", str(tmp_path), "--run-id", "plain"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "smoke" / "plain.parquet").exists()
